// `agentpolicy`: check, test and explain policies from any repository's CI (policy-format.md).
// Exit codes: 0 success, 1 a finding (errors, failing tests, invalid policy), 2 usage; `sandbox`: the
// command's own status (sandboxCommand.ts), 125 when it could not be run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseAgentsFile, spawnInfo, type AgentsFile } from '../agents/agentsFile.js';
import { describeRemember } from '../policy/file/grantLength.js';
import { kindFromId, type ToolCall } from '../policy/rules/call.js';
import { checkPolicyLayer } from '../policy/checking/check.js';
import { formatDiagnostic, hasErrors, LineMap, toJson, type Diagnostic, type DiagnosticJson } from '../policy/file/diagnostics.js';
import { MARK_PATTERN, parseMarkList } from '../policy/rules/flowMarks.js';
import { hiddenSentence, outrightDenial } from '../policy/hiddenTools.js';
import type { ParsedJsonc } from '../policy/file/parse.js';
import { controlsLimit, describeControls } from '../policy/rules/managedControls.js';
import { describeActual, describeDecision, describeExpected, describeParts, runInlineTests } from '../policy/checking/inlineTests.js';
import { loadPolicyText, Policy, type Explanation, type PolicyLayer } from '../policy/policy.js';
import { toolKinds, type ToolKind } from '../policy/file/schema.js';
import { initShellParser } from '../policy/shell/shellParser.js';
import { auditTable, interruptedSessions, readAuditLog, sessionMarks } from '../runtime/audit/auditRead.js';
import { verifyAuditFiles } from '../runtime/audit/auditVerify.js';
import { toolsOfferedDiagnostics } from '../runtime/agents/agentsToolsOffered.js';
import { sandboxForDecision } from '../runtime/calls/sandboxRun.js';
import { cliManagedPolicy } from './cliManagedPolicy.js';
import { hookInstallCommand } from './hookInstallCommand.js';
import { hookStatusCommand } from './hookStatusCommand.js';
import { HOOK_USAGE, hookMain, readProcessStdin } from './hookMain.js';
import { MCP_PINS_USAGE, mcpCommand } from './mcpPinsCommand.js';
import { runCommand, RunUsageError } from './run.js';
import { SANDBOX_USAGE, sandboxCommand, SandboxUsageError } from './sandboxCommand.js';
import { SERVE_USAGE, serveCommand, ServeUsageError } from './serveCommand.js';
// Only this field is bundled (esbuild keeps the JSON's top-level properties used).
import { version } from '../../package.json';

export class UsageError extends Error {}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  /** For `hook`: the host's input (default: the process's stdin). */
  readStdin?: () => string;
  /** For `hook`: the environment the host gave; for `sandbox`: the command's (default: the process's). */
  env?: NodeJS.ProcessEnv;
}

const USAGE = `usage:
  agentpolicy --version
  agentpolicy check [--policy F] [--managed F] [--agents F] [--json]
  agentpolicy test [--policy F] [--managed F] [--json]
  agentpolicy explain --tool ID [--input JSON] [--kind K] [--agent NAME] [--hints JSON] [--tags a,b] [--marks a,b]
                      [--workspace DIR] [--untrusted] [--sandbox yes|no] [--policy F] [--managed F] [--user F] [--json]
  agentpolicy run --prompt TEXT [--workspace DIR] [--agents F] [--agent NAME] [--answer allow|deny|keep]
                  [--policy F] [--managed F] [--user F] [--untrusted] [--audit F] [--json]
  agentpolicy audit FILE [--json] [--interrupted | --marks SESSION]
  agentpolicy audit verify FILE… [--head HASH] [--json]
${MCP_PINS_USAGE}
${SANDBOX_USAGE}
${SERVE_USAGE}
${HOOK_USAGE.replace(/^usage:\n/, '')}`;

const COMMON = { policy: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;
const OPTIONS = {
  check: { ...COMMON, agents: { type: 'string' }, managed: { type: 'string' } },
  test: { ...COMMON, managed: { type: 'string' } },
  explain: {
    ...COMMON,
    tool: { type: 'string' }, input: { type: 'string' }, kind: { type: 'string' }, agent: { type: 'string' },
    hints: { type: 'string' }, tags: { type: 'string' }, workspace: { type: 'string' }, untrusted: { type: 'boolean' },
    managed: { type: 'string' }, user: { type: 'string' }, sandbox: { type: 'string' }, marks: { type: 'string' },
  },
  run: {
    ...COMMON,
    prompt: { type: 'string' }, workspace: { type: 'string' }, agents: { type: 'string' }, agent: { type: 'string' },
    answer: { type: 'string' }, managed: { type: 'string' }, user: { type: 'string' }, untrusted: { type: 'boolean' },
    audit: { type: 'string' },
  },
  audit: { json: { type: 'boolean' }, interrupted: { type: 'boolean' }, marks: { type: 'string' }, head: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
} satisfies Record<string, ParseArgsConfig['options']>;

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const [command, ...rest] = argv;
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      (command === undefined ? io.err : io.out)(USAGE);
      return command === undefined ? 2 : 0;
    }
    if (command === '--version' || command === 'version') {
      io.out(version);
      return 0;
    }
    if (command === 'hook') return await hook(rest, io);
    if (command === 'sandbox') return await sandboxCommand(rest, { out: io.out, err: io.err, cwd: io.cwd, ...(io.env ? { env: io.env } : {}) });
    if (command === 'mcp') return mcpCommand(rest, { out: io.out, err: io.err, cwd: io.cwd, ...(io.env ? { env: io.env } : {}) });
    if (command === 'serve') return await serveCommand(rest, { out: io.out, err: io.err, cwd: io.cwd, ...(io.env ? { env: io.env } : {}) });
    if (!(command in OPTIONS)) throw new UsageError(`unknown command "${command}"`);
    const options = OPTIONS[command as keyof typeof OPTIONS];
    let values: Record<string, string | boolean | undefined>;
    let positionals: string[];
    try {
      const parsed = parseArgs({ args: [...rest], options, strict: true, allowPositionals: command === 'audit' });
      values = parsed.values as Values;
      positionals = parsed.positionals;
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    if (values.help) {
      io.out(USAGE);
      return 0;
    }
    // A one-shot command ends right after parsing; a session (`run`) parses on and keeps V8's optimising compiler.
    await initShellParser({ shortLived: command !== 'run' });
    if (command === 'check') return check(values, io);
    if (command === 'test') return test(values, io);
    if (command === 'run') return await run(values, io);
    if (command === 'audit') return audit(values, positionals, io);
    return explain(values, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof RunUsageError || error instanceof SandboxUsageError || error instanceof ServeUsageError) {
      io.err(`agentpolicy: ${error.message}`);
      io.err(USAGE);
      return 2;
    }
    throw error;
  }
}

type Values = Record<string, string | boolean | undefined>;

function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** A file named on the command line must exist (usage error otherwise). */
function readNamed(io: CliIo, file: string, flag: string): { text: string; file: string } {
  const full = path.resolve(io.cwd, file);
  try {
    return { text: fs.readFileSync(full, 'utf8'), file };
  } catch (error) {
    // A file that is there but cannot be read (a system managed policy this user may not read) says so.
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${flag} ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable by this user' : `cannot be read (${code ?? String(error)})`}`);
  }
}

/** The workspace policy: --policy, else ./.agentpolicy.jsonc when it exists, else none. */
function workspacePolicyFile(values: Values, io: CliIo): { text: string; file: string } | undefined {
  const named = str(values, 'policy');
  if (named !== undefined) return readNamed(io, named, '--policy');
  const fallback = path.join(io.cwd, '.agentpolicy.jsonc');
  return fs.existsSync(fallback) ? { text: fs.readFileSync(fallback, 'utf8'), file: '.agentpolicy.jsonc' } : undefined;
}

/** The files check and test read: the workspace policy (--policy or ./.agentpolicy.jsonc) and a managed policy (--managed), each as its layer. */
function checkedPolicyFiles(values: Values, io: CliIo): Array<{ text: string; file: string; layer: 'workspace' | 'managed' }> {
  const files: Array<{ text: string; file: string; layer: 'workspace' | 'managed' }> = [];
  // A managed policy is read as one: its `controls` are a schema error in any other layer.
  const managed = str(values, 'managed');
  if (managed !== undefined) files.push({ ...readNamed(io, managed, '--managed'), layer: 'managed' });
  const workspace = managed !== undefined && str(values, 'policy') === undefined ? undefined : workspacePolicyFile(values, io);
  if (workspace) files.push({ ...workspace, layer: 'workspace' });
  return files;
}

function printDiagnostics(io: CliIo, diagnostics: readonly Diagnostic[], texts: ReadonlyMap<string, string>, json: boolean): DiagnosticJson[] {
  const maps = new Map<string, LineMap>();
  const rows = diagnostics.map((d) => {
    let lines = maps.get(d.file);
    if (!lines) maps.set(d.file, (lines = new LineMap(texts.get(d.file) ?? '')));
    return toJson(d, lines);
  });
  if (!json) for (const row of rows) io.out(formatDiagnostic(row));
  return rows;
}

function check(values: Values, io: CliIo): number {
  const json = values.json === true;
  // Which managed policy this machine's agents judge with, and from where (--managed is linted all the same).
  const trial = str(values, 'managed');
  const managed = cliManagedPolicy(trial !== undefined ? { file: trial, from: '--managed' } : undefined, io);
  if (!json) io.err(managed.line);
  const policyFiles = checkedPolicyFiles(values, io);
  const policyFile = policyFiles.find((f) => f.layer === 'workspace') ?? policyFiles[0];
  const texts = new Map<string, string>();
  const diagnostics: Diagnostic[] = [];

  // The agents file: --agents, else the .agents.jsonc beside the policy when there is one.
  let agentsFileArg = str(values, 'agents');
  if (agentsFileArg === undefined && policyFile) {
    const beside = path.join(path.dirname(policyFile.file), '.agents.jsonc');
    if (fs.existsSync(path.resolve(io.cwd, beside))) agentsFileArg = beside;
  }
  let agents: AgentsFile | undefined;
  let agentsRead: { parsed: ParsedJsonc<AgentsFile>; file: string } | undefined;
  if (agentsFileArg !== undefined) {
    const { text, file } = readNamed(io, agentsFileArg, '--agents');
    texts.set(file, text);
    const parsed = parseAgentsFile(text, file);
    diagnostics.push(...parsed.diagnostics);
    agents = parsed.value;
    agentsRead = { parsed, file };
  }
  const layers: PolicyLayer[] = [];
  for (const checked of [...policyFiles].reverse()) {
    texts.set(checked.file, checked.text);
    const layer = loadPolicyText(checked.text, checked.file, checked.layer);
    layers.push(layer);
    const workspaceFolder = path.dirname(path.resolve(io.cwd, checked.file));
    diagnostics.unshift(...checkPolicyLayer(layer, { workspaceFolder, ...(agents ? { agents: spawnInfo(agents) } : {}) }));
  }
  if (!policyFile && !json) {
    io.err('agentpolicy: no .agentpolicy.jsonc here and no --policy: there is no workspace policy to check');
  }
  // Hidden tools: with an agents file and valid policies, what each agent's model is offered (info, after the rest).
  const offered = agentsRead && layers.length > 0 && layers.every((l) => l.valid)
    ? toolsOfferedDiagnostics(agentsRead.parsed, agentsRead.file, path.resolve(io.cwd, agentsRead.file), new Policy(Object.fromEntries(layers.map((l) => [l.layer, l]))), `${layers.map((l) => l.file).reverse().join(' and ')} only`)
    : [];
  diagnostics.push(...offered.map((o) => o.diagnostic));
  const rows = printDiagnostics(io, diagnostics, texts, json).map((row, i) => {
    const data = offered[i - (diagnostics.length - offered.length)]?.data;
    return data ? { ...row, ...data } : row;
  });
  if (json) io.out(JSON.stringify(rows, null, 2));
  else if (policyFile) {
    const errors = rows.filter((r) => r.severity === 'error').length;
    const warnings = rows.filter((r) => r.severity === 'warning').length;
    io.err(`${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`);
  }
  return hasErrors(rows) ? 1 : 0;
}

function test(values: Values, io: CliIo): number {
  const json = values.json === true;
  const policyFiles = checkedPolicyFiles(values, io);
  if (policyFiles.length === 0) throw new UsageError('no .agentpolicy.jsonc here: name the policy with --policy (or a managed policy with --managed)');
  // Each file's tests, one after the other; a failure or an invalid file anywhere fails the command.
  return policyFiles.map((f) => testFile(f, json, io)).reduce((a, b) => Math.max(a, b), 0);
}

function testFile(policyFile: { text: string; file: string; layer: 'workspace' | 'managed' }, json: boolean, io: CliIo): number {
  const layer = loadPolicyText(policyFile.text, policyFile.file, policyFile.layer);
  if (!layer.valid) {
    const rows = printDiagnostics(io, layer.diagnostics, new Map([[policyFile.file, policyFile.text]]), json);
    if (json) io.out(JSON.stringify({ valid: false, diagnostics: rows, tests: [] }, null, 2));
    else io.err(`${policyFile.file} is invalid: its tests were not run`);
    return 1;
  }
  const results = runInlineTests(layer, path.dirname(path.resolve(io.cwd, policyFile.file)));
  const failed = results.filter((r) => !r.passed).length;
  if (json) {
    io.out(JSON.stringify({
      valid: true,
      passed: results.length - failed,
      failed,
      tests: results.map((r) => ({ name: r.name, line: r.line, passed: r.passed, expected: r.expected, actual: r.actual, ...(r.hidden !== undefined ? { hidden: r.hidden } : {}) })),
    }, null, 2));
  } else {
    for (const r of results) {
      const where = `${policyFile.file}:${r.line}`;
      if (r.passed) io.out(`ok    ${r.name}`);
      else {
        io.out(`FAIL  ${r.name} (${where}): expected ${describeExpected(r)}, got ${describeActual(r)}`);
      }
    }
    io.out(`${results.length - failed} passed, ${failed} failed`);
  }
  return failed > 0 ? 1 : 0;
}

function parseJsonFlag(values: Values, name: string): unknown {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new UsageError(`--${name} is not valid JSON: ${(error as Error).message}`);
  }
}

function explain(values: Values, io: CliIo): number {
  const json = values.json === true;
  const toolId = str(values, 'tool');
  if (!toolId) throw new UsageError('explain needs --tool ID');
  const kind = str(values, 'kind');
  if (kind !== undefined && !(toolKinds as readonly string[]).includes(kind)) {
    throw new UsageError(`--kind must be one of ${toolKinds.join(', ')}`);
  }
  const input = parseJsonFlag(values, 'input') ?? {};
  const hints = parseJsonFlag(values, 'hints');
  if (hints !== undefined && (hints === null || typeof hints !== 'object' || Array.isArray(hints))) {
    throw new UsageError('--hints must be a JSON object such as {"readOnlyHint":true}');
  }
  const tags = str(values, 'tags')?.split(',').map((t) => t.trim()).filter((t) => t.length > 0);
  // Flow rules: the marks the calling session already carries (none: a fresh session).
  const sessionMarks = parseMarkList(str(values, 'marks') ?? '');
  const badMark = sessionMarks.find((m) => !MARK_PATTERN.test(m));
  if (badMark !== undefined) throw new UsageError(`--marks: ${JSON.stringify(badMark)} is not a mark (1 to 64 letters, digits, "_", ".", ":" or "-"; several separated by commas)`);

  const layers: Partial<Record<'managed' | 'workspace' | 'user', PolicyLayer>> = {};
  const texts = new Map<string, string>();
  const load = (flag: 'managed' | 'user', layer: 'managed' | 'user', named = str(values, flag)): void => {
    if (named === undefined) return;
    const { text, file } = readNamed(io, named, `--${flag}`);
    texts.set(file, text);
    layers[layer] = loadPolicyText(text, file, layer);
  };
  // The system managed policy when it counts; --managed only without one.
  const trial = str(values, 'managed');
  const managed = cliManagedPolicy(trial !== undefined ? { file: trial, from: '--managed' } : undefined, io);
  load('managed', 'managed', managed.from === 'system' ? managed.file : trial);
  const workspacePolicy = workspacePolicyFile(values, io);
  if (workspacePolicy) {
    texts.set(workspacePolicy.file, workspacePolicy.text);
    layers.workspace = loadPolicyText(workspacePolicy.text, workspacePolicy.file, 'workspace');
  }
  load('user', 'user');

  const workspaceFolder = path.resolve(io.cwd, str(values, 'workspace') ?? (workspacePolicy ? path.dirname(workspacePolicy.file) : '.'));
  const call: ToolCall = {
    tool: {
      id: toolId,
      ...((kind ?? kindFromId(toolId)) ? { kind: (kind ?? kindFromId(toolId)) as ToolKind } : {}),
      ...(hints ? { annotations: hints as Record<string, boolean> } : {}),
      ...(tags ? { tags } : {}),
    },
    input,
    agent: str(values, 'agent') ?? 'main',
  };
  const policy = new Policy(layers);
  // Judged as on this machine (its sandbox probed), unless --sandbox says how to judge.
  const sandboxFlag = str(values, 'sandbox');
  if (sandboxFlag !== undefined && sandboxFlag !== 'yes' && sandboxFlag !== 'no') throw new UsageError('--sandbox takes yes or no');
  // As the runtime judges it (the probe runs only for run_command, the one tool ever sandboxed).
  const sandbox = sandboxFlag === undefined ? sandboxForDecision(toolId)
    : sandboxFlag === 'yes' ? { sandbox: true } : { sandbox: false, sandboxUnavailable: 'explain was run with --sandbox no' };
  const result = policy.explain(call, { workspaceFolder, trusted: values.untrusted !== true, ...sandbox, marks: new Set(sessionMarks) });
  const invalid = Object.values(layers).filter((l) => !l.valid);
  const diagnostics = invalid.flatMap((l) => l.diagnostics);
  // policy-format.md: when a policy is invalid, the decision printed is never allow, even one
  // an earlier valid layer decided.
  if (invalid.length > 0 && result.decision === 'allow') {
    result.decision = 'ask';
    result.warnings.push(`${invalid.map((l) => l.file).join(', ')} ${invalid.length === 1 ? 'is' : 'are'} invalid, so allow is shown as ask`);
  }

  // Hidden tools: every call of this tool by this agent is denied, whatever its input (as the runtime judges its tool list).
  const hidden = outrightDenial(policy, call.tool, call.agent);
  if (json) {
    const rows = printDiagnostics(io, diagnostics, texts, true);
    io.out(JSON.stringify({ call, sessionMarks, ...result, ...(hidden ? { hidden } : {}), ...(controlsLimit(policy.controls) ? { controls: policy.controls } : {}), diagnostics: rows }, null, 2));
  } else {
    printDiagnostics(io, diagnostics, texts, false);
    const lines = explanationLines(result, policy, sessionMarks);
    if (hidden) lines.splice(1, 0, `hidden: ${hiddenSentence(hidden, call.agent)}`);
    for (const line of lines) io.out(line);
  }
  return invalid.length > 0 ? 1 : 0;
}

export function explanationLines(result: Explanation, policy: Policy, sessionMarks?: readonly string[]): string[] {
  const lines = [describeDecision(result)];
  if (result.reason) lines.push(`reason: ${result.reason}`);
  if (sessionMarks !== undefined && (sessionMarks.length > 0 || hasFlowRules(result))) {
    lines.push(`session marks: ${sessionMarks.length > 0 ? sessionMarks.join(', ') : 'none'}`);
  }
  if (result.marks) lines.push(`marks if it runs: ${result.marks.join(', ')}`);
  if (result.review) lines.push('review: the result waits for a person (Pass / Withhold) before the model sees it');
  if (result.lowered) lines.push('lowered: an allow of the untrusted workspace policy became ask');
  for (const w of result.warnings) lines.push(`warning: ${w}`);
  if (result.ask) {
    const t = result.ask.timeout !== undefined ? `, times out after ${result.ask.timeout}s (${result.ask.onTimeout})` : '';
    lines.push(`ask: a person may allow ${describeRemember(result.ask.remember)}${t}`);
    if (result.ask.cappedBy !== undefined) lines.push(`  capped: ${result.ask.cappedBy}`);
  }
  if (result.parts) {
    lines.push(`parts (each judged on its own; the call takes the strictest):`);
    for (const part of describeParts(result)) lines.push(`  ${part}`);
  }
  if (result.sandbox) {
    lines.push(`sandbox: ${result.sandbox.sandboxed ? `runs sandboxed, network ${result.sandbox.network ? 'on' : 'off'}` : 'runs without a sandbox'}`);
  }
  if (result.trace.length > 0) {
    lines.push('rules tested (those whose tools match, and for a simple command those its first word does not rule out):');
    for (const t of result.trace) {
      if (t.part !== undefined && t.partIndex !== undefined && result.trace.find((u) => u.partIndex === t.partIndex) === t) lines.push(` part ${t.partIndex + 1}: ${t.part}`);
      const id = t.rule.id !== null ? ` "${t.rule.id}"` : '';
      const what = t.failed === null ? 'matched' : `${t.failed} did not match${t.why !== undefined ? ` (${t.why})` : ''}`;
      lines.push(`  ${t.rule.layer} rule ${t.rule.index + 1}${id} (${t.rule.file}:${t.rule.line}) ${t.decision}: ${what}`);
    }
  }
  if (result.rule === null && result.defaultFrom === null && policy.layers.every(({ state }) => state.kind === 'ok')) {
    lines.push('no rule matched and no policy sets a default, so the call is asked');
  }
  // What the managed policy lets a person give or start at all, whatever the rules say.
  lines.push(...describeControls(policy.controls));
  return lines;
}

/** Whether a rule with `when` was tested: then the session's marks are worth a line even when there are none. */
function hasFlowRules(result: Explanation): boolean {
  return result.trace.some((t) => t.failed === 'when');
}

async function run(values: Values, io: CliIo): Promise<number> {
  const prompt = str(values, 'prompt');
  if (prompt === undefined) throw new UsageError('run needs --prompt TEXT');
  const answer = str(values, 'answer');
  if (answer !== undefined && answer !== 'allow' && answer !== 'deny' && answer !== 'keep') {
    throw new UsageError('--answer must be allow, deny or keep');
  }
  const pick = (name: string): Record<string, string> => {
    const v = str(values, name);
    return v === undefined ? {} : { [name]: v };
  };
  return runCommand(
    {
      prompt,
      ...(answer ? { answer } : {}),
      ...pick('workspace'), ...pick('agents'), ...pick('agent'), ...pick('policy'), ...pick('managed'), ...pick('user'), ...pick('audit'),
      untrusted: values.untrusted === true,
      json: values.json === true,
    },
    io,
  );
}

/** `agentpolicy hook …` (main.ts runs it from its own bundle; this is the same, for tests and programs). */
function hook(args: string[], io: CliIo): Promise<number> {
  if (args[0] === 'install') return hookInstallCommand(args.slice(1), io);
  if (args[0] === 'status') return hookStatusCommand(args.slice(1), io);
  return hookMain({
    argv: args, readStdin: io.readStdin ?? readProcessStdin, env: io.env ?? process.env, cwd: io.cwd,
    out: (text) => {
      if (text !== '') io.out(text.replace(/\n$/, ''));
    },
    err: io.err,
  });
}

function audit(values: Values, positionals: readonly string[], io: CliIo): number {
  if (positionals[0] === 'verify') return auditVerify(values, positionals.slice(1), io);
  if (values.head !== undefined) throw new UsageError('--head goes with audit verify');
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0) throw new UsageError('audit needs exactly one FILE');
  const full = path.resolve(io.cwd, file);
  if (!fs.existsSync(full)) throw new UsageError(`${file}: no such file`);
  const { entries, problems } = readAuditLog(full);
  for (const p of problems) io.err(`${file}:${p.line}: ${p.message}`);
  const marksOf = str(values, 'marks');
  if (marksOf !== undefined) {
    // Flow rules: the marks the session's tree carried, rebuilt from the lines that added them.
    const marks = sessionMarks(entries, marksOf);
    io.out(values.json === true ? JSON.stringify(marks) : marks.join(', '));
    return problems.length > 0 ? 1 : 0;
  }
  if (values.interrupted === true) {
    const sessions = interruptedSessions(entries);
    if (values.json === true) io.out(JSON.stringify(sessions, null, 2));
    else for (const s of sessions) io.out(`${s.session} (${s.agent ?? '?'}) started ${s.startedAt}: ${s.openCallbacks.length} open callback(s)`);
    return 0;
  }
  io.out(values.json === true ? JSON.stringify(entries, null, 2) : auditTable(entries));
  return problems.length > 0 ? 1 : 0;
}

/**
 * `audit verify FILE…`: the hash chain of each file, in order (a file may continue the one before
 * it). 0 when it holds (a torn last line is reported, not a failure), 1 at the first line changed,
 * removed, reordered or inserted.
 */
function auditVerify(values: Values, files: readonly string[], io: CliIo): number {
  if (files.length === 0) throw new UsageError('audit verify needs at least one FILE');
  if (values.interrupted !== undefined || values.marks !== undefined) throw new UsageError('audit verify takes only --head and --json');
  const full = files.map((file) => {
    const resolved = path.resolve(io.cwd, file);
    if (!fs.existsSync(resolved)) throw new UsageError(`${file}: no such file`);
    return resolved;
  });
  const head = str(values, 'head');
  const results = verifyAuditFiles(full, head !== undefined ? { head } : {});
  const named = (f: { file: string }): string => files[full.indexOf(f.file)] ?? f.file;
  if (values.json === true) {
    io.out(JSON.stringify(results.map((r, i) => ({ file: files[i], ok: r.broken === undefined, lines: r.lines, head: r.head,
      ...(r.broken ? { broken: { ...r.broken, file: named(r.broken) } } : {}), notes: r.notes.map((n) => ({ ...n, file: named(n) })) })), null, 2));
  } else {
    for (const [i, r] of results.entries()) {
      for (const n of r.notes) io.out(`${named(n)}:${n.line}: ${n.message}`);
      if (r.broken) io.err(`${named(r.broken)}:${r.broken.line}: ${r.broken.message}`);
      else io.out(`${files[i]}: ${r.lines} line(s) chained, head ${r.head}`);
    }
  }
  return results.some((r) => r.broken) ? 1 : 0;
}
