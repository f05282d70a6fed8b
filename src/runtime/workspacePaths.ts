// Workspace path confinement for the builtin tools.
//
// Confinement is the point. Every path argument is resolved the way the policy resolves it
// (`PathResolver`: against the workspace folder, normalised, through the symbolic links of the
// part that exists, dangling links included) and refused when it lands outside the workspace
// folder. The tools then act on the resolved real path, never on the text the model gave, so a
// link inside the folder that points outside cannot be used to reach past it, and what the tool
// touches is exactly what the policy judged. Final path components are opened with O_NOFOLLOW,
// so a link swapped in after resolution fails instead of being followed.
import type { PathResolver, ResolvedPath } from '../policy/paths.js';

/** The sentence each builtin tool's description ends with, so the model knows the rule. */
export const CONFINED = 'Paths are relative to the workspace folder; a path outside it (through "..", an absolute path or a symbolic link) is refused.';

/** A path argument that resolves outside the workspace folder. Thrown before anything is touched. */
export class OutsideWorkspaceError extends Error {
  constructor(
    readonly tool: string,
    readonly argument: string,
    readonly value: string,
    readonly resolved: string,
    readonly workspaceFolder: string,
  ) {
    super(
      `${tool}: ${argument} ${JSON.stringify(value)} is outside the workspace folder ${workspaceFolder}` +
        ` (it resolves to ${resolved}); refused, nothing was done`,
    );
    this.name = 'OutsideWorkspaceError';
  }
}

/** A path argument resolved inside the workspace folder. */
export interface Confined extends ResolvedPath {
  relative: string;
  /** The workspace-relative path for results: '.' for the folder itself. */
  display: string;
}

/** Resolves `value` (the `argument` of `tool`) inside the workspace folder, or throws OutsideWorkspaceError. */
export function confine(resolver: PathResolver, tool: string, argument: string, value: string): Confined {
  const r = resolver.resolve(value);
  if (r.relative === null) throw new OutsideWorkspaceError(tool, argument, value, r.absolute, resolver.workspace);
  return { absolute: r.absolute, relative: r.relative, display: r.relative === '' ? '.' : r.relative };
}

/** For tools that change a path: the workspace folder itself is never written, deleted or moved. */
export function refuseWorkspaceRoot(tool: string, argument: string, value: string, p: Confined): void {
  if (p.relative === '') {
    throw new Error(`${tool}: ${argument} ${JSON.stringify(value)} is the workspace folder itself; refused, nothing was done`);
  }
}
