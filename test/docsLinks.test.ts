// The docs name only files that exist: every `src/…` path of ours and every relative Markdown link
// in the README, docs/ and the rooms' READMEs points at a file or folder of the repository (files
// moved between rooms took their names in the docs with them).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..');
const ROOMS = /^src\/(policy|runtime|hooks|vscode|cli|mcp|agents|entries)(\/[A-Za-z0-9_.\/-]*)?$/;

function markdownFiles(): string[] {
  const docs = fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(root, 'docs', f));
  const readmes = (fs.readdirSync(path.join(root, 'src'), { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile() && e.name === 'README.md').map((e) => path.join(e.parentPath, e.name));
  return [path.join(root, 'README.md'), ...docs, ...readmes];
}

describe('the docs name only files that exist', () => {
  it('every src/ path of ours and every relative link resolves', () => {
    const missing: string[] = [];
    for (const file of markdownFiles()) {
      const text = fs.readFileSync(file, 'utf8');
      const shown = path.relative(root, file);
      for (const m of text.matchAll(/\bsrc\/[A-Za-z0-9_.\/-]+/g)) {
        const named = m[0].replace(/[.,;:)]+$/, '');
        if (!ROOMS.test(named.replace(/\/$/, ''))) continue;
        if (!fs.existsSync(path.join(root, named))) missing.push(`${shown}: ${named}`);
      }
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        if (!fs.existsSync(path.resolve(path.dirname(file), target))) missing.push(`${shown}: link ${target}`);
      }
    }
    assert.deepEqual(missing, []);
  });
});
