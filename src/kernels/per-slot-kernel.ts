/**
 * The list walks of the plain-TypeScript kernels (f32 and sq8): they differ only in how one slot
 * is scored, so each supplies `similarityOf(slot)` and shares the walk over the scratch lists.
 */
import type { Distance } from '../core/distance.js';
import type { DistanceKernel } from './distance-kernel.js';
import { checkBatch, type SlotArena } from './slot-arena.js';

export abstract class PerSlotKernel<Arena extends SlotArena> implements DistanceKernel {
  constructor(
    protected readonly arena: Arena,
    readonly distance: Distance,
  ) {}

  /** Similarity of the arena's scratch query with one slot (higher is better). */
  protected abstract similarityOf(slot: number): number;

  scoreIds(count: number): void {
    checkBatch(count);
    const arena = this.arena;
    const ids = arena.uint32s;
    const idsBase = arena.idsByteOffset >> 2;
    const scoresBase = arena.scoresByteOffset >> 2;
    const f32 = arena.floats;
    for (let i = 0; i < count; i++) f32[scoresBase + i] = this.similarityOf(ids[idsBase + i] as number);
  }

  scoreRange(start: number, count: number): void {
    checkBatch(count);
    const arena = this.arena;
    const scoresBase = arena.scoresByteOffset >> 2;
    const f32 = arena.floats;
    for (let i = 0; i < count; i++) f32[scoresBase + i] = this.similarityOf(start + i);
  }
}
