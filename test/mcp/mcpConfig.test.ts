// `.vscode/mcp.json` as VS Code writes it: every server form, variables, inputs, and diagnostics
// that point at the entry to fix.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LineMap, toJson, type Diagnostic } from '../../src/policy/file/diagnostics.js';
import {
  loadMcpConfig, parseEnvFile, parseMcpConfig,
  type McpHttpServerConfig, type McpStdioServerConfig,
} from '../../src/mcp/mcpConfig.js';
import { inputIdsOf, resolveServer, resolveVariables } from '../../src/mcp/mcpVariables.js';

const FILE = '/ws/.vscode/mcp.json';

/** The diagnostics as `line «the text they cover» severity message`, for readable assertions. */
function shown(text: string, diagnostics: readonly Diagnostic[]): string[] {
  const lines = new LineMap(text);
  return diagnostics.map((d) => `${toJson(d, lines).line} «${covered(text, d)}» ${d.severity} ${d.message}`);
}

/** The text the diagnostic's range covers. */
function covered(text: string, d: Diagnostic): string {
  return text.slice(d.offset, d.offset + d.length);
}

describe('mcp.json: parsing', () => {
  it('reads every server form VS Code writes', () => {
    const text = `{
      // comments and trailing commas, as in any VS Code JSONC file
      "servers": {
        "fs": { "type": "stdio", "command": "node", "args": ["server.js", "\${workspaceFolder}"], "env": { "DEBUG": "1", "PORT": 8080, "DROP": null }, "envFile": "\${workspaceFolder}/.env", "cwd": "tools" },
        "implicit": { "command": "npx", "args": ["-y", "some-server"] },
        "remote": { "type": "http", "url": "https://example.invalid/mcp", "headers": { "Authorization": "Bearer \${input:token}" } },
        "legacy": { "type": "sse", "url": "http://127.0.0.1:3000/sse" },
        "bare-url": { "url": "http://localhost:1/mcp", "dev": { "watch": "src/**" }, "gallery": true },
      },
      "inputs": [
        { "type": "promptString", "id": "token", "description": "API token", "password": true },
        { "type": "pickString", "id": "region", "description": "Region", "options": ["eu", "us"], "default": "eu" },
      ],
    }`;
    const config = parseMcpConfig(text, FILE);
    assert.deepEqual(shown(text, config.diagnostics), []);
    assert.deepEqual(config.servers.map((s) => [s.name, s.type]), [
      ['fs', 'stdio'], ['implicit', 'stdio'], ['remote', 'http'], ['legacy', 'sse'], ['bare-url', 'http'],
    ]);
    const fsServer = config.servers[0] as McpStdioServerConfig;
    assert.deepEqual(fsServer, {
      name: 'fs', type: 'stdio', command: 'node', args: ['server.js', '${workspaceFolder}'],
      env: { DEBUG: '1', PORT: '8080', DROP: null }, envFile: '${workspaceFolder}/.env', cwd: 'tools',
    });
    assert.deepEqual(config.servers[1], { name: 'implicit', type: 'stdio', command: 'npx', args: ['-y', 'some-server'], env: {} });
    assert.deepEqual(config.servers[2], {
      name: 'remote', type: 'http', url: 'https://example.invalid/mcp', headers: { Authorization: 'Bearer ${input:token}' },
    });
    assert.deepEqual(config.servers[3], { name: 'legacy', type: 'sse', url: 'http://127.0.0.1:3000/sse', headers: {} });
    assert.deepEqual(config.inputs, [
      { type: 'promptString', id: 'token', description: 'API token', password: true },
      { type: 'pickString', id: 'region', description: 'Region', password: false, default: 'eu', options: ['eu', 'us'] },
    ]);
    assert.deepEqual(inputIdsOf(config.servers[2]!), ['token']);
    assert.deepEqual(inputIdsOf(fsServer), []);
  });

  it('reports bad servers where they are and keeps the good ones', () => {
    const text = [
      '{',
      '  "servers": {',
      '    "good": { "command": "node" },',
      '    "nothing": { "args": ["x"] },',
      '    "badurl": { "type": "http", "url": "ftp://example.invalid/x" },',
      '    "notaurl": { "url": "not a url" },',
      '    "weird": { "type": "websocket", "url": "ws://x" },',
      '    "has space": { "command": "node" },',
      '    "both": { "command": "node", "url": "http://x/mcp" },',
      '    "noargs": { "command": "node", "args": "x.js" },',
      '    "oddvar": { "command": "node", "args": ["${config:editor.fontSize}"] },',
      '    "emptycmd": { "command": "" },',
      '    "typo": { "command": "node", "arsg": ["x"] },',
      '    "http-no-url": { "type": "http", "command": "node" }',
      '  }',
      '}',
    ].join('\n');
    const config = parseMcpConfig(text, FILE);
    assert.deepEqual(config.servers.map((s) => s.name), ['good', 'typo']);
    assert.deepEqual(shown(text, config.diagnostics), [
      '4 «"nothing"» error server "nothing" has neither "command" (a local server) nor "url" (a remote one)',
      '5 «"ftp://example.invalid/x"» error server "badurl": "ftp://example.invalid/x" is not an http or https URL',
      '6 «"not a url"» error server "notaurl": "not a url" is not an http or https URL',
      '7 «"websocket"» error server "weird": unknown type "websocket"; use "stdio", "http" or "sse"',
      '8 «"has space"» error server name "has space" must be letters, digits, "_" or "-" (it becomes part of the tool ids mcp.<server>.<tool>)',
      '9 «"both"» error server "both" has both "command" and "url"; say which it is with "type": "stdio" or "http"',
      '10 «"x.js"» error server "noargs": "args" must be a list of strings',
      '11 «${config:editor.fontSize}» error server "oddvar": variable "${config:editor.fontSize}" is not supported here; use ${workspaceFolder}, ${userHome}, ${env:NAME} or ${input:id}',
      '12 «""» error server "emptycmd": "command" must be a non-empty string',
      '13 «"arsg"» warning server "typo": unknown field "arsg" is ignored; did you mean "args"?',
      '14 «"http-no-url"» error server "http-no-url" is an http server but has no "url"',
      '14 «"command"» warning server "http-no-url": "command" is ignored for an http server',
    ]);
    assert.ok(config.diagnostics.every((x) => x.file === FILE && x.code === 'schema'));
  });

  it('reports syntax errors, duplicate servers and wrong outline types', () => {
    const broken = '{ "servers": { "a": { "command": "node" } ';
    const b = parseMcpConfig(broken, FILE);
    assert.deepEqual(b.servers, []);
    assert.equal(b.diagnostics[0]?.code, 'syntax');

    const dup = '{ "servers": { "a": { "command": "node" }, "a": { "command": "deno" } } }';
    const d = parseMcpConfig(dup, FILE);
    assert.deepEqual(shown(dup, d.diagnostics), ['1 «"a"» error duplicate field "a"']);
    assert.equal(d.diagnostics[0]!.offset, dup.lastIndexOf('"a"'));

    const wrong = '{ "servers": [] }';
    const w = parseMcpConfig(wrong, FILE);
    assert.deepEqual(w.servers, []);
    assert.match(shown(wrong, w.diagnostics)[0]!, /^1 «"servers"» error expected record at servers/);
  });

  it('checks inputs and variables that name them', () => {
    const text = [
      '{',
      '  "servers": {',
      '    "gh": { "url": "https://example.invalid/mcp", "headers": { "Authorization": "Bearer ${input:gh_token}", "X-Org": "${input:org}" } }',
      '  },',
      '  "inputs": [',
      '    { "type": "promptString", "id": "gh_token", "description": "GitHub token", "password": true, "pasword": true },',
      '    { "type": "command", "id": "cmd", "command": "x" },',
      '    { "type": "promptString", "description": "no id" },',
      '    { "type": "promptString", "id": "gh_token" }',
      '  ]',
      '}',
    ].join('\n');
    const config = parseMcpConfig(text, FILE);
    assert.deepEqual(config.inputs.map((i) => i.id), ['gh_token']);
    assert.deepEqual(config.servers.map((s) => s.name), ['gh']);
    assert.deepEqual(shown(text, config.diagnostics), [
      '3 «${input:org}» warning server "gh": input "org" is not declared in "inputs"; it will be asked for by its id',
      '6 «"pasword"» warning input "gh_token": unknown field "pasword" is ignored; did you mean "password"?',
      '7 «"command"» error input "cmd": type "command" is not supported; use "promptString"',
      '7 «"command"» warning input "cmd": unknown field "command" is ignored',
      '8 «{ "type": "promptString", "description": "no id" }» error an input needs an "id"',
      '9 «"gh_token"» error input id "gh_token" is declared twice',
    ]);
  });
});


describe('mcp.json: variables', () => {
  const context = { workspaceFolder: '/work/ws', inputs: new Map([['token', 's3cret']]), env: { HOME_TOOL: '/opt/tool' } };

  it('resolves workspaceFolder, userHome, env and inputs', () => {
    assert.equal(resolveVariables('${workspaceFolder}/x', context), '/work/ws/x');
    assert.equal(resolveVariables('${workspaceFolderBasename}', context), 'ws');
    assert.equal(resolveVariables('${userHome}', context), os.homedir());
    assert.equal(resolveVariables('${env:HOME_TOOL}/bin:${env:NOT_SET}', context), '/opt/tool/bin:');
    assert.equal(resolveVariables('Bearer ${input:token}', context), 'Bearer s3cret');
    assert.throws(() => resolveVariables('${input:other}', context), /input "other" has no value/);
    assert.throws(() => resolveVariables('${command:x}', context), /not supported/);
  });

  it('resolves a whole server, making cwd and envFile absolute', () => {
    const config = parseMcpConfig(JSON.stringify({
      servers: {
        s: { command: '${env:HOME_TOOL}/run', args: ['--root', '${workspaceFolder}'], env: { T: '${input:token}' }, cwd: 'sub', envFile: '.env' },
        h: { url: 'http://127.0.0.1:9/${input:token}', headers: { A: '${input:token}' } },
      },
      inputs: [{ type: 'promptString', id: 'token', description: 't' }],
    }), FILE);
    const s = resolveServer(config.servers[0] as McpStdioServerConfig, context);
    assert.deepEqual(s, {
      name: 's', type: 'stdio', command: '/opt/tool/run', args: ['--root', '/work/ws'], env: { T: 's3cret' },
      cwd: path.resolve('/work/ws', 'sub'), envFile: path.resolve('/work/ws', '.env'),
    });
    const h = resolveServer(config.servers[1] as McpHttpServerConfig, context);
    assert.equal(h.url, 'http://127.0.0.1:9/s3cret');
    assert.deepEqual(h.headers, { A: 's3cret' });
  });

  it('reads dotenv files', () => {
    assert.deepEqual(parseEnvFile('# c\nA=1\nexport B = "two words"\nC=\'x y\'\nD=plain # note\n\nbad line\n'), {
      A: '1', B: 'two words', C: 'x y', D: 'plain',
    });
  });
});

describe('mcp.json: loading', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-config-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a folder without .vscode/mcp.json has no servers', async () => {
    const config = await loadMcpConfig(dir);
    assert.deepEqual(config, { file: path.join(dir, '.vscode', 'mcp.json'), text: '', servers: [], inputs: [], diagnostics: [] });
  });

  it('reads .vscode/mcp.json of the folder', async () => {
    fs.mkdirSync(path.join(dir, '.vscode'));
    fs.writeFileSync(path.join(dir, '.vscode', 'mcp.json'), '{ "servers": { "fs": { "command": "node" } } }');
    const config = await loadMcpConfig(dir);
    assert.deepEqual(config.servers.map((s) => s.name), ['fs']);
    assert.equal(config.file, path.join(dir, '.vscode', 'mcp.json'));
    assert.equal(config.text, '{ "servers": { "fs": { "command": "node" } } }');
  });
});
