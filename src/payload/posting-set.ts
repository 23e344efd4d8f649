/**
 * The slots holding one payload value: a Set for O(1) updates and membership, plus a sorted
 * Int32Array snapshot taken on first read after a change, so repeated searches get their
 * candidates as one typed array (no per-query iteration of the Set).
 */
export class PostingSet {
  private readonly slots = new Set<number>();
  private snapshot: Int32Array | undefined;
  private flags: Uint8Array | undefined;

  get size(): number {
    return this.slots.size;
  }

  add(slot: number): void {
    if (this.slots.has(slot)) return;
    this.slots.add(slot);
    this.snapshot = undefined;
    this.flags = undefined;
  }

  delete(slot: number): void {
    if (this.slots.delete(slot)) {
      this.snapshot = undefined;
      this.flags = undefined;
    }
  }

  has(slot: number): boolean {
    return this.slots.has(slot);
  }

  /** The slots, ascending. Do not modify: the array is shared until the next change. */
  toArray(): Int32Array {
    if (this.snapshot === undefined) {
      const array = new Int32Array(this.slots.size);
      let i = 0;
      for (const slot of this.slots) array[i++] = slot;
      this.snapshot = array.sort();
    }
    return this.snapshot;
  }

  /**
   * Membership as one byte per slot up to the largest member, built on first use after a change:
   * intersecting with a large set then costs one array read per probe instead of a hash lookup.
   */
  toFlags(): Uint8Array {
    if (this.flags === undefined) {
      const sorted = this.toArray();
      const flags = new Uint8Array(sorted.length === 0 ? 0 : (sorted[sorted.length - 1] as number) + 1);
      for (let i = 0; i < sorted.length; i++) flags[sorted[i] as number] = 1;
      this.flags = flags;
    }
    return this.flags;
  }

  /** Approximate bytes held (a Set entry ~24 bytes, the snapshot 4 per slot). */
  get bytes(): number {
    return 24 * this.slots.size + (this.snapshot?.byteLength ?? 0) + (this.flags?.byteLength ?? 0);
  }
}
