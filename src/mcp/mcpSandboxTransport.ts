// The stdio transport of an MCP server whose process runs in the sandbox (docs/mcp.md, "Sandboxed
// servers"): `bwrap …args --json-status-fd 3 [--seccomp 4] -- [wrapper…] COMMAND ARGS…` (or, for
// a launch that is a program's words, `PROGRAM WORDS… COMMAND ARGS…`), the
// server's stdin and stdout the MCP pipes, its stderr kept like an unsandboxed server's. The
// process is started without a shell (as the SDK's StdioClientTransport starts one); bubblewrap
// takes the command from PATH as execvp does. Closing ends stdin, then after a grace SIGTERM,
// then SIGKILL, to bubblewrap: the sandbox dies with it (--die-with-parent, and its own pid
// namespace takes every process of the server along). `onEnded` is told once the process is gone.
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxLaunch } from '../runtime/sandbox/commandProcess.js';

const GRACE_MS = 2000;

export interface SandboxedStdioOptions {
  launch: SandboxLaunch;
  command: string;
  args: readonly string[];
  /** The whole environment of bubblewrap and the server (the caller has withheld what must be). */
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Told once, when the process has ended (or could not start). */
  onEnded?: () => void;
}

export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr, there before start so that no early line is lost. */
  readonly stderr: Readable = new PassThrough();
  private process: ChildProcess | undefined;
  private readonly readBuffer = new ReadBuffer();
  private status = '';
  private ended = false;

  constructor(private readonly options: SandboxedStdioOptions) {}

  /** bubblewrap's pid while it runs. */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Whether bubblewrap said on its status pipe that it set the sandbox up (named its child's pid); true for other launches. */
  get sandboxSetUp(): boolean {
    return this.options.launch.kind === 'prefix' || /"child-pid"\s*:/.test(this.status);
  }

  async start(): Promise<void> {
    if (this.process) throw new Error('SandboxedStdioTransport already started');
    const { launch, command, args, env, cwd } = this.options;
    // A program that sandboxes what it runs (macOS): its words, then the server's.
    const prefix = launch.kind === 'prefix' ? launch : undefined;
    const bwrap = launch.kind !== 'prefix' ? launch : undefined;
    const program = bwrap ? bwrap.bwrap : prefix?.argv[0];
    if (program === undefined) throw new Error('the sandbox launch names no program');
    const seccomp = bwrap?.seccomp;
    const argv = bwrap
      ? [...bwrap.args, '--json-status-fd', '3', ...(seccomp ? ['--seccomp', '4'] : []), '--', ...(bwrap.wrapper ?? []), command, ...args]
      : [...(prefix?.argv.slice(1) ?? []), command, ...args];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(program, argv, {
        cwd, env, shell: false,
        stdio: bwrap ? ['pipe', 'pipe', 'pipe', 'pipe', ...(seccomp ? (['pipe'] as const) : [])] : ['pipe', 'pipe', 'pipe'],
      });
      this.process = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
        this.end();
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        this.process = undefined;
        this.end();
        this.onclose?.();
      });
      if (seccomp) {
        const filter = child.stdio[4] as NodeJS.WritableStream & { on(event: 'error', f: () => void): unknown };
        filter.on('error', () => undefined); // bwrap may fail before it reads: its stderr says why
        filter.end(seccomp);
      }
      const status = child.stdio[3] as Readable | null;
      status?.on('data', (chunk: Buffer) => {
        if (this.status.length < 4096) this.status += chunk.toString('utf8');
      });
      status?.on('error', () => undefined);
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        this.readBuffer.append(chunk);
        this.readMessages();
      });
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stderr?.pipe(this.stderr as PassThrough);
    });
  }

  private readMessages(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.options.onEnded?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.process?.stdin;
      if (!stdin) {
        reject(new Error('Not connected'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.process;
    if (child) {
      const closed = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        child.once('close', () => resolve());
      });
      const wait = (): Promise<void> => Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, GRACE_MS).unref())]);
      try {
        child.stdin?.end();
      } catch {
        // gone
      }
      await wait();
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        if (child.exitCode !== null || child.signalCode !== null) break;
        try {
          child.kill(signal);
        } catch {
          // gone
        }
        await wait();
      }
    }
    this.readBuffer.clear();
  }
}
