/**
 * A binary heap of (slot, similarity) over typed arrays. `best` mode pops the highest similarity
 * first (the candidate queue C of the paper); `worst` mode keeps the lowest at the top (the result
 * set W, bounded by ef).
 */
export class CandidateHeap {
  private slots: Int32Array;
  private sims: Float32Array;
  private count = 0;

  constructor(
    private readonly mode: 'best' | 'worst',
    capacity = 64,
  ) {
    this.slots = new Int32Array(capacity);
    this.sims = new Float32Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.count = 0;
  }

  /** Similarity at the top (best in `best` mode, worst in `worst` mode). */
  get topSim(): number {
    return this.sims[0] as number;
  }

  get topSlot(): number {
    return this.slots[0] as number;
  }

  push(slot: number, sim: number): void {
    if (this.count === this.slots.length) this.grow();
    let i = this.count++;
    const up = this.mode === 'best';
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const ps = this.sims[parent] as number;
      if (up ? ps >= sim : ps <= sim) break;
      this.slots[i] = this.slots[parent] as number;
      this.sims[i] = ps;
      i = parent;
    }
    this.slots[i] = slot;
    this.sims[i] = sim;
  }

  /** Removes the top; call only when not empty. */
  pop(): void {
    const n = --this.count;
    if (n === 0) return;
    const slot = this.slots[n] as number;
    const sim = this.sims[n] as number;
    const best = this.mode === 'best';
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      let child = left;
      const right = left + 1;
      if (right < n && (best ? (this.sims[right] as number) > (this.sims[left] as number) : (this.sims[right] as number) < (this.sims[left] as number))) {
        child = right;
      }
      const cs = this.sims[child] as number;
      if (best ? cs <= sim : cs >= sim) break;
      this.slots[i] = this.slots[child] as number;
      this.sims[i] = cs;
      i = child;
    }
    this.slots[i] = slot;
    this.sims[i] = sim;
  }

  /** The entries in heap order (not sorted); valid until the next push or pop. */
  entries(): { slots: Int32Array; sims: Float32Array; count: number } {
    return { slots: this.slots, sims: this.sims, count: this.count };
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2);
    slots.set(this.slots);
    this.slots = slots;
    const sims = new Float32Array(this.sims.length * 2);
    sims.set(this.sims);
    this.sims = sims;
  }
}
