/**
 * One named dense vector of one row (named-vectors.ts keeps which points hold one): its vectors
 * in a slot space of their own ("named slots"), mapped both ways to the points' segment slots,
 * scored by the distance kernels, and, in an HNSW collection, searched through an HNSW index of
 * its own (the collection's m and ef_construction).
 *
 * Why a slot space of its own: a point re-upserted with the same main vector keeps its segment
 * slot while its named vector may change, and a graph node's vector cannot change in place, nor
 * can a node be added again at a slot that is still a tombstone. So each stored named vector
 * takes a named slot; a changed one takes a new slot and the old node becomes a tombstone.
 *
 * Without a graph (a Flat collection), a named slot is free again as soon as its vector leaves.
 * With one, a vector that leaves becomes a tombstone, walked through and returned by no search,
 * and its slot is free again once compaction drops it (past COMPACTION_SHARE of the nodes, in the
 * segment's housekeeping). Tombstones are not repaired one by one, as the main graph's are: the
 * rooted tree keeps every live node reachable through them (index/hnsw/graph-mender.ts), and
 * compaction re-selects the links around them, as Qdrant's optimizer rebuilds past deletions.
 *
 * Writes in steps, as the segment's own (segment.ts, "writes in steps"): `stage` writes a vector
 * into a fresh named slot; `addPending` adds the staged slots as graph nodes, linked and walked but
 * returned by no search; `link` links some; `publish` makes them searchable; `bind` and `unbind`
 * map named slots to segment slots as the write is published.
 */
import { SeededRng } from '../core/rng.js';
import { ShardedMap } from '../core/sharded-map.js';
import { FlatIndex } from '../index/flat/flat-index.js';
import { decodeGraphInto, encodeGraph } from '../index/hnsw/graph-codec.js';
import { HnswGraph } from '../index/hnsw/hnsw-graph.js';
import type { HnswParams } from '../index/hnsw/hnsw-index.js';
import { HnswIndex } from '../index/hnsw/hnsw-index.js';
import type { SearchHits, SlotTable } from '../index/vector-index.js';
import { createKernel, type DistanceKernel } from '../kernels/distance-kernel.js';
import { MipsGraphKernel } from '../kernels/mips-graph-kernel.js';
import { VectorArena } from '../kernels/vector-arena.js';
import type { NamedVectorConfig } from './named-vector-config.js';
import type { GraphPart, GraphToEncode, SlotEntry } from './snapshot.js';

/** Hits as the named searches answer them: segment slots, best first, with their similarities. */
export interface NamedHits {
  readonly slots: Int32Array;
  readonly scores: Float64Array;
  /** Vectors scored to find them (explain's `scored`). */
  readonly scored: number;
}

export class NamedDenseSpace implements SlotTable {
  readonly arena: VectorArena;
  private readonly kernel: DistanceKernel;
  /** Builds a Dot graph in a space where inner product is a distance (kernels/mips-graph-kernel.ts). */
  private readonly mips: MipsGraphKernel | undefined;
  /** Exact scans over named slots (the live ones: those bound to a point). */
  private readonly flat: FlatIndex;
  /** The name's HNSW index over named slots; undefined in a Flat collection. */
  readonly graph: HnswIndex | undefined;
  /** The segment slot each named slot is bound to; -1 where none (free, staged, or a tombstone). */
  private segmentOf: Int32Array<ArrayBuffer> = new Int32Array(0);
  /** The named slot each segment slot holds; -1 where none. */
  private namedOf: Int32Array<ArrayBuffer> = new Int32Array(0);
  /** One past the highest named slot ever taken. */
  private next = 0;
  private readonly free: number[] = [];
  private bound = 0;
  /** Staged slots not yet added to the graph (`addPending`). */
  private fresh: number[] = [];
  /** Pending nodes not linked yet, in order. */
  private toLink: number[] = [];
  /** Pending nodes to publish. */
  private pending: number[] = [];
  /** While loading from a snapshot: the named slot of each (id, version) its graph holds. */
  private restored: ShardedMap<{ readonly slot: number; readonly version: bigint }> | undefined;

  constructor(
    readonly config: NamedVectorConfig,
    graph: HnswParams | undefined,
    private readonly idOfSegmentSlot: (slot: number) => string,
  ) {
    this.arena = new VectorArena(config.size);
    this.kernel = createKernel(this.arena, config.distance);
    this.mips = graph !== undefined && config.distance === 'Dot' ? new MipsGraphKernel(this.arena, this.kernel) : undefined;
    this.flat = new FlatIndex(this.arena, this.kernel, this);
    this.graph = graph === undefined ? undefined : new HnswIndex(this.arena, this.kernel, this.mips ?? this.kernel, this, graph);
  }

  // ---- SlotTable: the graph's view of named slots ----------------------------------------------

  get slotCount(): number {
    return this.next;
  }

  get liveCount(): number {
    return this.bound;
  }

  isLive(named: number): boolean {
    return (this.segmentOf[named] ?? -1) >= 0;
  }

  idOf(named: number): string {
    return this.idOfSegmentSlot(this.segmentOf[named] as number);
  }

  // ---- reading ----------------------------------------------------------------------------------

  /** The named slot a segment slot holds, or -1. */
  slotOf(segmentSlot: number): number {
    return this.namedOf[segmentSlot] ?? -1;
  }

  /** The vector a segment slot holds (a copy); undefined when it holds none. */
  read(segmentSlot: number): Float32Array | undefined {
    const named = this.slotOf(segmentSlot);
    return named < 0 ? undefined : this.arena.read(named);
  }

  /** Whether named slot `named` holds exactly `data`. */
  holds(named: number, data: Float32Array): boolean {
    const floats = this.arena.floats;
    const at = this.arena.offsetOf(named);
    for (let i = 0; i < data.length; i++) if (floats[at + i] !== data[i]) return false;
    return true;
  }

  /**
   * The best `k` segment slots holding a vector that pass `accept`, every vector scored (the
   * name's Flat index over named slots), ties by id ascending.
   */
  scan(query: Float32Array, k: number, accept: ((slot: number) => boolean) | undefined): NamedHits {
    const segmentOf = this.segmentOf;
    const stats = { scored: 0 };
    const hits = this.flat.search({ query, k, accept: accept === undefined ? undefined : (named) => accept(segmentOf[named] as number), stats });
    return this.toSegmentSlots(hits, stats.scored);
  }

  /** A graph search (HnswIndex.search, a beam of max(ef, k)) among the segment slots that pass `accept`. */
  search(query: Float32Array, k: number, ef: number, accept: ((slot: number) => boolean) | undefined, twoHop: boolean): NamedHits {
    const graph = this.graph;
    if (graph === undefined) throw new Error('the named vector has no graph');
    const segmentOf = this.segmentOf;
    const stats = { scored: 0 };
    const hits = graph.search({
      query,
      k,
      ef,
      accept: accept === undefined ? undefined : (named) => (segmentOf[named] as number) >= 0 && accept(segmentOf[named] as number),
      twoHop,
      stats,
    });
    return this.toSegmentSlots(hits, stats.scored);
  }

  /** Hits over named slots as hits over the segment slots they are bound to. */
  private toSegmentSlots(hits: SearchHits, scored: number): NamedHits {
    const slots = new Int32Array(hits.slots.length);
    for (let i = 0; i < slots.length; i++) slots[i] = this.segmentOf[hits.slots[i] as number] as number;
    return { slots, scores: hits.sims, scored };
  }

  /** Bytes of the vectors, the slot maps and the graph. */
  memoryBytes(): number {
    return this.arena.slotCapacity * this.arena.slotBytes + (this.segmentOf.length + this.namedOf.length) * 4 + (this.graph?.graph.allocatedBytes ?? 0);
  }

  // ---- writing ----------------------------------------------------------------------------------

  /** Writes `data` into a free named slot, bound to no point yet; with a graph, it waits for `addPending`. */
  stage(data: Float32Array): number {
    const named = this.free.pop() ?? this.next++;
    if (named >= this.segmentOf.length) this.segmentOf = grown(this.segmentOf, named + 1);
    this.segmentOf[named] = -1;
    this.arena.reserve(named + 1);
    this.arena.write(named, data);
    this.mips?.noteVector(named);
    if (this.graph !== undefined) this.fresh.push(named);
    return named;
  }

  /** Adds the staged slots to the graph as pending nodes (linked and walked, returned by no search). */
  addPending(): void {
    const graph = this.graph;
    if (graph === undefined || this.fresh.length === 0) return;
    for (const named of graph.addPending(this.fresh)) this.toLink.push(named);
    for (const named of this.fresh) this.pending.push(named);
    this.fresh = [];
  }

  /** Pending nodes not linked yet. */
  get linksLeft(): number {
    return this.toLink.length;
  }

  /** What linking one node costs, in the units of the insert-work bound: m × ef_construction × size (0 without a graph). */
  get linkWork(): number {
    const graph = this.graph;
    return graph === undefined ? 0 : graph.params.m * graph.params.efConstruction * this.config.size;
  }

  /** Links up to `count` pending nodes; returns how many it linked. */
  link(count: number): number {
    const now = this.toLink.splice(0, count);
    if (now.length > 0) (this.graph as HnswIndex).linkPending(now);
    return now.length;
  }

  /** The pending nodes become searchable (every one linked). */
  publish(): void {
    if (this.pending.length === 0) return;
    (this.graph as HnswIndex).publish(this.pending);
    this.pending = [];
  }

  /** Named slot `named` now holds segment slot `slot`'s vector; a slot it was bound to before holds none. */
  bind(named: number, slot: number): void {
    if (slot >= this.namedOf.length) this.namedOf = grown(this.namedOf, slot + 1);
    const before = this.segmentOf[named] as number;
    if (before >= 0) this.namedOf[before] = -1;
    else this.bound++;
    this.segmentOf[named] = slot;
    this.namedOf[slot] = named;
  }

  /** Segment slot `slot` holds no vector any more: its node becomes a tombstone (its slot free, without a graph). */
  unbind(slot: number): void {
    const named = this.slotOf(slot);
    if (named < 0) return;
    this.namedOf[slot] = -1;
    this.segmentOf[named] = -1;
    this.bound--;
    if (this.graph === undefined) this.free.push(named);
    else this.graph.hide(named);
  }

  // ---- graph snapshots (segment/snapshot.ts) ----------------------------------------------------

  /** The graph and the point of each named slot, for the collection's snapshot; undefined without a graph. */
  snapshotPart(entryOf: (slot: number) => SlotEntry | undefined): GraphToEncode | undefined {
    const graph = this.graph;
    if (graph === undefined) return undefined;
    const segmentOf = this.segmentOf;
    return {
      graph: encodeGraph(graph),
      slotCount: graph.graph.capacity,
      entryAt: (named) => {
        const slot = segmentOf[named] ?? -1;
        return slot < 0 ? undefined : entryOf(slot);
      },
    };
  }

  /**
   * Takes over a snapshot's graph, before any vector is placed: its nodes wait for the points
   * that claim them (`takeRestored`), and new vectors take slots past its capacity until
   * `endRestore`. Returns why it cannot be used (the graph untouched), or undefined.
   */
  restore(part: GraphPart): string | undefined {
    const graph = this.graph;
    if (graph === undefined) return undefined;
    const problem = decodeGraphInto(graph, part.graph);
    if (problem !== undefined) return problem;
    const restored = new ShardedMap<{ slot: number; version: bigint }>();
    for (let named = 0; named < part.slots.length; named++) {
      const entry = part.slots[named];
      if (entry !== undefined && graph.graph.isLive(named)) restored.set(entry.id, { slot: named, version: entry.version });
    }
    this.restored = restored;
    // Scans read every named slot below `next`: the arena must hold them all.
    this.next = graph.graph.capacity;
    this.arena.reserve(this.next);
    return undefined;
  }

  /** Forgets a restored graph (another part of the snapshot was unusable): the graph is rebuilt. */
  forgetRestored(): void {
    const graph = this.graph;
    if (graph === undefined || this.restored === undefined) return;
    graph.restore(new HnswGraph(graph.params.m), new SeededRng(graph.params.seed));
    this.restored = undefined;
    this.next = 0;
  }

  /**
   * A stored point's vector at start-up: written at the named slot the snapshot's graph gave
   * exactly this (id, version), which is returned; undefined when it gave none (stage it).
   */
  takeRestored(id: string, version: bigint, data: Float32Array): number | undefined {
    const entry = this.restored?.get(id);
    if (entry === undefined || entry.version !== version || this.isLive(entry.slot)) return undefined;
    if (entry.slot >= this.segmentOf.length) this.segmentOf = grown(this.segmentOf, entry.slot + 1);
    this.arena.reserve(entry.slot + 1);
    this.arena.write(entry.slot, data);
    this.mips?.noteVector(entry.slot);
    return entry.slot;
  }

  /**
   * Every point record is read: the restored graph's nodes no point claimed are dropped
   * (tombstoned and compacted away), and every named slot neither in the graph nor bound is free.
   */
  endRestore(): void {
    const graph = this.graph;
    if (graph === undefined || this.restored === undefined) return;
    this.restored = undefined;
    const g = graph.graph;
    for (let named = 0; named < g.capacity; named++) if (g.isLive(named) && !this.isLive(named)) graph.hide(named);
    if (g.deletedCount > 0) graph.compact();
    this.free.length = 0;
    for (let named = this.next - 1; named >= 0; named--) if (!graph.graph.has(named) && !this.isLive(named)) this.free.push(named);
  }

  /** Housekeeping: the graph compacted once its tombstones pass COMPACTION_SHARE, their slots free again. */
  maintain(): void {
    const graph = this.graph;
    if (graph?.needsCompaction() === true) for (const named of graph.compact()) this.free.push(named);
  }
}

/** `array` grown to at least `length` (doubling), the new entries -1. */
function grown(array: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(Math.max(length, array.length * 2, 64)).fill(-1);
  out.set(array);
  return out;
}
