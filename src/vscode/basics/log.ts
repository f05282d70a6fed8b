// One log output channel for the extension, behind a small logger.
import * as vscode from 'vscode';

export class Log implements vscode.Disposable {
  readonly channel: vscode.LogOutputChannel;
  constructor() {
    this.channel = vscode.window.createOutputChannel('Agent Policy', { log: true });
  }
  info(message: string): void {
    this.channel.info(message);
  }
  warn(message: string): void {
    this.channel.warn(message);
  }
  error(message: string, error?: unknown): void {
    this.channel.error(error instanceof Error ? `${message}: ${error.stack ?? error.message}` : error !== undefined ? `${message}: ${String(error)}` : message);
  }
  dispose(): void {
    this.channel.dispose();
  }
}
