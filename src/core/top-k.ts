/**
 * Keeps the best `k` (internal id, similarity) pairs seen so far: a binary heap whose root is the
 * worst kept entry. Order is similarity descending, then external id ascending, so equal scores
 * come back in a stable, documented order whatever the scan order was.
 *
 * Ids are compared only on exact similarity ties, through `idOf`, so the common path touches
 * typed arrays only.
 *
 * Without `idOf` (a search thread, which has no ids) the structure keeps, besides the best `k`,
 * every entry tied with the k-th similarity: the caller, who has the ids, then picks among the
 * ties exactly as a TopK with ids would have (collection/parallel-search.ts).
 */
/**
 * The order of scored hits in an answer: by score (best first: descending, or ascending for
 * distances) and, on equal scores, by id as text. One node ranks its hits so and a cluster
 * merges its shards' hits so, which is why both give the same order.
 */
export function compareHits(
  a: { readonly score: number; readonly id: string },
  b: { readonly score: number; readonly id: string },
  ascending: boolean,
): number {
  if (a.score !== b.score) return ascending ? a.score - b.score : b.score - a.score;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export class TopK {
  private readonly slots: Int32Array;
  private readonly sims: Float64Array;
  private count = 0;
  /** Without ids: entries outside the heap whose similarity equals the heap's floor. */
  private tied: number[] = [];

  constructor(
    readonly k: number,
    private readonly idOf: ((slot: number) => string) | null,
  ) {
    this.slots = new Int32Array(Math.max(1, k));
    this.sims = new Float64Array(Math.max(1, k));
  }

  /** The similarity an entry must at least reach to enter; -Infinity while not full. */
  get floor(): number {
    return this.count >= this.k ? (this.sims[0] as number) : Number.NEGATIVE_INFINITY;
  }

  offer(slot: number, sim: number): void {
    if (this.k === 0) return;
    if (this.count < this.k) {
      this.slots[this.count] = slot;
      this.sims[this.count] = sim;
      this.siftUp(this.count++);
      return;
    }
    const rootSim = this.sims[0] as number;
    if (sim < rootSim) return;
    const idOf = this.idOf;
    if (idOf === null) {
      if (sim === rootSim) {
        this.tied.push(slot);
        return;
      }
      const evicted = this.slots[0] as number;
      this.slots[0] = slot;
      this.sims[0] = sim;
      this.siftDown(0);
      // The evicted entry stays a candidate while it still ties with the (new) floor.
      if (this.sims[0] === rootSim) this.tied.push(evicted);
      else this.tied.length = 0;
      return;
    }
    if (sim === rootSim && idOf(slot) >= idOf(this.slots[0] as number)) return;
    this.slots[0] = slot;
    this.sims[0] = sim;
    this.siftDown(0);
  }

  /**
   * Returns the kept entries best first and empties the structure. Without ids, the entries tied
   * with the last one follow it (more than `k` in all when there are such ties).
   */
  drainSorted(): { slots: Int32Array; sims: Float64Array } {
    const n = this.count;
    const ties = this.tied;
    this.tied = [];
    const floor = this.sims[0] as number;
    const slots = new Int32Array(n + ties.length);
    const sims = new Float64Array(n + ties.length);
    for (let i = 0; i < ties.length; i++) {
      slots[n + i] = ties[i] as number;
      sims[n + i] = floor;
    }
    for (let i = n - 1; i >= 0; i--) {
      slots[i] = this.slots[0] as number;
      sims[i] = this.sims[0] as number;
      this.count--;
      if (this.count > 0) {
        this.slots[0] = this.slots[this.count] as number;
        this.sims[0] = this.sims[this.count] as number;
        this.siftDown(0);
      }
    }
    return { slots, sims };
  }

  /** Whether entry i ranks below entry j (so it belongs nearer the root). */
  private worse(i: number, j: number): boolean {
    const si = this.sims[i] as number;
    const sj = this.sims[j] as number;
    if (si !== sj) return si < sj;
    const idOf = this.idOf;
    if (idOf === null) return (this.slots[i] as number) > (this.slots[j] as number);
    return idOf(this.slots[i] as number) > idOf(this.slots[j] as number);
  }

  private swap(i: number, j: number): void {
    const slot = this.slots[i] as number;
    const sim = this.sims[i] as number;
    this.slots[i] = this.slots[j] as number;
    this.sims[i] = this.sims[j] as number;
    this.slots[j] = slot;
    this.sims[j] = sim;
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
