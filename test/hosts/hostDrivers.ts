// How each real agent CLI is run headless and offline against the scripted model, with its own
// home and config in the test's temp folder (docs/hook-hosts.md sections 2-5, docs/hooks.md
// "Tested hosts"). Each driver names the flags it needs and why: the point of the tests is that
// the hook's answer decides, so nothing here approves a tool call where the host honours the hook.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HostAgent } from '../../src/hooks/hosts/hostAgents';
import { anthropicDialect } from './anthropicServer';
import { chatCompletionsDialect } from './chatCompletionsServer';
import { geminiDialect } from './geminiServer';
import type { ModelDialect } from './modelServer';
import { openaiResponsesDialect } from './openaiResponsesServer';

// Two up from test/hosts; from a bundle (npm run bench:hooks bundles into .cache/), the folder it runs in.
export const REPO = fs.existsSync(path.join(__dirname, '..', '..', 'package.json')) ? path.resolve(__dirname, '..', '..') : process.cwd();

/** Where scripts/ensure-agent-clis.sh installs the CLIs. */
export const AGENT_CLIS_DIR = path.join(process.env.AGENT_POLICY_CACHE ?? path.join(REPO, '.cache'), 'agent-clis');

export interface HostRunSetup {
  project: string;
  /** The run's own home folder (config, sessions, state). */
  home: string;
  /** `http://127.0.0.1:PORT` of the scripted model. */
  origin: string;
  prompt: string;
  /**
   * Run with the host's own permission to run every tool (Claude `--allowedTools Bash`, Copilot
   * `--allow-all-tools`): then only the hook can stop a call. Without it a call the hook does not
   * allow is refused by Claude and Copilot in -p anyway, so only the hook can let one through.
   */
  hostApproves: boolean;
}

export interface HostDriver {
  host: Extract<HostAgent, 'claude' | 'codex' | 'gemini' | 'copilot'>;
  label: string;
  /** The executable in AGENT_CLIS_DIR/node_modules/.bin. */
  bin: string;
  dialect: ModelDialect;
  /** Writes the host's user config into `setup.home` and returns its command line and extra environment. */
  prepare(setup: HostRunSetup): { args: string[]; env: Record<string, string> };
}

export function binPath(driver: HostDriver): string {
  return path.join(AGENT_CLIS_DIR, 'node_modules', '.bin', driver.bin);
}

function writeFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

export const claude: HostDriver = {
  host: 'claude',
  label: 'Claude Code',
  bin: 'claude',
  dialect: anthropicDialect,
  // Without --allowedTools a Bash call the hook does not allow is denied in -p.
  prepare: ({ home, origin, prompt, hostApproves }) => ({
    args: ['-p', prompt, '--output-format', 'json', '--model', 'claude-sonnet-4-5', ...(hostApproves ? ['--allowedTools', 'Bash'] : [])],
    env: {
      CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
      ANTHROPIC_BASE_URL: origin,
      ANTHROPIC_API_KEY: 'offline-test-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    },
  }),
};

export const codex: HostDriver = {
  host: 'codex',
  label: 'Codex',
  bin: 'codex',
  dialect: openaiResponsesDialect,
  // --trust: the project's .codex/hooks.json loads only in a trusted project.
  // --dangerously-bypass-hook-trust: a hook runs only once reviewed in the TUI (/hooks), or with this.
  // -s danger-full-access: the default read-only sandbox stops every write before the hook matters,
  //   and workspace-write fails here (bwrap cannot exec codex-linux-sandbox in this container).
  //   exec's approval policy is `never`, so nothing asks: the hook is the only gate (hostApproves
  //   changes nothing).
  prepare: ({ home, origin, prompt }) => {
    const codexHome = path.join(home, '.codex');
    writeFile(path.join(codexHome, 'config.toml'), [
      'model = "mock-model"',
      'model_provider = "mock"',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = "${origin}/v1"`,
      'wire_api = "responses"',
      'env_key = "MOCK_API_KEY"',
      '',
    ].join('\n'));
    return {
      args: ['exec', '--skip-git-repo-check', '--trust', '--dangerously-bypass-hook-trust', '-s', 'danger-full-access', prompt],
      env: { CODEX_HOME: codexHome, MOCK_API_KEY: 'offline-test-key' },
    };
  },
};

export const gemini: HostDriver = {
  host: 'gemini',
  label: 'Gemini CLI',
  bin: 'gemini',
  dialect: geminiDialect,
  // --approval-mode yolo: headless in the default mode Gemini CLI does not even offer
  //   run_shell_command to the model; yolo offers it and runs it unless a hook denies (hostApproves
  //   changes nothing). A hook's allow does not get past Gemini's own policy: without yolo, no shell.
  // GEMINI_CLI_TRUST_WORKSPACE: project hooks load only in a trusted folder (--skip-trust does not).
  prepare: ({ home, origin, prompt }) => {
    writeFile(path.join(home, '.gemini', 'settings.json'), JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
    }));
    return {
      args: ['-p', prompt, '--approval-mode', 'yolo', '-o', 'json', '-m', 'gemini-2.5-pro'],
      env: { GEMINI_API_KEY: 'offline-test-key', GOOGLE_GEMINI_BASE_URL: origin, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    };
  },
};

export const copilot: HostDriver = {
  host: 'copilot',
  label: 'Copilot CLI',
  bin: 'copilot',
  dialect: chatCompletionsDialect,
  // --trust-folder: repo hooks (.github/hooks) load in -p only in a trusted folder.
  // Without --allow-all-tools a call the hook does not allow is denied in -p.
  // XDG_CACHE_HOME is shared: the first start unpacks 235 MB there, once for all runs.
  prepare: ({ home, origin, prompt, hostApproves }) => ({
    args: ['-p', prompt, '--trust-folder', '--output-format', 'json', ...(hostApproves ? ['--allow-all-tools'] : [])],
    env: {
      COPILOT_HOME: path.join(home, '.copilot'),
      XDG_CACHE_HOME: path.join(AGENT_CLIS_DIR, 'xdg-cache'),
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: `${origin}/v1`,
      COPILOT_MODEL: 'mock-model',
      COPILOT_AUTO_UPDATE: 'false',
    },
  }),
};

export const HOST_DRIVERS: readonly HostDriver[] = [claude, codex, gemini, copilot];
