// Loading a bundle with V8's code cache: `agentpolicy hook` starts for every tool call of another
// agent, and compiling its bundle is a fifth of its own cost. The cache is keyed by the bundle's
// size and modification time, kept in the user's state folder (0700, a protected path of the hook),
// and V8 itself rejects one that does not fit the source; a rejected or missing one is written
// again after the run. Any failure falls back to a plain require.
import * as fs from 'node:fs';
import Module = require('node:module');
import * as path from 'node:path';
import * as vm from 'node:vm';
import { writePrivateFile } from '../hooks/state/privateFile.js';

export interface CachedModule<T> {
  exports: T;
  /** Writes the cache when there was none, once (call after the work: the functions it compiled are in it). */
  save(): void;
}

export function requireWithCodeCache<T>(file: string, cacheDir: string): CachedModule<T> | undefined {
  let stat: fs.Stats;
  let source: string;
  try {
    stat = fs.statSync(file);
    source = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const cacheFile = path.join(cacheDir, `${path.basename(file)}-${stat.size}-${Math.trunc(stat.mtimeMs)}.v8cache`);
  let cached: Buffer | undefined;
  try {
    cached = fs.readFileSync(cacheFile);
  } catch {
    // None yet.
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, ...(cached ? { cachedData: cached } : {}) });
  const module = new Module(file);
  module.filename = file;
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
  wrapper.call(module.exports, module.exports, Module.createRequire(file), module, file, path.dirname(file));
  let saved = false;
  return {
    exports: module.exports as T,
    save: () => {
      if (saved || (cached && !script.cachedDataRejected)) return;
      saved = true;
      try {
        writePrivateFile(cacheFile, script.createCachedData(), { makeFolder: true });
        // Earlier builds' caches of the same bundle are of no more use.
        const prefix = `${path.basename(file)}-`;
        for (const name of fs.readdirSync(cacheDir)) {
          if (name.startsWith(prefix) && name.endsWith('.v8cache') && name !== path.basename(cacheFile)) fs.rmSync(path.join(cacheDir, name), { force: true });
        }
      } catch {
        // Only the next start's speed depends on it.
      }
    },
  };
}
