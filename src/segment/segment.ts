/**
 * A collection's in-memory state, and its one owner: the point table (id ↔ slot, versions,
 * payloads), the vector arena and its kernels, the payload indexes and the vector indexes. Start-up,
 * writes and searches all go through its methods; its parts are private, and searches get them only
 * through the read-only `SegmentReader`. Everything here is synchronous; a write is applied in
 * parts (ranges of a batch, steps of a graph write: see "writes in steps"), which collection.ts
 * runs in slices, keeping searches from seeing a batch partly applied.
 */

import { FlatIndex } from '../index/flat/flat-index.js';
import { checkIntegrity } from '../index/hnsw/check-integrity.js';
import { decodeGraphInto, encodeGraph } from '../index/hnsw/graph-codec.js';
import type { SharedGraphArrays } from '../index/hnsw/hnsw-graph.js';
import { HnswIndex, type HnswParams } from '../index/hnsw/hnsw-index.js';
import type { InsertJob } from '../index/hnsw/insert-job.js';
import { VisitedSet } from '../index/hnsw/visited-set.js';
import type { SearchHits, SearchOptions, SearchStats } from '../index/vector-index.js';
import { createKernel, createSq8Kernel, type DistanceKernel } from '../kernels/distance-kernel.js';
import { MipsGraphKernel, type MipsNorms } from '../kernels/mips-graph-kernel.js';
import type { SlotArena } from '../kernels/slot-arena.js';
import { Sq8Arena } from '../kernels/sq8-arena.js';
import { VectorArena } from '../kernels/vector-arena.js';
import { PayloadIndex, type PayloadIndexReader } from '../payload/payload-index.js';
import type { TextIndexes } from '../payload/text-index.js';
import type { VectorHolders } from '../payload/filter-types.js';
import type { SharedPayloadArrays } from '../payload/shared-payloads.js';
import type { Steps } from '../core/steps.js';
import type { StoredVector } from '../storage/point-record.js';
import { type CollectionConfig, guessedMsPerInsert } from './collection-config.js';
import { ShardedMap } from '../core/sharded-map.js';
import { type Payload, PointTable, type PointTableReader } from './point-table.js';
import { SlotMemo } from './slot-memo.js';
import { SparseSpaces, type SparseSpacesReader, type SparseVectors } from './sparse-spaces.js';
import { NamedVectorSpaces, type NamedVectors, type NamedVectorsReader } from './named-vectors.js';
import { decodeSnapshotSteps, encodeSnapshot, type SlotEntry } from './snapshot.js';

export interface MemoryStats {
  readonly points: number;
  /** Bytes of one stored vector in the arena: 4·d (f32) or d + 16 (sq8 codes and parameters). */
  readonly vectorBytesPerPoint: number;
  readonly vectorBytesAllocated: number;
  readonly graphBytesAllocated: number;
  /** Graph nodes, tombstones included. */
  readonly graphNodes: number;
  /** The payload records search threads read (0 until a filter predicate first needs them on a thread). */
  readonly sharedPayloadBytesAllocated: number;
  /** Sparse vectors and their inverted indexes (an estimate: the arrays' bytes plus a fixed cost per vector). */
  readonly sparseBytes: number;
  /** Named dense vectors beside the main one (an estimate: their floats plus a fixed cost per vector, their graphs). */
  readonly namedVectorBytes: number;
  /** Nodes of the named vectors' graphs, tombstones included. */
  readonly namedGraphNodes: number;
}

/** A validated point, its vector as the record stores it (float32, normalised under Cosine, or sq8 codes). */
export interface SegmentPoint {
  readonly id: string;
  readonly version: bigint;
  readonly payload: Payload;
  readonly vector: StoredVector;
  /** Its sparse vectors by name, when the collection has sparse vectors and the point some. */
  readonly sparse?: SparseVectors | undefined;
  /** Its named dense vectors beside the main one, as searched, when it has some. */
  readonly named?: NamedVectors | undefined;
}

/** What searches read of a segment, without the means to change it. */
export interface SegmentReader {
  readonly table: PointTableReader;
  readonly payloadIndex: PayloadIndexReader;
  /** The sparse vectors and their inverted indexes. */
  readonly sparse: SparseSpacesReader;
  /** The named dense vectors beside the main one. */
  readonly named: NamedVectorsReader;
  /** HNSW m, or undefined when the collection has no graph. */
  readonly graphM: number | undefined;
  /**
   * The points holding a vector under the name (`has_vector`): every point for the main vector,
   * none for a name the collection lacks.
   */
  vectorHolders(name: string): VectorHolders | 'all' | 'none';
  /** Dedupes candidate slots during one search or delete-by-filter (scratch). */
  readonly candidateMarks: VisitedSet;
  /** Filter answers per slot during one search (scratch). */
  readonly filterMemo: SlotMemo;
  searchGraph(options: SearchOptions): SearchHits;
  searchFlat(options: SearchOptions): SearchHits;
  /** Scores the given slots exactly. */
  scoreSlots(query: Float32Array, slots: ArrayLike<number>, k: number, stats?: SearchStats): SearchHits;
  /** Scores each of `slots` into `out`, unranked (MMR's pairwise similarities). */
  scoreEach(query: Float32Array, slots: ArrayLike<number>, out: Float64Array, stats?: SearchStats): void;
  /** The vector a slot is searched as. */
  readVector(slot: number): Float32Array;
}

/** What a search thread attaches to: the segment's shared memory (threads/search-threads.ts). */
export interface SharedSegmentState {
  readonly memory: WebAssembly.Memory;
  readonly graph: SharedGraphArrays | null;
  readonly live: Uint8Array<ArrayBufferLike>;
  /** The payload records, once shared (`Segment.sharePayloads`); threads run filter predicates on them. */
  readonly payloads: SharedPayloadArrays | null;
}

/**
 * What another thread needs besides the shared memory to read and score stored vectors as the
 * owner does (inserting alongside it, calibrating): the norms a Dot graph is built with, the
 * maxes of sq8 codes.
 */
export interface StoredVectorContext {
  readonly mips: MipsNorms | null;
  readonly sq8Maxes: Float32Array<ArrayBufferLike> | null;
}

/** Threads that can insert into this segment's graph alongside its owner (threads/search-threads.ts). */
export interface SegmentInserters {
  /** Sends the job and its context to the threads that will help. */
  join(job: InsertJob, context: StoredVectorContext): void;
}

/** A graph collection's write applied in steps (Segment "writes in steps"); the steps consume it. */
export interface StagedWrite {
  readonly points: readonly SegmentPoint[];
  /** Per point staged so far: the slot of its new node, or undefined when it keeps its node (same vector). */
  readonly slots: Array<number | undefined>;
  /** Every new node's slot. */
  readonly fresh: number[];
  /** New nodes not linked yet, in order (set once every point is staged). */
  toLink: number[];
  /** Per point staged so far: the named slots of its new named vectors' graph nodes (named-vectors.ts `stage`). */
  readonly named: Array<Map<string, number> | undefined>;
  /** Tombstones whose neighbours are not repaired yet. */
  readonly toRepair: number[];
  /** The tombstone being repaired, neighbour by neighbour (`repairStaged`). */
  repairing?: Iterator<void>;
  /** Points published so far (`publishStaged`). */
  published: number;
}

/** Tombstones to repair (`repairStaged`): those not begun, and the one under way. */
export interface RepairQueue {
  readonly toRepair: number[];
  repairing?: Iterator<void>;
}

/** The scalars a search thread needs with each search: they change with every write. */
export interface SegmentHeader {
  readonly entryPoint: number;
  readonly maxLevel: number;
  /** The root of the graph's rooted tree: searches walk from it too (index/hnsw/graph-mender.ts). */
  readonly anchor: number;
  readonly slotCount: number;
  readonly liveCount: number;
}

/** Points a load stages at once, without a usable snapshot: enough to share between threads. */
const LOAD_CHUNK = 2048;
/**
 * A load links staged nodes in steps of about this long, by its recent cost per node, so that a
 * service loading in slices answers requests between them (docs/architecture.md, "Start-up").
 */
const LOAD_STEP_MS = 10;
const LOAD_LINKS_MIN = 16;
/**
 * A load step takes its fewest nodes only while they cost less than this; beyond, one node at a
 * time (as writes' link steps do): sixteen 65,536-d nodes at m 16 in one step held a rebuilding
 * service 637 ms.
 */
const LOAD_STEP_CAP_MS = 25;
/** Vector bytes a load writes into memory per step (the links come after, in their own steps). */
const LOAD_VECTOR_BYTES = 4 * 1048576;
/** Snapshot slots a load maps per step. */
const SLOTS_PER_STEP = 8192;

/** Seed of every collection's HNSW level generator: builds are reproducible. */
const HNSW_SEED = 100;

/** A staged write's point whose named vectors took no new graph node: each is kept. */
const NOTHING_STAGED: ReadonlyMap<string, number> = new Map();

export class Segment implements SegmentReader {
  private readonly points = new PointTable();
  private readonly payloads: PayloadIndex;
  private readonly sparseSpaces: SparseSpaces;
  private readonly namedSpaces: NamedVectorSpaces;
  readonly candidateMarks = new VisitedSet();
  readonly filterMemo = new SlotMemo();
  /** float32 vectors, or sq8 codes for sq8 collections (searched as codes: 4× less memory). */
  private readonly arena: SlotArena;
  private readonly f32: VectorArena | undefined;
  private readonly sq8: Sq8Arena | undefined;
  /** Dot collections build their graph with this kernel (kernels/mips-graph-kernel.ts says why). */
  private readonly mipsKernel: MipsGraphKernel | undefined;
  private readonly flat: FlatIndex;
  private hnsw: HnswIndex | undefined;
  private changesSinceSnapshot = 0;
  /** While loading: the snapshot's slot of each (id, version) its graph holds, and the points it does not. */
  private restored: ShardedMap<{ readonly slot: number; readonly version: bigint }> | undefined;
  private pending: SegmentPoint[] = [];
  private restoredCount = 0;
  /** Named vectors placed at their snapshot graph's slot during the load. */
  private namedRestoredCount = 0;
  private loadInserters: SegmentInserters | undefined;
  /** The load's recent wall time per linked node, in ms (insertHeldBack sizes its steps by it). */
  private loadMsPerLink: number;

  /**
   * @param scratchAreas scratch areas in the vector memory: one for this thread and one per search
   *   thread that will attach to it
   */
  constructor(
    private readonly config: CollectionConfig,
    scratchAreas = 1,
  ) {
    this.loadMsPerLink = Math.max(0.3, guessedMsPerInsert(config));
    this.payloads = new PayloadIndex(config.payloadIndex);
    this.sparseSpaces = new SparseSpaces(config.sparseVectors);
    this.namedSpaces = new NamedVectorSpaces(config.namedVectors, config.hnsw ? this.hnswParams() : undefined, (slot) => this.points.idOf(slot));
    const layout = { scratchAreas, scratchIndex: 0 };
    let kernel: DistanceKernel;
    if (config.quantization === 'sq8') {
      this.sq8 = new Sq8Arena(config.vectorSize, config.distance, layout);
      this.arena = this.sq8;
      kernel = createSq8Kernel(this.sq8, config.distance);
    } else {
      this.f32 = new VectorArena(config.vectorSize, layout);
      this.arena = this.f32;
      kernel = createKernel(this.f32, config.distance);
    }
    this.mipsKernel = config.distance === 'Dot' ? new MipsGraphKernel(this.arena, kernel) : undefined;
    this.flat = new FlatIndex(this.arena, kernel, this.points);
    this.hnsw = config.hnsw ? this.newHnsw(kernel) : undefined;
  }

  // ---- reading -------------------------------------------------------------------------------

  get table(): PointTableReader {
    return this.points;
  }

  get payloadIndex(): PayloadIndexReader {
    return this.payloads;
  }

  get sparse(): SparseSpacesReader {
    return this.sparseSpaces;
  }

  get named(): NamedVectorsReader {
    return this.namedSpaces;
  }

  vectorHolders(name: string): VectorHolders | 'all' | 'none' {
    if (name === this.config.vectorName) return 'all';
    const slotOf = (id: string): number | undefined => this.points.slotOf(id);
    return this.sparseSpaces.holders(name, slotOf) ?? this.namedSpaces.holders(name, slotOf) ?? 'none';
  }

  /** The collection's declared text indexes, which filters are bound to before they run. */
  setTextIndexes(indexes: TextIndexes): void {
    this.payloads.textIndexes = indexes;
  }

  /** Whether this segment has a graph: its writes are applied in steps ("writes in steps"). */
  get hasGraph(): boolean {
    return this.hnsw !== undefined;
  }

  get graphM(): number | undefined {
    return this.hnsw?.params.m;
  }

  get liveCount(): number {
    return this.points.liveCount;
  }

  searchGraph(options: SearchOptions): SearchHits {
    if (this.hnsw === undefined) throw new Error('the collection has no graph');
    return this.hnsw.search(options);
  }

  searchFlat(options: SearchOptions): SearchHits {
    return this.flat.search(options);
  }

  scoreSlots(query: Float32Array, slots: ArrayLike<number>, k: number, stats?: SearchStats): SearchHits {
    return this.flat.scoreSlots(query, slots, k, stats);
  }

  scoreEach(query: Float32Array, slots: ArrayLike<number>, out: Float64Array, stats?: SearchStats): void {
    this.flat.scoreEach(query, slots, out, stats);
  }

  readVector(slot: number): Float32Array {
    return this.arena.read(slot);
  }

  /** The memory search threads read; its arrays are replaced when they grow (compare them). */
  sharedState(): SharedSegmentState {
    return {
      memory: this.arena.wasmMemory,
      graph: this.hnsw?.graph.sharedArrays() ?? null,
      live: this.points.sharedLive,
      payloads: this.points.sharedPayloads ?? null,
    };
  }

  /**
   * Copies up to `count` more points' payloads into shared memory, starting to share them if not
   * yet (collection.ts does this in slices on first need): see PointTable.sharePayloads.
   */
  sharePayloads(count: number): 'done' | 'more' | 'failed' {
    return this.points.sharePayloads(count);
  }

  /** Why the payloads are not shared and will not be; undefined otherwise. */
  get payloadSharingFailure(): Error | undefined {
    return this.points.payloadSharingFailure;
  }

  /** Whether the payloads are in shared memory, every one of them. */
  get payloadsShared(): boolean {
    return this.points.sharedPayloads !== undefined;
  }

  header(): SegmentHeader {
    const graph = this.hnsw?.graph;
    return {
      entryPoint: graph?.entryPoint ?? -1,
      maxLevel: graph?.maxLevel ?? -1,
      anchor: graph?.tree.anchor ?? -1,
      slotCount: this.points.slotCount,
      liveCount: this.points.liveCount,
    };
  }

  /** See StoredVectorContext; its arrays are replaced when they grow, so ask again before each use. */
  storedVectorContext(): StoredVectorContext {
    return { mips: this.mipsKernel?.shared ?? null, sq8Maxes: this.sq8?.sharedMaxes ?? null };
  }

  /** What the vectors and the graph occupy, allocated and in use, for benchmarks and diagnostics. */
  memoryStats(): MemoryStats {
    const graph = this.hnsw?.graph;
    return {
      points: this.points.liveCount,
      vectorBytesPerPoint: this.arena.slotBytes,
      vectorBytesAllocated: this.arena.slotCapacity * this.arena.slotBytes,
      graphBytesAllocated: graph?.allocatedBytes ?? 0,
      graphNodes: graph?.nodeCount ?? 0,
      sharedPayloadBytesAllocated: this.points.sharedPayloadBytes,
      sparseBytes: this.sparseSpaces.memoryBytes(),
      namedVectorBytes: this.namedSpaces.memoryBytes(),
      namedGraphNodes: this.namedSpaces.graphNodes(),
    };
  }

  /** Graph inserts since start-up: by the writer alone, and shared with other threads (index/hnsw/insert-job.ts). */
  graphInserts(): { readonly alone: number; readonly shared: number } {
    return { ...(this.hnsw?.inserts ?? { alone: 0, shared: 0 }) };
  }

  /** Structural problems of the id order and the graph (empty when sound). */
  checkIntegrity(): string[] {
    const problems = this.points.orderProblems();
    if (this.hnsw !== undefined) problems.push(...checkIntegrity(this.hnsw, (slot) => this.points.isLive(slot)));
    problems.push(...this.namedSpaces.graphProblems(checkIntegrity));
    return problems;
  }

  // ---- writing -------------------------------------------------------------------------------

  /** Grows every per-slot structure so that upserting `points` cannot allocate (call before the durable write). */
  reserveFor(points: readonly { readonly id: string; readonly vector: StoredVector }[]): void {
    this.reserveSlots(this.newSlotsAmong(points, 0, points.length));
  }

  /** How many of `points[from…to)` take a slot they do not hold (reads only: callers may count in slices). */
  newSlotsAmong(points: readonly { readonly id: string; readonly vector: StoredVector }[], from: number, to: number): number {
    let slots = 0;
    for (let i = from; i < to; i++) {
      const p = points[i] as { readonly id: string; readonly vector: StoredVector };
      if (this.needsNewSlot(p.id, p.vector)) slots++;
    }
    return slots;
  }

  /** Grows every per-slot structure so that `newSlots` more slots cannot allocate. */
  reserveSlots(newSlots: number): void {
    this.reserve(newSlots);
  }

  /**
   * Upserts a batch (each id at most once), searchable at once. A graph's changes take the steps
   * of a write in steps (below), run back to back; with `inserters`, links are shared with other
   * threads (index/hnsw/insert-job.ts).
   */
  upsertMany(points: readonly SegmentPoint[], inserters?: SegmentInserters): void {
    if (this.hnsw === undefined) {
      this.upsertFlat(points, 0, points.length);
      return;
    }
    const staged = this.startUpserts(points);
    this.stageUpserts(staged, points.length, inserters !== undefined);
    while (this.linkStaged(staged, Math.max(1, this.linksLeft(staged)), inserters));
    this.publishStaged(staged, points.length);
    this.repairStaged(staged, () => false);
  }

  /**
   * Upserts `points[from…to)` into a collection without a graph (each id at most once): a point's
   * vector is overwritten in place. Visible at once: callers applying a batch in ranges keep
   * searches out until the last range (collection.ts).
   */
  upsertFlat(points: readonly SegmentPoint[], from: number, to: number): void {
    for (let i = from; i < to; i++) {
      const point = points[i] as SegmentPoint;
      const old = this.points.slotOf(point.id);
      if (old !== undefined) this.removeAttributes(old);
      const slot = this.points.upsert(point.id, point.version, point.payload);
      this.addAttributes(slot, point);
      const vector = point.vector;
      this.writeVector(slot, vector);
    }
  }

  // ---- writes in steps -------------------------------------------------------------------------
  //
  // A graph collection's batch is applied in steps (collection.ts runs each under the read-write
  // gate, searches run between them), so that no search waits for a whole batch's inserts:
  // `stageUpserts` writes the new vectors into free slots, a range at a time, then adds their graph
  // nodes as pending (linked and walked, returned by no search); `linkStaged` links them a few at a
  // time; `publishStaged` makes the batch visible (ids, versions, payloads, payload indexes,
  // liveness, the old nodes of replaced vectors tombstoned), a range at a time, while collection.ts
  // holds searches off until the last range; `repairStaged` then repairs the tombstones'
  // neighbours a few at a time. Searches see the batch wholly (after publishing) or not at all.

  /** A graph write of `points` (each id at most once), nothing staged yet. */
  startUpserts(points: readonly SegmentPoint[]): StagedWrite {
    if (this.hnsw === undefined) throw new Error('only a graph collection stages its writes');
    return { points, slots: [], fresh: [], toLink: [], named: [], toRepair: [], published: 0 };
  }

  /**
   * Stage 1 of a batch of upserts: up to `count` more points' vectors written into free slots,
   * invisible to searches. Once every point is staged, their nodes are added as pending (`linkNow`:
   * links will be shared with threads). Returns whether points are left to stage.
   */
  stageUpserts(staged: StagedWrite, count: number, linkNow: boolean): boolean {
    const hnsw = this.hnsw as HnswIndex;
    const end = Math.min(staged.points.length, staged.slots.length + count);
    for (let i = staged.slots.length; i < end; i++) {
      const point = staged.points[i] as SegmentPoint;
      staged.named.push(this.namedSpaces.stage(this.points.slotOf(point.id), point.named));
      if (!this.needsNewSlot(point.id, point.vector)) {
        staged.slots.push(undefined);
        continue;
      }
      const slot = this.points.takeSlot();
      this.writeVector(slot, point.vector);
      staged.slots.push(slot);
      staged.fresh.push(slot);
    }
    if (end < staged.points.length) return true;
    staged.toLink = hnsw.addPending(staged.fresh, linkNow);
    this.namedSpaces.addPending();
    return false;
  }

  /**
   * The links a staged write has left, in main-graph nodes: the main graph's nodes, then the named
   * vectors' graphs' by their cost (a 65,536-d named node beside a 4-d main vector counts as many).
   * Link steps are sized in these units (`linkStaged`'s count).
   */
  linksLeft(staged: StagedWrite): number {
    return staged.toLink.length + this.namedSpaces.linkWorkLeft / this.linkWork;
  }

  /**
   * Links up to `count` staged nodes (in `linksLeft`'s units), the main graph's first (shared with
   * `inserters` when given), then the named vectors' graphs' (alone, at least one); returns whether
   * some are left.
   */
  linkStaged(staged: StagedWrite, count: number, inserters?: SegmentInserters): boolean {
    const hnsw = this.hnsw as HnswIndex;
    const now = staged.toLink.splice(0, count);
    if (now.length > 0) hnsw.linkPending(now, inserters === undefined ? undefined : { join: (job) => inserters.join(job, this.storedVectorContext()) });
    // Named nodes fill the rest of the step, by their cost in main-graph nodes.
    if (now.length < count) this.namedSpaces.link((count - now.length) * this.linkWork);
    return this.linksLeft(staged) > 0;
  }

  /**
   * Publishes up to `count` more points of a linked batch; returns whether some are left. The
   * batch is visible only once every point is published: the caller keeps searches out meanwhile.
   */
  publishStaged(staged: StagedWrite, count: number): boolean {
    const hnsw = this.hnsw as HnswIndex;
    // First: a replaced entry point is re-chosen among the new nodes too.
    if (staged.published === 0) {
      hnsw.publish(staged.fresh);
      this.namedSpaces.publish();
    }
    const end = Math.min(staged.points.length, staged.published + count);
    for (let i = staged.published; i < end; i++) {
      const point = staged.points[i] as SegmentPoint;
      const { id, version, payload } = point;
      const slot = staged.slots[i];
      const named = staged.named[i];
      const old = this.points.slotOf(id);
      // The named vectors move with the point below (their graph nodes staged, or kept).
      if (old !== undefined) this.removeAttributes(old, false);
      if (slot === undefined) {
        // Same vector: the node stays; a new version is a change for the snapshot.
        this.points.upsert(id, version, payload);
        this.addAttributes(old as number, point, { old, named });
        this.changesSinceSnapshot++;
        continue;
      }
      if (old !== undefined) {
        hnsw.hide(old);
        this.points.delete(id, false);
        staged.toRepair.push(old);
      }
      this.points.bind(slot, id, version, payload);
      this.addAttributes(slot, point, { old, named });
      this.changesSinceSnapshot++;
    }
    staged.published = end;
    return end < staged.points.length;
  }

  /**
   * Deletes `ids[from…to)` (each at most once; absent ids are passed over), gone from searches at
   * once. A graph's deleted nodes become tombstones, pushed onto `toRepair` for `repairStaged`;
   * without a graph, slots are free at once. Callers deleting in ranges keep searches out until
   * the last range (collection.ts).
   */
  deleteRange(ids: readonly string[], from: number, to: number, toRepair: number[]): void {
    const hnsw = this.hnsw;
    for (let i = from; i < to; i++) {
      const id = ids[i] as string;
      const slot = this.points.slotOf(id);
      if (slot === undefined) continue;
      this.removeAttributes(slot);
      if (hnsw === undefined) {
        this.points.delete(id, true);
        continue;
      }
      hnsw.hide(slot);
      this.points.delete(id, false);
      toRepair.push(slot);
      this.changesSinceSnapshot++;
    }
  }

  /**
   * Repairs the neighbours of a staged write's tombstones, one neighbour at a time, until `enough()`
   * says so (checked after each) or none is left; returns whether some are left. A tombstone begun
   * is carried on from `staged.repairing` by the next call.
   */
  repairStaged(staged: RepairQueue, enough: () => boolean): boolean {
    const hnsw = this.hnsw as HnswIndex;
    for (;;) {
      if (staged.repairing === undefined) {
        const slot = staged.toRepair.shift();
        if (slot === undefined) return false;
        staged.repairing = hnsw.repairAroundSteps(slot);
      }
      if (staged.repairing.next().done === true) staged.repairing = undefined;
      if (enough()) return staged.toRepair.length > 0 || staged.repairing !== undefined;
    }
  }

  /** Removes the points of these ids that exist. A graph's deletes take the steps of a delete in steps, back to back. */
  deleteMany(ids: readonly string[]): void {
    const toRepair: number[] = [];
    this.deleteRange(ids, 0, ids.length, toRepair);
    if (this.hnsw !== undefined) this.repairStaged({ toRepair }, () => false);
  }

  /**
   * Housekeeping after a write: compaction once tombstones pass COMPACTION_SHARE. Connectivity
   * needs none: every write keeps every live node rooted (index/hnsw/graph-mender.ts).
   */
  maintain(): void {
    const hnsw = this.hnsw;
    if (hnsw?.needsCompaction() === true) this.points.release(hnsw.compact());
    this.namedSpaces.maintain();
  }

  // ---- graph snapshots -----------------------------------------------------------------------

  /** Writes applied to the graph since the last snapshot was saved (0 without a graph). */
  get unsavedChanges(): number {
    return this.hnsw === undefined ? 0 : this.changesSinceSnapshot;
  }

  get graphNodes(): number {
    return this.hnsw?.graph.nodeCount ?? 0;
  }

  /** The graph snapshot (segment/snapshot.ts) as parts for the store; undefined without a graph. */
  snapshotParts(): Uint8Array[] | undefined {
    const hnsw = this.hnsw;
    if (hnsw === undefined) return undefined;
    const table = this.points;
    const entryOf = (slot: number): SlotEntry | undefined => (table.isLive(slot) ? { id: table.idOf(slot), version: table.versionOf(slot) } : undefined);
    return encodeSnapshot(encodeGraph(hnsw), hnsw.graph.capacity, entryOf, this.namedSpaces.snapshotParts(entryOf));
  }

  /** The snapshot from `snapshotParts` is durable: changes count from zero again. */
  snapshotSaved(): void {
    this.changesSinceSnapshot = 0;
  }

  // ---- start-up ------------------------------------------------------------------------------

  /**
   * Takes over the graph of a snapshot, to be reconciled with the point records by `loadPoint` and
   * `endPointRecords`, in steps (core/steps.ts). Returns why it cannot be used (the graph is then
   * rebuilt), or undefined.
   */
  *restoreSnapshot(bytes: Uint8Array): Steps<string | undefined> {
    const hnsw = this.hnsw;
    if (hnsw === undefined) return undefined;
    const decoded = yield* decodeSnapshotSteps(bytes);
    if (typeof decoded === 'string') return decoded;
    const namedProblem = this.namedSpaces.restore(decoded.named);
    if (namedProblem !== undefined) return namedProblem;
    const problem = decodeGraphInto(hnsw, decoded.graph);
    if (problem !== undefined) {
      this.namedSpaces.forgetRestored();
      return problem;
    }
    yield;
    const graph = hnsw.graph;
    const restored = new ShardedMap<{ slot: number; version: bigint }>();
    const slots = decoded.slots;
    for (let slot = 0; slot < slots.length; slot++) {
      if (slot % SLOTS_PER_STEP === SLOTS_PER_STEP - 1) yield;
      const entry = slots[slot];
      if (entry !== undefined && graph.isLive(slot)) restored.set(entry.id, { slot, version: entry.version });
    }
    this.restored = restored;
    return undefined;
  }

  /**
   * Sizes memory once for `storedPoints` (growing point by point costs many copies), before
   * `loadPoint`s; graph inserts during the load are shared with `inserters` when given.
   */
  beginLoad(storedPoints: number, inserters?: SegmentInserters): void {
    this.reserve(Math.max(storedPoints, this.hnsw?.graph.capacity ?? 0));
    this.loadInserters = inserters;
    this.payloads.beginBulk();
  }

  /**
   * A stored point at start-up: placed at its snapshot slot when the snapshot holds exactly this
   * (id, version), else held back to be inserted by `insertHeldBack`. Returns whether it was placed.
   */
  loadPoint(point: SegmentPoint): boolean {
    const placed = this.restored?.get(point.id);
    if (placed === undefined || placed.version !== point.version) {
      this.pending.push(point);
      return false;
    }
    this.arena.reserve(placed.slot + 1);
    this.points.insertAt(placed.slot, point.id, point.version, point.payload);
    this.payloads.add(placed.slot, point.payload);
    this.sparseSpaces.add(placed.slot, point.sparse);
    this.namedRestoredCount += this.namedSpaces.load(placed.slot, point.id, point.version, point.named);
    this.writeVector(placed.slot, point.vector);
    this.restoredCount++;
    return true;
  }

  /**
   * Whether the points held back should be inserted now, before the rest is read: without a
   * snapshot, a chunk at a time, so that they are not all held twice in memory. With one, only
   * once every record is read (`endPointRecords`): until then a held-back point could take a slot
   * the snapshot gives a point not read yet.
   */
  get heldBackDue(): boolean {
    return this.restored === undefined && this.pending.length >= LOAD_CHUNK;
  }

  /**
   * Every point record is read: the payload indexes sort what they took in bulk, and the snapshot's
   * graph nodes no stored point claimed are tombstoned and compacted away.
   */
  endPointRecords(): void {
    this.payloads.endBulk();
    this.namedSpaces.endRestore();
    const hnsw = this.hnsw;
    if (this.restored === undefined || hnsw === undefined) return;
    const graph = hnsw.graph;
    const unclaimed: number[] = [];
    for (let slot = 0; slot < graph.capacity; slot++) if (graph.isLive(slot) && !this.points.isLive(slot)) unclaimed.push(slot);
    hnsw.dropNodes(unclaimed);
    this.points.rebuildFreeSlots((slot) => graph.has(slot));
    this.restored = undefined;
  }

  /**
   * Inserts the points held back, LOAD_CHUNK at a time, in steps of about LOAD_STEP_MS of graph
   * links (shared with the load's inserters when there are); yields how many points each step
   * inserted.
   */
  *insertHeldBack(): Generator<number, void, void> {
    const pending = this.pending;
    this.pending = [];
    this.reserve(pending.length);
    const inserters = this.loadInserters;
    for (let start = 0; start < pending.length; start += LOAD_CHUNK) {
      const chunk = pending.slice(start, start + LOAD_CHUNK);
      // About LOAD_VECTOR_BYTES of vectors written per step: 2,048 points of 65,536 dimensions are 512 MiB.
      const perStep = Math.max(1, Math.floor(LOAD_VECTOR_BYTES / (4 * this.config.vectorSize)));
      if (this.hnsw === undefined) {
        for (let from = 0; from < chunk.length; from += perStep) {
          const to = Math.min(chunk.length, from + perStep);
          this.upsertFlat(chunk, from, to);
          yield to - from;
        }
        continue;
      }
      const staged = this.startUpserts(chunk);
      while (this.stageUpserts(staged, perStep, inserters !== undefined)) yield 0;
      while (this.linksLeft(staged) > 0) {
        this.timedLoadLinks((count) => this.linkStaged(staged, count, inserters), this.linksLeft(staged));
        yield 0;
      }
      this.publishStaged(staged, chunk.length);
      this.repairStaged(staged, () => false);
      yield chunk.length;
    }
    yield* this.linkLoadedNamed();
  }

  /**
   * Links the graph nodes of the named vectors that points placed at their snapshot slots brought
   * (`loadPoint`: the named graphs are not in the snapshot), in steps as the held-back points' links.
   */
  private *linkLoadedNamed(): Generator<number, void, void> {
    const named = this.namedSpaces;
    named.addPending();
    while (named.linksLeft > 0) {
      // Each node linked is a change the next graph snapshot saves (a rebuild is not repeated at the next start).
      this.timedLoadLinks((count) => {
        this.changesSinceSnapshot += named.link(count * this.linkWork);
      }, named.linkWorkLeft / this.linkWork);
      yield 0;
    }
    named.publish();
  }

  /** One load step of graph links: as many as about LOAD_STEP_MS takes at the load's recent cost per node. */
  private timedLoadLinks(link: (count: number) => unknown, left: number): void {
    const fewest = this.loadMsPerLink * LOAD_LINKS_MIN > LOAD_STEP_CAP_MS ? 1 : LOAD_LINKS_MIN;
    const count = Math.min(LOAD_CHUNK, Math.max(fewest, Math.floor(LOAD_STEP_MS / this.loadMsPerLink)));
    const linked = Math.min(count, left);
    const began = performance.now();
    link(count);
    this.loadMsPerLink = 0.8 * this.loadMsPerLink + (0.2 * (performance.now() - began)) / linked;
  }

  /**
   * Ends start-up: connectivity is checked; returns how many points came from the snapshot's
   * graph, and how many named vectors from their graphs'. The load's state is let go.
   */
  finishLoad(): { fromSnapshot: number; namedFromSnapshot: number } {
    const fromSnapshot = this.restoredCount;
    const namedFromSnapshot = this.namedRestoredCount;
    this.restored = undefined;
    this.restoredCount = 0;
    this.namedRestoredCount = 0;
    this.loadInserters = undefined;
    this.maintain();
    // Loaded point by point, the posting lists grew by doubling; a restart should not keep that slack.
    this.sparseSpaces.trim();
    return { fromSnapshot, namedFromSnapshot };
  }

  // ---- internals -----------------------------------------------------------------------------

  /**
   * A slot's payload, sparse and named vectors leave the indexes (the point leaves the slot or is
   * rewritten); without `named`, its named vectors stay for `addAttributes` to move (a staged write).
   */
  private removeAttributes(slot: number, named = true): void {
    this.payloads.remove(slot, this.points.payloadOf(slot));
    this.sparseSpaces.remove(slot);
    if (named) this.namedSpaces.remove(slot);
  }

  /**
   * The point's payload, sparse and named vectors enter the indexes at its slot; with `moved`, its
   * named vectors come from slot `old` (kept, or replaced by the nodes the write staged).
   */
  private addAttributes(
    slot: number,
    point: SegmentPoint,
    moved?: { readonly old: number | undefined; readonly named: Map<string, number> | undefined },
  ): void {
    this.payloads.add(slot, point.payload);
    this.sparseSpaces.add(slot, point.sparse);
    if (moved === undefined) this.namedSpaces.add(slot, point.named);
    else this.namedSpaces.add(slot, point.named, moved.old, moved.named ?? NOTHING_STAGED);
  }

  /** What linking one main-graph node costs (m × ef_construction × vector_size): the unit of link steps. */
  private get linkWork(): number {
    const p = this.config.parameters;
    return p.m * p.efConstruction * this.config.vectorSize;
  }

  /** The collection's HNSW parameters: its main graph's, and each named vector's graph's. */
  private hnswParams(): HnswParams {
    const p = this.config.parameters;
    return { m: p.m, efConstruction: p.efConstruction, efSearch: p.efSearch, seed: HNSW_SEED };
  }

  private newHnsw(kernel: DistanceKernel): HnswIndex {
    return new HnswIndex(this.arena, kernel, this.mipsKernel ?? kernel, this.points, this.hnswParams());
  }

  /**
   * The one rule for whether upserting `id` takes a slot it does not hold: a new id does; with a
   * graph, so does a changed vector (a node's vector cannot change in place); Flat rewrites in place.
   */
  private needsNewSlot(id: string, vector: StoredVector): boolean {
    const slot = this.points.slotOf(id);
    if (slot === undefined) return true;
    return this.hnsw !== undefined && !this.holdsVector(slot, vector);
  }

  /** Grows every per-slot structure so that `newSlots` more slots cannot allocate. */
  private reserve(newSlots: number): void {
    const slots = this.points.slotsNeededFor(newSlots);
    this.arena.reserve(slots);
    this.points.reserve(slots);
    this.hnsw?.graph.reserve(slots);
  }

  private writeVector(slot: number, vector: StoredVector): void {
    if (vector.encoding === 'sq8') (this.sq8 as Sq8Arena).writeCodes(slot, vector);
    else (this.f32 as VectorArena).write(slot, vector.values);
    this.mipsKernel?.noteVector(slot);
  }

  /** Whether the slot already holds exactly this stored vector. */
  private holdsVector(slot: number, vector: StoredVector): boolean {
    if (vector.encoding === 'sq8') {
      const arena = this.sq8 as Sq8Arena;
      const bytes = arena.bytes;
      const at = arena.codesOffsetOf(slot);
      for (let i = 0; i < vector.codes.length; i++) if (bytes[at + i] !== vector.codes[i]) return false;
      return arena.minOf(slot) === Math.fround(vector.min) && arena.maxOf(slot) === Math.fround(vector.max);
    }
    const arena = this.f32 as VectorArena;
    const floats = arena.floats;
    const at = arena.offsetOf(slot);
    for (let i = 0; i < vector.values.length; i++) if (floats[at + i] !== vector.values[i]) return false;
    return true;
  }
}
