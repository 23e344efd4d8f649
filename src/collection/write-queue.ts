/**
 * Runs a collection's writes one at a time, in arrival order. Each write finishes (durable in
 * the file and applied in memory) before the next starts, so "applied in order" holds and a
 * delete-by-filter sees every write acknowledged before it. Reads never wait here.
 */
export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly settled = (): void => {
    this.pending--;
    if (this.pending > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resume of waiters) resume();
  };

  /** Resolves once no write is queued or running (at once when none is). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Writes queued or running, not yet settled (read at scrape time by /metrics). */
  get pendingWrites(): number {
    return this.pending;
  }

  run<T>(task: () => Promise<T> | T): Promise<T> {
    this.pending++;
    const result = this.tail.then(task);
    // The next write waits for this one to settle, not to succeed: a failed write is reported to
    // its own caller and must not block or fail the writes queued behind it.
    this.tail = result.then(this.settled, this.settled);
    return result;
  }
}
