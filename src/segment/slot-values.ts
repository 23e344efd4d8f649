/**
 * Values kept per slot under each of a fixed set of names: a point's sparse vectors
 * (sparse-spaces.ts) and its named dense vectors (named-vectors.ts). A point's values move with
 * its slot; the owner hears of each value set and cleared, to keep its indexes and counts.
 */
import { bitsWords, setBit } from '../core/slot-bits.js';
import type { VectorHolders } from '../payload/filter-types.js';

export class SlotValues<V> {
  private readonly byName = new Map<string, Array<V | undefined>>();
  private readonly counts = new Map<string, number>();
  /** Per name, the holders' bitset as last built: searches between two writes share it (a write drops it). */
  private readonly holderBits = new Map<string, Uint32Array>();

  constructor(names: Iterable<string>) {
    for (const name of names) {
      this.byName.set(name, []);
      this.counts.set(name, 0);
    }
  }

  /** Slots holding a value under the name. */
  countOf(name: string): number {
    return this.counts.get(name) ?? 0;
  }

  get(name: string, slot: number): V | undefined {
    return this.byName.get(name)?.[slot];
  }

  /** The slot's values by name; undefined when it holds none. */
  all(slot: number): ReadonlyMap<string, V> | undefined {
    let out: Map<string, V> | undefined;
    for (const [name, bySlot] of this.byName) {
      const value = bySlot[slot];
      if (value === undefined) continue;
      out ??= new Map();
      out.set(name, value);
    }
    return out;
  }

  /** The slot now holds these values (it held none: `clear` came first); names not kept are passed over. */
  set(slot: number, values: ReadonlyMap<string, V> | undefined, added: (name: string, value: V) => void): void {
    if (values === undefined) return;
    for (const [name, value] of values) {
      const bySlot = this.byName.get(name);
      if (bySlot === undefined) continue;
      if (bySlot[slot] === undefined) this.counts.set(name, (this.counts.get(name) as number) + 1);
      bySlot[slot] = value;
      this.holderBits.delete(name);
      added(name, value);
    }
  }

  /** The slot holds nothing any more. */
  clear(slot: number, removed: (name: string, value: V) => void): void {
    for (const [name, bySlot] of this.byName) {
      const value = bySlot[slot];
      if (value === undefined) continue;
      bySlot[slot] = undefined;
      this.counts.set(name, (this.counts.get(name) as number) - 1);
      this.holderBits.delete(name);
      removed(name, value);
    }
  }

  /** Every slot's value under a name, by slot (undefined where a slot holds none). */
  slotsOf(name: string): readonly (V | undefined)[] {
    return this.byName.get(name) ?? [];
  }

  /** The slots holding a value under the name, for `has_vector`; undefined for a name not kept. */
  holders(name: string, slotOf: (id: string) => number | undefined): VectorHolders | undefined {
    const bySlot = this.byName.get(name);
    if (bySlot === undefined) return undefined;
    const has = (slot: number): boolean => bySlot[slot] !== undefined;
    return {
      count: this.countOf(name),
      has,
      holds: (id) => {
        const slot = slotOf(id);
        return slot !== undefined && has(slot);
      },
      forEach: (visit) => {
        for (let slot = 0; slot < bySlot.length; slot++) if (bySlot[slot] !== undefined) visit(slot);
      },
      bits: () => {
        const cached = this.holderBits.get(name);
        if (cached !== undefined) return cached;
        const bits = new Uint32Array(bitsWords(bySlot.length));
        for (let slot = 0; slot < bySlot.length; slot++) if (bySlot[slot] !== undefined) setBit(bits, slot);
        this.holderBits.set(name, bits);
        return bits;
      },
    };
  }

  /** Slots allotted over all names (8 bytes each in the per-slot lists). */
  get allotted(): number {
    let slots = 0;
    for (const bySlot of this.byName.values()) slots += bySlot.length;
    return slots;
  }
}
