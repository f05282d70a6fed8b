// Diagnostics of policy and agents files. Ranges are kept as 0-based offsets internally and
// turned into 1-based lines and columns only where they are shown (CLI, JSON output).

export type Severity = 'error' | 'warning' | 'info';

export type DiagnosticCode =
  | 'syntax'
  | 'schema'
  | 'bad-glob'
  | 'duplicate-id'
  | 'shadowed'
  | 'spawn-denied'
  | 'test-failed'
  /** `agentpolicy check` with an agents file: the tools an agent's model is offered, and those hidden (info). */
  | 'tools-offered';

export interface Diagnostic {
  file: string;
  severity: Severity;
  code: DiagnosticCode;
  message: string;
  /** 0-based offsets into the file's text. */
  offset: number;
  length: number;
}

/** The JSON form fixed by policy-format.md: 1-based lines and columns. */
export interface DiagnosticJson {
  file: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: Severity;
  code: DiagnosticCode;
  message: string;
}

export interface Position {
  /** 1-based */
  line: number;
  /** 1-based */
  column: number;
}

/** Maps offsets to 1-based lines and columns; built once per text. */
export class LineMap {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) this.starts.push(i + 1);
      else if (c === 13 && text.charCodeAt(i + 1) !== 10) this.starts.push(i + 1);
    }
  }

  position(offset: number): Position {
    const lo = this.lineIndex(offset);
    return { line: lo + 1, column: offset - this.starts[lo]! + 1 };
  }

  /** The 1-based line of `offset`, without building a position (compiling asks it of every rule). */
  lineOf(offset: number): number {
    return this.lineIndex(offset) + 1;
  }

  private lineIndex(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

export function toJson(diagnostic: Diagnostic, lines: LineMap): DiagnosticJson {
  const start = lines.position(diagnostic.offset);
  const end = lines.position(diagnostic.offset + diagnostic.length);
  return {
    file: diagnostic.file,
    line: start.line,
    column: start.column,
    endLine: end.line,
    endColumn: end.column,
    severity: diagnostic.severity,
    code: diagnostic.code,
    message: diagnostic.message,
  };
}

/** `file:line:col severity code message`, like a compiler. */
export function formatDiagnostic(d: DiagnosticJson): string {
  return `${d.file}:${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`;
}

export function hasErrors(diagnostics: readonly { severity: Severity }[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}
