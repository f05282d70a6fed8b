// The Get Started walkthrough in a real VS Code (code-server, see harness.ts): the VSIX installed
// into a fresh extensions dir and a fresh profile, on a copy of the sample workspace without its
// policy. The walkthrough opens by itself at the first activation; its first steps are done by
// doing them, from its own buttons (the policy, from an example where there is none; start the sample session),
// then answering the asks from their notifications and the palette; the page shows each step
// completed, and its pictures follow the theme. It also takes the README's first screenshot
// (media/readme/ask.png: asks as notifications and in the Open Callbacks tree), so that it never
// goes stale.
// Run with `npm run test:e2e -- --grep "Get Started"`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { exactly, REPO, transcriptText, useVsCode, waitForFile, type VsCode } from './harness';

const WALKTHROUGH = 'agent-policy.agent-policy#getStarted';
const TITLE = 'Get Started with Agent Policy';
const PROMPT = 'What do the Atlas and the Beacon cost?';
const RESEARCHER_ASK = /researcher.* wants to run builtin\.run_command: node src\/index\.js (atlas|beacon)/;
const WRITE_ASK = /main wants to run builtin\.write_file/;
/** The README shows this file; this test rewrites it at each run. */
const README_SCREENSHOT = path.join(REPO, 'media', 'readme', 'ask.png');

describe('The Get Started walkthrough in VS Code (e2e)', function () {
  const { open } = useVsCode();

  /** The walkthrough page, once it shows this walkthrough. */
  async function walkthroughPage(v: VsCode): Promise<Locator> {
    const page = v.page.locator('.gettingStartedContainer').filter({ has: v.page.locator('h2.category-title', { hasText: TITLE }) });
    await page.first().waitFor({ state: 'visible', timeout: 60_000 }).catch(async () => {
      throw await v.failure(`the walkthrough "${TITLE}" is not open`);
    });
    return page.first();
  }

  const stepIds = ['reviewPolicy', 'startSession', 'answerNotification', 'answerPalette', 'explainDecision', 'governOtherAgents'];
  /** Each step's completion as the page shows it (its checkbox), by step id. */
  async function completed(page: Locator): Promise<Record<string, boolean>> {
    const done: Record<string, boolean> = {};
    for (const id of stepIds) {
      const box = page.locator(`[data-done-step-id="${WALKTHROUGH}#${id}"]`).first();
      done[id] = (await box.getAttribute('aria-checked', { timeout: 5000 })) === 'true';
    }
    return done;
  }

  /** Opens the walkthrough from the palette and waits until the page shows these steps done. */
  async function expectDone(v: VsCode, steps: string[], shot: string): Promise<void> {
    await v.runCommand('Agent Policy: Get Started');
    const page = await walkthroughPage(v);
    const want = Object.fromEntries(stepIds.map((id) => [id, steps.includes(id)]));
    let seen: Record<string, boolean> = {};
    await v.waitFor(`the walkthrough to show done: ${steps.join(', ')}`, async () => {
      seen = await completed(page);
      return JSON.stringify(seen) === JSON.stringify(want) || undefined;
    }).catch((e: Error) => {
      throw new Error(`${e.message}\n  it shows: ${JSON.stringify(seen)}`);
    });
    await v.screenshot(shot);
  }

  /** The computed fill of the selected step's picture's frame (an SVG in a webview inside a webview). */
  async function pictureBackground(v: VsCode): Promise<string> {
    const frame = v.page.frameLocator('.getting-started-media iframe.webview').frameLocator('#active-frame').locator('svg > rect').first();
    return frame.evaluate((e) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(e).fill, undefined, { timeout: 10_000 });
  }
  /** The mean of an `rgb(r, g, b)` colour's channels. */
  const brightness = (rgb: string): number => {
    const channels = (rgb.match(/\d+/g) ?? []).slice(0, 3).map(Number);
    return channels.length === 3 ? channels.reduce((a, b) => a + b) / 3 : NaN;
  };

  /** Waits until the active editor is the workspace policy: a command run before it shows would lose the palette to it. */
  async function policyInEditor(v: VsCode): Promise<void> {
    await v.page.locator('.tabs-container .tab.active', { hasText: '.agentpolicy.jsonc' }).first().waitFor({ state: 'visible', timeout: 30_000 })
      .catch(async () => { throw await v.failure('the workspace policy is not the active editor'); });
  }

  /** Drags the side bar's edge to this width (the tree's rows whole in the README's picture); returns the width it had. */
  async function sideBarWidth(v: VsCode, width: number): Promise<number> {
    const box = await v.page.locator('.part.sidebar').boundingBox();
    if (!box || box.width === width) return box?.width ?? width;
    const y = box.y + box.height / 2;
    await v.page.mouse.move(box.x + box.width + 1, y);
    await v.page.mouse.down();
    await v.page.mouse.move(box.x + width, y, { steps: 5 });
    await v.page.mouse.up();
    return box.width;
  }

  /** Clicks a step's button in the walkthrough page (the step is selected first, which expands it). */
  async function clickStepButton(v: VsCode, step: string, button: string): Promise<void> {
    const page = await walkthroughPage(v);
    await page.locator(`button.getting-started-step[data-step-id="${WALKTHROUGH}#${step}"]`).click();
    const b = page.locator('.getting-started-step.expanded .monaco-button, .getting-started-step[aria-expanded="true"] .monaco-button').filter({ hasText: exactly(button) }).first();
    await b.waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => {
      throw await v.failure(`the step ${step} has no button "${button}"`);
    });
    await b.click();
  }

  it('in a folder that has a policy (the sample), the first step says to review it: its button opens that policy, no example offered, and the step is done', async () => {
    const v = await open('walkthrough-policy-there', { settings: { 'workbench.welcomePage.walkthroughs.openOnInstall': true } });
    const page = await walkthroughPage(v);
    const step = page.locator(`button.getting-started-step[data-step-id="${WALKTHROUGH}#reviewPolicy"]`);
    assert.match(await step.innerText(), /Review the workspace policy[\s\S]*Open the policy this folder has/);
    await clickStepButton(v, 'reviewPolicy', 'Open Workspace Policy');
    await policyInEditor(v);
    assert.equal(await v.page.locator('.quick-input-widget').isVisible(), false, 'no example is offered when the folder has a policy');
    assert.match(fs.readFileSync(path.join(v.workspace, '.agentpolicy.jsonc'), 'utf8'), /The sample workspace's policy/, 'the sample policy is left as it was');
    await expectDone(v, ['reviewPolicy'], 'walkthrough-policy-reviewed');
  });

  it('Get Started opens at the first activation; its first steps complete by doing them: the policy from an example, the sample session, an ask answered from its notification (and one from the palette)', async () => {
    const v = await open('walkthrough', {
      prepare: (ws) => fs.rmSync(path.join(ws, '.agentpolicy.jsonc')),
      // The harness turns walkthroughs on install off for the other tests; a new user has them on.
      settings: { 'workbench.welcomePage.walkthroughs.openOnInstall': true },
    });
    const page = await walkthroughPage(v);
    assert.deepEqual(Object.values(await completed(page)).filter(Boolean), [], 'no step is done in a fresh profile');
    // The selected step's picture (an SVG in the theme's colours, in a webview inside a webview).
    await v.page.frameLocator('.getting-started-media iframe.webview').frameLocator('#active-frame').locator('svg').first()
      .waitFor({ state: 'visible', timeout: 30_000 }).catch(async () => { throw await v.failure("the first step's picture does not show"); });
    await v.screenshot('walkthrough-opened');

    // 1. The policy, from an example: the step's button, then the examples' pick.
    await clickStepButton(v, 'reviewPolicy', 'Open Workspace Policy');
    const examples = (await v.quickPickItems()).filter((i) => i.kind === 'item').map((i) => i.label);
    assert.ok(examples.includes('balanced'), `the examples are offered (${examples.join(', ')})`);
    await v.pickQuickItem(exactly('balanced'));
    await waitForFile(v, '.agentpolicy.jsonc', /^\/\/ Balanced:/);
    await policyInEditor(v);
    await expectDone(v, ['reviewPolicy'], 'walkthrough-policy-created');

    // The README's picture is set up before the asks come (a notification hides after ~15 s):
    // the Open Callbacks view, wide enough for its rows, and the policy in the editor.
    await v.openView('Open Callbacks');
    const narrow = await sideBarWidth(v, 480);
    await v.runCommand('Agent Policy: Get Started');

    // 2. The sample session, from the step's button. Under "balanced" the researchers' commands
    // ask (no rule names them), then main's write to src/answer.txt (rule edit-code).
    await clickStepButton(v, 'startSession', 'Start Agent Session');
    await v.pickQuickItem(exactly('main'));
    await v.typeInQuickInput(PROMPT);
    await v.runCommand('Agent Policy: Open Workspace Policy');
    await policyInEditor(v);

    // The README's picture: the researchers' asks as notifications and in the tree.
    const rows = await v.waitFor('both researchers\' asks in the Open Callbacks tree', async () => {
      const items = await v.treeItems('Open Callbacks');
      return items.filter((i) => /builtin\.run_command/.test(`${i.label} ${i.description} ${i.ariaLabel}`)).length === 2 ? items : undefined;
    }, 120_000);
    assert.ok(rows.some((i) => /^main\b/.test(i.label)), `the tree shows main's session (${rows.map((i) => i.label).join(' | ')})`);
    await v.notification(RESEARCHER_ASK, 30_000);
    // Off the toast and anything with a hover, onto the tree's empty part.
    await v.page.mouse.move(200, 700);
    await v.waitFor('no hover in the way', async () => !(await v.page.locator('.workbench-hover-container, .monaco-hover:not(.hidden)').first().isVisible()) || undefined, 5_000);
    assert.ok(await v.page.locator('.notifications-toasts .notification-toast').filter({ hasText: RESEARCHER_ASK }).first().isVisible(), 'an ask shows as a notification for the README screenshot');
    fs.mkdirSync(path.dirname(README_SCREENSHOT), { recursive: true });
    await v.page.screenshot({ path: README_SCREENSHOT });
    // Back to the width it had: the walkthrough shows its pictures only when it has the room.
    await sideBarWidth(v, narrow);
    await expectDone(v, ['reviewPolicy', 'startSession'], 'walkthrough-session-started');

    // 3. Each researcher's ask, allowed from its notification.
    for (let answered = 0; answered < 2; answered++) await v.clickNotificationButton(RESEARCHER_ASK, 'Allow', 60_000);
    await expectDone(v, ['reviewPolicy', 'startSession', 'answerNotification'], 'walkthrough-answered-from-notification');

    // 4. Main's write, answered from the palette.
    await v.notification(WRITE_ASK, 120_000);
    await v.runCommand('Agent Policy: Answer Pending Approval');
    await v.pickQuickItem(/builtin\.write_file/);
    await v.pickQuickItem(/^\s*Allow\s*$/);
    await waitForFile(v, 'src/answer.txt', /atlas: €129\.00[\s\S]*beacon: €49\.50/);
    await transcriptText(v, /completed: /);
    await expectDone(v, ['reviewPolicy', 'startSession', 'answerNotification', 'answerPalette'], 'walkthrough-four-steps-done');

    // The pictures follow the theme: the frame of the selected step's picture is the editor's
    // background, light here, dark once the person picks a dark theme.
    const light = await pictureBackground(v);
    await v.runCommand('Preferences: Color Theme');
    await v.pickQuickItem(/^\s*(Default )?Dark Modern\s*$/);
    const dark = await v.waitFor('the picture to follow the dark theme', async () => {
      const now = await pictureBackground(v).catch(() => undefined);
      return now !== undefined && now !== light ? now : undefined;
    }, 60_000);
    assert.ok(brightness(light) > 200 && brightness(dark) < 60, `the picture's background follows the theme (light ${light}, dark ${dark})`);
    await v.screenshot('walkthrough-dark');
  });
});
