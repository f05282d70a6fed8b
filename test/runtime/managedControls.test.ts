// Managed controls in sessions: the runtime enforces them, not only the editor. An approval is
// offered no longer a grant than the managed policy allows, a longer answer (AllowApproval for the
// session or for a while, from turn.answer or a handler) is refused with SdkError naming the
// managed policy and recorded in the audit log, and an MCP server the controls refuse never starts.
// A property: for random managed controls and random workspace and user layers (some trying to set
// `controls` of their own), nothing offered, given or started is more than the managed layer alone allows.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import fc from 'fast-check';
import { z } from 'zod';
import {
  Agent, AllowApproval, MemoryAuditLog, ScriptedModel, SdkError, tool,
  type Blocked, type OpenApproval, type RuntimeTool, type Session, type ToolConnection, type ToolSource,
} from '../../src/entries/runtime.js';
import type { LayerName } from '../../src/policy/rules/compile.js';
import { rememberSeconds } from '../../src/policy/file/grantLength.js';
import { addRuleRefusal, mcpServerRefusal } from '../../src/policy/rules/managedControls.js';
import { loadPolicyText, Policy, type PolicyLayer } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { auditTable } from '../../src/runtime/audit/auditRead.js';
import { SessionHost } from '../../src/runtime/host/sessionHost.js';

const MANAGED_FILE = '/etc/agentpolicy/managed.jsonc';
const FILES: Record<LayerName, string> = { managed: MANAGED_FILE, workspace: '.agentpolicy.jsonc', user: 'user.jsonc' };

function layerOf(name: LayerName, top: object): PolicyLayer {
  return loadPolicyText(JSON.stringify({ version: 1, ...top }), FILES[name], name);
}

/** A source that records whether it was ever connected (a server started). */
class RecordingSource implements ToolSource {
  readonly id: string;
  connects = 0;
  constructor(readonly name: string) {
    this.id = `mcp.${name}`;
  }
  connect(): ToolConnection {
    this.connects++;
    const id = this.id;
    return {
      tools: () => Promise.resolve([{
        id: `${id}.read`, kind: 'mcp', name: `${this.name}_read`, description: 'reads', inputJsonSchema: { type: 'object' },
        annotations: { readOnlyHint: true }, check: (input: unknown) => ({ ok: true as const, value: input }), run: () => Promise.resolve('read'),
      } satisfies RuntimeTool]),
      close: () => Promise.resolve(),
    };
  }
}

function agentWith(sources: ToolSource[], calls = 1): { agent: Agent; ran: string[] } {
  const ran: string[] = [];
  const x = tool({ name: 'x', description: 'does x', inputSchema: z.object({ n: z.number() }) }, ({ n }) => (ran.push(String(n)), 'ok'));
  const script = [...Array.from({ length: calls }, () => ({ call: 'x', input: { n: 1 } })), { say: 'done' }];
  return { agent: new Agent({ instructions: '', tools: [x], toolSources: sources, model: new ScriptedModel({ agents: { main: script } }) }), ran };
}

function onlyApproval(state: Blocked): OpenApproval {
  const approvals = state.callbacks.filter((c): c is OpenApproval => c.type === 'approval');
  assert.equal(approvals.length, 1);
  return approvals[0]!;
}

describe('managed controls in sessions', () => {
  before(() => initShellParser());
  const sessions: Session[] = [];
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.cancel();
  });

  it('allowForSession false: Allow for Session is neither offered nor taken (SdkError naming the managed policy, audited); 1 hour and once still work', async () => {
    const policy = new Policy({
      managed: layerOf('managed', { controls: { allowForSession: false } }),
      workspace: layerOf('workspace', { rules: [{ tools: ['client.x'], decision: 'ask' }] }),
    });
    const audit = new MemoryAuditLog();
    const { agent, ran } = agentWith([], 2);
    const session = await agent.startSession({ policy, audit, workspaceFolder: os.tmpdir() });
    sessions.push(session);
    const state = await session.run('go');
    assert.equal(state.type, 'blocked');
    const cb = onlyApproval(state as Blocked);
    assert.deepEqual([cb.request.sessionAllowed, cb.request.longestGrant], [false, '1h']);
    const turn = session.turn(state.turnId);
    await assert.rejects(turn.answer(cb.id, new AllowApproval({ scope: 'session' })), (e: unknown) => e instanceof SdkError && /the managed policy \/etc\/agentpolicy\/managed\.jsonc allows grants of at most 1 hour/.test(e.message));
    await assert.rejects(turn.answer(cb.id, new AllowApproval({ scope: 'duration', seconds: 7200 })), SdkError);
    assert.equal(ran.length, 0);
    const refused = audit.entries.filter((e) => e.event === 'answer-refused');
    assert.deepEqual(refused.map((e) => [e.callback, e.tool, e.answer, e.grantSeconds]), [[cb.id, 'client.x', 'allow-session', undefined], [cb.id, 'client.x', 'allow-duration', 7200]]);
    assert.match(refused[0]!.reason ?? '', /managed policy/);
    assert.match(auditTable(audit.entries, { events: ['answer-refused'] }), /answer-refused .*allow-session .*allows grants of at most 1 hour/);
    assert.equal((await turn.answer(cb.id, new AllowApproval({ scope: 'duration', seconds: 3600 }))).type, 'answered');
    assert.equal((await turn.result({ after: state as Blocked })).type, 'completed');
    assert.equal(ran.length, 2, 'the second call was answered by the hour grant');
  });

  it('a handler that answers for longer than the controls allow raises SdkError; the refusal is audited', async () => {
    const policy = new Policy({ managed: layerOf('managed', { controls: { longestGrant: 'never' } }) });
    const audit = new MemoryAuditLog();
    const { agent } = agentWith([]);
    const session = await agent.startSession({ policy, audit, workspaceFolder: os.tmpdir(), onApproval: () => new AllowApproval({ scope: 'duration', seconds: 900 }) });
    sessions.push(session);
    await assert.rejects(session.run('go'), (e: unknown) => e instanceof SdkError && /allows every ask only once/.test(e.message));
    assert.equal(audit.entries.filter((e) => e.event === 'answer-refused').length, 1);
  });

  it('a grant given before the managed controls changed is no longer honoured once they are narrower', async () => {
    let policy = new Policy({ workspace: layerOf('workspace', { rules: [{ tools: ['client.x'], decision: 'ask' }] }) });
    const { agent, ran } = agentWith([], 2);
    let asked = 0;
    const session = await agent.startSession({
      policy: () => policy, workspaceFolder: os.tmpdir(),
      onApproval: () => {
        asked++;
        // After the first answer, the organisation's policy arrives: grants of at most 15 minutes.
        const answer = new AllowApproval({ scope: asked === 1 ? 'session' : 'once' });
        policy = new Policy({ managed: layerOf('managed', { controls: { longestGrant: '15m' } }), workspace: layerOf('workspace', { rules: [{ tools: ['client.x'], decision: 'ask' }] }) });
        return answer;
      },
    });
    sessions.push(session);
    assert.equal((await session.run('go')).type, 'completed');
    assert.equal(asked, 2, 'the session grant did not answer the second call');
    assert.equal(ran.length, 2);
  });

  it('an MCP server the managed controls deny, or leave out of their allow list, never starts; the warning names the managed policy', async () => {
    const policy = new Policy({ managed: layerOf('managed', { default: 'allow', controls: { mcpServers: { allow: ['files', 'git*'], deny: ['git-push'] } } }) });
    const sources = ['files', 'git', 'git-push', 'web'].map((n) => new RecordingSource(n));
    const { agent } = agentWith(sources);
    const warnings: string[] = [];
    const session = await agent.startSession({ policy, workspaceFolder: os.tmpdir() });
    sessions.push(session);
    const events = (async () => {
      for await (const e of session.events()) if (e.type === 'warning') warnings.push(e.message);
    })();
    assert.equal((await session.run('go')).type, 'completed');
    await session.cancel();
    await events;
    assert.deepEqual(sources.map((s) => [s.name, s.connects]), [['files', 1], ['git', 1], ['git-push', 0], ['web', 0]]);
    assert.ok(warnings.some((w) => /git-push.*denies it \(controls\.mcpServers\.deny\)/.test(w)), warnings.join('\n'));
    assert.ok(warnings.some((w) => /"web" may not start: the managed policy \/etc\/agentpolicy\/managed\.jsonc allows only/.test(w)), warnings.join('\n'));
  });

  it("another agent's hook ask answered in the window follows the window's managed controls, whatever the hook was run with", () => {
    const audit = new MemoryAuditLog();
    const controls = new Policy({ managed: layerOf('managed', { controls: { longestGrant: '15m' } }) }).controls;
    const host = new SessionHost({ audit: { sink: audit }, controls: () => controls });
    const session = host.externalSession({ host: 'claude', hostLabel: 'Claude Code', hostSession: 'h1' });
    const pending = session.ask({ toolId: 'builtin.run_command', input: { command: 'npm test' }, rule: null, lowered: false, remember: 'session', onTimeout: 'deny' });
    const cb = session.openCallbacks().find((c) => c.id === pending.callbackId) as OpenApproval;
    assert.deepEqual([cb.request.sessionAllowed, cb.request.longestGrant], [false, '15m']);
    assert.throws(() => session.answer(cb.id, new AllowApproval({ scope: 'session' })), (e: unknown) => e instanceof SdkError && /at most 15 minutes/.test(e.message));
    assert.throws(() => session.answer(cb.id, new AllowApproval({ scope: 'duration', seconds: 3600 })), SdkError);
    assert.equal(audit.entries.filter((e) => e.event === 'answer-refused').length, 2);
    assert.equal(session.answer(cb.id, new AllowApproval({ scope: 'duration', seconds: 900 })).type, 'answered');
  });

  describe('property: no layer but the managed one can relax a control', () => {
    const servers = ['files', 'git', 'git-push', 'web'];
    const serverGlobs = fc.array(fc.constantFrom('files', 'git', 'git*', 'web', '*', '!git-push'), { minLength: 1, maxLength: 3 });
    const remember = fc.constantFrom('session', 'never', '5m', '15m', '1h', '2h');
    const controls = fc.record({
      allowForSession: fc.boolean(), addRule: fc.boolean(), longestGrant: remember,
      mcpServers: fc.record({ allow: serverGlobs, deny: serverGlobs }, { requiredKeys: [] }),
    }, { requiredKeys: [] });
    // What another layer may try: the loosest controls there are, or none.
    const attempt = fc.option(fc.constant({ allowForSession: true, addRule: true, longestGrant: 'session', mcpServers: { allow: ['*'] } }), { nil: undefined });
    const rule = fc.record({
      tools: fc.constantFrom(['client.x'], ['client.*'], ['*']),
      decision: fc.constantFrom('allow', 'ask', 'ask', 'deny'),
      remember: fc.option(remember, { nil: undefined }),
    }).map((r) => (r.decision === 'ask' && r.remember !== undefined ? { tools: r.tools, decision: r.decision, remember: r.remember } : { tools: r.tools, decision: r.decision }));
    const otherLayer = fc.record({ rules: fc.array(rule, { maxLength: 3 }), controls: attempt, default: fc.option(fc.constantFrom('allow', 'ask'), { nil: undefined }) })
      .map(({ controls: c, default: d, rules }) => ({ rules, ...(c ? { controls: c } : {}), ...(d ? { default: d } : {}) }));
    const world = fc.record({
      managed: fc.record({ controls: fc.option(controls, { nil: undefined }), rules: fc.array(rule, { maxLength: 2 }) }),
      workspace: fc.option(otherLayer, { nil: undefined }),
      user: fc.option(otherLayer, { nil: undefined }),
      trusted: fc.boolean(),
    });

    function policiesOf(w: { managed: { controls?: object | undefined; rules: object[] }; workspace?: object | undefined; user?: object | undefined }) {
      const managed = layerOf('managed', { rules: w.managed.rules, ...(w.managed.controls ? { controls: w.managed.controls } : {}) });
      const alone = new Policy({ managed });
      const layered = new Policy({
        managed,
        ...(w.workspace ? { workspace: layerOf('workspace', w.workspace) } : {}),
        ...(w.user ? { user: layerOf('user', w.user) } : {}),
      });
      return { alone, layered };
    }

    it('in the engine: the controls in force, every ask\'s longest grant, the servers that may start and Allow and Add Rule', () => {
      fc.assert(fc.property(world, fc.constantFrom('client.x', 'client.y', 'mcp.files.read'), (w, toolId) => {
        const { alone, layered } = policiesOf(w);
        const bound = alone.controls;
        assert.deepEqual(layered.controls, bound);
        const d = layered.decide({ tool: { id: toolId, kind: toolId.startsWith('mcp.') ? 'mcp' : 'client', annotations: {} }, input: {}, agent: 'main' }, { workspaceFolder: os.tmpdir(), trusted: w.trusted });
        if (d.ask) assert.ok(rememberSeconds(d.ask.remember) <= rememberSeconds(bound.longestGrant), `${d.ask.remember} > ${bound.longestGrant}`);
        for (const s of servers) if (mcpServerRefusal(s, bound) !== undefined) assert.notEqual(mcpServerRefusal(s, layered.controls), undefined, s);
        if (addRuleRefusal(bound) !== undefined) assert.notEqual(addRuleRefusal(layered.controls), undefined);
      }), { numRuns: 500 });
    });

    it('in sessions: what is offered, what answers are taken and which servers start', async () => {
      await fc.assert(fc.asyncProperty(world, async (w) => {
        const { alone, layered } = policiesOf(w);
        const bound = alone.controls;
        const widest = rememberSeconds(bound.longestGrant);
        const sources = servers.map((n) => new RecordingSource(n));
        const { agent } = agentWith(sources);
        const audit = new MemoryAuditLog();
        const session = await agent.startSession({ policy: layered, audit, trusted: w.trusted, workspaceFolder: os.tmpdir() });
        try {
          const state = await session.run('go');
          for (const s of sources) if (s.connects > 0) assert.equal(mcpServerRefusal(s.name, bound), undefined, `${s.name} started`);
          if (state.type !== 'blocked') return;
          const cb = onlyApproval(state);
          assert.ok(rememberSeconds(cb.request.longestGrant) <= widest, `offered ${cb.request.longestGrant}, bound ${bound.longestGrant}`);
          if (cb.request.sessionAllowed) assert.equal(bound.longestGrant, 'session');
          const turn = session.turn(state.turnId);
          const answers = [new AllowApproval({ scope: 'session' }), ...[86400, 7200, 3600, 900, 300].map((seconds) => new AllowApproval({ scope: 'duration', seconds }))];
          let refusals = 0;
          for (const answer of answers) {
            const seconds = answer.scope === 'session' ? Infinity : answer.seconds!;
            try {
              await turn.answer(cb.id, answer);
              assert.ok(seconds <= widest, `an answer of ${seconds} s was taken under ${bound.longestGrant}`);
              return;
            } catch (error) {
              if (!(error instanceof SdkError)) throw error;
              refusals++;
              assert.equal(audit.entries.filter((e) => e.event === 'answer-refused').length, refusals, 'each refusal is audited');
            }
          }
        } finally {
          await session.cancel();
        }
      }), { numRuns: 60 });
    });
  });
});
