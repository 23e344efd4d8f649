import { bitsOf, bitsWords, setBit } from '../core/slot-bits.js';

/**
 * A set at least this share of its slot range keeps its bitset between searches: at most 8 bytes
 * per member, a third of what the Set itself costs. Smaller sets build theirs per search.
 */
const CACHED_BITS_SHARE = 1 / 64;

/**
 * The slots holding one payload value: a Set for O(1) updates and membership, plus a sorted
 * Int32Array snapshot taken on first read after a change, so repeated searches get their
 * candidates as one typed array (no per-query iteration of the Set), and for large sets a
 * membership bitset that filtered graph walks test inline.
 */
export class PostingSet {
  private readonly slots = new Set<number>();
  private snapshot: Int32Array | undefined;
  private bits: Uint32Array | undefined;

  get size(): number {
    return this.slots.size;
  }

  add(slot: number): void {
    if (this.slots.has(slot)) return;
    this.slots.add(slot);
    this.snapshot = undefined;
    this.bits = undefined;
  }

  delete(slot: number): void {
    if (this.slots.delete(slot)) {
      this.snapshot = undefined;
      this.bits = undefined;
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

  /** One past the largest member (0 when empty). */
  get span(): number {
    const sorted = this.toArray();
    return sorted.length === 0 ? 0 : (sorted[sorted.length - 1] as number) + 1;
  }

  /** Membership as a bitset up to the largest member (read-only: it may be shared until the next change). */
  toBits(): Uint32Array {
    if (this.bits !== undefined) return this.bits;
    const sorted = this.toArray();
    const span = this.span;
    const bits = bitsOf(sorted, span);
    if (sorted.length >= span * CACHED_BITS_SHARE) this.bits = bits;
    return bits;
  }

  /** Sets this set's members in `out` (at least `span` bits long) (word by word from a kept bitset, else member by member). */
  orInto(out: Uint32Array): void {
    const sorted = this.toArray();
    const span = this.span;
    if (this.bits === undefined && sorted.length < span * CACHED_BITS_SHARE) {
      for (let i = 0; i < sorted.length; i++) setBit(out, sorted[i] as number);
      return;
    }
    const bits = this.toBits();
    const words = Math.min(out.length, bits.length, bitsWords(span));
    for (let w = 0; w < words; w++) out[w] = (out[w] as number) | (bits[w] as number);
  }
}
