// A second-level index of one tool's candidate rules by the literal first segment of their path
// globs, so a part that is one path is tested only against the rules that can match it: those
// whose every glob starts with its first segment, and those no first segment rules out (no
// `paths`, an absolute glob, or a glob starting with a pattern). First-match order is kept
// exactly: every list is the candidates in file order with the rules that cannot match taken out.
import type { CompiledRule } from './compile.js';
import { isLiteral } from './globs.js';


/** The key of a path outside the workspace folder: only absolute globs (never indexed) match it. */
export const OUTSIDE_WORKSPACE = '\u0000outside';

export class PathIndex {
  private readonly bySegment = new Map<string, readonly CompiledRule[]>();
  private readonly anySegment: readonly CompiledRule[];

  constructor(candidates: readonly CompiledRule[]) {
    const firstSegments = candidates.map(literalFirstSegments);
    this.anySegment = candidates.filter((_, i) => firstSegments[i] === undefined);
    const segments = new Set(firstSegments.flatMap((s) => (s ? [...s] : [])));
    for (const segment of segments) {
      this.bySegment.set(segment, candidates.filter((_, i) => firstSegments[i] === undefined || firstSegments[i]!.has(segment)));
    }
  }

  /** The candidates that can match one path whose first segment (workspace-relative) is `segment`, in file order. */
  forFirstSegment(segment: string): readonly CompiledRule[] {
    return this.bySegment.get(segment) ?? this.anySegment;
  }

  /** Whether some rule is indexed at all (else resolving the path first would only cost). */
  get useful(): boolean {
    return this.bySegment.size > 0;
  }
}

/** The first segment of a workspace-relative path ('' for the folder itself), or OUTSIDE_WORKSPACE. */
export function firstSegment(relative: string | null): string {
  if (relative === null) return OUTSIDE_WORKSPACE;
  const slash = relative.indexOf('/');
  return slash === -1 ? relative : relative.slice(0, slash);
}

/**
 * The literal first segments of a rule's positive path globs, or undefined when a path of any
 * first segment could match (no `paths`, an absolute glob, a glob whose first segment is a
 * pattern or `.`/`..`, which glob libraries may read specially).
 */
function literalFirstSegments(rule: CompiledRule): ReadonlySet<string> | undefined {
  const source = rule.paths?.source;
  if (source === undefined) return undefined;
  const segments = new Set<string>();
  for (const glob of source) {
    if (glob.startsWith('!')) continue;
    if (glob.startsWith('/')) return undefined;
    const slash = glob.indexOf('/');
    const first = slash === -1 ? glob : glob.slice(0, slash);
    if (first === '' || first === '.' || first === '..' || !isLiteral(first)) return undefined;
    segments.add(first);
  }
  return segments.size > 0 ? segments : undefined;
}
