// Answers through the chat path: the buttons' argument names a callback only; an answer from
// another surface settles the card (the chat says which), and a click on a settled card runs nothing.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Agent, PermissionPolicy } from '../../src/runtime/agents/agent.js';
import { AllowApproval } from '../../src/runtime/tree/answers.js';
import type { RuntimeEvent } from '../../src/runtime/tree/events.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import { SessionHost } from '../../src/runtime/host/sessionHost.js';
import { noteTool, until } from '../runtime/hostHelpers.js';
import { chatAnswerArg, isChatAnswerArg, isNotificationAnswerArg, notificationAnswerLink } from '../../src/vscode/asks/chatApprovals.js';
import { chatParts, type ChatStreamContext } from '../../src/vscode/chat/chatStream.js';

describe('chat approvals', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("takes only a well-formed argument as the chat's", () => {
    assert.ok(isChatAnswerArg(chatAnswerArg('cb_12ab')));
    for (const bad of [undefined, 'cb_1', { callbackId: 'cb_1' }, { chatAnswer: 'yes', callbackId: 'cb_1' }, { chatAnswer: true, callbackId: 'cb 1; rm' }, { chatAnswer: true, callbackId: 3 }]) {
      assert.equal(isChatAnswerArg(bad), false, JSON.stringify(bad));
    }
  });

  it("a notification's answer link runs its command on the callback alone, marked as the notification's", () => {
    const link = notificationAnswerLink('Allow [x]', 'agentPolicy.allow', 'cb-1');
    const m = /^\[([^\]]*)\]\(command:([\w.]+)\?(.*)\)$/.exec(link);
    assert.ok(m, link);
    assert.equal(m[1], 'Allow x', 'a label cannot close the link early');
    assert.equal(m[2], 'agentPolicy.allow');
    const [arg] = JSON.parse(decodeURIComponent(m[3]!)) as unknown[];
    assert.deepEqual(arg, { notificationAnswer: true, callbackId: 'cb-1' });
    assert.ok(isNotificationAnswerArg(arg));
    assert.ok(!isChatAnswerArg(arg), 'not taken for the chat\'s');
    assert.ok(!isNotificationAnswerArg({ notificationAnswer: true, callbackId: 'cb 1)' }));
  });

  it('an ask answered from the notification settles its card; the card clicked after runs nothing', async () => {
    const ran: string[] = [];
    const agent = new Agent({
      model: new ScriptedModel({ agents: { main: [{ call: 'note', input: { text: 'hi' } }, { say: 'done' }] } }),
      instructions: '', tools: [noteTool(ran)], permissionPolicy: new PermissionPolicy({ rules: [], default: 'ask' }),
    });
    const host = new SessionHost();
    const hosted = await host.start(agent, 'go', { workspaceFolder: dir });
    const ctx: ChatStreamContext = { rootId: hosted.id, viaOf: (id) => host.viaOf(id), choicesFor: () => ['allow', 'allow-session', 'deny'], labelOf: String };
    const shown: string[] = [];
    const buttons: Array<{ command: string; argument: unknown }> = [];
    const following = (async () => {
      for await (const e of hosted.session.events() as AsyncIterable<RuntimeEvent>) {
        for (const p of chatParts(e, ctx)) {
          if (p.kind === 'buttons') buttons.push(...p.buttons);
          else if (p.kind === 'markdown' || p.kind === 'agent-text') shown.push(p.value);
        }
        if (e.type === 'turn-ended' && e.sessionId === hosted.id) return;
      }
    })();
    await until(() => buttons.length === 3, 'the card');
    const allow = buttons.find((b) => b.command === 'agentPolicy.allow')!;
    assert.ok(isChatAnswerArg(allow.argument));
    const id = allow.argument.callbackId;
    // The notification answers first; the card's Allow (what the command does with its argument) comes second.
    assert.equal((await host.answer(id, new AllowApproval(), { via: 'notification' }))?.type, 'answered');
    assert.notEqual((await host.answer(id, new AllowApproval(), { via: 'chat' }))?.type, 'answered');
    await following;
    assert.deepEqual(ran, ['hi'], 'the tool ran once');
    assert.ok(shown.includes('✓ Allowed once by a person from the notification.'), shown.join('\n'));
    assert.equal(shown.at(-1), 'done', 'the answer comes last');
    await host.cancel(hosted.id);
  });

  it('an ask answered from the card says so', async () => {
    const agent = new Agent({
      model: new ScriptedModel({ agents: { main: [{ call: 'note', input: { text: 'x' } }, { say: 'ok' }] } }),
      instructions: '', tools: [noteTool([])],
      permissionPolicy: new PermissionPolicy({ rules: [], default: 'ask' }),
    });
    const host = new SessionHost();
    const hosted = await host.start(agent, 'go', { workspaceFolder: dir });
    await until(() => host.openCallbacks().length === 1, 'the ask');
    const id = host.openCallbacks()[0]!.callback.id;
    await host.answer(id, new AllowApproval({ scope: 'session' }), { via: 'chat' });
    await until(() => hosted.state === 'completed', 'the end');
    const ctx: ChatStreamContext = { rootId: hosted.id, viaOf: (i) => host.viaOf(i), choicesFor: () => [], labelOf: String };
    const settled = chatParts({ type: 'callback-settled', sessionId: hosted.id, turnId: 't', agent: 'main', callbackId: id, outcome: 'allow-session', by: 'person' }, ctx);
    assert.deepEqual(settled, [{ kind: 'markdown', value: '✓ Allowed for the session by a person here in the chat.' }]);
    await host.cancel(hosted.id);
  });
});
