/**
 * The best `k` (slot, score) pairs of one sparse search: a binary heap whose root is the worst kept
 * entry. Order: score descending, then, on an exact tie, `idOf(slot)` ascending when the caller
 * gives ids, else slot ascending. Unlike core/top-k.ts it never returns more than `k` entries: the
 * slot order is a complete tie-break, and a caller that ranks by external id passes `idOf`.
 */
export class SparseTopK {
  private readonly slots: Int32Array;
  private readonly scores: Float64Array;
  private count = 0;

  constructor(
    readonly k: number,
    private readonly idOf: ((slot: number) => string) | undefined,
  ) {
    this.slots = new Int32Array(Math.max(1, k));
    this.scores = new Float64Array(Math.max(1, k));
  }

  /** A score below this cannot enter (one equal to it may, on the tie-break); -Infinity until full. */
  get floor(): number {
    return this.count >= this.k ? (this.scores[0] as number) : Number.NEGATIVE_INFINITY;
  }

  offer(slot: number, score: number): void {
    if (this.count < this.k) {
      this.slots[this.count] = slot;
      this.scores[this.count] = score;
      this.siftUp(this.count++);
      return;
    }
    const root = this.scores[0] as number;
    if (score < root) return;
    if (score === root && !this.before(slot, this.slots[0] as number)) return;
    this.slots[0] = slot;
    this.scores[0] = score;
    this.siftDown(0);
  }

  /** The kept entries best first. */
  drain(): { slots: Int32Array; scores: Float64Array } {
    const n = this.count;
    const slots = new Int32Array(n);
    const scores = new Float64Array(n);
    for (let i = n - 1; i >= 0; i--) {
      slots[i] = this.slots[0] as number;
      scores[i] = this.scores[0] as number;
      this.count--;
      if (this.count > 0) {
        this.slots[0] = this.slots[this.count] as number;
        this.scores[0] = this.scores[this.count] as number;
        this.siftDown(0);
      }
    }
    return { slots, scores };
  }

  /** Whether slot `a` ranks before slot `b` on an exact score tie. */
  private before(a: number, b: number): boolean {
    const idOf = this.idOf;
    return idOf === undefined ? a < b : idOf(a) < idOf(b);
  }

  /** Whether entry i ranks below entry j (so belongs nearer the root). */
  private worse(i: number, j: number): boolean {
    const si = this.scores[i] as number;
    const sj = this.scores[j] as number;
    if (si !== sj) return si < sj;
    return this.before(this.slots[j] as number, this.slots[i] as number);
  }

  private swap(i: number, j: number): void {
    const slot = this.slots[i] as number;
    const score = this.scores[i] as number;
    this.slots[i] = this.slots[j] as number;
    this.scores[i] = this.scores[j] as number;
    this.slots[j] = slot;
    this.scores[j] = score;
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.count) break;
      const right = left + 1;
      let worst = left;
      if (right < this.count && this.worse(right, left)) worst = right;
      if (!this.worse(worst, i)) break;
      this.swap(i, worst);
      i = worst;
    }
  }
}
