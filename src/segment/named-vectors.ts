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
import type { NamedVectorConfig } from './named-vector-config.js';
import { TopK } from '../core/top-k.js';
import { createKernel, type DistanceKernel } from '../kernels/distance-kernel.js';
import { SCRATCH_BATCH, VectorArena } from '../kernels/vector-arena.js';
import { SlotValues } from './slot-values.js';

export type { NamedVectorConfig } from './named-vector-config.js';

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

/**
 * A one-row name's vectors live in a vector arena by slot, scored by the distance kernels (SIMD):
 * an exact search reads them as the main vector's Flat index does. The per-slot list holds
 * IN_ARENA for the slots that have one (the others' arena rows are stale and skipped).
 */
interface KernelSpace {
  readonly arena: VectorArena;
  readonly kernel: DistanceKernel;
}

/** Marks a slot whose one-row vector is in its name's arena. */
const IN_ARENA: NamedVector = Object.freeze({ rows: 1, data: new Float32Array(0) });

export class NamedVectorSpaces implements NamedVectorsReader {
  private readonly configs: ReadonlyMap<string, NamedVectorConfig>;
  private readonly vectors: SlotValues<NamedVector>;
  private readonly totals = new Map<string, Totals>();
  private readonly kernels = new Map<string, KernelSpace>();

  constructor(configs: ReadonlyMap<string, NamedVectorConfig>) {
    this.configs = configs;
    this.vectors = new SlotValues(configs.keys());
    for (const [name, config] of configs) {
      this.totals.set(name, { floats: 0, maxRows: 1 });
      if (!config.multivector) {
        const arena = new VectorArena(config.size);
        this.kernels.set(name, { arena, kernel: createKernel(arena, config.distance) });
      }
    }
  }

  configOf(name: string): NamedVectorConfig | undefined {
    return this.configs.get(name);
  }

  vectorOf(name: string, slot: number): NamedVector | undefined {
    const held = this.vectors.get(name, slot);
    return held === IN_ARENA ? { rows: 1, data: (this.kernels.get(name) as KernelSpace).arena.read(slot) } : held;
  }

  vectorsOf(slot: number): NamedVectors | undefined {
    const held = this.vectors.all(slot);
    if (held === undefined) return undefined;
    const out = new Map<string, NamedVector>();
    for (const name of held.keys()) out.set(name, this.vectorOf(name, slot) as NamedVector);
    return out;
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
    if (vectors === undefined) return;
    const held = new Map<string, NamedVector>();
    for (const [name, vector] of vectors) {
      const space = this.kernels.get(name);
      if (space === undefined) {
        held.set(name, vector);
        continue;
      }
      space.arena.reserve(slot + 1);
      space.arena.write(slot, vector.data);
      held.set(name, IN_ARENA);
    }
    this.vectors.set(slot, held, (name, vector) => {
      const totals = this.totals.get(name) as Totals;
      totals.floats += this.floatsIn(name, vector);
      if (vector.rows > totals.maxRows) totals.maxRows = vector.rows;
    });
  }

  /** Floats of a held vector (one row of the name's size when it is in the arena). */
  private floatsIn(name: string, vector: NamedVector): number {
    return vector === IN_ARENA ? (this.configs.get(name) as NamedVectorConfig).size : vector.data.length;
  }

  remove(slot: number): void {
    this.vectors.clear(slot, (name, vector) => {
      (this.totals.get(name) as Totals).floats -= this.floatsIn(name, vector);
    });
  }

  score(name: string, query: NamedVector, slot: number): number | undefined {
    const config = this.configs.get(name);
    const vector = this.vectorOf(name, slot);
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
    const top = new TopK(k, idOf);
    if (config === undefined) return drained(top);
    const bySlot = this.vectors.slotsOf(name);
    const end = Math.min(slotCount, bySlot.length);
    const space = this.kernels.get(name);
    if (space !== undefined && query.rows === 1) {
      const { arena, kernel } = space;
      arena.setQuery(query.data);
      const scoresBase = arena.scoresByteOffset >> 2;
      for (let start = 0; start < end; start += SCRATCH_BATCH) {
        const n = Math.min(SCRATCH_BATCH, end - start);
        kernel.scoreRange(start, n);
        const scores = arena.floats;
        for (let i = 0; i < n; i++) {
          const slot = start + i;
          if (bySlot[slot] === undefined || (accept !== undefined && !accept(slot))) continue;
          top.offer(slot, scores[scoresBase + i] as number);
        }
      }
      return drained(top);
    }
    for (let slot = 0; slot < end; slot++) {
      const vector = bySlot[slot];
      if (vector === undefined || (accept !== undefined && !accept(slot))) continue;
      top.offer(slot, similarity(config, query, vector));
    }
    return drained(top);
  }

  /** Bytes of the vectors (floats and a fixed cost per vector), the per-slot lists and the kernels' arenas. */
  memoryBytes(): number {
    let bytes = this.vectors.allotted * 8;
    for (const { arena } of this.kernels.values()) bytes += arena.slotCapacity * arena.slotBytes;
    for (const [name, totals] of this.totals) {
      if (this.kernels.has(name)) continue;
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

/** The kept hits best first, as a named search answers them. */
function drained(top: TopK): { slots: Int32Array; scores: Float64Array } {
  const best = top.drainSorted();
  return { slots: best.slots, scores: best.sims };
}
