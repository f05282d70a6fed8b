// Credential variables are withheld from sandboxed commands unless the policy passes them by name
// (sandboxEnvironment.ts; the rule's `"sandbox": { "env": [...] }`, intersected over the parts):
// a property over generated names, the engine's decision, and the real bubblewrap's `env`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { ToolDescriptor } from '../../src/policy/rules/call.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { runCommandTool, type RunCommandResult } from '../../src/runtime/tools/runCommandTool.js';
import { CREDENTIAL_VARIABLE_PATTERNS, isCredentialVariable, withoutCredentials } from '../../src/runtime/sandbox/sandboxEnvironment.js';
import { probeSandbox } from '../../src/runtime/sandbox/sandboxProbe.js';
import type { ToolRunContext } from '../../src/runtime/tools/tools.js';

const RUN_COMMAND: ToolDescriptor = {
  id: 'builtin.run_command', kind: 'builtin',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true }, commandArg: 'command',
};

/** A name some pattern matches: the pattern with each `*` filled by generated characters, in any case. */
const matchingName = fc
  .tuple(fc.constantFrom(...CREDENTIAL_VARIABLE_PATTERNS), fc.array(fc.stringMatching(/^[A-Za-z0-9_]{0,6}$/), { minLength: 4, maxLength: 4 }), fc.boolean())
  .map(([pattern, fills, lower]) => {
    let i = 0;
    const name = pattern.replace(/\*/g, () => fills[i++ % fills.length]!);
    return lower ? name.toLowerCase() : name;
  });

describe('sandbox environment: credential variables', () => {
  it('withholds every name the documented patterns match, unless passed by that exact name (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(matchingName, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 3 }), (names, picks) => {
        const passed = picks.map((p) => names[p % names.length]!);
        const env = Object.fromEntries([...names.map((n) => [n, 'secret']), ['PATH', '/usr/bin'], ['HOME', '/home/x'], ['LANG', 'C.UTF-8']]);
        const out = withoutCredentials(env, passed);
        for (const name of names) {
          assert.ok(isCredentialVariable(name), name);
          assert.equal(name in out, passed.includes(name), name);
        }
        assert.equal(out.PATH, '/usr/bin');
        assert.equal(out.HOME, '/home/x');
        assert.equal(out.LANG, 'C.UTF-8');
      }),
      { numRuns: 500 },
    );
  });

  it('keeps ordinary variables, and does not read PASS or TOKEN inside other words', () => {
    for (const name of ['PATH', 'HOME', 'LANG', 'USER', 'SHELL', 'TERM', 'BYPASS_CACHE', 'X_BYPASS', 'TOKENIZERS_PARALLELISM', 'PASSIVE_MODE', 'LD_LIBRARY_PATH', 'NODE_OPTIONS', 'KEYBOARD', 'SECRETARY_NAME']) {
      assert.equal(isCredentialVariable(name), false, name);
    }
    for (const name of ['GITHUB_TOKEN', 'github_token', 'MY_SERVICE_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'DB_PASS', 'SSH_AUTH_SOCK', 'DATABASE_URL', 'GH_TOKEN_2', 'STRIPE_SECRET_KEY', 'VSCODE_GIT_IPC_HANDLE']) {
      assert.equal(isCredentialVariable(name), true, name);
    }
  });

  describe('the decision carries the names every part\'s deciding rule passes', () => {
    before(async () => {
      await initShellParser();
    });
    const decide = (command: string): string[] | undefined => {
      const policy = new Policy({
        workspace: loadPolicyText(`{ "version": 1, "rules": [
          { "tools": ["builtin.run_command"], "commands": ["gh *"], "decision": "allow", "sandbox": { "env": ["GITHUB_TOKEN", "GH_HOST_TOKEN"] } },
          { "tools": ["builtin.run_command"], "commands": ["git push *"], "decision": "allow", "sandbox": { "env": ["GITHUB_TOKEN"] } },
          { "tools": ["builtin.run_command"], "commands": ["echo *"], "decision": "allow" },
          { "tools": ["builtin.run_command"], "commands": ["curl *"], "decision": "ask" }
        ] }`, '/ws/.agentpolicy.jsonc'),
      });
      return policy.decide({ tool: RUN_COMMAND, input: { command }, agent: 'a' }, { workspaceFolder: '/ws', sandbox: true }).sandbox?.env;
    };
    it('one part: its rule\'s names; several: the intersection; a part no rule passes (or one only asked): none', () => {
      assert.deepEqual(decide('gh pr list'), ['GH_HOST_TOKEN', 'GITHUB_TOKEN']);
      assert.deepEqual(decide('gh pr list && git push origin'), ['GITHUB_TOKEN']);
      assert.equal(decide('gh pr list && echo hi'), undefined);
      assert.equal(decide('gh pr list && curl x'), undefined);
    });
    it('the schema takes only variable names, and "env" alone keeps the network as before', () => {
      const bad = loadPolicyText('{ "version": 1, "rules": [ { "commands": ["x"], "decision": "allow", "sandbox": { "env": ["NOT-A-NAME"] } } ] }', '/p.jsonc');
      assert.equal(bad.valid, false);
      assert.ok(bad.diagnostics.some((d) => d.code === 'schema' && /environment variable/.test(d.message)), JSON.stringify(bad.diagnostics));
      const empty = loadPolicyText('{ "version": 1, "rules": [ { "commands": ["x"], "decision": "allow", "sandbox": { "env": [] } } ] }', '/p.jsonc');
      assert.equal(empty.valid, false);
      const good = loadPolicyText('{ "version": 1, "rules": [ { "commands": ["x"], "decision": "allow", "sandbox": { "env": ["NPM_TOKEN"], "network": true } } ] }', '/p.jsonc');
      assert.equal(good.valid, true, JSON.stringify(good.diagnostics));
    });
  });

  describe('inside the real bubblewrap', function () {
    const probe = probeSandbox();
    let ws: string;
    const saved: Record<string, string | undefined> = {};
    const SET = { GITHUB_TOKEN: 'x', MY_SERVICE_API_KEY: 'y', AWS_SECRET_ACCESS_KEY: 'z', LANG: process.env.LANG ?? 'C.UTF-8' };
    before(function () {
      if (!probe.available) {
        console.log(`    (sandbox tests skipped: ${probe.reason})`);
        this.skip();
      }
      for (const [k, v] of Object.entries(SET)) {
        saved[k] = process.env[k];
        process.env[k] = v;
      }
    });
    after(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });
    beforeEach(() => {
      ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-env-')));
    });
    afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

    async function envIn(sandboxed: boolean, passEnv?: string[]): Promise<Set<string>> {
      const context: ToolRunContext = {
        sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal,
        ...(sandboxed ? { sandbox: { network: false, protectedWritable: false, protectedFiles: [], ...(passEnv ? { env: passEnv } : {}) } } : {}),
      };
      const tool = runCommandTool();
      const checked = tool.check({ command: 'env; cat /proc/1/environ | tr "\\0" "\\n"' });
      if (!checked.ok) throw new Error(checked.error);
      const result = (await tool.run(checked.value, context)) as RunCommandResult;
      return new Set(result.stdout.split('\n').map((line) => line.split('=')[0]!).filter((n) => n !== ''));
    }

    it('withholds GITHUB_TOKEN, MY_SERVICE_API_KEY and AWS_SECRET_ACCESS_KEY (from the command and bwrap alike), keeps PATH, HOME and LANG', async () => {
      const outside = await envIn(false);
      assert.ok(outside.has('GITHUB_TOKEN'), 'control: unsandboxed, the variable is there');
      const inside = await envIn(true);
      for (const name of ['GITHUB_TOKEN', 'MY_SERVICE_API_KEY', 'AWS_SECRET_ACCESS_KEY']) assert.ok(!inside.has(name), name);
      for (const name of ['PATH', 'HOME', 'LANG']) assert.ok(inside.has(name), name);
    });

    it('passes the names the decision passes', async () => {
      const inside = await envIn(true, ['GITHUB_TOKEN']);
      assert.ok(inside.has('GITHUB_TOKEN'));
      assert.ok(!inside.has('MY_SERVICE_API_KEY') && !inside.has('AWS_SECRET_ACCESS_KEY'));
    });

    it('points npm\'s and pip\'s caches at the private /tmp, where npm can write (the home folder is read-only)', async function () {
      if (!fs.existsSync('/usr/bin/npm') && !process.env.PATH?.split(':').some((d) => fs.existsSync(path.join(d, 'npm')))) this.skip();
      const context: ToolRunContext = {
        sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal,
        sandbox: { network: false, protectedWritable: false, protectedFiles: [] },
      };
      const tool = runCommandTool();
      const checked = tool.check({ command: 'npm config get cache && mkdir -p "$(npm config get cache)/x" && echo $XDG_CACHE_HOME $PIP_CACHE_DIR' });
      if (!checked.ok) throw new Error(checked.error);
      const result = (await tool.run(checked.value, context)) as RunCommandResult;
      assert.equal(result.exitCode, 0, result.stderr);
      assert.equal(result.stdout, '/tmp/.cache/npm\n/tmp/.cache /tmp/.cache/pip\n');
    });
  });
});
