// Which session a chat message goes to, from the conversation's history; the followups.
import assert from 'node:assert/strict';
import { followupsFor, keptCall, latestMetadata, MAX_KEPT_INPUT, metadataOf, planRequest, type PlanInput, type SessionState } from '../../src/vscode/chat/chatSessions.js';

const response = (metadata: unknown) => ({ participant: 'agentPolicy.agents', response: [], result: { metadata } });
const request = (prompt: string) => ({ prompt, participant: 'agentPolicy.agents', references: [] });
const states = new Map<string, SessionState>();
const plan = (over: Partial<PlanInput>) =>
  planRequest({ command: undefined, prompt: 'what do they cost?', history: [], agents: ['main', 'reviewers'], stateOf: (id) => states.get(id), ...over });

describe('chat sessions', () => {
  beforeEach(() => states.clear());

  it('the first message starts the first agent of .agents.jsonc; /agent <name> starts that one', () => {
    assert.deepEqual(plan({}), { kind: 'start', agent: 'main', prompt: 'what do they cost?' });
    assert.deepEqual(plan({ command: 'agent', prompt: 'reviewers  check the docs ' }), { kind: 'start', agent: 'reviewers', prompt: 'check the docs' });
    assert.deepEqual(plan({ command: 'agent', prompt: 'nobody do it' }), { kind: 'list-agents', unknown: 'nobody' });
    assert.deepEqual(plan({ command: 'agent', prompt: '' }), { kind: 'list-agents' });
    assert.deepEqual(plan({ command: 'agent', prompt: 'main' }), { kind: 'empty' });
    assert.deepEqual(plan({ prompt: '  ' }), { kind: 'empty' });
  });

  it("a later message continues the conversation's session once its turn has ended", () => {
    const history = [request('first'), response({ sessionId: 'sess_a1', agent: 'main' }), request('second'), response({ sessionId: 'sess_b2', agent: 'reviewers' })];
    states.set('sess_b2', 'completed');
    assert.deepEqual(plan({ history, prompt: 'and now?' }), { kind: 'continue', sessionId: 'sess_b2', agent: 'reviewers', prompt: 'and now?' });
    states.set('sess_b2', 'failed');
    assert.equal(plan({ history }).kind, 'continue');
    states.set('sess_b2', 'running');
    assert.deepEqual(plan({ history }), { kind: 'busy', sessionId: 'sess_b2', agent: 'reviewers' });
    states.set('sess_b2', 'cancelled');
    assert.deepEqual(plan({ history }), { kind: 'start', agent: 'reviewers', prompt: 'what do they cost?', note: 'cancelled' });
    states.delete('sess_b2');
    assert.deepEqual(plan({ history }), { kind: 'start', agent: 'reviewers', prompt: 'what do they cost?', note: 'gone' });
    // /agent always starts a new session, whatever the conversation had.
    states.set('sess_b2', 'completed');
    assert.deepEqual(plan({ history, command: 'agent', prompt: 'main again' }), { kind: 'start', agent: 'main', prompt: 'again' });
  });

  it('reads metadata field by field: anything malformed names no session', () => {
    assert.deepEqual(metadataOf({ metadata: { sessionId: 'sess_abc1', agent: 'main' } }), { sessionId: 'sess_abc1', agent: 'main' });
    for (const bad of [undefined, null, 'x', { sessionId: 'sess_abc1' }, { sessionId: '../etc', agent: 'main' }, { sessionId: 'sess_a', agent: 'main\nx' }, { sessionId: 7, agent: 'main' }]) {
      assert.equal(metadataOf({ metadata: bad }), undefined, JSON.stringify(bad));
    }
    const withCall = metadataOf({ metadata: { sessionId: 'sess_a', agent: 'main', lastCall: { toolId: 'builtin.write_file', agent: 'main', decision: 'ask', input: { path: 'x' }, callbackId: 'cb_1' } } });
    assert.deepEqual(withCall?.lastCall, { toolId: 'builtin.write_file', agent: 'main', decision: 'ask', input: { path: 'x' }, callbackId: 'cb_1' });
    assert.equal(metadataOf({ metadata: { sessionId: 'sess_a', agent: 'main', lastCall: { toolId: 'x', agent: 'main', decision: 'maybe' } } })?.lastCall, undefined);
    assert.equal(latestMetadata([response({ sessionId: 'sess_a', agent: 'main', lastCall: { toolId: 't.x', agent: 'main', decision: 'allow' } }), response({ sessionId: 'sess_a', agent: 'main' })], true)?.lastCall?.toolId, 't.x');
  });

  it('keeps a small input for Explain, not a large one', () => {
    assert.deepEqual(keptCall({ toolId: 'builtin.read_file', agent: 'main', decision: 'allow', input: { path: 'a' } }).input, { path: 'a' });
    assert.equal('input' in keptCall({ toolId: 'builtin.write_file', agent: 'main', decision: 'ask', input: { content: 'x'.repeat(MAX_KEPT_INPUT) } }), false);
  });

  it('followups: explain the last decision, show open callbacks, and add a rule when it asked', () => {
    assert.deepEqual(followupsFor(undefined), []);
    assert.deepEqual(followupsFor({ sessionId: 'sess_a', agent: 'main' }).map((f) => f.command), ['callbacks']);
    const asked = followupsFor({ sessionId: 'sess_a', agent: 'main', lastCall: { toolId: 'builtin.write_file', agent: 'main', decision: 'ask' } });
    assert.deepEqual(asked.map((f) => [f.command, f.label]), [['explain', 'Explain the last decision'], ['callbacks', 'Show open callbacks'], ['rule', 'Add a rule for this']]);
    assert.equal(plan({ command: 'explain', history: [response({ sessionId: 'sess_a', agent: 'main', lastCall: { toolId: 'builtin.read_file', agent: 'main', decision: 'allow' } })] }).kind, 'explain');
  });
});
