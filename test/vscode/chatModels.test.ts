// Our models in VS Code's model picker, their pure halves in plain Node: what the provider offers,
// the reference a picked model maps to, requests and responses as the provider converts them, and
// what the scripted model answers when VS Code asks it itself.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { lmRequestOf, parseLmReference } from '../../src/vscode/models/lmMessages.js';
import { CHAT_VENDOR, chatModelReferenceOf, chatModelsOffered, openaiCompatibleModelsIn, SCRIPTED_CHAT_MODEL } from '../../src/vscode/models/chatModelCatalog.js';
import { responsePartsOf, runtimeRequestOf, type ProviderMessage } from '../../src/vscode/models/chatModelMessages.js';
import { scriptedChatAnswer } from '../../src/vscode/models/scriptedChatModel.js';
import type { Message, ModelToolSpec } from '../../src/runtime/model/model.js';

const signal = new AbortController().signal;
const tool = (name: string): ModelToolSpec => ({ name, description: `the ${name} tool`, inputSchema: { type: 'object', properties: {} } });

describe('the models Agent Policy offers in the model picker', () => {
  it('offers the scripted model first, then each OpenAI-compatible model once, naming the endpoint\'s host', () => {
    const names = openaiCompatibleModelsIn(['scripted:scenario.jsonc', 'openai-compatible:mistral-large-latest', undefined, 'openai-compatible:llama3.1:8b', ' openai-compatible: mistral-large-latest ', 'vscode-lm:copilot/gpt-4o']);
    assert.deepEqual(names, ['mistral-large-latest', 'llama3.1:8b']);
    const offered = chatModelsOffered(names, 'https://user:secret@api.mistral.ai/v1');
    assert.deepEqual(offered.map((m) => m.id), [SCRIPTED_CHAT_MODEL, 'openai-compatible:mistral-large-latest', 'openai-compatible:llama3.1:8b']);
    assert.deepEqual(offered.map((m) => m.family), [SCRIPTED_CHAT_MODEL, 'mistral-large-latest', 'llama3.1:8b']);
    assert.equal(offered[1]!.detail, 'api.mistral.ai');
    for (const m of offered) {
      assert.equal(m.capabilities.toolCalling, true, `${m.id} takes tools`);
      assert.doesNotMatch(JSON.stringify(m), /secret/, 'user info in the base URL is never shown');
    }
  });

  it('leaves out names that do not look like a model\'s (spaces, control characters, very long)', () => {
    const odd = ['openai-compatible:', 'openai-compatible:two words', 'openai-compatible:bad\u0000name', 'openai-compatible:line\nbreak', `openai-compatible:${'x'.repeat(200)}`, 'openai-compatible:-leading'];
    assert.deepEqual(openaiCompatibleModelsIn(odd), []);
    assert.deepEqual(openaiCompatibleModelsIn(['openai-compatible:meta-llama/Llama-3-70b']), ['meta-llama/Llama-3-70b']);
  });

  it('says the endpoint is unusable rather than failing when the base URL is not a URL', () => {
    assert.equal(chatModelsOffered(['gpt-4o'], 'not a url')[1]!.detail, 'an unusable base URL');
  });
});

describe('the model reference of a model picked in the Chat view', () => {
  it('our scripted model: none (each agent keeps its own scenario); our OpenAI-compatible model: its openai-compatible: reference', () => {
    assert.equal(chatModelReferenceOf({ vendor: CHAT_VENDOR, id: SCRIPTED_CHAT_MODEL, family: SCRIPTED_CHAT_MODEL }), undefined);
    for (const name of ['gpt-4o', 'llama3.1:8b', 'meta-llama/Llama-3-70b']) {
      const offered = chatModelsOffered([name], 'https://api.openai.com/v1')[1]!;
      assert.equal(chatModelReferenceOf({ vendor: CHAT_VENDOR, id: offered.id, family: offered.family }), `openai-compatible:${name}`);
    }
  });

  it('another vendor\'s model: vscode-lm:<vendor>/<family>', () => {
    assert.equal(chatModelReferenceOf({ vendor: 'copilot', id: 'gpt-4o-2024', family: 'gpt-4o' }), 'vscode-lm:copilot/gpt-4o');
    assert.equal(chatModelReferenceOf({ vendor: 'acme', id: 'x', family: 'models/large' }), 'vscode-lm:acme/models/large');
  });

  it('refuses, saying so, an id of ours it never gave and fields that would not read back as the same model', () => {
    const bad = [
      { vendor: CHAT_VENDOR, id: 'openai-compatible:two words', family: 'x' },
      { vendor: CHAT_VENDOR, id: 'something-else', family: 'x' },
      { vendor: 'evil/vendor', id: 'x', family: 'gpt-4o' },
      { vendor: 'copilot', id: 'x', family: ' gpt-4o' },
      { vendor: 'copilot', id: 'x', family: 'gpt\n4o' },
      { vendor: '', id: 'x', family: 'gpt-4o' },
      { vendor: 'copilot', id: 'x', family: '' },
    ];
    for (const model of bad) assert.throws(() => chatModelReferenceOf(model), /the model picked in the Chat view \(.*\).*pick another/, JSON.stringify(model));
  });

  it('property: whatever strings a model carries, the reference is refused or reads back as exactly its vendor and family', () => {
    const text = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('copilot', 'gpt-4o', 'a/b', ' x', 'x ', 'line\nbreak', 'tab\t', '\u2028', CHAT_VENDOR));
    fc.assert(fc.property(text, text, text, (vendor, id, family) => {
      let reference: string | undefined;
      try {
        reference = chatModelReferenceOf({ vendor, id, family });
      } catch (error) {
        assert.match((error as Error).message, /pick another/);
        return;
      }
      if (vendor === CHAT_VENDOR) {
        assert.ok(reference === undefined ? id === SCRIPTED_CHAT_MODEL : reference === id, `${JSON.stringify(id)} → ${reference}`);
        return;
      }
      assert.deepEqual(parseLmReference(reference!), { vendor, family }, `${JSON.stringify({ vendor, family })} → ${reference}`);
    }), { numRuns: 2000 });
  });
});

describe('requests and responses as our provider converts them', () => {
  const conversation: Message[] = [
    { role: 'user', content: 'write the notes' },
    { role: 'assistant', content: 'I will write them.', toolCalls: [{ id: 'call_1', name: 'write_file', input: { path: 'N.md', content: 'x' } }, { id: 'call_2', name: 'list_files', input: {} }] },
    { role: 'tool', callId: 'call_1', name: 'write_file', content: 'wrote N.md' },
    { role: 'tool', callId: 'call_2', name: 'list_files', content: 'N.md' },
    { role: 'user', content: 'and now?' },
  ];

  it('reads back the conversation the vscode-lm: provider sends (instructions arrive as the first user message)', () => {
    const sent = lmRequestOf({ instructions: 'Be brief.', messages: conversation, tools: [tool('write_file')] });
    const back = runtimeRequestOf(sent.messages, sent.tools);
    assert.deepEqual(back.messages, [{ role: 'user', content: 'Be brief.' }, ...conversation]);
    assert.equal(back.instructions, '');
    assert.deepEqual(back.tools, [tool('write_file')]);
  });

  it('takes system messages as the instructions, joins text parts, puts results before text, and gives a tool without a schema an empty one', () => {
    const messages: ProviderMessage[] = [
      { role: 'system', parts: [{ type: 'text', value: 'Rule one.' }] },
      { role: 'assistant', parts: [{ type: 'toolCall', callId: 'c', name: 'read_file', input: { path: 'a' } }] },
      { role: 'user', parts: [{ type: 'text', value: 'thanks, ' }, { type: 'toolResult', callId: 'c', content: 'A' }, { type: 'text', value: 'go on' }] },
      { role: 'user', parts: [{ type: 'toolResult', callId: 'unknown', content: 'B' }] },
    ];
    const back = runtimeRequestOf(messages, [{ name: 'read_file', description: 'reads' }]);
    assert.equal(back.instructions, 'Rule one.');
    assert.deepEqual(back.messages, [
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'read_file', input: { path: 'a' } }] },
      { role: 'tool', callId: 'c', name: 'read_file', content: 'A' },
      { role: 'user', content: 'thanks, go on' },
      { role: 'tool', callId: 'unknown', name: '', content: 'B' },
    ]);
    assert.deepEqual(back.tools[0]!.inputSchema, { type: 'object', properties: {} });
  });

  it('reports the text first, then each tool call with its id', () => {
    assert.deepEqual(responsePartsOf({ text: 'Let me look.', toolCalls: [{ id: 'a', name: 'list_files', input: { path: '.' } }, { id: 'b', name: 'read_file', input: { path: 'R' } }] }), [
      { type: 'text', value: 'Let me look.' },
      { type: 'toolCall', callId: 'a', name: 'list_files', input: { path: '.' } },
      { type: 'toolCall', callId: 'b', name: 'read_file', input: { path: 'R' } },
    ]);
    assert.deepEqual(responsePartsOf({ text: '', toolCalls: [] }), [], 'an empty answer reports nothing');
  });

  it('never reports a call whose arguments are not an object as a call with {} (a tool could run with nothing asked): it says so', () => {
    const parts = responsePartsOf({ text: '', toolCalls: [{ id: 'a', name: 'run_command', input: '{"command": "rm' }, { id: 'b', name: 'list_files', input: {} }] });
    assert.deepEqual(parts.filter((p) => p.type === 'toolCall').map((p) => p.type === 'toolCall' && p.name), ['list_files']);
    const said = parts.find((p) => p.type === 'text');
    assert.match(said?.type === 'text' ? said.value : '', /called run_command with arguments that are not a JSON object; that call was left out/);
  });
});

describe('the scripted model answering VS Code itself', () => {
  const tools = ['list_files', 'read_file', 'write_file'].map(tool);

  it('plays the embedded default scenario move by move when the request offers its tools', async () => {
    const first = await scriptedChatAnswer({ instructions: '', messages: [{ role: 'user', content: 'go' }], tools }, signal);
    assert.deepEqual(first.toolCalls.map((c) => [c.name, c.input]), [['list_files', { path: '.' }]]);
    const messages: Message[] = [{ role: 'user', content: 'go' }];
    let answer = first;
    for (let move = 0; move < 3; move++) {
      messages.push({ role: 'assistant', content: answer.text, toolCalls: answer.toolCalls });
      for (const c of answer.toolCalls) messages.push({ role: 'tool', callId: c.id, name: c.name, content: 'ok' });
      answer = await scriptedChatAnswer({ instructions: '', messages, tools }, signal);
    }
    assert.deepEqual(answer, { text: 'I listed the workspace, read README.md and wrote AGENT_NOTES.md.', toolCalls: [] });
  });

  it('says plainly what it is when the request does not offer the tool its move calls, or the script is over', async () => {
    const noTools = await scriptedChatAnswer({ instructions: '', messages: [{ role: 'user', content: 'hello?' }], tools: [tool('copilot_search')] }, signal);
    assert.equal(noTools.toolCalls.length, 0);
    assert.match(noTools.text, /^I am Agent Policy's scripted model: .*its next move calls list_files, which this request does not offer.*type @agents in the Chat view/);
    const past = Array.from({ length: 5 }, (): Message => ({ role: 'assistant', content: 'x', toolCalls: [] }));
    const over = await scriptedChatAnswer({ instructions: '', messages: past, tools }, signal);
    assert.match(over.text, /the script has no further move/);
  });
});

describe('the manifest contributes the provider', () => {
  it('under the vendor the provider registers, its name a %key% of package.nls.json', () => {
    const read = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8'));
    const manifest = read('package.json') as { contributes: { languageModelChatProviders: Array<{ vendor: string; displayName: string }> } };
    const key = 'languageModelChatProvider.agent-policy.displayName';
    assert.deepEqual(manifest.contributes.languageModelChatProviders, [{ vendor: CHAT_VENDOR, displayName: `%${key}%` }]);
    assert.equal((read('package.nls.json') as Record<string, string>)[key], 'Agent Policy');
  });
});
