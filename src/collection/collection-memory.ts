/**
 * A collection's in-memory state: the point table, the vector arena, the kernel and the indexes,
 * and the rules that keep them in step. Everything here is synchronous: a caller applies a whole
 * batch in one event-loop turn, so searches see it wholly or not at all.
 */
import { checkIntegrity } from '../index/hnsw/check-integrity.js';
import { ALWAYS_CHECK_CONNECTIVITY_BELOW, HnswIndex } from '../index/hnsw/hnsw-index.js';
import { FlatIndex } from '../index/flat/flat-index.js';
import type { VectorIndex } from '../index/vector-index.js';
import { createKernel, type DistanceKernel } from '../kernels/distance-kernel.js';
import { VectorArena } from '../kernels/vector-arena.js';
import type { CollectionConfig } from './collection-config.js';
import { type Payload, PointTable } from './point-table.js';

/** Seed of every collection's HNSW level generator: builds are reproducible. */
export const HNSW_SEED = 100;

export class CollectionMemory {
  readonly table = new PointTable();
  readonly arena: VectorArena;
  readonly kernel: DistanceKernel;
  readonly flat: FlatIndex;
  hnsw: HnswIndex | undefined;
  /** Writes applied since the last graph snapshot. */
  changesSinceSnapshot = 0;
  private changesSinceConnectivityCheck = 0;

  constructor(private readonly config: CollectionConfig) {
    this.arena = new VectorArena(config.vectorSize);
    this.kernel = createKernel(this.arena, config.distance);
    this.flat = new FlatIndex(this.arena, this.kernel, this.table);
    this.hnsw = config.hnsw ? this.newHnsw() : undefined;
  }

  get index(): VectorIndex {
    return this.hnsw ?? this.flat;
  }

  /** A fresh, empty graph (also used when a snapshot turns out unusable). */
  newHnsw(): HnswIndex {
    const p = this.config.parameters;
    return new HnswIndex(this.arena, this.kernel, this.table, { m: p.m, efConstruction: p.efConstruction, efSearch: p.efSearch, seed: HNSW_SEED });
  }

  /** Grows every per-slot structure so that `points` more upserts cannot allocate. */
  reserve(points: number): void {
    const slots = this.table.slotsNeededFor(points);
    this.arena.reserve(slots);
    this.table.reserve(slots);
    this.hnsw?.graph.reserve(slots);
  }

  upsert(id: string, version: bigint, payload: Payload, vector: Float32Array): void {
    const hnsw = this.hnsw;
    const old = this.table.slotOf(id);
    if (old !== undefined && hnsw !== undefined) {
      // A graph node's vector cannot change in place; an unchanged vector keeps its node.
      if (this.storedVectorEquals(old, vector)) {
        this.table.upsert(id, version, payload);
        return;
      }
      hnsw.remove(old);
      this.table.delete(id, false);
    }
    const slot = this.table.upsert(id, version, payload);
    this.arena.write(slot, vector);
    hnsw?.add(slot);
    this.changesSinceSnapshot++;
    this.changesSinceConnectivityCheck++;
  }

  /** Removes a point; returns whether it existed. */
  delete(id: string): boolean {
    const slot = this.table.slotOf(id);
    if (slot === undefined) return false;
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
   * layer-0 reachability (every write on small graphs, every 5% of changes on large ones).
   */
  maintain(): void {
    const hnsw = this.hnsw;
    if (hnsw === undefined) return;
    if (hnsw.needsCompaction()) {
      this.table.release(hnsw.compact());
      this.changesSinceConnectivityCheck = 0;
      return;
    }
    const nodes = hnsw.graph.nodeCount;
    if (this.changesSinceConnectivityCheck > 0 && (nodes < ALWAYS_CHECK_CONNECTIVITY_BELOW || this.changesSinceConnectivityCheck > 0.05 * nodes)) {
      hnsw.ensureConnected();
      this.changesSinceConnectivityCheck = 0;
    }
  }

  /** Structural problems of the graph (empty when sound, and always for Flat). */
  checkIntegrity(): string[] {
    return this.hnsw === undefined ? [] : checkIntegrity(this.hnsw, (slot) => this.table.isLive(slot));
  }

  private storedVectorEquals(slot: number, vector: Float32Array): boolean {
    const floats = this.arena.floats;
    const at = this.arena.offsetOf(slot);
    for (let i = 0; i < vector.length; i++) if (floats[at + i] !== vector[i]) return false;
    return true;
  }
}
