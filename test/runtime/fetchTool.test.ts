// builtin.fetch against a local HTTP server on 127.0.0.1: text out, the size and time limits,
// redirects never followed (a redirect to another host cannot pass a domains rule), and the
// policy's domains rules deciding it in a session.
import assert from 'node:assert/strict';
import type * as http from 'node:http';
import * as os from 'node:os';
import { Agent, Builtins, PermissionPolicy, PermissionRule } from '../../src/runtime/agents/agent.js';
import { AllowApproval, type OpenApproval } from '../../src/runtime/tree/answers.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import { fetchTool, type FetchedPage } from '../../src/runtime/tools/fetchTool.js';
import { htmlToText } from '../../src/runtime/tools/htmlText.js';
import { summarizeInput } from '../../src/runtime/audit/auditSummary.js';
import type { RuntimeTool, ToolRunContext } from '../../src/runtime/tools/tools.js';
import { closeLoopbackServer, loopbackPort, startLoopbackServer } from '../loopbackHttp.js';

let server: http.Server;
let base: string;
const requests: string[] = [];
const hanging: http.ServerResponse[] = [];

function context(signal: AbortSignal = new AbortController().signal): ToolRunContext {
  return { sessionId: 's1', turnId: 't1', agent: 'main', workspaceFolder: os.tmpdir(), signal };
}

async function call(tool: RuntimeTool, input: unknown, signal?: AbortSignal): Promise<unknown> {
  const checked = tool.check(input);
  if (!checked.ok) throw new Error(`input rejected: ${checked.error}`);
  return tool.run(checked.value, context(signal));
}

describe('builtin.fetch', () => {
  before(async () => {
    server = await startLoopbackServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      switch (req.url) {
        case '/page':
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end('<html><head><title>t</title><script>steal()</script></head><body><h1>Atlas</h1><p>costs &euro;1 &amp; more <a href="/more">see more</a></p></body></html>');
          return;
        case '/plain':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('just text');
          return;
        case '/json':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"a":1}');
          return;
        case '/big':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('x'.repeat(100_000));
          return;
        case '/binary':
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
          return;
        case '/away':
          res.writeHead(302, { location: 'http://evil.example/steal?x=1' });
          res.end();
          return;
        case '/here':
          res.writeHead(301, { location: '/plain' });
          res.end();
          return;
        case '/slow':
          hanging.push(res);
          return;
        default:
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('not here');
      }
    });
    base = `http://127.0.0.1:${loopbackPort(server)}`;
  });

  after(async () => {
    for (const res of hanging) res.destroy();
    await closeLoopbackServer(server);
  });

  it('returns HTML as plain text, and other text as sent', async () => {
    const page = (await call(fetchTool(), { url: `${base}/page` })) as FetchedPage;
    assert.equal(page.status, 200);
    assert.equal(page.content, 'Atlas\n\ncosts &euro;1 & more see more (/more)');
    assert.equal(((await call(fetchTool(), { url: `${base}/plain` })) as FetchedPage).content, 'just text');
    assert.equal(((await call(fetchTool(), { url: `${base}/json` })) as FetchedPage).content, '{"a":1}');
    const missing = (await call(fetchTool(), { url: `${base}/nothing` })) as FetchedPage;
    assert.equal(missing.status, 404);
    assert.equal(missing.content, 'not here');
  });

  it('reads at most maxBytes of a body and says it was cut', async () => {
    const page = (await call(fetchTool({ maxBytes: 1000 }), { url: `${base}/big` })) as FetchedPage;
    assert.equal(page.content, 'x'.repeat(1000));
    assert.equal(page.truncated, true);
    assert.match(page.note ?? '', /first 1000 bytes/);
  });

  it('gives up at the time limit with an error the model can read', async () => {
    const page = (await call(fetchTool({ timeoutMs: 200 }), { url: `${base}/slow` })) as FetchedPage;
    assert.equal(page.content, undefined);
    assert.equal(page.error, 'no complete answer within 200 ms');
  });

  it('a cancelled turn aborts the request', async () => {
    const controller = new AbortController();
    const pending = call(fetchTool(), { url: `${base}/slow` }, controller.signal);
    controller.abort();
    await assert.rejects(pending);
  });

  it('never follows a redirect, to another host or its own: it returns the target', async () => {
    const before = requests.length;
    const away = (await call(fetchTool(), { url: `${base}/away` })) as FetchedPage;
    assert.equal(away.status, 302);
    assert.equal(away.redirect, 'http://evil.example/steal?x=1');
    assert.equal(away.content, undefined);
    assert.match(away.note ?? '', /not followed/);
    const here = (await call(fetchTool(), { url: `${base}/here` })) as FetchedPage;
    assert.equal(here.redirect, `${base}/plain`);
    assert.deepEqual(requests.slice(before), ['GET /away', 'GET /here'], 'only the URLs asked for were requested');
  });

  it('does not return content that is not text', async () => {
    const page = (await call(fetchTool(), { url: `${base}/binary` })) as FetchedPage;
    assert.equal(page.content, undefined);
    assert.match(page.note ?? '', /not text \(image\/png\)/);
  });

  it('fetches several URLs, each with its own result', async () => {
    const result = (await call(fetchTool(), { urls: [`${base}/plain`, `${base}/json`] })) as { pages: FetchedPage[] };
    assert.deepEqual(result.pages.map((p) => p.content), ['just text', '{"a":1}']);
  });

  it('checks its input: http(s) only, no user info, url or urls', () => {
    const tool = fetchTool();
    for (const bad of [{ url: 'file:///etc/passwd' }, { url: 'https://user:pw@example.com/' }, { url: 'example.com' }, {}, { url: 'https://a.com', urls: ['https://b.com'] }, { urls: [] }, { url: 'https://a.com', method: 'POST' }]) {
      assert.equal(tool.check(bad).ok, false, JSON.stringify(bad));
    }
    assert.equal(tool.check({ url: 'https://a.com/x' }).ok, true);
    assert.deepEqual(tool.urlArgs, ['url', 'urls']);
    assert.equal(tool.id, 'builtin.fetch');
  });

  it('in a session: a domains rule allows it, and a URL the rules do not name is not fetched', async () => {
    const before = requests.length;
    const agent = new Agent({
      instructions: '',
      builtins: new Builtins({ subagents: false, network: true }),
      permissionPolicy: new PermissionPolicy({
        default: 'deny',
        rules: [PermissionRule({ id: 'local', tools: ['builtin.fetch'], domains: ['127.0.0.1'], decision: 'allow' })],
      }),
      model: new ScriptedModel({
        agents: {
          main: [
            { call: 'fetch', input: { url: `${base}/plain` } },
            { call: 'fetch', input: { url: `http://localhost:${loopbackPort(server)}/json` } },
            { say: '{{last.error}}' },
          ],
        },
      }),
    });
    const session = await agent.startSession({});
    try {
      const state = await session.run('fetch');
      assert.equal(state.type, 'completed');
      assert.match((state as { text: string }).text, /denied/);
      assert.deepEqual(requests.slice(before), ['GET /plain'], 'the denied URL was never requested');
    } finally {
      await session.cancel();
    }
  });
});

describe('a fetch asked of a person', () => {
  it('the approval names what the policy read the URLs from, so the call can be judged again', async () => {
    let asked: OpenApproval | undefined;
    const agent = new Agent({
      instructions: '',
      builtins: new Builtins({ subagents: false, network: true }),
      permissionPolicy: new PermissionPolicy({ default: 'ask' }),
      model: new ScriptedModel({ agents: { main: [{ call: 'fetch', input: { url: 'http://127.0.0.1:9/x' } }, { say: 'done' }] } }),
    });
    const session = await agent.startSession({
      onApproval: (ctx) => {
        asked = ctx.callback as OpenApproval;
        return new AllowApproval();
      },
    });
    try {
      await session.run('fetch');
      assert.deepEqual(asked?.request.tool.urlArgs, ['url', 'urls']);
    } finally {
      await session.cancel();
    }
  });
});

describe('a fetch as a person and the audit log see it', () => {
  it('summarises the URLs', () => {
    assert.equal(summarizeInput({ url: 'https://a.com/x' }), 'url: https://a.com/x');
    assert.equal(summarizeInput({ urls: ['https://a.com/x', 'https://b.com/'] }), 'urls: https://a.com/x, https://b.com/');
  });
});

describe('htmlToText', () => {
  it('drops scripts, styles and comments, keeps links and line structure, decodes entities', () => {
    assert.equal(htmlToText('<style>a{}</style><!-- x --><ul><li>one</li><li>two &lt;3&gt;</li></ul><a href="https://x.y/">x</a>&#65;&#x42;'), 'one\n\ntwo <3>\n\nx (https://x.y/)AB');
  });
});
