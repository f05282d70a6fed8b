// A change to the workspace policy made outside the editor that allows more is held until a person
// accepts it: the new version decides, but what it allows that the accepted version did not is
// asked (heldDecision). The editor judges with it, and so does `agentpolicy hook` while the
// editor holds a change.
import { heldDecision } from './loosening.js';
import { Policy, type DecideOptions, type Explanation, type PolicyDecision } from '../policy.js';
import type { ToolCall } from '../rules/call.js';

export class HeldPolicy extends Policy {
  constructor(
    private readonly next: Policy,
    private readonly accepted: Policy,
  ) {
    super({});
  }
  override get layers() {
    return this.next.layers;
  }
  override sandboxMode(): ReturnType<Policy['sandboxMode']> {
    return this.next.sandboxMode();
  }
  override decide(call: ToolCall, options: DecideOptions): PolicyDecision {
    return heldDecision(this.next, this.accepted, call, options);
  }
  override explain(call: ToolCall, options: DecideOptions): Explanation {
    return { ...this.next.explain(call, options), ...this.decide(call, options) };
  }
}
