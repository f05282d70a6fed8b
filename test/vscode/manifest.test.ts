// The manifest and the code agree: every contributed command is registered and every registered
// command is contributed, menus name only real commands, activation is never `*`, and the
// walkthrough's steps have their media, their strings and completion events that can happen.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');
interface WalkthroughStep {
  id: string;
  title: string;
  description: string;
  media: { svg?: string; image?: string; markdown?: string; altText?: string };
  completionEvents: string[];
  when?: string;
}

const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  publisher: string;
  name: string;
  activationEvents: string[];
  capabilities: { untrustedWorkspaces: { supported: unknown } };
  contributes: {
    commands: Array<{ command: string; title: string; category: string }>;
    menus: Record<string, Array<{ command: string; when?: string }>>;
    views: Record<string, Array<{ id: string }>>;
    viewsContainers: { activitybar: Array<{ id: string; icon: string }> };
    configuration: { properties: Record<string, { scope?: string }> };
    jsonValidation: Array<{ fileMatch: string; url: string }>;
    walkthroughs: Array<{ id: string; title: string; description: string; steps: WalkthroughStep[] }>;
  };
};
const nls = JSON.parse(fs.readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
const vscodeSources = () => fs.readdirSync(path.join(root, 'src', 'vscode')).map((f) => fs.readFileSync(path.join(root, 'src', 'vscode', f), 'utf8')).join('\n');

/** A manifest string as VS Code shows it: `%key%` looked up in package.nls.json. */
function localized(value: string): string {
  const key = /^%(.+)%$/.exec(value)?.[1];
  if (key === undefined) return value;
  assert.ok(key in nls, `package.nls.json has no entry "${key}"`);
  return nls[key]!;
}

/** Commands of VS Code itself the walkthrough runs (its buttons and completion events). */
const WORKBENCH_COMMANDS = new Set(['workbench.action.chat.open']);
/** Context keys the walkthrough waits for that are set outside src/vscode's setContext calls. */
const KEYS_SET_ELSEWHERE = new Map([['agentPolicy.chatUsed', 'the @agents chat participant, when it has handled a request (branch chat-participant)']]);

function registeredCommands(): Set<string> {
  const dir = path.join(root, 'src', 'vscode');
  const ids = new Set<string>();
  for (const file of fs.readdirSync(dir)) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/registerCommand\(\s*'([^']+)'/g)) ids.add(m[1]!);
  }
  return ids;
}

describe('the extension manifest', () => {
  const contributed = new Set(manifest.contributes.commands.map((c) => c.command));

  it('registers every contributed command, and contributes every registered one', () => {
    const registered = registeredCommands();
    assert.ok(registered.size > 5);
    assert.deepEqual([...contributed].filter((c) => !registered.has(c)), [], 'contributed but never registered');
    assert.deepEqual([...registered].filter((c) => !contributed.has(c)), [], 'registered but not contributed');
  });

  it('gives every command the category "Agent Policy" and an id prefixed with the extension', () => {
    for (const c of manifest.contributes.commands) {
      assert.equal(c.category, 'Agent Policy', c.command);
      assert.match(c.command, /^agentPolicy\./);
    }
  });

  it('gates every menu entry with a when clause and names only contributed commands', () => {
    for (const [menu, entries] of Object.entries(manifest.contributes.menus)) {
      for (const e of entries) {
        assert.ok(contributed.has(e.command), `${menu}: ${e.command}`);
        assert.ok(e.when && e.when.length > 0, `${menu}: ${e.command} has no when clause`);
      }
    }
  });

  it('activates on the workspace files, its commands and views, never on *', () => {
    assert.ok(!manifest.activationEvents.includes('*'));
    assert.ok(manifest.activationEvents.includes('workspaceContains:.agentpolicy.jsonc'));
    assert.ok(manifest.activationEvents.includes('workspaceContains:.agents.jsonc'));
  });

  it('declares limited support for untrusted workspaces and machine-scoped policy files', () => {
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.equal(manifest.contributes.configuration.properties['agentPolicy.managedPolicyFile']!.scope, 'machine');
    assert.equal(manifest.contributes.configuration.properties['agentPolicy.userPolicyFile']!.scope, 'machine');
  });

  it('has its own view container with an icon from media/, and schemas for both files', () => {
    const container = manifest.contributes.viewsContainers.activitybar[0]!;
    assert.ok(fs.existsSync(path.join(root, container.icon)), container.icon);
    assert.ok(container.icon.startsWith('media/'));
    assert.deepEqual(manifest.contributes.views[container.id]!.map((v) => v.id), ['agentPolicy.callbacks']);
    assert.deepEqual(manifest.contributes.jsonValidation.map((j) => j.fileMatch).sort(), ['.agentpolicy.jsonc', '.agents.jsonc']);
  });

  describe('the Get Started walkthrough', () => {
    const walkthrough = manifest.contributes.walkthroughs[0]!;
    const steps = walkthrough.steps;

    it('is the one Agent Policy: Get Started and the first activation open', () => {
      assert.equal(manifest.contributes.walkthroughs.length, 1);
      const source = fs.readFileSync(path.join(root, 'src', 'vscode', 'walkthrough.ts'), 'utf8');
      assert.match(source, new RegExp(`WALKTHROUGH_ID = '${manifest.publisher}\\.${manifest.name}#${walkthrough.id}'`));
      assert.ok(contributed.has('agentPolicy.getStarted'));
      assert.equal(localized(manifest.contributes.commands.find((c) => c.command === 'agentPolicy.getStarted')!.title), 'Get Started');
    });

    it('has every title, description and alt text in package.nls.json', () => {
      for (const value of [walkthrough.title, walkthrough.description, ...steps.flatMap((s) => [s.title, s.description, s.media.altText ?? ''])]) {
        assert.match(value, /^%[\w.]+%$/, `"${value}" is not localizable`);
        assert.ok(localized(value).trim().length > 0, value);
      }
      assert.equal(new Set(steps.map((s) => s.id)).size, steps.length, 'step ids are unique');
      // The walkthrough page renders links only: backticks and asterisks would show as they are.
      for (const step of steps) assert.doesNotMatch(localized(step.description), /`|\*\*/, `${step.id}'s description has markdown the page shows raw`);
    });

    it('gives every step media from media/ that exists, with alt text', () => {
      for (const step of steps) {
        const file = step.media.svg ?? step.media.image ?? step.media.markdown;
        assert.ok(file, `${step.id} has media`);
        assert.ok(file.startsWith('media/') && fs.existsSync(path.join(root, file)), `${step.id}: ${file} exists`);
        assert.ok(step.media.altText, `${step.id} has alt text`);
      }
    });

    it("draws its SVGs in the theme's colours (legible in light and dark) with no inline style (the webview's CSP blocks it)", () => {
      for (const step of steps.filter((s) => s.media.svg)) {
        const svg = fs.readFileSync(path.join(root, step.media.svg!), 'utf8');
        assert.doesNotMatch(svg, /<style|\sstyle=/, `${step.media.svg} has inline style`);
        const colours = [...svg.matchAll(/\s(?:fill|stroke)="([^"]+)"/g)].map((m) => m[1]!);
        assert.ok(colours.length > 5, step.media.svg);
        for (const colour of colours) assert.match(colour, /^(none|var\(--vscode-[\w-]+, #[0-9a-f]{3,8}\))$/i, `${step.media.svg}: ${colour} is not a theme colour`);
      }
    });

    it('completes every step on an event that can happen: contributed commands, context keys the extension sets', () => {
      const sources = vscodeSources();
      for (const step of steps) {
        assert.ok(step.completionEvents.length > 0, `${step.id} completes on something`);
        for (const event of step.completionEvents) {
          const [, kind, arg] = /^(\w+):(.*)$/.exec(event) ?? [];
          if (kind === 'onCommand') {
            assert.ok(contributed.has(arg!) || WORKBENCH_COMMANDS.has(arg!), `${step.id}: ${arg} is no command`);
          } else if (kind === 'onContext') {
            for (const key of arg!.match(/agentPolicy\.[\w.]+/g) ?? []) {
              assert.ok(sources.includes(`'${key}'`) || KEYS_SET_ELSEWHERE.has(key), `${step.id}: nothing in src/vscode sets ${key}`);
            }
          } else {
            assert.ok(['onView', 'onSettingChanged', 'extensionInstalled', 'onLink'].includes(kind!), `${step.id}: unknown event ${event}`);
          }
        }
      }
      // And the reverse: every step key the extension sets is waited for.
      for (const key of sources.match(/'agentPolicy\.walkthrough\.\w+'/g) ?? []) {
        assert.ok(steps.some((s) => s.completionEvents.includes(`onContext:${key.slice(1, -1)}`)), `${key} completes no step`);
      }
    });

    it("has a button for each step's command that names a real command", () => {
      for (const step of steps) {
        for (const [, command] of localized(step.description).matchAll(/\]\(command:([\w.]+)/g)) {
          assert.ok(contributed.has(command!) || WORKBENCH_COMMANDS.has(command!), `${step.id}: ${command} is no command`);
        }
      }
      const chat = localized(steps.find((s) => s.id === 'chat')!.description);
      const args = /command:workbench\.action\.chat\.open\?([^)\s]+)\)/.exec(chat)?.[1];
      assert.deepEqual(JSON.parse(decodeURIComponent(args!)), { query: '@agents ', isPartialQuery: true });
    });
  });
});
