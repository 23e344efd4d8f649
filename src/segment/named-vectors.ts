/**
 * A segment's named dense vectors beyond its main one (Qdrant's named vectors, multi-vectors
 * among them): per name, each slot's vector as searched (rows of `size` floats, unit length under
 * Cosine; one row, or several for a multi-vector), scored exactly. Like the sparse vectors
 * (sparse-spaces.ts) they follow a point's slot as its payload does.
 *
 * Scores are similarities, higher better, as the kernels' (core/distance.ts): the dot product
 * (Cosine, Dot) or −‖q − v‖² (Euclid), turned into the wire score at the edge. A multi-vector is
 * scored by late interaction (Qdrant's `max_sim`): the sum over the query's rows of the best
 * similarity to any of the point's rows.
 */
import type { Distance } from '../core/distance.js';
import { SparseTopK } from '../index/sparse/sparse-top-k.js';
import { SlotValues } from './slot-values.js';

export interface NamedVectorConfig {
  readonly size: number;
  readonly distance: Distance;
  /** Several rows per point, scored by max_sim. */
  readonly multivector: boolean;
}

/** A named vector as stored and searched: `rows` rows of the name's size, row after row. */
export interface NamedVector {
  readonly rows: number;
  readonly data: Float32Array;
}

/** A point's named vectors by name. */
export type NamedVectors = ReadonlyMap<string, NamedVector>;

/** As the API shows them: a row, or the list of rows of a multi-vector. */
export type NamedVectorsJson = Record<string, number[] | number[][]>;

/** What searches read of the named vectors. */
export interface NamedVectorsReader {
  configOf(name: string): NamedVectorConfig | undefined;
  vectorOf(name: string, slot: number): NamedVector | undefined;
  vectorsOf(slot: number): NamedVectors | undefined;
  /** Floats held under the name (an exact search's reads). */
  floatsOf(name: string): number;
  /** At least the floats of any one point's vector under the name. */
  mostFloatsOf(name: string): number;
  /** The similarity of a query (rows of the name's size) to the slot's vector; undefined when the slot has none. */
  score(name: string, query: NamedVector, slot: number): number | undefined;
  /** The best `k` slots holding the vector that pass `accept`, by similarity, ties by `idOf` ascending: every slot scored. */
  search(
    name: string,
    query: NamedVector,
    k: number,
    slotCount: number,
    accept: ((slot: number) => boolean) | undefined,
    idOf: (slot: number) => string,
  ): { slots: Int32Array; scores: Float64Array };
}

/** Per name: the floats held (what an exact search reads) and the most rows one vector has held. */
interface Totals {
  floats: number;
  maxRows: number;
}

export class NamedVectorSpaces implements NamedVectorsReader {
  private readonly configs: ReadonlyMap<string, NamedVectorConfig>;
  private readonly vectors: SlotValues<NamedVector>;
  private readonly totals = new Map<string, Totals>();

  constructor(configs: ReadonlyMap<string, NamedVectorConfig>) {
    this.configs = configs;
    this.vectors = new SlotValues(configs.keys());
    for (const name of configs.keys()) this.totals.set(name, { floats: 0, maxRows: 1 });
  }

  configOf(name: string): NamedVectorConfig | undefined {
    return this.configs.get(name);
  }

  vectorOf(name: string, slot: number): NamedVector | undefined {
    return this.vectors.get(name, slot);
  }

  vectorsOf(slot: number): NamedVectors | undefined {
    return this.vectors.all(slot);
  }

  floatsOf(name: string): number {
    return this.totals.get(name)?.floats ?? 0;
  }

  mostFloatsOf(name: string): number {
    const totals = this.totals.get(name);
    return totals === undefined ? 0 : totals.maxRows * (this.configs.get(name) as NamedVectorConfig).size;
  }

  /** The slot now holds these vectors (it held none: `remove` came first). */
  add(slot: number, vectors: NamedVectors | undefined): void {
    this.vectors.set(slot, vectors, (name, vector) => {
      const totals = this.totals.get(name) as Totals;
      totals.floats += vector.data.length;
      if (vector.rows > totals.maxRows) totals.maxRows = vector.rows;
    });
  }

  remove(slot: number): void {
    this.vectors.clear(slot, (name, vector) => {
      (this.totals.get(name) as Totals).floats -= vector.data.length;
    });
  }

  score(name: string, query: NamedVector, slot: number): number | undefined {
    const config = this.configs.get(name);
    const vector = this.vectors.get(name, slot);
    if (config === undefined || vector === undefined) return undefined;
    return similarity(config, query, vector);
  }

  search(
    name: string,
    query: NamedVector,
    k: number,
    slotCount: number,
    accept: ((slot: number) => boolean) | undefined,
    idOf: (slot: number) => string,
  ): { slots: Int32Array; scores: Float64Array } {
    const config = this.configs.get(name);
    const top = new SparseTopK(k, idOf);
    if (config === undefined) return top.drain();
    const bySlot = this.vectors.slotsOf(name);
    const end = Math.min(slotCount, bySlot.length);
    for (let slot = 0; slot < end; slot++) {
      const vector = bySlot[slot];
      if (vector === undefined || (accept !== undefined && !accept(slot))) continue;
      top.offer(slot, similarity(config, query, vector));
    }
    return top.drain();
  }

  /** Bytes of the vectors (floats and a fixed cost per vector) and the per-slot lists. */
  memoryBytes(): number {
    let bytes = this.vectors.allotted * 8;
    for (const [name, totals] of this.totals) {
      bytes += totals.floats * 4;
      for (const vector of this.vectors.slotsOf(name)) if (vector !== undefined) bytes += 96;
    }
    return bytes;
  }
}

/** A query's similarity to a stored vector: of one row, or max_sim over rows. */
export function similarity(config: NamedVectorConfig, query: NamedVector, stored: NamedVector): number {
  const size = config.size;
  const euclid = config.distance === 'Euclid';
  let total = 0;
  for (let q = 0; q < query.rows; q++) {
    let best = Number.NEGATIVE_INFINITY;
    for (let r = 0; r < stored.rows; r++) {
      const s = euclid ? -squaredDistance(query.data, q * size, stored.data, r * size, size) : dot(query.data, q * size, stored.data, r * size, size);
      if (s > best) best = s;
    }
    total += best;
  }
  return total;
}

function dot(a: Float32Array, at: number, b: Float32Array, bt: number, size: number): number {
  let sum = 0;
  for (let i = 0; i < size; i++) sum += (a[at + i] as number) * (b[bt + i] as number);
  return sum;
}

function squaredDistance(a: Float32Array, at: number, b: Float32Array, bt: number, size: number): number {
  let sum = 0;
  for (let i = 0; i < size; i++) {
    const d = (a[at + i] as number) - (b[bt + i] as number);
    sum += d * d;
  }
  return sum;
}

/** A point's named vectors as the API shows them. */
export function namedVectorsJson(vectors: NamedVectors, configs: (name: string) => NamedVectorConfig | undefined): NamedVectorsJson {
  // A name such as "__proto__" must be an own key, not the object's prototype.
  const out: NamedVectorsJson = Object.create(null);
  for (const [name, v] of vectors) {
    const size = configs(name)?.size ?? v.data.length / Math.max(1, v.rows);
    if (configs(name)?.multivector === true) {
      const rows: number[][] = [];
      for (let r = 0; r < v.rows; r++) rows.push(Array.from(v.data.subarray(r * size, (r + 1) * size)));
      out[name] = rows;
    } else {
      out[name] = Array.from(v.data);
    }
  }
  return { ...out };
}
