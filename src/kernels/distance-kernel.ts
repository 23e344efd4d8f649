/**
 * The kernel interface: score a whole list of candidates per call against the query held in the
 * arena's scratch area. Similarities are "higher is better" (see core/distance.ts).
 */
import type { Distance } from '../core/distance.js';
import { ReferenceKernel } from './reference-kernel.js';
import type { VectorArena } from './vector-arena.js';

export interface DistanceKernel {
  readonly distance: Distance;
  /**
   * For `i < count`: scores[i] = similarity(query, slot ids[i]), where query, ids and scores are
   * the arena's scratch buffers (`queryByteOffset`, `idsByteOffset`, `scoresByteOffset`).
   */
  scoreIds(count: number): void;
  /** For `i < count`: scores[i] = similarity(query, slot start + i). */
  scoreRange(start: number, count: number): void;
}

export function createKernel(arena: VectorArena, distance: Distance): DistanceKernel {
  return new ReferenceKernel(arena, distance);
}
