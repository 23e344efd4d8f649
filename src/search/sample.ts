/**
 * A uniform random sample of the matching points (Qdrant's `sample: random` and the distance
 * matrix's sample): reservoir sampling over one pass of the matches, keeping `size` of them, each
 * match equally likely to be kept whatever the order of the pass.
 */
export class Reservoir<T> {
  private readonly kept: T[] = [];
  private seen = 0;

  constructor(
    private readonly size: number,
    private readonly random: () => number = Math.random,
  ) {}

  add(item: T): void {
    this.seen++;
    if (this.kept.length < this.size) {
      this.kept.push(item);
      return;
    }
    const at = Math.floor(this.random() * this.seen);
    if (at < this.size) this.kept[at] = item;
  }

  /** The sample, in no particular order. */
  items(): T[] {
    return this.kept;
  }
}
