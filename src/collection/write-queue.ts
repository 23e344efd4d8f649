/**
 * Runs a collection's writes one at a time, in arrival order. Each write finishes (durable in
 * the file and applied in memory) before the next starts, so "applied in order" holds and a
 * delete-by-filter sees every write acknowledged before it. Reads never wait here.
 */
export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  get length(): number {
    return this.pending;
  }

  run<T>(task: () => Promise<T> | T): Promise<T> {
    this.pending++;
    const result = this.tail.then(task);
    this.tail = result.then(
      () => this.pending--,
      () => this.pending--,
    );
    return result;
  }
}
