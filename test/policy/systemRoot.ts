// A test root standing in for the machine's: `<root>/etc/agentpolicy/managed.agentpolicy.jsonc`,
// owned by root (the tests run as root), mode 644 in folders of mode 755, as docs/teams.md says
// to install it. Under /tmp, whose sticky bit keeps the root-owned entries below it root's.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SYSTEM_POLICY_NAME } from '../../src/policy/system/systemPolicy.js';

export function makeSystemRoot(text: string): { root: string; dir: string; file: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-system-'));
  fs.chmodSync(root, 0o755);
  const dir = path.join(root, 'etc', 'agentpolicy');
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = path.join(dir, SYSTEM_POLICY_NAME);
  fs.writeFileSync(file, text, { mode: 0o644 });
  fs.chmodSync(file, 0o644);
  return { root, dir, file };
}
