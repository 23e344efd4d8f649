/**
 * One writer, many readers, across threads: searches running on search threads read a segment's
 * shared memory while this thread may want to change it. A change waits until the searches in
 * flight are done, and searches that arrive meanwhile wait until the change is applied; the
 * change itself is synchronous, so readers see a batch wholly or not at all and never a list
 * being rewritten. Searches still overlap everything else a write does (validation, the
 * durable commit and its fsync): only the in-memory apply excludes them. A change applied in
 * several slices `hold`s the gate across them, so that no read starts between two slices.
 */
export class ReadWriteGate {
  private readers = 0;
  private writing = false;
  private held = false;
  private drained: (() => void) | undefined;
  private waiting: Array<() => void> = [];

  /** Runs a read; it starts once no change is being applied (or held) and holds changes off until it ends. */
  async read<T>(run: () => Promise<T>): Promise<T> {
    while (this.writing || this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.readers++;
    try {
      return await run();
    } finally {
      this.readers--;
      if (this.readers === 0) this.drained?.();
    }
  }

  /**
   * Applies a change once the reads in flight are over; reads arriving meanwhile wait. Changes
   * must not overlap each other (the collection's write queue runs them one at a time).
   */
  async write<T>(apply: () => T): Promise<T> {
    this.writing = true;
    try {
      while (this.readers > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      return apply();
    } finally {
      this.writing = false;
      this.drained = undefined;
      this.resumeReaders();
    }
  }

  /** Keeps reads from starting until `release`, across several `write`s (the reads in flight still end first). */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.resumeReaders();
  }

  private resumeReaders(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resume of waiting) resume();
  }

  /** Reads in flight (for tests and metrics). */
  get activeReaders(): number {
    return this.readers;
  }
}
