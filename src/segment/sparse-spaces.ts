/**
 * A segment's sparse vectors: per name, each slot's vector and the inverted index over them
 * (index/sparse/sparse-index.ts). They follow a point's slot as its payload does: added where the
 * segment adds a payload, removed where it removes one, so a point that moves to a new slot (a
 * graph write of a changed dense vector) takes its sparse vectors along.
 */
import { SparseIndex } from '../index/sparse/sparse-index.js';
import type { SparseVector } from '../index/sparse/sparse-vector.js';
import type { SparseVectorConfig } from './collection-config.js';

/** A point's sparse vectors by name (names the collection does not have are refused before this). */
export type SparseVectors = ReadonlyMap<string, SparseVector>;

/** One sparse vector name's slots and index. */
interface SparseSpace {
  readonly index: SparseIndex;
  /** Each slot's vector, undefined where the point has none under this name. */
  readonly bySlot: Array<SparseVector | undefined>;
}

/** What searches read of a segment's sparse vectors. */
export interface SparseSpacesReader {
  has(name: string): boolean;
  index(name: string): SparseIndex | undefined;
  vectorOf(name: string, slot: number): SparseVector | undefined;
  /** Every sparse vector the slot holds, by name; undefined when it holds none. */
  vectorsOf(slot: number): SparseVectors | undefined;
}

export class SparseSpaces implements SparseSpacesReader {
  private readonly spaces = new Map<string, SparseSpace>();

  constructor(configs: ReadonlyMap<string, SparseVectorConfig>) {
    for (const [name, config] of configs) this.spaces.set(name, { index: new SparseIndex({ idf: config.modifier === 'idf' }), bySlot: [] });
  }

  get empty(): boolean {
    return this.spaces.size === 0;
  }

  has(name: string): boolean {
    return this.spaces.has(name);
  }

  index(name: string): SparseIndex | undefined {
    return this.spaces.get(name)?.index;
  }

  vectorOf(name: string, slot: number): SparseVector | undefined {
    return this.spaces.get(name)?.bySlot[slot];
  }

  vectorsOf(slot: number): SparseVectors | undefined {
    let out: Map<string, SparseVector> | undefined;
    for (const [name, space] of this.spaces) {
      const vector = space.bySlot[slot];
      if (vector === undefined) continue;
      out ??= new Map();
      out.set(name, vector);
    }
    return out;
  }

  /** The slot now holds these vectors (it held none: `remove` came first). */
  add(slot: number, vectors: SparseVectors | undefined): void {
    if (vectors === undefined) return;
    for (const [name, vector] of vectors) {
      const space = this.spaces.get(name);
      if (space === undefined) continue;
      space.bySlot[slot] = vector;
      space.index.add(slot, vector);
    }
  }

  /** The slot's vectors leave the indexes. */
  remove(slot: number): void {
    for (const space of this.spaces.values()) {
      const vector = space.bySlot[slot];
      if (vector === undefined) continue;
      space.index.remove(slot, vector);
      space.bySlot[slot] = undefined;
    }
  }

  /** Bytes of the indexes and the vectors they point at (the vectors' arrays counted once). */
  memoryBytes(): number {
    let bytes = 0;
    for (const space of this.spaces.values()) {
      bytes += space.index.memoryBytes() + space.bySlot.length * 8;
      for (const vector of space.bySlot) if (vector !== undefined) bytes += 8 * vector.indices.length + 64;
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
