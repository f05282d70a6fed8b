// docs/programs.md lists every row of the program knowledge, as the code says it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { programRows } from '../../../src/policy/shell/programs/programKnowledge.js';

describe('docs/programs.md', () => {
  it('has a line for every row of the program knowledge, with its kind and spelling', () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'programs.md'), 'utf8');
    const missing = programRows().filter((r) => !doc.split('\n').some((l) => l.includes(`\`${r.id}\``) && l.includes(`| ${r.does} |`) && l.includes(r.spelling.replace(/\|/g, '\\|'))));
    assert.deepEqual(missing.map((r) => r.id), [], 'rows missing or out of date in docs/programs.md');
  });

  it('row ids are unique', () => {
    const ids = programRows().map((r) => r.id);
    assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), []);
  });
});
