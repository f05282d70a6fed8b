// The `vscode-lm:` provider's pure half (references, the conversion to the API's two roles, error
// texts) and where API keys are kept, in plain Node: neither module imports `vscode`.
import assert from 'node:assert/strict';
import { ModelError, type Message, type ModelToolSpec } from '../../src/runtime/model/model.js';
import { API_KEY_SECRET_PREFIX, originOf, resolveBaseUrl, secretKeyFor } from '../../src/vscode/models/apiKeys.js';
import { lmErrorMessage, lmReferenceOf, lmRequestOf, noModelMessage, parseLmReference } from '../../src/vscode/models/lmMessages.js';

const DEFAULT = 'https://api.openai.com/v1';

describe('vscode-lm references', () => {
  it('reads vendor and family, or a vendor alone for any of its models', () => {
    assert.deepEqual(parseLmReference('vscode-lm:copilot/gpt-4o'), { vendor: 'copilot', family: 'gpt-4o' });
    assert.deepEqual(parseLmReference(' vscode-lm: copilot / claude-3.5-sonnet '), { vendor: 'copilot', family: 'claude-3.5-sonnet' });
    assert.deepEqual(parseLmReference('vscode-lm:copilot'), { vendor: 'copilot' });
    assert.deepEqual(parseLmReference('vscode-lm:copilot/'), { vendor: 'copilot' });
  });

  it('keeps everything after the first slash as the family', () => {
    assert.deepEqual(parseLmReference('vscode-lm:acme/models/large'), { vendor: 'acme', family: 'models/large' });
  });

  it('refuses a reference without a vendor, saying how to write one', () => {
    for (const bad of ['vscode-lm:', 'vscode-lm', 'vscode-lm:/gpt-4o']) {
      assert.throws(() => parseLmReference(bad), (e: unknown) => e instanceof ModelError && /vscode-lm:copilot\/gpt-4o/.test(e.message), bad);
    }
    assert.throws(() => parseLmReference('openai-compatible:gpt-4o'), ModelError);
  });

  it('writes the reference of a model the way it is read', () => {
    const reference = lmReferenceOf({ vendor: 'copilot', family: 'gpt-4o' });
    assert.equal(reference, 'vscode-lm:copilot/gpt-4o');
    assert.deepEqual(parseLmReference(reference), { vendor: 'copilot', family: 'gpt-4o' });
  });
});

describe('the request as VS Code language model messages', () => {
  const tools: ModelToolSpec[] = [
    { name: 'read_file', description: 'Reads a file', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { path: { type: 'string' } } } },
  ];

  it('puts the instructions first as a User message, since the API has no system role', () => {
    const converted = lmRequestOf({ instructions: 'Be brief.', messages: [{ role: 'user', content: 'hello' }], tools: [] });
    assert.deepEqual(converted.messages, [
      { role: 'user', parts: [{ type: 'text', value: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', value: 'hello' }] },
    ]);
    assert.deepEqual(converted.tools, []);
  });

  it('leaves blank instructions out', () => {
    const converted = lmRequestOf({ instructions: '  \n', messages: [{ role: 'user', content: 'hello' }], tools: [] });
    assert.deepEqual(converted.messages, [{ role: 'user', parts: [{ type: 'text', value: 'hello' }] }]);
  });

  it('sends tool calls as Assistant parts and their results together in the next User message', () => {
    const messages: Message[] = [
      { role: 'user', content: 'look around' },
      { role: 'assistant', content: 'Let me look.', toolCalls: [
        { id: 'c1', name: 'list_files', input: { path: '.' } },
        { id: 'c2', name: 'read_file', input: { path: 'README.md' } },
      ] },
      { role: 'tool', callId: 'c1', name: 'list_files', content: 'README.md' },
      { role: 'tool', callId: 'c2', name: 'read_file', content: '# Hello' },
      { role: 'assistant', content: 'Done.', toolCalls: [] },
      { role: 'user', content: 'thanks' },
    ];
    assert.deepEqual(lmRequestOf({ instructions: '', messages, tools: [] }).messages, [
      { role: 'user', parts: [{ type: 'text', value: 'look around' }] },
      { role: 'assistant', parts: [
        { type: 'text', value: 'Let me look.' },
        { type: 'toolCall', callId: 'c1', name: 'list_files', input: { path: '.' } },
        { type: 'toolCall', callId: 'c2', name: 'read_file', input: { path: 'README.md' } },
      ] },
      { role: 'user', parts: [
        { type: 'toolResult', callId: 'c1', content: 'README.md' },
        { type: 'toolResult', callId: 'c2', content: '# Hello' },
      ] },
      { role: 'assistant', parts: [{ type: 'text', value: 'Done.' }] },
      { role: 'user', parts: [{ type: 'text', value: 'thanks' }] },
    ]);
  });

  it('leaves out an empty text part, and an assistant message with nothing in it', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'list_files', input: { path: '.' } }] },
      { role: 'tool', callId: 'c1', name: 'list_files', content: '' },
      { role: 'assistant', content: '', toolCalls: [] },
    ];
    assert.deepEqual(lmRequestOf({ instructions: '', messages, tools: [] }).messages, [
      { role: 'user', parts: [{ type: 'text', value: 'go' }] },
      { role: 'assistant', parts: [{ type: 'toolCall', callId: 'c1', name: 'list_files', input: { path: '.' } }] },
      { role: 'user', parts: [{ type: 'toolResult', callId: 'c1', content: '' }] },
    ]);
  });

  it('sends input that was not an object as {}, since a tool call part takes an object', () => {
    const messages: Message[] = [
      { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'x', input: 'not json' }, { id: 'b', name: 'x', input: null }, { id: 'c', name: 'x', input: [1] }] },
    ];
    const [assistant] = lmRequestOf({ instructions: '', messages, tools: [] }).messages;
    assert.deepEqual(assistant!.parts.map((p) => (p.type === 'toolCall' ? p.input : undefined)), [{}, {}, {}]);
  });

  it('describes tools by name, description and schema, without the $schema line', () => {
    const converted = lmRequestOf({ instructions: '', messages: [], tools });
    assert.deepEqual(converted.tools, [
      { name: 'read_file', description: 'Reads a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
    ]);
    assert.ok('$schema' in tools[0]!.inputSchema, 'the runtime\'s schema is not changed');
  });
});

describe('vscode-lm error messages', () => {
  const available = [
    { vendor: 'copilot', family: 'gpt-4o' },
    { vendor: 'copilot', family: 'gpt-4o' },
    { vendor: 'copilot', family: 'claude-3.5-sonnet' },
  ];

  it('lists the models there are when none matches', () => {
    const message = noModelMessage('vscode-lm:copilot/gpt-5', { vendor: 'copilot', family: 'gpt-5' }, available);
    assert.match(message, /no copilot\/gpt-5 model/);
    assert.match(message, /Available: vscode-lm:copilot\/claude-3\.5-sonnet, vscode-lm:copilot\/gpt-4o$/);
  });

  it('says that no provider is installed when VS Code has no model at all', () => {
    const message = noModelMessage('vscode-lm:copilot', { vendor: 'copilot' }, []);
    assert.match(message, /no language model is available in VS Code/);
    assert.match(message, /Install and sign in/);
  });

  it('tells how to give consent, and what NotFound and Blocked mean', () => {
    const model = 'GPT-4o (copilot/gpt-4o)';
    assert.match(lmErrorMessage('vscode-lm:copilot/gpt-4o', model, 'NoPermissions', ''), /may not use GPT-4o.*choose Allow.*Manage Language Model Access/);
    assert.match(lmErrorMessage('vscode-lm:copilot/gpt-4o', model, 'NotFound', 'gone'), /no longer available \(gone\).*Select Language Model/);
    assert.match(lmErrorMessage('vscode-lm:copilot/gpt-4o', model, 'Blocked', ''), /rate limit or quota/);
    assert.equal(lmErrorMessage('vscode-lm:copilot/gpt-4o', model, 'Unknown', 'Message exceeds token limit.'), 'vscode-lm:copilot/gpt-4o: GPT-4o (copilot/gpt-4o) failed: Message exceeds token limit.');
  });
});

describe('API keys per origin', () => {
  it('stores the key under the base URL\'s origin', () => {
    assert.equal(secretKeyFor('https://api.openai.com/v1'), `${API_KEY_SECRET_PREFIX}https://api.openai.com`);
    assert.equal(secretKeyFor('http://localhost:11434/v1'), 'agentPolicy.apiKey:http://localhost:11434');
  });

  it('shares a key between paths of one origin, and its spellings', () => {
    const key = secretKeyFor('https://api.openai.com/v1');
    for (const same of ['https://api.openai.com/v2/', 'https://API.OpenAI.com:443/v1', ' https://api.openai.com ', 'https://user:secret@api.openai.com/v1']) {
      assert.equal(secretKeyFor(same), key, same);
    }
  });

  it('never shares a key with another scheme, host or port', () => {
    const key = secretKeyFor('https://api.openai.com/v1');
    for (const other of ['http://api.openai.com/v1', 'https://api.openai.com.evil.example/v1', 'https://evil.example/api.openai.com/v1', 'https://api.openai.com:8443/v1', 'https://openai.com/v1']) {
      assert.notEqual(secretKeyFor(other), key, other);
    }
  });

  it('refuses what is not an http(s) URL', () => {
    for (const bad of ['', 'api.openai.com/v1', 'file:///etc/passwd', 'ftp://example.com/v1']) {
      assert.throws(() => secretKeyFor(bad), /URL/, bad);
    }
    assert.equal(originOf('https://api.mistral.ai/v1'), 'https://api.mistral.ai');
  });
});

describe('the base URL in effect', () => {
  it('takes the workspace\'s value in a trusted workspace, else the user\'s, else the default', () => {
    assert.deepEqual(resolveBaseUrl({ defaultValue: DEFAULT, globalValue: 'https://u.example/v1', workspaceValue: 'http://localhost:11434/v1' }, true, DEFAULT), { value: 'http://localhost:11434/v1', source: 'workspace' });
    assert.deepEqual(resolveBaseUrl({ defaultValue: DEFAULT, globalValue: 'https://u.example/v1' }, true, DEFAULT), { value: 'https://u.example/v1', source: 'user' });
    assert.deepEqual(resolveBaseUrl({ defaultValue: DEFAULT }, true, DEFAULT), { value: DEFAULT, source: 'default' });
    assert.deepEqual(resolveBaseUrl(undefined, true, DEFAULT), { value: DEFAULT, source: 'default' });
  });

  it('ignores an untrusted workspace\'s value, and says so', () => {
    assert.deepEqual(resolveBaseUrl({ defaultValue: DEFAULT, workspaceValue: 'https://evil.example/v1' }, false, DEFAULT), { value: DEFAULT, source: 'default', ignoredWorkspaceValue: 'https://evil.example/v1' });
    assert.deepEqual(resolveBaseUrl({ globalValue: 'https://u.example/v1', workspaceValue: 'https://evil.example/v1' }, false, DEFAULT), { value: 'https://u.example/v1', source: 'user', ignoredWorkspaceValue: 'https://evil.example/v1' });
  });

  it('treats an empty value as unset', () => {
    assert.deepEqual(resolveBaseUrl({ defaultValue: DEFAULT, globalValue: '  ', workspaceValue: '' }, true, DEFAULT), { value: DEFAULT, source: 'default' });
  });
});
