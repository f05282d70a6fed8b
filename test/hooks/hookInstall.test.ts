// Installing the hooks into a temp folder, per host: the exact entry each host reads, a file of
// someone else's kept (comments, other hooks) and given back byte for byte on removal, installing
// twice changing nothing, files that are not JSONC refused with nothing written, every file we
// write protected, and the command lines run by a real shell.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'jsonc-parser';
import { hookTargets, isOurHookCommand, launcherFor } from '../../src/hooks/install/hookEntries.js';
import { HookFileError } from '../../src/hooks/install/hookFileEdit.js';
import { applyHookInstall, changeKind, installedHookHosts, planHookChanges, planHookInstall, type HookInstallOptions } from '../../src/hooks/install/hookInstall.js';
import { HOST_AGENTS, type HostAgent } from '../../src/hooks/hosts/hostAgents.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { builtinTools } from '../../src/runtime/tools/builtins.js';
import { DEFAULT_PROTECTED_FILES, protectedFilesHook } from '../../src/runtime/calls/protected.js';

const SHARED = 'agentpolicy hook --agent "$([ -n "${COPILOT_CLI:-}" ] && echo copilot || echo vscode)" --timeout 120';

/** What each host's file holds after installing into an empty folder (docs/hook-hosts.md, docs/hooks.md). */
const FRESH: Record<HostAgent, { file: string; value: unknown }> = {
  claude: {
    file: '.claude/settings.json',
    value: { hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'agentpolicy hook --agent claude --timeout 120', timeout: 120, onFailure: 'block' }] }] } },
  },
  codex: {
    file: '.codex/hooks.json',
    value: { hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'agentpolicy hook --agent codex --timeout 120', timeout: 120 }] }] } },
  },
  gemini: {
    file: '.gemini/settings.json',
    value: { hooks: { BeforeTool: [{ matcher: '*', hooks: [{ type: 'command', command: 'agentpolicy hook --agent gemini --timeout 120', timeout: 120000, name: 'agentpolicy' }] }] } },
  },
  copilot: {
    file: '.github/hooks/agentpolicy.json',
    value: { version: 1, hooks: { preToolUse: [{ type: 'command', bash: SHARED, timeoutSec: 120 }] } },
  },
  vscode: {
    file: '.github/hooks/agentpolicy.json',
    value: { version: 1, hooks: { preToolUse: [{ type: 'command', bash: SHARED, timeoutSec: 120 }] } },
  },
  cursor: {
    file: '.cursor/hooks.json',
    value: {
      version: 1,
      hooks: {
        beforeShellExecution: [{ command: 'agentpolicy hook --agent cursor --timeout 120', timeout: 120, failClosed: true }],
        beforeMCPExecution: [{ command: 'agentpolicy hook --agent cursor --timeout 120', timeout: 120, failClosed: true }],
        beforeReadFile: [{ command: 'agentpolicy hook --agent cursor --timeout 120', timeout: 120, failClosed: true }],
        preToolUse: [{ command: 'agentpolicy hook --agent cursor --timeout 120', matcher: 'Write|Delete', timeout: 120, failClosed: true }],
      },
    },
  },
};

/** A file someone already has: comments, other settings, other people's hooks, some on one line. */
const EXISTING: Record<HostAgent, string> = {
  claude: `{
  // team settings
  "model": "opus",
  "permissions": { "allow": ["Bash(npm test)"] },
  "hooks": {
    /* formatting after edits */
    "PostToolUse": [{ "matcher": "Edit", "hooks": [{ "type": "command", "command": "prettier --write" }] }],
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [ { "type": "command", "command": "mytool hook --agent claude" } ] } // not ours
    ]
  }
}
`,
  codex: `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{ "type": "command", "command": "python3 check.py" }]
      }
    ],
    "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]
  }
}
`,
  gemini: `{
    // four spaces here
    "general": { "vimMode": true },
    "hooks": {
        "BeforeTool": [
            { "matcher": "write_file", "hooks": [{ "type": "command", "command": "./lint.sh", "timeout": 5000 }] }
        ]
    }
}
`,
  copilot: `{
\t"version": 1,
\t// the team's audit hook
\t"hooks": {
\t\t"preToolUse": [{ "type": "command", "bash": "./audit.sh", "timeoutSec": 5 }],
\t\t"sessionStart": [{ "type": "command", "bash": "echo hi" }]
\t}
}
`,
  vscode: `{\r\n  "version": 1,\r\n  "hooks": {\r\n    "preToolUse": [\r\n      { "type": "command", "command": "./vscode-audit.sh" }\r\n    ]\r\n  }\r\n}\r\n`,
  cursor: `{
  "version": 1,
  "hooks": {
    // ours goes in next to these
    "beforeShellExecution": [{ "command": "./shell-guard.sh" }],
    "afterFileEdit": [{ "command": "./format.sh" }]
  }
}
`,
};

describe('hook install', () => {
  let ws: string;
  const file = (rel: string): string => path.join(ws, ...rel.split('/'));
  const read = (rel: string): string | undefined => (fs.existsSync(file(rel)) ? fs.readFileSync(file(rel), 'utf8') : undefined);
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(file(rel)), { recursive: true });
    fs.writeFileSync(file(rel), text);
  };
  const install = (agents: HostAgent[], more: Partial<HookInstallOptions> = {}) => {
    const plan = planHookInstall({ workspaceFolder: ws, agents, remove: false, ...more });
    applyHookInstall(plan);
    return plan;
  };
  const remove = (agents: HostAgent[], more: Partial<HookInstallOptions> = {}) => {
    const plan = planHookInstall({ workspaceFolder: ws, agents, remove: true, ...more });
    applyHookInstall(plan);
    return plan;
  };
  /** Every file under the workspace with its text. */
  const snapshot = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const rel of fs.readdirSync(ws, { recursive: true }) as string[]) {
      const full = path.join(ws, rel);
      if (fs.statSync(full).isFile()) out[rel] = fs.readFileSync(full, 'utf8');
    }
    return out;
  };

  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-install-')));
  });
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

  for (const host of HOST_AGENTS) {
    describe(host, () => {
      const { file: rel, value } = FRESH[host];

      it(`writes ${rel} with the entry the host reads, into an empty folder`, () => {
        const plan = install([host]);
        assert.deepEqual(plan.changes.map((c) => [c.relativePath, changeKind(c)]), [[rel, 'create']]);
        assert.deepEqual(JSON.parse(read(rel)!), value, 'plain JSON, nothing else');
        assert.ok(read(rel)!.endsWith('}\n'));
      });

      it('keeps an existing file (comments, other settings, other hooks) and adds only our entry', () => {
        write(rel, EXISTING[host]);
        const before = parse(EXISTING[host]) as Record<string, unknown>;
        install([host]);
        const text = read(rel)!;
        const after = parse(text) as { hooks: Record<string, unknown[]> };
        // Everything that was there is still there, and first in each array.
        for (const [key, v] of Object.entries(before)) {
          if (key !== 'hooks') assert.deepEqual(after[key as 'hooks'], v, key);
        }
        const beforeHooks = before.hooks as Record<string, unknown[]>;
        for (const [event, entries] of Object.entries(beforeHooks)) assert.deepEqual(after.hooks[event]!.slice(0, entries.length), entries, event);
        // Ours is what an empty folder gets, in each of its arrays.
        const fresh = (value as { hooks: Record<string, unknown[]> }).hooks;
        for (const [event, [ours]] of Object.entries(fresh)) assert.deepEqual(after.hooks[event]!.at(-1), ours, event);
        for (const comment of EXISTING[host].match(/\/\/[^\r\n]*|\/\*.*?\*\//g) ?? []) assert.ok(text.includes(comment), comment);
        assert.equal(text.includes('\r\n'), EXISTING[host].includes('\r\n'), 'the file keeps its line ends');
      });

      it('changes nothing when installed twice', () => {
        write(rel, EXISTING[host]);
        install([host]);
        const once = snapshot();
        const again = install([host]);
        assert.deepEqual(again.changes.map(changeKind), ['unchanged']);
        assert.deepEqual(snapshot(), once);
      });

      it('gives the file back byte for byte on removal', () => {
        write(rel, EXISTING[host]);
        install([host]);
        const plan = remove([host]);
        assert.deepEqual(plan.changes.map(changeKind), ['update']);
        assert.equal(read(rel), EXISTING[host]);
        assert.deepEqual(remove([host]).changes.map(changeKind), ['unchanged'], 'nothing of ours left to remove');
      });

      it('deletes the file on removal when it held nothing but ours', () => {
        install([host]);
        const plan = remove([host]);
        assert.deepEqual(plan.changes.map(changeKind), ['delete']);
        assert.equal(read(rel), undefined);
      });

      it('updates our entry when the timeout or the command changes, keeping one', () => {
        write(rel, EXISTING[host]);
        install([host], { timeoutSeconds: 30 });
        install([host], { timeoutSeconds: 90, command: 'npx agentpolicy' });
        const text = read(rel)!;
        assert.equal(text.split('agentpolicy hook --agent').length - 1, Object.keys((value as { hooks: object }).hooks).length, 'one entry per array');
        assert.ok(text.includes('npx agentpolicy hook --agent') && text.includes('--timeout 90'));
        assert.ok(!text.includes('--timeout 30'));
        remove([host]);
        assert.equal(read(rel), EXISTING[host]);
      });

      it('refuses a file that is not JSONC, writing nothing (not even the other hosts\' files)', () => {
        write(rel, '{ "hooks": { "PreToolUse": [ }');
        const before = snapshot();
        const others = HOST_AGENTS.filter((h) => FRESH[h].file !== rel);
        assert.throws(() => install([...others, host]), (e: unknown) => e instanceof HookFileError && e.message.includes(rel) && /not valid JSON/.test(e.message));
        assert.throws(() => remove([host]), HookFileError);
        assert.deepEqual(snapshot(), before);
      });

      it('writes a file the protected-files hook guards', async () => {
        await initShellParser();
        const guard = protectedFilesHook(DEFAULT_PROTECTED_FILES.map((f) => path.resolve(ws, f)));
        const writeFile = builtinTools().find((t) => t.id === 'builtin.write_file')!;
        const reason = guard.check({ tool: writeFile, input: { path: rel, content: '{}' }, agent: 'a', workspaceFolder: ws });
        assert.match(reason ?? '', /protected file/);
      });
    });
  }

  it('refuses files shaped otherwise than their host reads them, writing nothing', () => {
    for (const [text, reason] of [['[1, 2]', /is not a JSON object/], ['{ "hooks": [] }', /"hooks" is not an object/], ['{ "hooks": { "PreToolUse": {} } }', /"hooks.PreToolUse" is not an array/]] as const) {
      write('.claude/settings.json', text);
      assert.throws(() => install(['claude']), (e: unknown) => e instanceof HookFileError && reason.test(e.message), text);
      assert.equal(read('.claude/settings.json'), text);
    }
  });

  it('takes an empty or comment-only file as an empty object', () => {
    write('.claude/settings.json', '');
    install(['claude']);
    assert.deepEqual(parse(read('.claude/settings.json')!), FRESH.claude.value);
    write('.codex/hooks.json', '// nothing yet\n');
    install(['codex']);
    assert.ok(read('.codex/hooks.json')!.startsWith('// nothing yet\n{'));
    assert.deepEqual(parse(read('.codex/hooks.json')!), FRESH.codex.value);
  });

  it('never touches other people\'s entries, even ones that look alike', () => {
    const others = [
      'mytool hook --agent claude --timeout 120', // another program's hook
      'agentpolicy hook --agent codex --timeout 120', // ours, but for another host
      'agentpolicy hook --agent claudette', // another host's name that starts like it
      'agentpolicy explain --tool x', // ours, not a hook
    ];
    const text = JSON.stringify({ hooks: { PreToolUse: others.map((command) => ({ matcher: '*', hooks: [{ type: 'command', command }] })) } }, null, 2);
    write('.claude/settings.json', text);
    install(['claude']);
    const after = parse(read('.claude/settings.json')!) as { hooks: { PreToolUse: { hooks: { command: string }[] }[] } };
    assert.deepEqual(after.hooks.PreToolUse.slice(0, 4).map((g) => g.hooks[0]!.command), others);
    assert.equal(after.hooks.PreToolUse.length, 5);
    remove(['claude']);
    assert.equal(read('.claude/settings.json'), text);
  });

  it('updates or removes only our handler when it shares a group someone made', () => {
    const group = { matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh' }, { type: 'command', command: 'agentpolicy hook --agent claude --timeout 5' }] };
    write('.claude/settings.json', JSON.stringify({ hooks: { PreToolUse: [group] } }, null, 2));
    install(['claude']);
    let after = parse(read('.claude/settings.json')!) as { hooks: { PreToolUse: typeof group[] } };
    assert.equal(after.hooks.PreToolUse.length, 1, 'no second group');
    assert.equal(after.hooks.PreToolUse[0]!.matcher, 'Bash');
    assert.deepEqual(after.hooks.PreToolUse[0]!.hooks[1], { type: 'command', command: 'agentpolicy hook --agent claude --timeout 120', timeout: 120, onFailure: 'block' });
    remove(['claude']);
    after = parse(read('.claude/settings.json')!) as { hooks: { PreToolUse: typeof group[] } };
    assert.deepEqual(after.hooks.PreToolUse, [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh' }] }]);
  });

  it('keeps one entry of ours when it finds several', () => {
    const ours = { matcher: '*', hooks: [{ type: 'command', command: 'agentpolicy hook --agent codex --timeout 120', timeout: 120 }] };
    write('.codex/hooks.json', JSON.stringify({ hooks: { PreToolUse: [ours, { matcher: 'x', hooks: [{ type: 'command', command: 'other' }] }, ours] } }, null, 2));
    install(['codex']);
    const after = parse(read('.codex/hooks.json')!) as { hooks: { PreToolUse: unknown[] } };
    assert.deepEqual(after.hooks.PreToolUse, [ours, { matcher: 'x', hooks: [{ type: 'command', command: 'other' }] }]);
  });

  it('leaves a folder that holds other files when it deletes ours, and removes .github/hooks/ when it was only ours', () => {
    install(['copilot', 'claude']);
    write('.claude/other.json', '{}');
    remove(['copilot', 'claude']);
    assert.ok(fs.existsSync(file('.claude/other.json')));
    assert.ok(!fs.existsSync(file('.github/hooks')));
  });

  it('gives Copilot CLI and VS Code one entry: installing either installs it, it stays while either is wanted', () => {
    assert.deepEqual(install(['vscode']).changes.map((c) => [c.relativePath, c.hosts]), [['.github/hooks/agentpolicy.json', ['copilot', 'vscode']]]);
    assert.deepEqual(installedHookHosts(ws), ['copilot', 'vscode']);
    const keep = planHookChanges({ workspaceFolder: ws, install: ['copilot'], remove: ['vscode'] });
    assert.deepEqual(keep.changes.map(changeKind), ['unchanged']);
    remove(['copilot']);
    assert.deepEqual(installedHookHosts(ws), []);
  });

  it('finds which hosts are installed, whatever launcher and timeout were written', () => {
    assert.deepEqual(installedHookHosts(ws), []);
    install(['claude', 'cursor'], { command: 'node /opt/agent-policy/dist/cli.js', timeoutSeconds: 30 });
    install(['gemini']);
    assert.deepEqual(installedHookHosts(ws), ['claude', 'gemini', 'cursor']);
    write('.codex/hooks.json', '{ not json');
    assert.deepEqual(installedHookHosts(ws), ['claude', 'gemini', 'cursor'], 'a file that cannot be read holds nothing');
  });

  it('does not overwrite a file that changed after it was planned', () => {
    const plan = planHookInstall({ workspaceFolder: ws, agents: ['claude'], remove: false });
    write('.claude/settings.json', '{ "model": "mine" }');
    assert.throws(() => applyHookInstall(plan), /changed while the hooks were being installed/);
    assert.equal(read('.claude/settings.json'), '{ "model": "mine" }');
  });

  it('refuses a timeout that is not a whole number of seconds', () => {
    for (const timeoutSeconds of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => planHookInstall({ workspaceFolder: ws, agents: ['claude'], remove: false, timeoutSeconds }), RangeError);
    }
  });
});

describe('hook command lines', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hook-launcher-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A stand-in launcher that prints the arguments it got, one a line. */
  const stub = (name: string): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n', { mode: 0o755 });
    return p;
  };
  const sh = (command: string, env: Record<string, string> = {}): string[] =>
    execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } }).trim().split('\n');
  const commandOf = (host: HostAgent, launcher: string): string => {
    const target = hookTargets({ launcher, timeoutSeconds: 120 }).find((t) => t.hosts.includes(host))!;
    const entry = target.slots[0]!.entry as { hooks?: { command: string }[]; command?: string; bash?: string };
    return entry.hooks?.[0]!.command ?? entry.command ?? entry.bash!;
  };

  it('quotes a launcher path with spaces and quotes for a POSIX shell, and runs a .js file with node', () => {
    const odd = stub("my tools/it's agentpolicy".replace('/', '-'));
    const launcher = launcherFor(odd, (p) => fs.existsSync(p));
    assert.deepEqual(sh(commandOf('claude', launcher)), ['hook', '--agent', 'claude', '--timeout', '120']);
    assert.ok(isOurHookCommand(commandOf('claude', launcher), ['claude'], launcher));
    const js = path.join(dir, 'dist dir', 'cli.js');
    fs.mkdirSync(path.dirname(js));
    fs.writeFileSync(js, '');
    assert.equal(launcherFor(js, (p) => fs.existsSync(p)), `node '${js}'`);
    assert.equal(launcherFor('node /x/dist/cli.js', (p) => fs.existsSync(p)), 'node /x/dist/cli.js', 'a command line is taken as given');
  });

  it('the shared Copilot CLI / VS Code entry runs the hook for Copilot CLI when COPILOT_CLI is set, for VS Code otherwise', () => {
    const launcher = stub('agentpolicy');
    const command = commandOf('copilot', launcher);
    assert.deepEqual(sh(command, { COPILOT_CLI: '1' }), ['hook', '--agent', 'copilot', '--timeout', '120']);
    assert.deepEqual(sh(command), ['hook', '--agent', 'vscode', '--timeout', '120']);
    assert.ok(isOurHookCommand(command, ['copilot'], launcher) && isOurHookCommand(command, ['vscode'], launcher));
    assert.ok(!isOurHookCommand(command, ['claude'], launcher));
  });
});
