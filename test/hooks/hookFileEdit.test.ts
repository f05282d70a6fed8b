// Safety properties of editing a host's settings file, over generated files of other people's
// hooks in any layout (indentation, one line, CRLF, comments): installing keeps every value of
// theirs, adds ours once per array, is a no-op the second time, and removing gives the file back
// byte for byte.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parse } from 'jsonc-parser';
import { hookTargets, type HookTarget } from '../../src/hooks/install/hookEntries.js';
import { withoutOurEntries, withOurEntries } from '../../src/hooks/install/hookFileEdit.js';

const TARGETS = hookTargets({ launcher: 'agentpolicy', timeoutSeconds: 120 });

/** Commands that look like ours without being ours (for some target), and plain ones. */
const COMMANDS = fc.oneof(
  fc.constantFrom(
    'mytool hook --agent claude', 'mytool hook --agent copilot', 'agentpolicy hook --agent claudette', 'agentpolicy explain --tool x',
    'agentpolicy hook --agent codex --timeout 5', 'agentpolicy hook --agent cursor', 'agentpolicy hook --agent gemini', './audit.sh',
  ),
  fc.string({ maxLength: 20 }),
);

function otherFile(target: HookTarget): fc.Arbitrary<Record<string, unknown>> {
  const flat = target.slots[0]!.shape === 'flat';
  const field = target.slots[0]!.commandField;
  const command = COMMANDS.filter((c) => !target.isOurs(c));
  const handler: fc.Arbitrary<object> = command.map((c) => ({ type: 'command', [field]: c }));
  const entry: fc.Arbitrary<object> = flat ? handler : fc.record({ matcher: fc.constantFrom('*', 'Bash', 'Edit|Write'), hooks: fc.array(handler, { minLength: 1, maxLength: 2 }) });
  const events = [...new Set([...target.slots.map((s) => s.path[1]!), 'PostToolUse', 'sessionStart'])];
  const hooks = fc.dictionary(fc.constantFrom(...events), fc.array(entry, { minLength: 1, maxLength: 3 }), { minKeys: 1, maxKeys: 3 });
  // Through JSON: fast-check's dictionaries have no prototype.
  return fc.record({ version: fc.constant(1), model: fc.string({ maxLength: 8 }), hooks }, { requiredKeys: ['hooks'] })
    .map((v) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>);
}

const LAYOUT = fc.record({
  indent: fc.constantFrom<string | number>(0, 2, 4, '\t'),
  crlf: fc.boolean(),
  comment: fc.boolean(),
});

function render(value: unknown, layout: { indent: string | number; crlf: boolean; comment: boolean }): string {
  let text = JSON.stringify(value, null, layout.indent);
  if (layout.comment) text = text.replace('{', '{ /* the team\'s settings */');
  if (layout.indent !== 0) text += '\n';
  return layout.crlf ? text.replace(/\n/g, '\r\n') : text;
}

/** The file's value without our entries (and without the containers only ours filled). */
function withoutOurs(value: Record<string, unknown>, target: HookTarget): Record<string, unknown> {
  const hooks = { ...(value.hooks as Record<string, unknown[]>) };
  for (const slot of target.slots) {
    const event = slot.path[1]!;
    const kept = (hooks[event] ?? []).filter((e) => !ours(e, target, slot.commandField));
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  return { ...value, hooks };
}

function ours(entry: unknown, target: HookTarget, field: string): boolean {
  const handlers = (entry as { hooks?: Record<string, string>[] }).hooks ?? [entry as Record<string, string>];
  return handlers.some((h) => typeof h[field] === 'string' && target.isOurs(h[field]!));
}

describe('hook file edits (properties)', () => {
  for (const target of TARGETS) {
    it(`${target.file}: keeps every value of theirs, adds ours once, twice is once, removal gives the bytes back`, () => {
      fc.assert(
        fc.property(otherFile(target), LAYOUT, (value, layout) => {
          const original = render(value, layout);
          const installed = withOurEntries(original, target);
          const after = parse(installed) as Record<string, unknown>;
          assert.deepEqual(withoutOurs(after, target), value);
          for (const slot of target.slots) {
            const array = (after.hooks as Record<string, unknown[]>)[slot.path[1]!]!;
            assert.deepEqual(array.filter((e) => ours(e, target, slot.commandField)), [slot.entry]);
          }
          assert.equal(withOurEntries(installed, target), installed);
          assert.equal(withoutOurEntries(installed, target), original);
        }),
        { numRuns: 150 },
      );
    });
  }
});
