// `remember` as the widest grant a person may give: "session", "never" or a duration. Its
// grammar, the schema and its diagnostics, the decision of a call whose parts ask with different
// `remember`s, and what `agentpolicy explain` says.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';
import { toJson } from '../../src/policy/file/diagnostics.js';
import {
  describeRemember, durationLabel, durationSeconds, isRemember, narrowestRemember, offeredDurations, rememberSeconds,
} from '../../src/policy/file/grantLength.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

function policyText(rules: readonly unknown[]): string {
  return `{\n  "version": 1,\n  "rules": [\n${rules.map((r) => `    ${JSON.stringify(r)}`).join(',\n')}\n  ]\n}\n`;
}

describe('remember: the widest grant', () => {
  it('reads durations of whole seconds, minutes or hours up to 24 hours', () => {
    assert.deepEqual(['15m', '1h', '90s', '24h', '1440m'].map(durationSeconds), [900, 3600, 90, 86400, 86400]);
    for (const bad of ['0m', '25h', '86401s', '15', '1d', '15 m', '-1m', '015m', '1.5h', 'm', '', '15M', ' 15m']) {
      assert.equal(durationSeconds(bad), undefined, bad);
      assert.equal(isRemember(bad), false, bad);
    }
    assert.ok(isRemember('session') && isRemember('never') && isRemember('15m'));
  });

  it('orders never < a duration < session, and a call takes the narrowest of its parts', () => {
    assert.deepEqual(['never', '15m', '1h', 'session'].map((r) => rememberSeconds(r as never)), [0, 900, 3600, Infinity]);
    assert.equal(narrowestRemember(['session', '1h', '15m']), '15m');
    assert.equal(narrowestRemember(['1h', 'never']), 'never');
    assert.equal(narrowestRemember([]), 'session');
  });

  it('offers 15 minutes and 1 hour where they fit, and the rule\'s own duration', () => {
    assert.deepEqual(offeredDurations('session'), [900, 3600]);
    assert.deepEqual(offeredDurations('1h'), [900, 3600]);
    assert.deepEqual(offeredDurations('15m'), [900]);
    assert.deepEqual(offeredDurations('30m'), [900, 1800]);
    assert.deepEqual(offeredDurations('5m'), [300]);
    assert.deepEqual(offeredDurations('2h'), [900, 3600, 7200]);
    assert.deepEqual(offeredDurations('never'), []);
    assert.deepEqual([900, 3600, 90, 5400, 7200].map(durationLabel), ['15 Minutes', '1 Hour', '1 Minute 30 Seconds', '1 Hour 30 Minutes', '2 Hours']);
    assert.equal(describeRemember('session'), 'once, for 15 minutes, for 1 hour or for the session');
    assert.equal(describeRemember('15m'), 'once or for 15 minutes (remember: 15m)');
    assert.equal(describeRemember('never'), 'once only (remember: never)');
  });

  describe('in the schema', () => {
    it('accepts "session", "never" and durations on ask rules', () => {
      for (const remember of ['session', 'never', '15m', '1h', '90s']) {
        const layer = loadPolicyText(policyText([{ decision: 'ask', remember }]), 'p.jsonc', 'workspace');
        assert.equal(layer.valid, true, `${remember}: ${JSON.stringify(layer.diagnostics)}`);
      }
    });

    it('a malformed or too long duration is a `schema` error at the value, saying what is accepted', () => {
      for (const remember of ['forever', '2d', '25h', '0m', 15]) {
        const text = policyText([{ id: 'x', decision: 'ask', remember }]);
        const layer = loadPolicyText(text, 'p.jsonc', 'workspace');
        assert.equal(layer.valid, false, String(remember));
        const [d] = layer.diagnostics.map((x) => toJson(x, layer.parsed.lines)).filter((x) => x.code === 'schema');
        assert.ok(d, JSON.stringify(layer.diagnostics));
        assert.equal(d.line, 4);
        assert.match(d.message, /remember/);
        if (typeof remember === 'string') assert.match(d.message, /duration such as "15m"/);
      }
    });

    it('remember stays an ask-only field', () => {
      const layer = loadPolicyText(policyText([{ decision: 'allow', remember: '15m' }]), 'p.jsonc', 'workspace');
      assert.equal(layer.valid, false);
      assert.match(layer.diagnostics[0]!.message, /ask/);
    });
  });

  describe('in decisions and explain', () => {
    before(async () => {
      await initShellParser();
    });
    const rules = [
      { id: 'make', tools: ['builtin.run_command'], commands: ['make *'], decision: 'ask', remember: '15m' },
      { id: 'npm', tools: ['builtin.run_command'], commands: ['npm *'], decision: 'ask', remember: '1h' },
      { id: 'rest', tools: ['builtin.run_command'], decision: 'ask' },
    ];

    it('a call whose parts ask takes the narrowest remember of them', () => {
      const layer = loadPolicyText(policyText(rules), 'p.jsonc', 'workspace');
      const policy = new Policy({ workspace: layer });
      const decide = (command: string) => policy.decide({ tool: { id: 'builtin.run_command' }, input: { command }, agent: 'main' }, { workspaceFolder: os.tmpdir(), followSymlinks: false });
      assert.equal(decide('npm test').ask?.remember, '1h');
      assert.equal(decide('npm test && ls').ask?.remember, '1h');
      assert.equal(decide('npm test && make all').ask?.remember, '15m');
      assert.equal(decide('ls').ask?.remember, 'session');
    });

    it('agentpolicy explain says which grants a person may give', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-remember-'));
      try {
        fs.writeFileSync(path.join(dir, '.agentpolicy.jsonc'), policyText(rules));
        const explain = async (command: string): Promise<string[]> => {
          const out: string[] = [];
          await main(['explain', '--tool', 'builtin.run_command', '--input', JSON.stringify({ command })], { out: (l) => out.push(l), err: () => undefined, cwd: dir });
          return out.filter((l) => l.startsWith('ask:'));
        };
        assert.deepEqual(await explain('make all'), ['ask: a person may allow once or for 15 minutes (remember: 15m)']);
        assert.deepEqual(await explain('npm test'), ['ask: a person may allow once, for 15 minutes or for 1 hour (remember: 1h)']);
        assert.deepEqual(await explain('ls'), ['ask: a person may allow once, for 15 minutes, for 1 hour or for the session']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
