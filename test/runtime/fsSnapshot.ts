// A folder's whole state (type, link target or content, by relative path), so a test can
// assert that a refused tool call changed nothing anywhere.
import * as fs from 'node:fs';
import * as path from 'node:path';

export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (d: string): void => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const rel = path.relative(dir, p);
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) out[rel] = `link -> ${fs.readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[rel] = 'dir';
        visit(p);
      } else out[rel] = `file ${fs.readFileSync(p, 'utf8')}`;
    }
  };
  visit(dir);
  return out;
}
