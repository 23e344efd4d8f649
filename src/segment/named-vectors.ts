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
import type { VectorHolders } from '../payload/filter-types.js';
import type { NamedVectorConfig } from './named-vector-config.js';
import { TopK } from '../core/top-k.js';
import type { HnswIndex, HnswParams } from '../index/hnsw/hnsw-index.js';
import { NamedDenseSpace, type NamedHits } from './named-dense-space.js';
import type { GraphPart, GraphToEncode, SlotEntry } from './snapshot.js';
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
  ): NamedHits;
  /** HNSW m of the name's graph; undefined when it has none (a Flat collection, a multi-vector). */
  graphM(name: string): number | undefined;
  /** Points holding a vector under the name. */
  countOf(name: string): number;
  /** The points holding a vector under the name (`has_vector`); undefined for a name the collection lacks. */
  holders(name: string, slotOf: (id: string) => number | undefined): VectorHolders | undefined;
  /** A search through the name's graph (`graphM` defined): a beam of max(ef, k), among the slots that pass `accept`. */
  searchGraph(name: string, query: Float32Array, k: number, ef: number, accept: ((slot: number) => boolean) | undefined, twoHop: boolean): NamedHits;
}

/** Per name: the floats held (what an exact search reads) and the most rows one vector has held. */
interface Totals {
  floats: number;
  maxRows: number;
}

/**
 * A one-row name's vectors live in a space of their own (named-dense-space.ts: named slots, an
 * arena scored by the distance kernels, a graph in an HNSW collection); the per-slot list holds
 * IN_SPACE for the segment slots that have one.
 */
const IN_SPACE: NamedVector = Object.freeze({ rows: 1, data: new Float32Array(0) });

export class NamedVectorSpaces implements NamedVectorsReader {
  private readonly configs: ReadonlyMap<string, NamedVectorConfig>;
  private readonly vectors: SlotValues<NamedVector>;
  private readonly totals = new Map<string, Totals>();
  private readonly dense = new Map<string, NamedDenseSpace>();

  /**
   * @param graph the HNSW parameters of each one-row name's graph (an HNSW collection); without, every search is exact
   * @param idOf the point id of a segment slot (graph ties)
   */
  constructor(configs: ReadonlyMap<string, NamedVectorConfig>, graph?: HnswParams, idOf: (slot: number) => string = String) {
    this.configs = configs;
    this.vectors = new SlotValues(configs.keys());
    for (const [name, config] of configs) {
      this.totals.set(name, { floats: 0, maxRows: 1 });
      if (!config.multivector) this.dense.set(name, new NamedDenseSpace(config, graphOf(config, graph), idOf));
    }
  }

  configOf(name: string): NamedVectorConfig | undefined {
    return this.configs.get(name);
  }

  vectorOf(name: string, slot: number): NamedVector | undefined {
    const held = this.vectors.get(name, slot);
    return held === IN_SPACE ? { rows: 1, data: (this.dense.get(name) as NamedDenseSpace).read(slot) as Float32Array } : held;
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

  /**
   * Segment slot `slot` now holds these vectors (it held none: `remove` came first, or the point
   * was at `old`, whose named vectors move here). A one-row name's vector takes the named slot
   * `staged` gives it (staged and linked by the write: `stage`); without `staged` (a Flat
   * collection, a load) or a graph, a named slot now, which a load's graph links later (`addPending`). With
   * `staged`, a name it does not list keeps the node `old` holds (the same vector: `stage`
   * compared them).
   */
  add(slot: number, vectors: NamedVectors | undefined, old?: number, staged?: ReadonlyMap<string, number>): void {
    if (old !== undefined) this.removeValues(old);
    for (const [name, space] of this.dense) {
      const vector = vectors?.get(name);
      const kept = old === undefined ? -1 : space.slotOf(old);
      if (vector === undefined) {
        if (kept >= 0) space.unbind(old as number);
        continue;
      }
      // A name without a graph takes its named slot now: it has nothing to stage or link.
      const named = staged === undefined || space.graph === undefined ? space.stage(vector.data) : (staged.get(name) ?? kept);
      if (named < 0) throw new Error(`named vector "${name}" of slot ${slot}: neither staged nor kept`);
      if (kept >= 0 && kept !== named) space.unbind(old as number);
      space.bind(named, slot);
    }
    this.hold(slot, vectors);
  }

  /**
   * A stored point's named vectors at start-up, at segment slot `slot`: a one-row name's vector
   * goes to the named slot its graph's snapshot gave this (id, version), else it is staged, to be
   * linked once the records are read (`addPending`). Returns how many came from the snapshot.
   */
  load(slot: number, id: string, version: bigint, vectors: NamedVectors | undefined): number {
    if (vectors === undefined) return 0;
    let restored = 0;
    for (const [name, space] of this.dense) {
      const vector = vectors.get(name);
      if (vector === undefined) continue;
      const named = space.takeRestored(id, version, vector.data);
      if (named !== undefined) restored++;
      space.bind(named ?? space.stage(vector.data), slot);
    }
    this.hold(slot, vectors);
    return restored;
  }

  /** The per-slot list and the totals take the slot's vectors (a one-row name's as IN_SPACE). */
  private hold(slot: number, vectors: NamedVectors | undefined): void {
    if (vectors === undefined) return;
    const held = new Map<string, NamedVector>();
    for (const [name, vector] of vectors) held.set(name, this.dense.has(name) ? IN_SPACE : vector);
    this.vectors.set(slot, held, (name, vector) => {
      const totals = this.totals.get(name) as Totals;
      totals.floats += this.floatsIn(name, vector);
      if (vector.rows > totals.maxRows) totals.maxRows = vector.rows;
    });
  }

  /** Floats of a held vector (one row of the name's size when it is in its space). */
  private floatsIn(name: string, vector: NamedVector): number {
    return vector === IN_SPACE ? (this.configs.get(name) as NamedVectorConfig).size : vector.data.length;
  }

  /** The slot holds no named vector any more (a one-row name's graph node becomes a tombstone). */
  remove(slot: number): void {
    this.removeValues(slot);
    for (const space of this.dense.values()) space.unbind(slot);
  }

  /** The per-slot list and the totals forget the slot's vectors (their spaces are the caller's). */
  private removeValues(slot: number): void {
    this.vectors.clear(slot, (name, vector) => {
      (this.totals.get(name) as Totals).floats -= this.floatsIn(name, vector);
    });
  }

  // ---- graph writes in steps (named-dense-space.ts) ---------------------------------------------

  /**
   * Stage 1 of a write of the point now at `old` (undefined: a new point): each one-row vector of
   * a graph name that `old` does not hold already is written into a fresh named slot. Returns the
   * named slots by name, for `add` once the write is published; undefined when there is none.
   */
  stage(old: number | undefined, vectors: NamedVectors | undefined): Map<string, number> | undefined {
    if (vectors === undefined) return undefined;
    let out: Map<string, number> | undefined;
    for (const [name, vector] of vectors) {
      const space = this.dense.get(name);
      if (space?.graph === undefined) continue;
      const kept = old === undefined ? -1 : space.slotOf(old);
      if (kept >= 0 && space.holds(kept, vector.data)) continue;
      out ??= new Map();
      out.set(name, space.stage(vector.data));
    }
    return out;
  }

  /** The staged vectors (and those a load placed) become pending graph nodes, to link. */
  addPending(): void {
    for (const space of this.dense.values()) space.addPending();
  }

  /** Pending nodes not linked yet, over every name. */
  get linksLeft(): number {
    let left = 0;
    for (const space of this.dense.values()) left += space.linksLeft;
    return left;
  }

  /** What the pending nodes cost to link, over every name (m × ef_construction × size each). */
  get linkWorkLeft(): number {
    let work = 0;
    for (const space of this.dense.values()) work += space.linksLeft * space.linkWork;
    return work;
  }

  /**
   * Links pending nodes worth up to `work` (m × ef_construction × size each, as the insert-work
   * bound counts it), at least one node; returns how many it linked. Callers size their steps in
   * the main graph's nodes: a named vector's node may cost far more (a 65,536-d name beside a 4-d
   * main vector), and counted as one it would stretch a step.
   */
  link(work: number): number {
    let linked = 0;
    let left = work;
    for (const space of this.dense.values()) {
      if (space.linksLeft === 0) continue;
      const nodes = Math.max(linked === 0 ? 1 : 0, Math.floor(left / space.linkWork));
      if (nodes === 0) break;
      const now = space.link(nodes);
      linked += now;
      left -= now * space.linkWork;
      if (left <= 0) break;
    }
    return linked;
  }

  /** Every pending node becomes searchable. */
  publish(): void {
    for (const space of this.dense.values()) space.publish();
  }

  // ---- graph snapshots (segment/snapshot.ts) ----------------------------------------------------

  /** Each graph and the point of each of its named slots, by name, for the collection's snapshot. */
  snapshotParts(entryOf: (slot: number) => SlotEntry | undefined): Map<string, GraphToEncode> {
    const out = new Map<string, GraphToEncode>();
    for (const [name, space] of this.dense) {
      const part = space.snapshotPart(entryOf);
      if (part !== undefined) out.set(name, part);
    }
    return out;
  }

  /**
   * Takes over a snapshot's named graphs (names it lacks are built from the records). Returns why
   * one cannot be used, every graph then forgotten (all are rebuilt), or undefined.
   */
  restore(parts: ReadonlyMap<string, GraphPart>): string | undefined {
    for (const [name, space] of this.dense) {
      const part = parts.get(name);
      if (part === undefined) continue;
      const problem = space.restore(part);
      if (problem === undefined) continue;
      this.forgetRestored();
      return `named vector ${JSON.stringify(name)}: ${problem}`;
    }
    return undefined;
  }

  /** Forgets every restored graph (the snapshot is not used). */
  forgetRestored(): void {
    for (const space of this.dense.values()) space.forgetRestored();
  }

  /** Every point record is read: each restored graph drops the nodes no point claimed. */
  endRestore(): void {
    for (const space of this.dense.values()) space.endRestore();
  }

  /** Housekeeping: each graph compacted once its tombstones pass their share. */
  maintain(): void {
    for (const space of this.dense.values()) space.maintain();
  }

  /** Nodes of the graphs, tombstones included. */
  graphNodes(): number {
    let nodes = 0;
    for (const space of this.dense.values()) nodes += space.graph?.graph.nodeCount ?? 0;
    return nodes;
  }

  /** Structural problems of the graphs (empty when sound), each named. */
  graphProblems(check: (graph: HnswIndex, isLive: (named: number) => boolean) => string[]): string[] {
    const problems: string[] = [];
    for (const [name, space] of this.dense) {
      if (space.graph === undefined) continue;
      for (const problem of check(space.graph, (named) => space.isLive(named))) problems.push(`named vector "${name}": ${problem}`);
    }
    return problems;
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
  ): NamedHits {
    const config = this.configs.get(name);
    const top = new TopK(k, idOf);
    if (config === undefined) return drained(top, 0);
    const space = this.dense.get(name);
    // A one-row name's query is one row (named-input.ts).
    if (space !== undefined) return space.scan(query.data, k, accept);
    const bySlot = this.vectors.slotsOf(name);
    const end = Math.min(slotCount, bySlot.length);
    let scored = 0;
    for (let slot = 0; slot < end; slot++) {
      const vector = bySlot[slot];
      if (vector === undefined || (accept !== undefined && !accept(slot))) continue;
      top.offer(slot, similarity(config, query, vector));
      scored++;
    }
    return drained(top, scored);
  }

  graphM(name: string): number | undefined {
    return this.dense.get(name)?.graph?.params.m;
  }

  countOf(name: string): number {
    const space = this.dense.get(name);
    if (space !== undefined) return space.liveCount;
    return this.vectors.countOf(name);
  }

  holders(name: string, slotOf: (id: string) => number | undefined): VectorHolders | undefined {
    return this.vectors.holders(name, slotOf);
  }

  searchGraph(name: string, query: Float32Array, k: number, ef: number, accept: ((slot: number) => boolean) | undefined, twoHop: boolean): NamedHits {
    const space = this.dense.get(name);
    if (space === undefined) throw new Error(`named vector "${name}" has no graph`);
    return space.search(query, k, ef, accept, twoHop);
  }

  /** Bytes of the vectors (floats and a fixed cost per vector), the per-slot lists, the one-row names' spaces (arenas, slot maps, graphs). */
  memoryBytes(): number {
    let bytes = this.vectors.allotted * 8;
    for (const space of this.dense.values()) bytes += space.memoryBytes();
    for (const [name, totals] of this.totals) {
      if (this.dense.has(name)) continue;
      bytes += totals.floats * 4;
      for (const vector of this.vectors.slotsOf(name)) if (vector !== undefined) bytes += 96;
    }
    return bytes;
  }
}

/** A name's graph parameters: the collection's, with its own m and ef_construction; undefined for m 0 or without a collection graph. */
function graphOf(config: NamedVectorConfig, collection: HnswParams | undefined): HnswParams | undefined {
  if (collection === undefined || config.m === 0) return undefined;
  return { ...collection, m: config.m ?? collection.m, efConstruction: config.efConstruction ?? collection.efConstruction };
}

/** A query's similarity to a stored vector: of one row, or max_sim over rows. */
export function similarity(config: NamedVectorConfig, query: NamedVector, stored: NamedVector): number {
  return similarityOfRows(config, query, stored, 0, query.rows, 0);
}

/**
 * max_sim's part for the query's rows `from` to `to` (exclusive), added to `total` row by row: a
 * similarity scored in consecutive parts, each given the one before's total, sums in the same
 * order as one scored whole, so it is the same number (search/example-search.ts pauses between parts).
 */
export function similarityOfRows(config: NamedVectorConfig, query: NamedVector, stored: NamedVector, from: number, to: number, total: number): number {
  const size = config.size;
  const euclid = config.distance === 'Euclid';
  let sum = total;
  for (let q = from; q < to; q++) {
    let best = Number.NEGATIVE_INFINITY;
    for (let r = 0; r < stored.rows; r++) {
      const s = euclid ? -squaredDistance(query.data, q * size, stored.data, r * size, size) : dot(query.data, q * size, stored.data, r * size, size);
      if (s > best) best = s;
    }
    sum += best;
  }
  return sum;
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
function drained(top: TopK, scored: number): NamedHits {
  const best = top.drainSorted();
  return { slots: best.slots, scores: best.sims, scored };
}
