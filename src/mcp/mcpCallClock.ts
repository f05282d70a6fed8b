// The clock of one MCP tool call: the call is stopped when its server sends nothing (a result or
// progress) for a while; it stands still while a person answers an elicitation of the call.
export class CallClock {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private paused = 0;
  /** The call has ended: an elicitation that ends later (resume) or late progress must not arm the clock again. */
  private done = false;
  /** It ran out (rather than the call being stopped some other way). */
  timedOut = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly onTimeout: () => void,
  ) {}

  /** Starts the clock again: when the call starts and on each progress notification. */
  readonly arm = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.paused > 0 || this.done) return;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.onTimeout();
    }, this.timeoutMs);
    this.timer.unref?.();
  };

  pause(): void {
    this.paused++;
    clearTimeout(this.timer);
  }

  resume(): void {
    this.paused--;
    this.arm();
  }

  /** The call has ended. */
  stop(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
