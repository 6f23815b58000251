// A step that runs again and again (a claim, a heartbeat, a background tick) and fails while a
// store does not answer: logged at the first failure of a streak and every tenth, then once when
// it works again. Logged at each failure, an outage wrote several lines a second per process.

import type { Logger } from "./log.js";

export class FailureStreak {
  private failures = 0;

  /** `what` names the step ("worker 7: heartbeat"). */
  constructor(
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /** How many failed in a row so far (0 after a success). */
  get length(): number {
    return this.failures;
  }

  failed(error: unknown, then = "will retry"): void {
    this.failures += 1;
    if (this.failures === 1 || this.failures % 10 === 0) {
      this.log.warn(`${this.what} failed (${this.failures} in a row), ${then}: ${(error as Error)?.message ?? String(error)}`);
    }
  }

  succeeded(): void {
    if (this.failures > 0) this.log.info(`${this.what} works again after ${this.failures} failure(s)`);
    this.failures = 0;
  }
}
