/**
 * Loading the shell parser: tree-sitter-bash (the grammar maintained by the tree-sitter org)
 * run through web-tree-sitter (WebAssembly), and the one parser instance the splitter uses.
 *
 * Why this parser: it is the most complete maintained bash grammar on npm (process
 * substitution, [[ ]], $'..', heredocs, case/select, ...), it needs no native build, and
 * parsing is synchronous once a one-time async init has loaded the wasm.
 * (Rejected: sh-syntax's parse() is async per call; mvdan-sh is deprecated in its favour;
 * @ericcornelissen/bash-parser is POSIX-only, e.g. no process substitution.)
 *
 * Usage: `await initShellParser()` once at startup, then `splitCommand()` (shellSplit.ts)
 * synchronously.
 *
 * BUNDLING: the wasm files are read from disk at init, first from the directory of the
 * running script (`__dirname`, i.e. next to the esbuild bundle), then from node_modules.
 * A build producing a bundle (e.g. dist/extension.js, dist/cli.js) must copy these two
 * files into the bundle's directory (e.g. dist/):
 *   node_modules/web-tree-sitter/web-tree-sitter.wasm   -> dist/web-tree-sitter.wasm
 *   node_modules/tree-sitter-bash/tree-sitter-bash.wasm -> dist/tree-sitter-bash.wasm
 * (`SHELL_PARSER_WASM_FILES` lists them; `shellParserWasmPaths()` tells which paths are
 * used.) `web-tree-sitter` itself is plain JS and bundles fine with esbuild.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type WebTreeSitter = require('web-tree-sitter');
import { forgetSymbolNames } from './shellTree.js';

type Language = WebTreeSitter.Language;
type Parser = WebTreeSitter.Parser;

/**
 * web-tree-sitter, loaded at the first init: a process that never parses a command (a hook judging
 * a plain one) does not evaluate it. `require` (not `import {..} from`) so esbuild resolves the
 * package's "require" export (web-tree-sitter.cjs); its ESM build uses import.meta.url, which
 * breaks in a CJS bundle.
 */
function treeSitter(): typeof WebTreeSitter {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('web-tree-sitter') as typeof WebTreeSitter;
}

/** The wasm files the shell parser loads; a bundle must ship them next to itself. */
export const SHELL_PARSER_WASM_FILES = [
  { file: 'web-tree-sitter.wasm', packageSpecifier: 'web-tree-sitter/web-tree-sitter.wasm' },
  { file: 'tree-sitter-bash.wasm', packageSpecifier: 'tree-sitter-bash/tree-sitter-bash.wasm' },
] as const;

export interface ShellParserInitOptions {
  /** Directory holding web-tree-sitter.wasm and tree-sitter-bash.wasm; tried before the defaults. */
  wasmDir?: string;
  /**
   * The process parses a command or two and ends (a hook, a one-shot CLI command): the
   * WebAssembly is compiled by V8's baseline compiler only (`--liftoff-only`, for the whole
   * process). Otherwise V8 also compiles it optimised on a background thread, and the process
   * cannot exit until that is done: ~0.9 s of a 1.1 s hook call on this project's machine.
   */
  shortLived?: boolean;
}

/**
 * Where each wasm file will be loaded from: the first existing candidate among
 * `options.wasmDir`, the directory of this script/bundle, and node_modules.
 * Returns `undefined` for a file that cannot be found.
 */
export function shellParserWasmPaths(options: ShellParserInitOptions = {}): {
  runtime: string | undefined;
  grammar: string | undefined;
} {
  const [runtime, grammar] = SHELL_PARSER_WASM_FILES.map((f) => locateWasm(f.file, f.packageSpecifier, options.wasmDir));
  return { runtime, grammar };
}

function locateWasm(file: string, specifier: string, wasmDir: string | undefined): string | undefined {
  const candidates: string[] = [];
  if (wasmDir !== undefined) candidates.push(path.join(wasmDir, file));
  if (typeof __dirname === 'string') candidates.push(path.join(__dirname, file));
  try {
    if (typeof require === 'function' && typeof require.resolve === 'function') candidates.push(require.resolve(specifier));
  } catch {
    // package not installed (e.g. a packaged extension without node_modules)
  }
  return candidates.find((c) => {
    try {
      return fs.statSync(c).isFile();
    } catch {
      return false;
    }
  });
}

let language: Language | undefined;
let parser: Parser | undefined;
let initPromise: Promise<void> | undefined;

/** Loads the wasm parser. Call (and await) once before `splitCommand`; later calls are no-ops. */
export function initShellParser(options: ShellParserInitOptions = {}): Promise<void> {
  if (!initPromise) {
    initPromise = doInit(options).catch((err: unknown) => {
      initPromise = undefined; // allow a retry
      throw err;
    });
  }
  return initPromise;
}

/** True once `initShellParser()` has completed. */
export function isShellParserReady(): boolean {
  return parser !== undefined;
}

async function doInit(options: ShellParserInitOptions): Promise<void> {
  if (options.shortLived) setFlagsFromString('--liftoff-only');
  const { runtime, grammar } = shellParserWasmPaths(options);
  if (runtime === undefined || grammar === undefined) {
    const missing = SHELL_PARSER_WASM_FILES.filter((_, i) => (i === 0 ? runtime : grammar) === undefined).map((f) => f.file);
    throw new Error(`shell parser: cannot find ${missing.join(' and ')} (ship them next to the bundle, or install web-tree-sitter and tree-sitter-bash)`);
  }
  const { Language, Parser } = treeSitter();
  await Parser.init({ wasmBinary: fs.readFileSync(runtime) });
  const lang = await Language.load(fs.readFileSync(grammar));
  const p = new Parser();
  p.setLanguage(lang);
  forgetSymbolNames();
  language = lang;
  parser = p;
}

/** The loaded parser, or undefined before `initShellParser()` has completed. */
export function shellParser(): Parser | undefined {
  return parser;
}

/** A fresh parser in place of one that failed mid-parse (its wasm state may be broken). */
export function resetShellParser(): void {
  try {
    if (language) {
      const p = new (treeSitter().Parser)();
      p.setLanguage(language);
      try {
        parser?.delete();
      } catch {
        // ignore
      }
      parser = p;
    }
  } catch {
    // keep the old parser; the next call reports its own failure
  }
}
