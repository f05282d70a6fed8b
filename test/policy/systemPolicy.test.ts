// The system managed policy (src/policy/system): in force only when no one but an administrator
// can change it or a folder above it; the test variable never replaces the fixed file; a trial file
// (the setting, --managed) never replaces a system file in force. Files are made under a test root
// in /tmp (never /etc), owned by root: these tests run as root, and skip otherwise.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { adminOnlyFile } from '../../src/policy/system/adminOnly.js';
import { managedPolicyInForce } from '../../src/policy/system/managedInForce.js';
import { makeSystemRoot } from './systemRoot.js';
import { SYSTEM_DIR_VARIABLE, SYSTEM_POLICY_NAME, systemManagedPolicy, systemPolicyDir } from '../../src/policy/system/systemPolicy.js';

/** Not root's: the uid a person's files have here (no account needed to own a file). */
const PERSON = 4242;

describe('the system managed policy (src/policy/system)', function () {
  let root: string;
  let dir: string;
  let file: string;
  /** A fixed folder that holds no policy: the machine's real one is never read. */
  let emptyFixed: string;
  const find = (fixedDir = emptyFixed) => systemManagedPolicy({ platform: 'linux', env: { [SYSTEM_DIR_VARIABLE]: dir }, fixedDir });

  before(function () {
    if (process.platform === 'win32' || process.getuid?.() !== 0) this.skip();
  });

  beforeEach(() => {
    ({ root, dir, file } = makeSystemRoot('{ "version": 1, "rules": [] }\n'));
    emptyFixed = path.join(root, 'fixed');
    fs.mkdirSync(emptyFixed, { mode: 0o755 });
  });

  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('is in the folders Claude Code keeps its managed settings in, in our own folder', () => {
    assert.equal(systemPolicyDir('linux'), '/etc/agentpolicy');
    assert.equal(systemPolicyDir('darwin'), '/Library/Application Support/AgentPolicy');
    assert.equal(systemPolicyDir('win32'), 'C:\\ProgramData\\AgentPolicy');
  });

  it('counts when root owns it and only root can write it and every folder above it', () => {
    const found = find();
    assert.equal(found.kind, 'in-force', JSON.stringify(found));
    assert.equal(found.file, file);
  });

  it('is ignored when anyone or its group can write it, or someone else owns it', () => {
    fs.chmodSync(file, 0o666);
    assert.deepEqual(find(), { kind: 'ignored', file, reason: `${file} is writable by everyone (mode 0666)`, notes: [] });
    fs.chmodSync(file, 0o664);
    assert.match((find() as { reason: string }).reason, /writable by its group \(gid 0, mode 0664\)/);
    fs.chmodSync(file, 0o644);
    fs.chownSync(file, PERSON, PERSON);
    assert.deepEqual(find(), { kind: 'ignored', file, reason: `${file} is owned by uid ${PERSON}, not by root`, notes: [] });
  });

  it('is ignored when a person owns or may write its folder or a folder above it', () => {
    fs.chownSync(dir, PERSON, PERSON);
    assert.match((find() as { reason: string }).reason, new RegExp(`^${dir} is owned by uid ${PERSON}`));
    fs.chownSync(dir, 0, 0);
    fs.chmodSync(dir, 0o775);
    assert.match((find() as { reason: string }).reason, /writable by its group/);
    fs.chmodSync(dir, 0o755);
    const etc = path.dirname(dir);
    fs.chmodSync(etc, 0o777);
    assert.match((find() as { reason: string }).reason, new RegExp(`^${etc} is writable by everyone`));
    // Above its own folder: an administrators' group may write, and anyone may where the sticky bit is set (as /tmp).
    fs.chmodSync(etc, 0o775);
    assert.equal(find().kind, 'in-force');
    fs.chownSync(etc, 0, PERSON);
    assert.match((find() as { reason: string }).reason, new RegExp(`^${etc} is writable by its group \\(gid ${PERSON}`));
    fs.chmodSync(etc, 0o1777);
    assert.equal(find().kind, 'in-force');
  });

  it('follows a symlink and checks the real file and its folders too', () => {
    const elsewhere = path.join(root, 'home');
    fs.mkdirSync(elsewhere, { mode: 0o755 });
    const real = path.join(elsewhere, 'policy.jsonc');
    fs.writeFileSync(real, '{ "version": 1, "rules": [] }\n', { mode: 0o644 });
    fs.rmSync(file);
    fs.symlinkSync(real, file);
    assert.equal(find().kind, 'in-force');
    fs.chownSync(elsewhere, PERSON, PERSON);
    assert.match((find() as { reason: string }).reason, new RegExp(`^${elsewhere} is owned by uid ${PERSON}.*\\(${file} leads there\\)$`));
    // A symlink someone else owns is theirs to replace in a sticky folder: it does not count.
    fs.chownSync(elsewhere, 0, 0);
    fs.lchownSync(file, PERSON, PERSON);
    assert.match((find() as { reason: string }).reason, new RegExp(`^${file} is owned by uid ${PERSON}`));
    assert.deepEqual(adminOnlyFile(path.join(dir, 'missing.jsonc')), { ok: false, reason: 'it cannot be read (ENOENT)' });
  });

  it('takes the test variable only where the fixed folder has no file, and never on Windows', () => {
    const fixedDir = path.join(root, 'fixed-with-file');
    fs.mkdirSync(fixedDir, { mode: 0o755 });
    fs.writeFileSync(path.join(fixedDir, SYSTEM_POLICY_NAME), '{ "version": 1, "rules": [] }\n', { mode: 0o644 });
    const found = find(fixedDir);
    assert.equal(found.file, path.join(fixedDir, SYSTEM_POLICY_NAME));
    assert.match(found.notes[0]!, /AGENTPOLICY_SYSTEM_DIR is ignored: .* exists, and the variable never replaces it/);
    // Named by a person, a folder they own is checked like any other, and ignored.
    fs.chownSync(dir, PERSON, PERSON);
    assert.equal(find().kind, 'ignored');
    assert.match(systemManagedPolicy({ platform: 'linux', env: { [SYSTEM_DIR_VARIABLE]: 'relative/dir' }, fixedDir: emptyFixed }).notes[0]!, /not an absolute path/);
    const windows = systemManagedPolicy({ platform: 'win32', env: { [SYSTEM_DIR_VARIABLE]: dir } });
    assert.equal(windows.kind, 'none');
    assert.match(windows.notes[0]!, /ignored on Windows/);
  });

  describe('managedPolicyInForce', () => {
    const options = () => ({ platform: 'linux' as const, env: { [SYSTEM_DIR_VARIABLE]: dir }, fixedDir: emptyFixed });

    it('takes the system file over a trial file, and says so', () => {
      const inForce = managedPolicyInForce({ file: '/home/me/try.jsonc', from: 'the setting agentPolicy.managedPolicyFile' }, options());
      assert.equal(inForce.from, 'system');
      assert.equal(inForce.file, file);
      assert.equal(inForce.line, `managed policy: ${file} (the system's; owned by root, and no one else can change it or its folders)`);
      assert.deepEqual(inForce.warnings, [`the setting agentPolicy.managedPolicyFile names /home/me/try.jsonc, which is not in force: the system managed policy ${file} is, and a trial file cannot replace it`]);
      // The same file named both ways: no warning.
      assert.deepEqual(managedPolicyInForce({ file, from: 'the editor' }, options()).warnings, []);
    });

    it('takes the trial file where the system file is ignored, with the reason', () => {
      fs.chmodSync(file, 0o666);
      const inForce = managedPolicyInForce({ file: '/home/me/try.jsonc', from: '--managed' }, options());
      assert.equal(inForce.from, 'trial');
      assert.equal(inForce.file, '/home/me/try.jsonc');
      assert.match(inForce.warnings[0]!, new RegExp(`^the system managed policy ${file} is ignored: ${file} is writable by everyone`));
      const none = managedPolicyInForce(undefined, options());
      assert.equal(none.from, 'none');
      assert.equal(none.file, undefined);
      assert.equal(none.line, `managed policy: none in force (${file} is ignored)`);
    });

    it('says none when there is no file', () => {
      fs.rmSync(file);
      assert.equal(managedPolicyInForce(undefined, options()).line, `managed policy: none (no ${file})`);
    });
  });
});
