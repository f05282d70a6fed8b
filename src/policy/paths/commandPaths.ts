// Paths named in commands (docs/programs.md, "Paths named in commands"): the files a command
// line's parts read and write, so that the rules on `paths` judge `cat .env`, `cp ~/.ssh/id_rsa x`
// and `echo x >> ~/.bashrc` as they judge the read and write tools on those files.
//
// A word is read as a path when it starts with `/`, `~`, `./` or `../`, or names a file or folder
// that exists; words are read as bash gives them to the program (shellPathWords.ts: `~user`,
// `$HOME`, braces, globs), relative ones against the working folder after each `cd` of the line
// (every folder it may be in: the workspace and each `cd` before, since a `cd` in a subshell or a
// failed one leaves it where it was). A recursive reader (`grep -r`, `rg`, `tar c`, `cp -r`) reads
// what is under a folder it is given, as far as MAX_WALK entries. Options, the program and URLs
// are not paths. A path word with an expansion the judge cannot know is `unknown`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHANGES_OPERANDS, isRecursive, MODE_FIRST, PATTERN_FIRST, READ_OPTIONS, READS_OPERANDS, WRITE_OPTIONS, WRITES_LAST } from '../shell/programs/fileOperands.js';
import type { SimpleCommand } from '../shell/shellCommand.js';
import { redirectFilesOf } from '../shell/shellRedirects.js';
import { isStaticWord, programIndex } from '../shell/shellDynamic.js';
import { wordPaths } from './shellPathWords.js';

/** At most this many paths are judged per call (the rest are not: the split already judges the command). */
export const MAX_COMMAND_PATHS = 64;
/** At most this many entries under the folders recursive readers are given are looked at per call. */
export const MAX_WALK = 1000;
/** At most this many working folders are followed through a line's `cd`s. */
const MAX_FOLDERS = 8;

export interface CommandFiles {
  reads: string[];
  writes: string[];
  /**
   * What recursive programs reach under the folders they are given, as real paths (the walk
   * starts at the folder's real path and does not follow links): `link` when the entry is a
   * symbolic link, which must be judged where it points.
   */
  under: Array<{ file: string; writes: boolean; link: boolean }>;
  /** Path words the judge cannot place before the command runs, with why. */
  unknown: string[];
}

export function commandFiles(commands: readonly SimpleCommand[], workspace: string, home: string): CommandFiles {
  const files = new Files();
  let folders = [workspace];
  let folderUnknown: string | undefined;
  for (const c of commands) {
    const at = programIndex(c.words);
    const program = c.words[at];
    const staticProgram = program !== undefined && isStaticWord(c, at);
    const args = c.words.slice(at + 1);
    const argStatic = (i: number): boolean => isStaticWord(c, at + 1 + i);
    const places = folders.map((cwd) => ({ cwd, home }));
    /** The paths a word names in every folder the line may be in (none for what cannot be placed). */
    const placed = (word: string, isStatic: boolean): string[] => places.flatMap((place) => {
      const named = wordPaths(word, isStatic, place);
      return named.known ? named.paths : [];
    });
    // A word the judge cannot place counts when it is written, a redirect's or a reader's file, or looks like a path.
    const unknownCounts = (as: 'read' | 'write', isOperand: boolean, word: string): boolean => as === 'write' || !isOperand || READS_OPERANDS.has(program ?? '') || /^["']?~|\//.test(word);
    const name = (word: string, isStatic: boolean, as: 'read' | 'write', mustExist: boolean): string[] => {
      const found: string[] = [];
      for (const place of places) {
        const named = wordPaths(word, isStatic, place);
        if (!named.known) {
          if (unknownCounts(as, mustExist, word)) files.unknown.add(named.why);
          return found;
        }
        const relative = !/^(\/|~|\$\{?HOME|\.\.?\/)/.test(word.replace(/^["']/, ''));
        if (relative && folderUnknown !== undefined) files.unknown.add(`${word} is read in ${folderUnknown}`);
        for (const p of named.paths) if (!mustExist || !relative || exists(p)) found.push(p);
      }
      for (const p of found) files.add(as, p);
      return found;
    };
    for (const r of redirectFilesOf(c)) name(r.file, r.known, r.writes ? 'write' : 'read', false);
    if (!staticProgram) continue;
    if (program === 'cd' || program === 'pushd') {
      const target = args.findIndex((w) => !w.startsWith('-'));
      const word = target === -1 ? '~' : args[target]!;
      const isStatic = target === -1 || argStatic(target);
      const probe = placed(word, isStatic);
      if (probe.length === 0) folderUnknown = `the folder ${word} names`;
      for (const p of probe) files.add('read', p);
      folders = [...new Set([...folders, ...probe])].slice(0, MAX_FOLDERS);
      continue;
    }
    const operands: Array<{ word: string; isStatic: boolean }> = [];
    const readOptions = READ_OPTIONS[program] ?? [];
    const writeOptions = WRITE_OPTIONS[program] ?? [];
    let afterDashes = false;
    for (let i = 0; i < args.length; i++) {
      const w = args[i]!;
      const isStatic = argStatic(i);
      if (w === '' || w.includes('\0') || w.includes('://')) continue;
      if (!afterDashes && w === '--') {
        afterDashes = true;
        continue;
      }
      if (!afterDashes && w.startsWith('-') && w !== '-') {
        const option = w.split('=')[0]!;
        const valueOf = (): { word: string; isStatic: boolean } | undefined => (w.includes('=') ? { word: w.slice(option.length + 1), isStatic } : args[i + 1] !== undefined ? { word: args[++i]!, isStatic: argStatic(i) } : undefined);
        if (writeOptions.includes(option)) {
          const value = valueOf();
          if (value !== undefined) name(value.word, value.isStatic, 'write', false);
        } else if (readOptions.includes(option)) {
          const value = valueOf();
          if (value !== undefined) name(value.word.replace(/^@/, ''), value.isStatic, 'read', false);
        }
        continue;
      }
      // curl's `-d @file`, `-F name=@file`: the file is read and sent.
      if (program === 'curl' && /^(?:[^=@]*=)?@[^@]/.test(w)) name(w.slice(w.indexOf('@') + 1), isStatic, 'read', false);
      if (program === 'dd' && /^(if|of)=/.test(w)) {
        name(w.slice(3), isStatic, w.startsWith('of') ? 'write' : 'read', false);
        continue;
      }
      operands.push({ word: w, isStatic });
      name(w, isStatic, 'read', true);
    }
    const writes = (list: typeof operands): void => {
      for (const o of list) name(o.word, o.isStatic, 'write', false);
    };
    if (CHANGES_OPERANDS.has(program)) writes(MODE_FIRST.has(program) ? operands.slice(1) : operands);
    if (WRITES_LAST.has(program) && operands.length >= 2) {
      const destination = operands[operands.length - 1]!;
      for (const d of name(destination.word, destination.isStatic, 'write', false)) {
        // Copying into a folder writes the entries named after the sources (`cp .zshrc ~/`), a
        // source ending in `/` its contents (`rsync -a dist/ ~/`).
        if (!isFolder(d) && !destination.word.endsWith('/')) continue;
        for (const source of operands.slice(0, -1)) {
          for (const s of placed(source.word, source.isStatic)) {
            const entries = source.word.endsWith('/') ? listFolder(s) : [path.basename(s)];
            for (const e of entries) files.add('write', path.join(d, e));
          }
        }
      }
    }
    const inPlace = c.reaches?.some((r) => r.row.id === 'sed.in-place' || r.row.id === 'interpreter.in-place') === true;
    // sed -i 'SCRIPT' FILE…: the first operand is the script unless -e or -f gave it.
    if (inPlace) writes(operands.slice(args.some((w) => /^-[A-Za-z]*[ef]$/.test(w) || w.startsWith('--expression') || w.startsWith('--file')) ? 0 : 1));
    // What a row of the program knowledge writes (`find DIR -delete`, `git log --output=F`, awk's `> "F"`).
    for (const reach of c.reaches ?? []) {
      for (const file of reach.files ?? []) {
        for (const p of name(file, true, 'write', false)) if (reach.under === true && isFolder(p)) files.addUnder('write', p);
      }
    }
    const recursion = isRecursive(program, args);
    if (recursion !== undefined) {
      for (const o of searchedFolders(program, args, operands)) {
        for (const p of placed(o.word, o.isStatic)) {
          if (isFolder(p)) files.addUnder(recursion.writes === true ? 'write' : 'read', p);
        }
      }
    }
  }
  return files.result();
}

/**
 * The operands a recursive program walks: for grep and rg the first operand is the pattern
 * (unless -e or -f gave it) and with no other they search the working folder.
 */
function searchedFolders(program: string, args: readonly string[], operands: Array<{ word: string; isStatic: boolean }>): Array<{ word: string; isStatic: boolean }> {
  if (!PATTERN_FIRST.has(program)) return operands;
  const patternGiven = args.some((w) => /^-[A-Za-z]*[ef]/.test(w) || /^--(regexp|file)\b/.test(w));
  const folders = patternGiven ? operands : operands.slice(1);
  return folders.length > 0 ? folders : [{ word: '.', isStatic: true }];
}

class Files {
  private readonly reads = new Set<string>();
  private readonly writes = new Set<string>();
  private readonly under = new Map<string, { file: string; writes: boolean; link: boolean }>();
  readonly unknown = new Set<string>();

  add(as: 'read' | 'write', file: string): void {
    if (this.reads.size + this.writes.size >= MAX_COMMAND_PATHS) return;
    (as === 'read' ? this.reads : this.writes).add(file);
  }

  /** Everything under `folder` (at most MAX_WALK entries per call, over all folders). */
  addUnder(as: 'read' | 'write', folder: string): void {
    let real: string;
    try {
      real = fs.realpathSync(folder);
    } catch {
      return;
    }
    walk(real, MAX_WALK - this.under.size, (file, link) => {
      const key = `${as}:${file}`;
      if (!this.under.has(key)) this.under.set(key, { file, writes: as === 'write', link });
    });
  }

  result(): CommandFiles {
    return { reads: [...this.reads], writes: [...this.writes], under: [...this.under.values()], unknown: [...this.unknown] };
  }
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function isFolder(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function listFolder(p: string): string[] {
  try {
    return fs.readdirSync(p);
  } catch {
    return [];
  }
}

/** Each entry under `folder`, breadth first, not through symbolic links, at most `budget`. */
function walk(folder: string, budget: number, visit: (entry: string, link: boolean) => void): void {
  const queue = [folder];
  let seen = 0;
  while (queue.length > 0 && seen < budget) {
    const dir = queue.shift()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (seen++ >= budget) return;
      const full = path.join(dir, e.name);
      visit(full, e.isSymbolicLink());
      if (e.isDirectory()) queue.push(full);
    }
  }
}
