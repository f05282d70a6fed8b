// Localisable strings: every `%key%` of the manifest has its English in package.nls.json (and
// every entry there is used), no user-facing manifest string is left hard-coded, and every
// `l10n.t` call of the VS Code layer (vscode.l10n.t, or @vscode/l10n in describe.ts) has its key in
// l10n/bundle.l10n.json. The calls are read with the TypeScript compiler's parser: a first argument
// that is not a literal (a template with substitutions, a concatenation, a variable) has no key a
// translator could find, and fails here. The bundle must also be exactly what `npm run l10n` writes.
// And no file of src/vscode shows a hard-coded text: where a person reads (notifications and their
// buttons, the chat's markdown and progress, titles, labels, placeholders, tooltips), a literal
// with words is a string that escaped l10n.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getL10nJson } from '@vscode/l10n-dev';
import type { Node, SourceFile } from 'typescript/unstable/ast';
import {
  isArrayLiteralExpression, isBinaryExpression, isCallExpression, isConditionalExpression, isIdentifier, isNoSubstitutionTemplateLiteral,
  isObjectLiteralExpression, isParenthesizedExpression, isPropertyAccessExpression, isPropertyAssignment, isStringLiteral,
  isTaggedTemplateExpression, isTemplateExpression,
} from 'typescript/unstable/ast/is';
import { API } from 'typescript/unstable/sync';

const root = path.join(__dirname, '..', '..');
const LAYER = path.join(root, 'src', 'vscode');
const readJson = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(root, file), 'utf8'));

/** Every string in a JSON value, with where it is (`contributes.commands[0].title`). */
function stringsOf(value: unknown, at = ''): Array<[string, string]> {
  if (typeof value === 'string') return [[at, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringsOf(v, `${at}[${i}]`));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringsOf(v, at ? `${at}.${k}` : k));
  return [];
}

/** The manifest's places a person reads: each must be a `%key%`. */
const USER_FACING = [
  /^displayName$/, /^description$/,
  /^contributes\.commands\[\d+\]\.(title|category)$/,
  /^contributes\.viewsContainers\.\w+\[\d+\]\.title$/,
  /^contributes\.views\.[\w.]+\[\d+\]\.(name|contextualTitle)$/,
  /^contributes\.viewsWelcome\[\d+\]\.contents$/,
  /^contributes\.configuration\.title$/,
  /^contributes\.configuration\.properties\.[\w.]+\.(description|markdownDescription|enumDescriptions\[\d+\])$/,
  /^contributes\.languages\[\d+\]\.aliases\[\d+\]$/,
  /^capabilities\.untrustedWorkspaces\.description$/,
  /^contributes\.chatParticipants\[\d+\]\.(fullName|description|sampleRequest)$/,
  /^contributes\.chatParticipants\[\d+\]\.commands\[\d+\]\.description$/,
  /^contributes\.languageModelChatProviders\[\d+\]\.displayName$/,
];

export function manifestKeyProblems(manifest: unknown, nls: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const used = new Set<string>();
  for (const [at, text] of stringsOf(manifest)) {
    const key = /^%(.+)%$/.exec(text)?.[1];
    if (key !== undefined) {
      used.add(key);
      if (typeof nls[key] !== 'string' || nls[key] === '') problems.push(`${at}: %${key}% has no entry in package.nls.json`);
    } else if (USER_FACING.some((re) => re.test(at))) {
      problems.push(`${at}: "${text}" is shown to people but is not a %key% of package.nls.json`);
    }
  }
  for (const key of Object.keys(nls)) if (!used.has(key)) problems.push(`package.nls.json: "${key}" is used nowhere in package.json`);
  return problems;
}

export interface L10nCall {
  file: string;
  line: number;
  /** The bundle's key, or undefined when the first argument is not a literal. */
  key: string | undefined;
  text: string;
}

function literalText(node: Node | undefined): string | undefined {
  return node && (isStringLiteral(node) || isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
}

/** `l10n.t(…)` and `vscode.l10n.t(…)`: the key of the message (the object form's message, with its comment as l10n-dev keys it). */
export function l10nCalls(file: SourceFile, relative: string): L10nCall[] {
  const calls: L10nCall[] = [];
  const isT = (callee: Node): boolean =>
    isPropertyAccessExpression(callee) && callee.name.text === 't' &&
    ((isIdentifier(callee.expression) && callee.expression.text === 'l10n') ||
      (isPropertyAccessExpression(callee.expression) && callee.expression.name.text === 'l10n' && isIdentifier(callee.expression.expression) && callee.expression.expression.text === 'vscode'));
  const at = (node: Node): number => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const visit = (node: Node): void => {
    if (isTaggedTemplateExpression(node) && isT(node.tag)) {
      calls.push({ file: relative, line: at(node), key: undefined, text: node.getText(file) });
    } else if (isCallExpression(node) && isT(node.expression)) {
      const first = node.arguments[0];
      let key = literalText(first);
      if (first && isObjectLiteralExpression(first)) {
        const prop = (name: string): Node | undefined => {
          const found = first.properties.find((p) => isPropertyAssignment(p) && isIdentifier(p.name) && p.name.text === name);
          return found && isPropertyAssignment(found) ? found.initializer : undefined;
        };
        const message = literalText(prop('message'));
        const comment = prop('comment');
        const comments = comment === undefined ? [] : isArrayLiteralExpression(comment) ? comment.elements.map(literalText) : [literalText(comment)];
        key = message === undefined || comments.some((c) => c === undefined) ? undefined : comments.length > 0 ? `${message}/${comments.join('')}` : message;
      }
      calls.push({ file: relative, line: at(node), key, text: node.getText(file).slice(0, 120) });
    }
    node.forEachChild(visit);
  };
  file.forEachChild(visit);
  return calls;
}

export interface HardCodedText {
  file: string;
  line: number;
  text: string;
}

/** Calls whose arguments a person reads: the notifications' messages and buttons, the chat's markdown and progress. */
const SHOWN_ARGUMENTS = new Set(['showInformationMessage', 'showWarningMessage', 'showErrorMessage', 'markdown', 'progress']);
/** Properties a person reads: quick picks', input boxes', tree items', buttons' and the model picker's. */
const SHOWN_PROPERTIES = new Set(['title', 'placeHolder', 'placeholder', 'prompt', 'label', 'tooltip', 'description', 'detail']);
/** Words: a literal with none (`'\\n\\n'`, `'•'`) is markdown syntax or a symbol, not a sentence. */
const WORDS = /\p{L}{2}/u;
/** An icon in a label: `$(edit)`, or the `$(` a template completes with the icon's name. */
const CODICON = /\$\([\w-]*\)?/g;

/**
 * Literals with words where a person reads them (SHOWN_ARGUMENTS, SHOWN_PROPERTIES): each must be an
 * `l10n.t(…)` call or a value (a variable, a property, another call), never a literal, a template or
 * a concatenation with words in it. Log lines, command ids and setting keys are in none of those places.
 */
export function hardCodedTexts(file: SourceFile, relative: string): HardCodedText[] {
  const found: HardCodedText[] = [];
  const at = (node: Node): number => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  /** The literal text with words in `node` (through conditionals, parentheses, concatenations and templates), if any. */
  const wordy = (node: Node): boolean => {
    if (isStringLiteral(node) || isNoSubstitutionTemplateLiteral(node)) return WORDS.test(node.text.replace(CODICON, ''));
    // A template's own text, codicons (`$(edit) `) aside; what goes into it is a value.
    if (isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].some((text) => WORDS.test(text.replace(CODICON, '')));
    if (isBinaryExpression(node)) return wordy(node.left) || wordy(node.right);
    if (isConditionalExpression(node)) return wordy(node.whenTrue) || wordy(node.whenFalse);
    if (isParenthesizedExpression(node)) return wordy(node.expression);
    return false;
  };
  const check = (node: Node): void => {
    if (wordy(node)) found.push({ file: relative, line: at(node), text: node.getText(file).slice(0, 120) });
  };
  const visit = (node: Node): void => {
    if (isCallExpression(node) && isPropertyAccessExpression(node.expression) && SHOWN_ARGUMENTS.has(node.expression.name.text)) node.arguments.forEach(check);
    if (isPropertyAssignment(node) && (isIdentifier(node.name) || isStringLiteral(node.name)) && SHOWN_PROPERTIES.has(node.name.text)) check(node.initializer);
    node.forEachChild(visit);
  };
  file.forEachChild(visit);
  return found;
}

function layerFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? layerFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** `read` of each of `files`, parsed by the TypeScript 7 compiler API (the compiler runs as a child process) in the project of `dir`'s tsconfig.json. */
function parsed<T>(dir: string, files: string[], read: (source: SourceFile, relative: string) => T[]): T[] {
  const api = new API({ cwd: dir });
  try {
    const project = api.updateSnapshot({ openProjects: [path.join(dir, 'tsconfig.json')] }).getProjects()[0]!;
    return files.flatMap((file) => {
      const source = project.program.getSourceFile(file);
      assert.ok(source, `${file} is not in the program of ${dir}/tsconfig.json`);
      return read(source, path.relative(root, file));
    });
  } finally {
    api.close();
  }
}

/** `read` of a planted file of these lines, parsed as the layer's files are. */
function parsedPlant<T>(lines: string[], read: (source: SourceFile, relative: string) => T[]): T[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'l10n-plant-'));
  try {
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { noEmit: true, types: [] }, files: ['planted.ts'] }));
    fs.writeFileSync(path.join(dir, 'planted.ts'), lines.join('\n'));
    return parsed(dir, [path.join(dir, 'planted.ts')], read);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('localisable strings', () => {
  const manifest = readJson('package.json') as { l10n?: string };
  const nls = readJson('package.nls.json') as Record<string, unknown>;
  const bundle = readJson('l10n/bundle.l10n.json') as Record<string, unknown>;
  let calls: L10nCall[] = [];
  let hardCoded: HardCodedText[] = [];

  before(function () {
    this.timeout(120_000);
    const read = parsed(root, layerFiles(LAYER), (source, relative) => [{ calls: l10nCalls(source, relative), hardCoded: hardCodedTexts(source, relative) }]);
    calls = read.flatMap((r) => r.calls);
    hardCoded = read.flatMap((r) => r.hardCoded);
  });

  it('gives every %key% of package.json an entry in package.nls.json, uses every entry, and hard-codes no user-facing string', () => {
    assert.deepEqual(manifestKeyProblems(manifest, nls), []);
    assert.ok(Object.keys(nls).length > 40);
  });

  it('finds a missing entry, an unused one and a hard-coded title (the check can fail)', () => {
    const planted = { displayName: '%displayName%', contributes: { commands: [{ command: 'x', title: 'Do It', category: '%missing.key%' }] } };
    assert.deepEqual(manifestKeyProblems(planted, { displayName: 'Agent Policy', unused: 'x' }), [
      'contributes.commands[0].title: "Do It" is shown to people but is not a %key% of package.nls.json',
      'contributes.commands[0].category: %missing.key% has no entry in package.nls.json',
      'package.nls.json: "unused" is used nowhere in package.json',
    ]);
  });

  it('declares the bundle folder in package.json', () => {
    assert.equal(manifest.l10n, './l10n');
  });

  it('calls l10n.t with a literal message (placeholders for the rest), never a template or a concatenation', () => {
    assert.ok(calls.length > 200, `only ${calls.length} l10n.t calls found`);
    const bad = calls.filter((c) => c.key === undefined).map((c) => `${c.file}:${c.line}: ${c.text}`);
    assert.deepEqual(bad, [], 'the first argument of l10n.t must be a string literal; pass values as {0}, {1}…');
  });

  it('shows no hard-coded text: notifications, the chat\'s markdown and progress, titles, labels, placeholders, tooltips go through l10n.t', () => {
    assert.deepEqual(hardCoded.map((h) => `${h.file}:${h.line}: ${h.text}`), [], 'a text a person reads must be l10n.t(…) (values as {0}, {1}…)');
  });

  it('has every l10n.t key of src/vscode in l10n/bundle.l10n.json (run npm run l10n)', () => {
    const missing = calls.filter((c) => c.key !== undefined && !(c.key in bundle)).map((c) => `${c.file}:${c.line}: ${JSON.stringify(c.key)}`);
    assert.deepEqual(missing, [], 'missing from l10n/bundle.l10n.json: run npm run l10n');
    const used = new Set(calls.map((c) => c.key));
    assert.deepEqual(Object.keys(bundle).filter((k) => !used.has(k)), [], 'in l10n/bundle.l10n.json but used nowhere: run npm run l10n');
  });

  it('finds a template message, a concatenation and a key the bundle lacks (the check can fail)', function () {
    this.timeout(120_000);
    const lines = [
      "import * as l10n from '@vscode/l10n';",
      "const who = 'x';",
      "l10n.t('Allow for {0}', who);",
      'l10n.t(`Hello ${who}`);',
      "l10n.t('Hello ' + who);",
      "l10n.t('A key no bundle has');",
      "l10n.t({ message: 'Deny', comment: ['a button'] });",
    ];
    const planted = parsedPlant(lines, l10nCalls);
    assert.deepEqual(planted.map((c) => [c.line, c.key]), [[3, 'Allow for {0}'], [4, undefined], [5, undefined], [6, 'A key no bundle has'], [7, 'Deny/a button']]);
    assert.deepEqual(planted.filter((c) => c.key !== undefined && !(c.key in bundle)).map((c) => c.key), ['A key no bundle has', 'Deny/a button']);
  });

  it('finds hard-coded texts where a person reads them, and leaves log lines, ids, setting keys, markdown syntax and icons alone (the check can fail)', function () {
    this.timeout(120_000);
    const lines = [
      'declare const vscode: any, stream: any, log: any, l10n: any, n: number, name: string;',
      "void vscode.window.showInformationMessage('Agent Policy: done');",
      "void vscode.window.showWarningMessage(l10n.t('Agent Policy: {0} failed', name), 'Open Log');",
      "stream.markdown(`**The turn failed:** ${name}`);",
      "stream.progress('Working…');",
      "stream.button({ command: 'agentPolicy.openPolicy', title: 'Open Policy' });",
      "void vscode.window.showQuickPick([], { placeHolder: n > 1 ? 'Pick ' + n : l10n.t('Pick one') });",
      "const item = { label: `$(edit) Respond`, tooltip: name };",
      "log.info('the chat started a session'); log.warn(`could not read ${name}: not found`);",
      "void vscode.commands.executeCommand('agentPolicy.focusCallbacks'); vscode.workspace.getConfiguration().get('agentPolicy.model.default');",
      "stream.markdown('\\n\\n'); stream.markdown(`${name}\\n\\n`); stream.markdown(l10n.t('Done.'));",
      "const fine = { label: `$(${n ? 'unlock' : 'watch'}) ${name}`, title: l10n.t('Agent Policy'), detail: name, description: '•' };",
      "void vscode.window.showErrorMessage(l10n.t('Failed: {0}', name), l10n.t('Open Log'));",
    ];
    const planted = parsedPlant(lines, hardCodedTexts);
    assert.deepEqual(planted.map((h) => [h.line, h.text]), [
      [2, "'Agent Policy: done'"],
      [3, "'Open Log'"],
      [4, '`**The turn failed:** ${name}`'],
      [5, "'Working…'"],
      [6, "'Open Policy'"],
      [7, "n > 1 ? 'Pick ' + n : l10n.t('Pick one')"],
      [8, '`$(edit) Respond`'],
    ]);
  });

  it('holds exactly what npm run l10n extracts (@vscode/l10n-dev)', async function () {
    this.timeout(60_000);
    const extracted = await getL10nJson(layerFiles(LAYER).map((file) => ({ contents: fs.readFileSync(file, 'utf8'), extension: '.ts' })));
    assert.deepEqual(bundle, extracted);
  });
});
