// The manifest and the code agree: every contributed command is registered and every registered
// command is contributed, menus name only real commands, and activation is never `*`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  activationEvents: string[];
  capabilities: { untrustedWorkspaces: { supported: unknown } };
  contributes: {
    commands: Array<{ command: string; title: string; category: string }>;
    menus: Record<string, Array<{ command: string; when?: string }>>;
    views: Record<string, Array<{ id: string }>>;
    viewsContainers: { activitybar: Array<{ id: string; icon: string }> };
    configuration: { properties: Record<string, { scope?: string }> };
    jsonValidation: Array<{ fileMatch: string; url: string }>;
  };
};

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
});
