/**
 * A per-search memo of a yes/no answer per slot, cleared in O(1) by a generation counter (the
 * same trick as index/hnsw/visited-set.ts): entry = generation · 2 + answer.
 */
export class SlotMemo {
  private entries = new Uint32Array(0);
  private generation = 1;

  /** Forgets every answer and makes room for slots `[0, slots)`. */
  reset(slots: number): void {
    if (slots > this.entries.length) {
      this.entries = new Uint32Array(Math.max(slots, Math.ceil(this.entries.length * 1.25)));
      this.generation = 1;
      return;
    }
    this.generation++;
    if (this.generation >= 0x7fffffff) {
      this.entries.fill(0);
      this.generation = 1;
    }
  }

  get(slot: number): boolean | undefined {
    const entry = this.entries[slot] as number;
    return entry >>> 1 === this.generation ? (entry & 1) === 1 : undefined;
  }

  set(slot: number, answer: boolean): void {
    this.entries[slot] = (this.generation << 1) | (answer ? 1 : 0);
  }

  /** `test`, remembered per slot from now on (this resets the memo: one search at a time). */
  remember(slots: number, test: (slot: number) => boolean): (slot: number) => boolean {
    this.reset(slots);
    return (slot) => {
      const known = this.get(slot);
      if (known !== undefined) return known;
      const result = test(slot);
      this.set(slot, result);
      return result;
    };
  }
}
