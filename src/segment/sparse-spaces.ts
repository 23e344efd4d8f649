/**
 * A segment's sparse vectors: per name, each slot's vector and the inverted index over them
 * (index/sparse/sparse-index.ts). They follow a point's slot as its payload does: added where the
 * segment adds a payload, removed where it removes one, so a point that moves to a new slot (a
 * graph write of a changed dense vector) takes its sparse vectors along.
 */
import { SparseIndex } from '../index/sparse/sparse-index.js';
import type { SparseVector } from '../index/sparse/sparse-vector.js';
import type { VectorHolders } from '../payload/filter-types.js';
import type { SparseVectorConfig } from './collection-config.js';
import { SlotValues } from './slot-values.js';

/** A point's sparse vectors by name (names the collection does not have are refused before this). */
export type SparseVectors = ReadonlyMap<string, SparseVector>;

/** What searches read of a segment's sparse vectors. */
export interface SparseSpacesReader {
  has(name: string): boolean;
  index(name: string): SparseIndex | undefined;
  vectorOf(name: string, slot: number): SparseVector | undefined;
  /** Every sparse vector the slot holds, by name; undefined when it holds none. */
  vectorsOf(slot: number): SparseVectors | undefined;
  /** The points holding a vector under the name (`has_vector`); undefined for a name the collection lacks. */
  holders(name: string, slotOf: (id: string) => number | undefined): VectorHolders | undefined;
  /** Points holding a vector under the name (an empty one too). */
  countOf(name: string): number;
}

export class SparseSpaces implements SparseSpacesReader {
  private readonly indexes = new Map<string, SparseIndex>();
  private readonly vectors: SlotValues<SparseVector>;

  constructor(configs: ReadonlyMap<string, SparseVectorConfig>) {
    for (const [name, config] of configs) this.indexes.set(name, new SparseIndex({ idf: config.modifier === 'idf' }));
    this.vectors = new SlotValues(configs.keys());
  }

  has(name: string): boolean {
    return this.indexes.has(name);
  }

  index(name: string): SparseIndex | undefined {
    return this.indexes.get(name);
  }

  vectorOf(name: string, slot: number): SparseVector | undefined {
    return this.vectors.get(name, slot);
  }

  vectorsOf(slot: number): SparseVectors | undefined {
    return this.vectors.all(slot);
  }

  holders(name: string, slotOf: (id: string) => number | undefined): VectorHolders | undefined {
    return this.vectors.holders(name, slotOf);
  }

  countOf(name: string): number {
    return this.vectors.countOf(name);
  }

  /** The slot now holds these vectors (it held none: `remove` came first). */
  add(slot: number, vectors: SparseVectors | undefined): void {
    this.vectors.set(slot, vectors, (name, vector) => this.indexes.get(name)?.add(slot, vector));
  }

  /** The slot's vectors leave the indexes. */
  remove(slot: number): void {
    this.vectors.clear(slot, (name, vector) => this.indexes.get(name)?.remove(slot, vector));
  }

  /**
   * The posting lists give up their spare capacity (it doubles as they grow: up to half of a
   * list's bytes). For a segment just loaded, whose lists are done growing for now; a later
   * append grows a list again, amortised as before.
   */
  trim(): void {
    for (const index of this.indexes.values()) index.trim();
  }

  /** Bytes of the indexes and the vectors they point at (the vectors' arrays counted once). */
  memoryBytes(): number {
    let bytes = this.vectors.allotted * 8;
    for (const [name, index] of this.indexes) {
      bytes += index.memoryBytes();
      for (const vector of this.vectors.slotsOf(name)) if (vector !== undefined) bytes += 8 * vector.indices.length + 64;
    }
    return bytes;
  }
}

/** A point's sparse vectors as the API shows them: `{name: {indices, values}}`. */
export type SparseVectorsJson = Record<string, { indices: number[]; values: number[] }>;

export function sparseVectorsJson(vectors: SparseVectors): SparseVectorsJson {
  // A name such as "__proto__" must be an own key, not the object's prototype.
  const out: SparseVectorsJson = Object.create(null);
  for (const [name, v] of vectors) out[name] = { indices: Array.from(v.indices), values: Array.from(v.values) };
  return { ...out };
}
