// The manifest and the code agree: every contributed command is registered and every registered
// command is contributed, menus name only real commands, and activation is never `*`; the
// walkthrough's steps have their media, their strings and completion events that can happen. And
// the manifest is honest: no placeholder URLs, a real icon, categories VS Code knows, a changelog in the VSIX.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { minimatch } from 'minimatch';

const root = path.join(__dirname, '..', '..');
const nls = JSON.parse(fs.readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
/** A manifest string as VS Code shows it in English: `%key%` read from package.nls.json. */
const english = (text: string): string => text.replace(/^%(.+)%$/, (_, key: string) => nls[key] ?? text);
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
  icon: string;
  categories: string[];
  keywords: string[];
  galleryBanner: { color: string; theme: string };
  repository?: unknown;
  bugs?: unknown;
  homepage?: unknown;
  scripts: Record<string, string>;
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
/** Every source file of src/vscode and its rooms. */
const vscodeFiles = (): string[] => (fs.readdirSync(path.join(root, 'src', 'vscode'), { recursive: true, withFileTypes: true }) as fs.Dirent[])
  .filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(e.parentPath, e.name));
const vscodeSources = () => vscodeFiles().map((f) => fs.readFileSync(f, 'utf8')).join('\n');

/** A manifest string as VS Code shows it, `%key%` looked up in package.nls.json, which must have it. */
function localized(value: string): string {
  const key = /^%(.+)%$/.exec(value)?.[1];
  if (key === undefined) return value;
  assert.ok(key in nls, `package.nls.json has no entry "${key}"`);
  return nls[key]!;
}

/** Commands of VS Code itself the walkthrough runs (its buttons and completion events). */
const WORKBENCH_COMMANDS = new Set(['workbench.action.chat.open']);
/** Context keys the walkthrough waits for that are set outside src/vscode's setContext calls. */
function registeredCommands(): Set<string> {
  const ids = new Set<string>();
  for (const file of vscodeFiles()) {
    const text = fs.readFileSync(file, 'utf8');
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
      assert.equal(english(c.category), 'Agent Policy', c.command);
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

    it('gives every step media from media/ that exists and is packaged, with alt text (the README\'s picture is not packaged)', () => {
      assert.ok(!packaged('media/readme/ask.png'), 'the extension page would not show it: see README, "The walkthrough"');
      for (const step of steps) {
        const file = step.media.svg ?? step.media.image ?? step.media.markdown;
        assert.ok(file, `${step.id} has media`);
        assert.ok(file.startsWith('media/') && fs.existsSync(path.join(root, file)), `${step.id}: ${file} exists`);
        assert.ok(packaged(file), `${file} is left out of the VSIX by .vscodeignore`);
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
              assert.ok(sources.includes(`'${key}'`), `${step.id}: nothing in src/vscode sets ${key}`);
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

/** The categories VS Code's extension manifest schema allows (code-server 1.139's workbench). */
const KNOWN_CATEGORIES = [
  'AI', 'Azure', 'Chat', 'Data Science', 'Debuggers', 'Extension Packs', 'Education', 'Formatters', 'Keymaps', 'Language Packs',
  'Linters', 'Machine Learning', 'Notebooks', 'Programming Languages', 'SCM Providers', 'Snippets', 'Testing', 'Themes', 'Visualization', 'Other',
];

/**
 * Whether `file` goes into the VSIX by .vscodeignore, as vsce reads it: left out when a pattern
 * (or, for a folder's name, the folder) matches it, unless a `!` pattern does, wherever it stands.
 */
function packaged(file: string): boolean {
  const lines = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split(/[\n\r]/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const ignore = lines.filter((l) => !l.startsWith('!'));
  const folders = ignore.filter((l) => !/(^|\/)[^/]*\*[^/]*$/.test(l)).map((l) => (l.endsWith('/') ? `${l}**` : `${l}/**`));
  const negate = lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1));
  const matches = (pattern: string): boolean => minimatch(file, pattern, { dot: true });
  return !(ignore.some(matches) || folders.some(matches)) || negate.some(matches) || ['package.json', 'README.md'].includes(file);
}

/** Width and height of a PNG, read from its IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const bytes = fs.readFileSync(file);
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${file} is not a PNG`);
  assert.equal(bytes.toString('ascii', 12, 16), 'IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('an honest manifest', () => {
  it('has no placeholder URLs (the project has no public home yet: packaged with --allow-missing-repository)', () => {
    const text = fs.readFileSync(path.join(root, 'package.json'), 'utf8');
    assert.doesNotMatch(text, /https?:\/\/[^"]*example\.(invalid|com|org|net)/i);
    assert.equal(manifest.repository, undefined);
    assert.equal(manifest.bugs, undefined);
    assert.equal(manifest.homepage, undefined);
    assert.match(manifest.scripts['package']!, /vsce package .*--allow-missing-repository/);
  });

  it('has a 128×128 PNG icon and a gallery banner', () => {
    assert.equal(path.extname(manifest.icon), '.png');
    assert.deepEqual(pngSize(path.join(root, manifest.icon)), { width: 128, height: 128 });
    assert.ok(packaged(manifest.icon), `${manifest.icon} is left out of the VSIX by .vscodeignore`);
    assert.match(manifest.galleryBanner.color, /^#[0-9a-f]{6}$/i);
    assert.ok(['dark', 'light'].includes(manifest.galleryBanner.theme));
  });

  it('has an activity bar icon VS Code can tint (one colour, no currentColor: it is used as a mask)', () => {
    const svg = fs.readFileSync(path.join(root, manifest.contributes.viewsContainers.activitybar[0]!.icon), 'utf8');
    assert.doesNotMatch(svg, /currentColor/);
    assert.match(svg, /viewBox="0 0 24 24"/);
  });

  it('names categories VS Code knows, not only Other, and keywords people search for', () => {
    assert.ok(manifest.categories.length > 0);
    for (const c of manifest.categories) assert.ok(KNOWN_CATEGORIES.includes(c), `unknown category ${c}`);
    assert.ok(!manifest.categories.includes('Other'));
    assert.ok(manifest.categories.includes('AI'));
    assert.ok(manifest.keywords.length > 0 && manifest.keywords.length <= 30, 'the marketplace takes at most 30 keywords');
  });

  it('packages the changelog, the manifest strings, the l10n bundle and the CLI\'s bundles, not the sources', async () => {
    // The CLI's bundles too: the hooks of other agents the palette sets up fall back to them (src/vscode/hosts/governAgents.ts).
    const { CLI_BUNDLES_SHIPPED } = (await import(pathToFileURL(path.join(root, 'scripts', 'bundles.mjs')).href)) as { CLI_BUNDLES_SHIPPED: string[] };
    const cli = CLI_BUNDLES_SHIPPED.map((b) => `dist/${b}.js`);
    for (const file of ['CHANGELOG.md', 'README.md', 'LICENSE', 'package.json', 'package.nls.json', 'l10n/bundle.l10n.json', 'media/shield.svg', 'dist/extension.js', ...cli]) {
      assert.ok(packaged(file), `${file} is left out of the VSIX by .vscodeignore`);
    }
    for (const file of ['scripts/icon.svg', 'src/vscode/extension.ts', 'test/vscode/manifest.test.ts', 'dist/extension.js.map']) assert.ok(!packaged(file), `${file} is packaged`);
    assert.match(fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8'), /^# Changelog\n[\s\S]*## \d+\.\d+\.\d+/);
  });
});
