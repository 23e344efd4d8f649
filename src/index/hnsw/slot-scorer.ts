/**
 * One kernel scoring stored slots against the arena's query, counting what it computes. An index
 * has two: one with the collection's metric for searches, one for building and mending the graph
 * (the same kernel, except under inner product, whose graph is built by Euclidean distance). Which
 * one an operation uses is part of the operation (layer-search.ts `Walk`), not of the index.
 */
import type { DistanceKernel } from '../../kernels/distance-kernel.js';

/** The arena as HNSW needs it: kernel scratch views, the query, and the stored vectors. */
export interface GraphArena {
  readonly uint32s: Uint32Array;
  readonly floats: Float32Array;
  readonly idsByteOffset: number;
  readonly scoresByteOffset: number;
  setQuery(query: Float32Array): void;
  /** Makes a stored vector the query (construction searches for a stored point's neighbours). */
  setQueryFromSlot(slot: number): void;
  sameVector(a: number, b: number): boolean;
}

export class SlotScorer {
  /** Distances computed since the owner last set it to 0 (search `stats`). */
  scored = 0;
  /** Where the kernel reads slots to score (`ids`) and writes their similarities (`scores`), in 4-byte words. */
  readonly idsBase: number;
  readonly scoresBase: number;

  constructor(
    readonly arena: GraphArena,
    readonly kernel: DistanceKernel,
  ) {
    this.idsBase = arena.idsByteOffset >> 2;
    this.scoresBase = arena.scoresByteOffset >> 2;
  }

  /** Scores the `count` slots the caller wrote to the arena's id list, into its score list. */
  scoreIds(count: number): void {
    this.kernel.scoreIds(count);
    this.scored += count;
  }

  one(slot: number): number {
    this.arena.uint32s[this.idsBase] = slot;
    this.scoreIds(1);
    return this.arena.floats[this.scoresBase] as number;
  }

  /** Scores slots against the query; the returned view is valid until the next kernel call. */
  many(slots: ArrayLike<number>, count: number): Float32Array {
    const ids = this.arena.uint32s;
    const idsBase = this.idsBase;
    for (let i = 0; i < count; i++) ids[idsBase + i] = slots[i] as number;
    this.scoreIds(count);
    return this.arena.floats.subarray(this.scoresBase, this.scoresBase + count);
  }
}
