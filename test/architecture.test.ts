// The house rules of src/, read from the import statements themselves: no import circle between
// files, none between folders (a folder leans only on folders below it, e.g. src/agents on
// src/policy and never back), src/policy at the bottom, and `vscode` only in src/vscode/
// (everything else also runs in the CLI and in plain Node, where there is no `vscode` module).
//
// The imports are found by a small TypeScript tokenizer (comments, strings, templates and regex
// literals skipped) rather than by the compiler, so `import type` counts like any other import:
// a type-only circle is still a circle for a reader.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..');
const srcDir = path.join(root, 'src');

interface ImportRef {
  specifier: string;
  line: number;
}

interface Token {
  kind: 'word' | 'string' | 'template' | 'regex' | 'number' | 'punct';
  text: string;
  line: number;
}

/** After these words a `/` starts a regex literal; after any other word it divides. */
const REGEX_AFTER_WORDS = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'instanceof', 'new', 'delete', 'void', 'throw', 'yield', 'await', 'of']);

const WORD_REST = /[A-Za-z0-9_$]*/y;
const NUMBER_REST = /[0-9A-Za-z_.]*/y;

/** Where a run of `sticky` starting at `from` ends. */
function endOf(sticky: RegExp, source: string, from: number): number {
  sticky.lastIndex = from;
  sticky.exec(source);
  return sticky.lastIndex;
}

/** Words, strings and punctuation of a TypeScript source, without comments. Enough to find imports, not a full lexer. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  /** Brace depths at which an open `${` of a template literal returns to the template. */
  const substitutions: number[] = [];
  let depth = 0;
  let i = 0;
  let line = 1;
  const advance = (to: number): void => {
    for (; i < to; i++) if (source[i] === '\n') line++;
  };
  const push = (kind: Token['kind'], end: number): void => {
    tokens.push({ kind, text: source.slice(i, end), line });
    advance(end);
  };
  /** The rest of a template literal from `i` (just after its backquote, or after a `}` ending a substitution). */
  const templateBody = (): void => {
    let j = i;
    while (j < source.length) {
      const c = source[j];
      if (c === '\\') j += 2;
      else if (c === '`') return push('template', j + 1);
      else if (c === '$' && source[j + 1] === '{') {
        substitutions.push(depth++);
        return push('punct', j + 2);
      } else j++;
    }
    push('template', source.length);
  };
  const regexAllowed = (): boolean => {
    const prev = tokens[tokens.length - 1];
    if (prev === undefined) return true;
    if (prev.kind === 'word') return REGEX_AFTER_WORDS.has(prev.text);
    if (prev.kind === 'punct') return prev.text !== ')' && prev.text !== ']' && prev.text !== '}';
    return false;
  };
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (/\s/.test(c)) {
      advance(i + 1);
    } else if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      advance(end === -1 ? source.length : end);
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      advance(end === -1 ? source.length : end + 2);
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      tokens.push({ kind: 'string', text: source.slice(i + 1, j), line });
      advance(j + 1);
    } else if (c === '`') {
      advance(i + 1);
      templateBody();
    } else if (c === '/' && regexAllowed()) {
      let j = i + 1;
      let inClass = false;
      while (j < source.length && source[j] !== '\n') {
        const r = source[j];
        if (r === '\\') j += 2;
        else {
          if (r === '[') inClass = true;
          else if (r === ']') inClass = false;
          else if (r === '/' && !inClass) break;
          j++;
        }
      }
      if (source[j] !== '/') {
        push('punct', i + 1); // no closing slash on its line: a division after all
      } else {
        j++;
        while (j < source.length && /[a-z]/.test(source[j]!)) j++;
        push('regex', j);
      }
    } else if (/[A-Za-z_$]/.test(c)) {
      push('word', endOf(WORD_REST, source, i + 1));
    } else if (/[0-9]/.test(c)) {
      push('number', endOf(NUMBER_REST, source, i + 1));
    } else if (c === '}' && substitutions.length > 0 && substitutions[substitutions.length - 1] === depth - 1) {
      substitutions.pop();
      depth--;
      advance(i + 1);
      templateBody();
    } else {
      if (c === '{') depth++;
      else if (c === '}') depth--;
      push('punct', i + 1);
    }
  }
  return tokens;
}

/**
 * The module specifiers a TypeScript source imports: `import … from`, `import type … from`,
 * `export … from`, `import '…'`, `import('…')` (also `typeof import('…')`) and `require('…')`
 * (also `import x = require('…')`).
 */
function importsOf(source: string): ImportRef[] {
  const tokens = tokenize(source);
  const out: ImportRef[] = [];
  tokens.forEach((t, k) => {
    if (t.kind !== 'word' || tokens[k - 1]?.text === '.') return;
    const next = tokens[k + 1];
    const called = next?.text === '(' && tokens[k + 2]?.kind === 'string' ? tokens[k + 2] : undefined;
    if ((t.text === 'from' || t.text === 'import') && next?.kind === 'string') out.push({ specifier: next.text, line: next.line });
    else if ((t.text === 'import' || t.text === 'require') && called) out.push({ specifier: called.text, line: called.line });
  });
  return out;
}

interface SourceGraph {
  /** Repository-relative paths (with `/`) of every .ts file under src/. */
  files: string[];
  /** file → the src files it imports, each with the line of the import. */
  edges: Map<string, Map<string, number>>;
  /** Every import of every file, resolved or not. */
  imports: Map<string, ImportRef[]>;
  /** Relative imports that name no file. */
  unresolved: string[];
}

const rel = (absolute: string): string => path.relative(root, absolute).split(path.sep).join('/');

function listTs(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return listTs(full);
    return e.isFile() && e.name.endsWith('.ts') ? [full] : [];
  });
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the sources), if it exists. */
function resolveRelative(fromFile: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(fromFile), specifier);
  const stem = base.replace(/\.(?:js|mjs|cjs)$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.cts`, `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
}

function readSourceGraph(dir: string): SourceGraph {
  const absolute = listTs(dir).sort();
  const files = absolute.map(rel);
  const edges = new Map<string, Map<string, number>>();
  const imports = new Map<string, ImportRef[]>();
  const unresolved: string[] = [];
  for (const file of absolute) {
    const from = rel(file);
    const refs = importsOf(fs.readFileSync(file, 'utf8'));
    imports.set(from, refs);
    const targets = new Map<string, number>();
    for (const ref of refs) {
      if (!ref.specifier.startsWith('.')) continue;
      const target = resolveRelative(file, ref.specifier);
      if (target === undefined) unresolved.push(`${from}:${ref.line} imports '${ref.specifier}', which names no file`);
      else if (target.endsWith('.ts') && rel(target).startsWith('src/') && !targets.has(rel(target))) targets.set(rel(target), ref.line);
    }
    edges.set(from, targets);
  }
  return { files, edges, imports, unresolved };
}

/** The strongly connected components of a graph with more than one node, or one node that imports itself. */
function knots(nodes: readonly string[], next: (node: string) => Iterable<string>): string[][] {
  // Tarjan's algorithm.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || [...next(v)].includes(v)) out.push(component.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return out;
}

/** A shortest circle through the first node of a knot, as the list of its nodes (first = last). */
function circleIn(knot: readonly string[], next: (node: string) => Iterable<string>): string[] {
  const start = knot[0]!;
  const inKnot = new Set(knot);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of next(v)) {
      if (!inKnot.has(w)) continue;
      if (w === start) {
        const circle = [v];
        while (circle[0] !== start) circle.unshift(cameFrom.get(circle[0]!)!);
        return [...circle, start];
      }
      if (!cameFrom.has(w) && w !== start) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** The rooms table of docs/architecture.md: room → the rooms it may import (`x/**`: x and every room inside it). */
function roomsTable(markdown: string): Map<string, string[]> {
  const rooms = new Map<string, string[]>();
  for (const line of markdown.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const room = /^`(src\/[^`]*)`$/.exec(cells[1] ?? '')?.[1];
    if (room === undefined || cells.length < 5) continue;
    rooms.set(room, [...cells[3]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
  }
  return rooms;
}

/** The arrows of the mermaid drawings (`a[src/x] --> b[src/y]`, `policy/x` standing for `src/policy/x`), as `from --> to`. */
function drawnArrows(markdown: string): string[] {
  const arrows: string[] = [];
  for (const block of markdown.matchAll(/```mermaid\n([\s\S]*?)```/g)) {
    const labels = new Map<string, string>();
    const node = (text: string): string => {
      const m = /^(\w+)(?:\[([^\]]+)\])?$/.exec(text.trim())!;
      if (m[2] !== undefined) labels.set(m[1]!, m[2].startsWith('src/') ? m[2] : `src/${m[2]}`);
      return labels.get(m[1]!) ?? m[1]!;
    };
    for (const line of block[1]!.split('\n')) {
      const [from, to] = line.split('-->');
      if (to !== undefined) arrows.push(`${node(from!)} --> ${node(to)}`);
    }
  }
  return arrows.sort();
}

/** Whether an entry of the table (`src/policy`, `src/policy/**`) lets a room import `folder`. */
function roomCovers(entry: string, folder: string): boolean {
  if (!entry.endsWith('/**')) return entry === folder;
  const base = entry.slice(0, -3);
  return folder === base || folder.startsWith(`${base}/`);
}

/** Every file under a folder (sources, READMEs, anything). */
function listAll(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listAll(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function folderOf(file: string): string {
  return path.posix.dirname(file);
}

/** Folder → folder it imports from → one import that makes the edge ("a.ts:3 imports b.ts"). */
function folderEdges(graph: SourceGraph): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const [from, targets] of graph.edges) {
    for (const [to, line] of targets) {
      const a = folderOf(from);
      const b = folderOf(to);
      if (a === b) continue;
      if (!out.has(a)) out.set(a, new Map());
      if (!out.get(a)!.has(b)) out.get(a)!.set(b, `${from}:${line} imports ${to}`);
    }
  }
  return out;
}

function fileCircles(graph: SourceGraph): string[] {
  const next = (f: string): Iterable<string> => graph.edges.get(f)?.keys() ?? [];
  return knots(graph.files, next).map((knot) => {
    const circle = circleIn(knot, next);
    const steps = circle.slice(0, -1).map((f, k) => `  ${f}:${graph.edges.get(f)!.get(circle[k + 1]!)} imports ${circle[k + 1]}`);
    const all = knot.length > circle.length - 1 ? `\n  (files caught in this knot: ${knot.join(', ')})` : '';
    return `import circle: ${circle.join(' → ')}\n${steps.join('\n')}${all}`;
  });
}

function folderCircles(graph: SourceGraph): string[] {
  const edges = folderEdges(graph);
  const folders = [...new Set(graph.files.map(folderOf))].sort();
  const next = (f: string): Iterable<string> => edges.get(f)?.keys() ?? [];
  return knots(folders, next).map((knot) => {
    const circle = circleIn(knot, next);
    const steps = circle.slice(0, -1).map((f, k) => `  ${edges.get(f)!.get(circle[k + 1]!)}`);
    return `folder circle: ${circle.join(' → ')}\n${steps.join('\n')}`;
  });
}

function vscodeOutsideItsFolder(graph: SourceGraph): string[] {
  const out: string[] = [];
  for (const [file, refs] of graph.imports) {
    if (file.startsWith('src/vscode/')) continue;
    for (const ref of refs) {
      if (ref.specifier === 'vscode' || ref.specifier.startsWith('vscode/')) out.push(`${file}:${ref.line} imports '${ref.specifier}' (only src/vscode/ may)`);
    }
  }
  return out;
}

describe('architecture: the house rules of src/', () => {
  const graph = readSourceGraph(srcDir);

  it('finds every kind of import, and none in comments, strings or regex literals', () => {
    const sample = [
      "import * as fs from 'node:fs';",
      "import type { A } from './a.js';",
      'import {',
      "  b, type C,",
      "} from '../b.js';",
      "export { d } from './d.js';",
      "export * from './e.js';",
      "export type { F } from './f.js';",
      "import './g.js';",
      "const h = await import('./h.js');",
      "type I = typeof import('./i.js');",
      "import J = require('./j.js');",
      "const k = require('./k.js');",
      "// import { x } from './comment.js';",
      "/* export * from './block.js'; */",
      "const s = \"import { y } from './string.js'\";",
      "const t = `${ok ? `import('./template.js')` : ''}`;",
      "const r = /from '.\\/regex.js'/;",
      "const half = n / 2; const q = x.from('./notAnImport.js');",
      "const meta = import.meta.url;",
    ].join('\n');
    assert.deepEqual(importsOf(sample), [
      { specifier: 'node:fs', line: 1 },
      { specifier: './a.js', line: 2 },
      { specifier: '../b.js', line: 5 },
      { specifier: './d.js', line: 6 },
      { specifier: './e.js', line: 7 },
      { specifier: './f.js', line: 8 },
      { specifier: './g.js', line: 9 },
      { specifier: './h.js', line: 10 },
      { specifier: './i.js', line: 11 },
      { specifier: './j.js', line: 12 },
      { specifier: './k.js', line: 13 },
    ]);
  });

  it('names a circle by its files', () => {
    const edges = new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []], ['e', ['e']]]);
    const next = (v: string): string[] => edges.get(v) ?? [];
    const found = knots([...edges.keys()], next);
    assert.deepEqual(found, [['a', 'b', 'c'], ['e']]);
    assert.deepEqual(circleIn(found[0]!, next), ['a', 'b', 'c', 'a']);
    assert.deepEqual(circleIn(found[1]!, next), ['e', 'e']);
  });

  it('reads the sources (the rules below are not checked against nothing)', () => {
    assert.ok(graph.files.includes('src/entries/policy.ts'), 'src/entries/policy.ts is missing from the files read');
    assert.ok(graph.edges.get('src/entries/policy.ts')?.has('src/policy/policy.ts'), 'src/entries/policy.ts should import src/policy/policy.ts');
  });

  it('resolves every relative import to a file', () => {
    if (graph.unresolved.length > 0) assert.fail(graph.unresolved.join('\n'));
  });

  it('has no import circle between files', () => {
    const circles = fileCircles(graph);
    if (circles.length > 0) assert.fail(`${circles.length} import circle(s):\n${circles.join('\n')}`);
  });

  it('has no import circle between folders', () => {
    const circles = folderCircles(graph);
    if (circles.length > 0) assert.fail(`${circles.length} folder circle(s):\n${circles.join('\n')}`);
  });

  // The layering docs/architecture.md states: each room may import only the rooms its row names.
  const architecture = fs.readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8');
  const MAY_IMPORT = roomsTable(architecture);

  it('keeps every folder to the rooms docs/architecture.md says it may import', () => {
    const found = [...graph.edges].flatMap(([from, targets]) => {
      const room = folderOf(from);
      const allowed = MAY_IMPORT.get(room);
      if (allowed === undefined) return [`${from}: its folder ${room} has no row in docs/architecture.md`];
      return [...targets]
        .filter(([to]) => folderOf(to) !== room && !allowed.some((a) => roomCovers(a, folderOf(to))))
        .map(([to, line]) => `${from}:${line} imports ${to} (${room} may import only ${allowed.join(', ') || 'nothing of src/'})`);
    });
    if (found.length > 0) assert.fail(found.join('\n'));
  });

  it("docs/architecture.md's drawings have the table's arrows, no more and no fewer", () => {
    const table = [...MAY_IMPORT].flatMap(([room, allowed]) => allowed.map((to) => `${room} --> ${to}`)).sort();
    assert.deepEqual(drawnArrows(architecture), table);
  });

  it('holds each room to at most 20 files directly', () => {
    const counts = new Map<string, number>();
    for (const f of listAll(srcDir)) counts.set(folderOf(rel(f)), (counts.get(folderOf(rel(f))) ?? 0) + 1);
    assert.deepEqual([...counts].filter(([, n]) => n > 20).map(([room, n]) => `${room}: ${n} files`), []);
  });

  it("imports 'vscode' only in src/vscode/", () => {
    const found = vscodeOutsideItsFolder(graph);
    if (found.length > 0) assert.fail(found.join('\n'));
  });
});
