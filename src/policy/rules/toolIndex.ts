// The first level of a layer's index: its rules by the literal prefix of their tool globs, and
// for each tool id called, the rules that can judge it (with their second-level indexes,
// literalStartIndex.ts), worked out at the first call of that tool and remembered.
import type { CompiledRule } from './compile.js';
import { literalPrefix } from '../globs/globs.js';
import { commandStarts, LiteralStartIndex, pathStarts } from './literalStartIndex.js';

/** One tool's rules: the candidates in file order and, built at their first use, their indexes. */
export class ToolRules {
  private commandIndexCache: LiteralStartIndex | undefined;
  private pathIndexCache: LiteralStartIndex | undefined;

  constructor(
    /** The rules whose `tools` match this id (or that have no `tools`), in file order. */
    readonly candidates: readonly CompiledRule[],
  ) {}

  /** The candidates indexed by the leading literal words of their command patterns. */
  get commandIndex(): LiteralStartIndex {
    return (this.commandIndexCache ??= new LiteralStartIndex(this.candidates, commandStarts));
  }

  /** The candidates indexed by the leading literal segments of their path globs. */
  get pathIndex(): LiteralStartIndex {
    return (this.pathIndexCache ??= new LiteralStartIndex(this.candidates, pathStarts));
  }
}

/** No rules for any tool (a layer that is broken). */
export const NO_TOOL_RULES = new ToolRules([]);

/**
 * Rules indexed by the literal prefix of their tool globs, with the answer per tool id
 * remembered: a session calls few distinct tools many times, and a call looks its tool up once.
 */
export class ToolIndex {
  private readonly byPrefix = new Map<string, number[]>();
  private readonly memo = new Map<string, ToolRules>();
  private static readonly MEMO_LIMIT = 4096;

  constructor(private readonly rules: readonly CompiledRule[]) {
    rules.forEach((rule, i) => {
      // From the globs as written (not the compiled set): a rule's matchers may be compiled lazily.
      const tools = rule.rule.tools;
      if (!tools) {
        this.add('', i);
        return;
      }
      // Each distinct prefix once per rule (a rule lists a few tools: a list, not a set).
      const prefixes: string[] = [];
      for (const glob of tools) {
        if (glob.startsWith('!')) continue;
        const prefix = literalPrefix(glob);
        if (prefixes.includes(prefix)) continue;
        prefixes.push(prefix);
        this.add(prefix, i);
      }
    });
  }

  private add(prefix: string, rule: number): void {
    let list = this.byPrefix.get(prefix);
    if (!list) this.byPrefix.set(prefix, (list = []));
    list.push(rule);
  }

  forTool(toolId: string): ToolRules {
    const known = this.memo.get(toolId);
    if (known) return known;
    const hits = new Set<number>();
    for (let len = 0; len <= toolId.length; len++) {
      const list = this.byPrefix.get(toolId.slice(0, len));
      if (list) for (const i of list) hits.add(i);
    }
    const candidates = [...hits].sort((a, b) => a - b).map((i) => this.rules[i]!).filter((r) => !r.tools || r.tools.test(toolId));
    const result = new ToolRules(candidates);
    if (this.memo.size >= ToolIndex.MEMO_LIMIT) this.memo.clear();
    this.memo.set(toolId, result);
    return result;
  }
}
