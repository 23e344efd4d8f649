/**
 * A collection's in-memory state: the point table, the vector arena, the kernel and the indexes,
 * and the rules that keep them in step. Everything here is synchronous: a caller applies a whole
 * batch in one event-loop turn, so searches see it wholly or not at all.
 */
import { checkIntegrity } from '../index/hnsw/check-integrity.js';
import { VisitedSet } from '../index/hnsw/visited-set.js';
import { ALWAYS_CHECK_REACHABILITY_BELOW, CONNECTIVITY_CHECK_SHARE, HnswIndex } from '../index/hnsw/hnsw-index.js';
import { FlatIndex } from '../index/flat/flat-index.js';
import type { VectorIndex } from '../index/vector-index.js';
import { createKernel, createSq8Kernel, type DistanceKernel } from '../kernels/distance-kernel.js';
import type { SlotArena } from '../kernels/slot-arena.js';
import { MipsGraphKernel } from '../kernels/mips-graph-kernel.js';
import { Sq8Arena } from '../kernels/sq8-arena.js';
import { VectorArena } from '../kernels/vector-arena.js';
import { PayloadIndex } from '../payload/payload-index.js';
import type { StoredVector } from '../storage/point-record.js';
import type { CollectionConfig } from './collection-config.js';
import { type Payload, PointTable } from './point-table.js';
import { SlotMemo } from './slot-memo.js';

export interface MemoryStats {
  readonly points: number;
  /** Bytes of one stored vector in the arena: 4·d (f32) or d + 16 (sq8 codes and parameters). */
  readonly vectorBytesPerPoint: number;
  readonly vectorBytesAllocated: number;
  readonly graphBytesAllocated: number;
  /** Graph nodes, tombstones included. */
  readonly graphNodes: number;
}

/** Seed of every collection's HNSW level generator: builds are reproducible. */
export const HNSW_SEED = 100;

export class CollectionMemory {
  readonly table = new PointTable();
  readonly payloadIndex: PayloadIndex;
  /** Dedupes candidate slots during one search or delete-by-filter. */
  readonly candidateMarks = new VisitedSet();
  /** Filter answers per slot during one search. */
  readonly filterMemo = new SlotMemo();
  /** float32 vectors, or sq8 codes for sq8 collections (searched as codes: 4× less memory). */
  readonly arena: SlotArena;
  readonly kernel: DistanceKernel;
  /** What the HNSW graph is built with: `kernel`, except under Dot (kernels/mips-graph-kernel.ts says why). */
  private readonly graphKernel: DistanceKernel;
  private readonly mipsKernel: MipsGraphKernel | undefined;
  private readonly f32: VectorArena | undefined;
  private readonly sq8: Sq8Arena | undefined;
  readonly flat: FlatIndex;
  hnsw: HnswIndex | undefined;
  /** Writes applied since the last graph snapshot. */
  changesSinceSnapshot = 0;
  private changesSinceConnectivityCheck = 0;

  constructor(private readonly config: CollectionConfig) {
    this.payloadIndex = new PayloadIndex(config.payloadIndex);
    if (config.quantization === 'sq8') {
      this.sq8 = new Sq8Arena(config.vectorSize, config.distance);
      this.arena = this.sq8;
      this.kernel = createSq8Kernel(this.sq8, config.distance);
      this.mipsKernel = config.distance === 'Dot' ? new MipsGraphKernel(this.sq8, this.kernel) : undefined;
    } else {
      this.f32 = new VectorArena(config.vectorSize);
      this.arena = this.f32;
      this.kernel = createKernel(this.f32, config.distance);
      this.mipsKernel = config.distance === 'Dot' ? new MipsGraphKernel(this.f32, this.kernel) : undefined;
    }
    this.graphKernel = this.mipsKernel ?? this.kernel;
    this.flat = new FlatIndex(this.arena, this.kernel, this.table);
    this.hnsw = config.hnsw ? this.newHnsw() : undefined;
  }

  get index(): VectorIndex {
    return this.hnsw ?? this.flat;
  }

  /** A fresh, empty graph (also used when a snapshot turns out unusable). */
  newHnsw(): HnswIndex {
    const p = this.config.parameters;
    return new HnswIndex(this.arena, this.kernel, this.graphKernel, this.table, { m: p.m, efConstruction: p.efConstruction, efSearch: p.efSearch, seed: HNSW_SEED });
  }

  /**
   * Grows every per-slot structure so that upserting `ids` cannot allocate: without a graph only
   * new ids take a slot; with one an update may too (a changed vector gets a new node).
   */
  reserveFor(ids: readonly string[]): void {
    let points = ids.length;
    if (this.hnsw === undefined) {
      points = 0;
      for (const id of ids) if (this.table.slotOf(id) === undefined) points++;
    }
    this.reserve(points);
  }

  /** Grows every per-slot structure so that `points` more upserts cannot allocate. */
  reserve(points: number): void {
    const slots = this.table.slotsNeededFor(points);
    this.arena.reserve(slots);
    this.table.reserve(slots);
    this.hnsw?.graph.reserve(slots);
  }

  /** `vector` is what the record stores: float32 (normalised under Cosine) or sq8 codes. */
  upsert(id: string, version: bigint, payload: Payload, vector: StoredVector): void {
    const hnsw = this.hnsw;
    const old = this.table.slotOf(id);
    if (old !== undefined) this.payloadIndex.remove(old, this.table.payloadOf(old));
    if (old !== undefined && hnsw !== undefined) {
      // A graph node's vector cannot change in place; an unchanged vector keeps its node.
      if (this.holdsVector(old, vector)) {
        this.table.upsert(id, version, payload);
        this.payloadIndex.add(old, payload);
        // The snapshot keys each node by (id, version): a new version is a change to save.
        this.changesSinceSnapshot++;
        return;
      }
      hnsw.remove(old);
      this.table.delete(id, false);
    }
    const slot = this.table.upsert(id, version, payload);
    this.payloadIndex.add(slot, payload);
    this.writeVector(slot, vector);
    hnsw?.add(slot);
    this.changesSinceSnapshot++;
    this.changesSinceConnectivityCheck++;
  }

  /** Removes a point; returns whether it existed. */
  delete(id: string): boolean {
    const slot = this.table.slotOf(id);
    if (slot === undefined) return false;
    this.payloadIndex.remove(slot, this.table.payloadOf(slot));
    if (this.hnsw === undefined) {
      this.table.delete(id, true);
    } else {
      this.hnsw.remove(slot);
      this.table.delete(id, false);
      this.changesSinceSnapshot++;
      this.changesSinceConnectivityCheck++;
    }
    return true;
  }

  /**
   * Housekeeping after a write: compaction once tombstones pass COMPACTION_SHARE, and mending of
   * layer-0 connectivity (reachability after every write on small graphs, everything after every
   * 1% of the nodes changed; index/hnsw/hnsw-index.ts).
   */
  maintain(): void {
    const hnsw = this.hnsw;
    if (hnsw === undefined) return;
    if (hnsw.needsCompaction()) {
      this.table.release(hnsw.compact());
      this.changesSinceConnectivityCheck = 0;
      return;
    }
    const changes = this.changesSinceConnectivityCheck;
    if (changes === 0) return;
    const nodes = hnsw.graph.nodeCount;
    if (changes >= CONNECTIVITY_CHECK_SHARE * nodes) {
      hnsw.ensureConnected();
      this.changesSinceConnectivityCheck = 0;
    } else if (nodes < ALWAYS_CHECK_REACHABILITY_BELOW) {
      hnsw.ensureConnected({ startsToo: false });
    }
  }

  /** What the vectors and the graph occupy, allocated and in use, for benchmarks and diagnostics. */
  memoryStats(): MemoryStats {
    const points = this.table.liveCount;
    const graph = this.hnsw?.graph;
    return {
      points,
      vectorBytesPerPoint: this.arena.slotBytes,
      vectorBytesAllocated: this.arena.slotCapacity * this.arena.slotBytes,
      graphBytesAllocated: graph?.allocatedBytes ?? 0,
      graphNodes: graph?.nodeCount ?? 0,
    };
  }

  /** Structural problems of the graph (empty when sound, and always for Flat). */
  checkIntegrity(): string[] {
    return this.hnsw === undefined ? [] : checkIntegrity(this.hnsw, (slot) => this.table.isLive(slot));
  }

  /** Writes a stored vector into its slot (a point restored at a known slot, or a new one). */
  writeVector(slot: number, vector: StoredVector): void {
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
