// Result review under other makers' hooks: the host runs the tool after its pre-tool hook and gives
// the result to its model itself, so no result can be held. A `"review": "result"` rule asks
// before the call instead (Claude Code's own ask, with a reason saying why), never allowed silently.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';

describe('result review under a hook', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-review-')));
    fs.writeFileSync(path.join(dir, '.agentpolicy.jsonc'), JSON.stringify({
      version: 1,
      rules: [
        { id: 'fetch-reviewed', tools: ['builtin.fetch'], decision: 'allow', review: 'result', reason: 'pages may carry instructions' },
        { tools: ['builtin.read_file'], decision: 'allow' },
      ],
    }));
    env = { XDG_STATE_HOME: path.join(dir, 'state') };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function hook(toolName: string, toolInput: unknown): Promise<{ permissionDecision: string; permissionDecisionReason: string }> {
    const out: string[] = [];
    const stdin = JSON.stringify({ session_id: 's', cwd: dir, tool_name: toolName, tool_input: toolInput });
    const code = await main(['hook', '--agent', 'claude'], { out: (l) => out.push(l), err: () => undefined, cwd: dir, readStdin: () => stdin, env });
    assert.equal(code, 0);
    return JSON.parse(out.join('\n')).hookSpecificOutput;
  }

  it('an allow with review asks before the call, and says why', async () => {
    const fetched = await hook('WebFetch', { url: 'https://docs.example/', prompt: 'read' });
    assert.equal(fetched.permissionDecision, 'ask');
    assert.match(fetched.permissionDecisionReason, /pages may carry instructions \(the rule holds this tool's result for review, which Claude Code cannot do .*asked before it runs instead\)/);
    // A rule without review still allows.
    assert.equal((await hook('Read', { file_path: path.join(dir, 'a.txt') })).permissionDecision, 'allow');
  });
});
