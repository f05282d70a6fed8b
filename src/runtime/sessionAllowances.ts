// "Allow for Session": the calls a person allowed for the rest of a session. A later call is the
// same call when it has the same stable tool id and the same input as canonical JSON
// (`canonicalJson(input)`); nothing looser (another path, another command) is ever allowed by it.
// Our own sessions (toolCall.ts) and another agent's session asking through its hook
// (externalSession.ts) remember the same way.

export class SessionAllowances {
  private readonly keys = new Set<string>();

  has(toolId: string, canonicalInput: string): boolean {
    return this.keys.has(key(toolId, canonicalInput));
  }

  add(toolId: string, canonicalInput: string): void {
    this.keys.add(key(toolId, canonicalInput));
  }
}

function key(toolId: string, canonicalInput: string): string {
  return `${toolId}\u0000${canonicalInput}`;
}
