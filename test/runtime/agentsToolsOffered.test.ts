// What each agent of an agents file is offered (src/runtime/agents/agentsToolsOffered.ts), as the editor's
// Problems show it for `.agents.jsonc`: judged from the text the editor holds (not saved yet),
// under the policy in force. `agentpolicy check` is tested in test/cli/toolsOffered.test.ts.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAgentsFile } from '../../src/agents/agentsFile.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { toolsOfferedDiagnostics } from '../../src/runtime/agents/agentsToolsOffered.js';

describe('agents file: the tools each agent is offered', () => {
  it('judges the text given (an unsaved edit), not the file on disk, and says what it was judged by', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agents-offered-'));
    try {
      const file = path.join(dir, '.agents.jsonc');
      fs.writeFileSync(file, JSON.stringify({ agents: [{ name: 'saved', tools: ['builtin.read_file'] }] }));
      const text = JSON.stringify({ agents: [{ name: 'edited', tools: ['builtin.read_file', 'builtin.fetch'] }] }, null, 2);
      const policy = new Policy({ workspace: loadPolicyText(JSON.stringify({ version: 1, rules: [{ id: 'no-fetch', tools: ['builtin.fetch'], decision: 'deny' }] }), '.agentpolicy.jsonc') });
      const [only, ...rest] = toolsOfferedDiagnostics(parseAgentsFile(text, file), file, file, policy, 'the policies in force', text);
      assert.equal(rest.length, 0);
      assert.equal(only!.data.agent, 'edited');
      assert.deepEqual(only!.data.offered, ['builtin.read_file']);
      assert.deepEqual(only!.data.hidden.map((h) => h.rule?.id), ['no-fetch']);
      assert.equal(only!.diagnostic.severity, 'info');
      assert.equal(text.slice(only!.diagnostic.offset, only!.diagnostic.offset + only!.diagnostic.length), '"edited"');
      assert.match(only!.diagnostic.message, /\(under the policies in force\)$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
