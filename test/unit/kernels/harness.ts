/**
 * Calling kernels the way FlatIndex and HNSW do (slots into the ids scratch, scores out of the
 * scores scratch), for the kernel unit and property tests. Not a test file itself.
 */
import type { Distance } from '../../../src/core/distance.js';
import type { DistanceKernel } from '../../../src/kernels/distance-kernel.js';
import { ReferenceKernel } from '../../../src/kernels/reference-kernel.js';
import type { SlotArena } from '../../../src/kernels/slot-arena.js';
import type { Sq8Arena } from '../../../src/kernels/sq8-arena.js';
import { Sq8ReferenceKernel } from '../../../src/kernels/sq8-reference-kernel.js';
import { Sq8WasmKernel } from '../../../src/kernels/sq8-wasm-kernel.js';
import type { VectorArena } from '../../../src/kernels/vector-arena.js';
import { WasmKernel } from '../../../src/kernels/wasm-kernel.js';

export const DISTANCES: readonly Distance[] = ['Dot', 'Cosine', 'Euclid'];

/** Both f32 kernels, named, so a test runs every case on each. */
export function f32Kernels(arena: VectorArena, distance: Distance): Array<[string, DistanceKernel]> {
  return [
    ['reference', new ReferenceKernel(arena, distance)],
    ['wasm', new WasmKernel(arena, distance)],
  ];
}

export function sq8Kernels(arena: Sq8Arena, distance: Distance): Array<[string, DistanceKernel]> {
  return [
    ['reference', new Sq8ReferenceKernel(arena, distance)],
    ['wasm', new Sq8WasmKernel(arena, distance)],
  ];
}

/** Scores `slots` (any order, repeats allowed) through the ids scratch. */
export function scoreIds(arena: SlotArena, kernel: DistanceKernel, slots: readonly number[]): number[] {
  const idsBase = arena.idsByteOffset >> 2;
  arena.uint32s.set(slots, idsBase);
  kernel.scoreIds(slots.length);
  return readScores(arena, slots.length);
}

export function scoreRange(arena: SlotArena, kernel: DistanceKernel, start: number, count: number): number[] {
  kernel.scoreRange(start, count);
  return readScores(arena, count);
}

export function readScores(arena: SlotArena, count: number): number[] {
  const base = arena.scoresByteOffset >> 2;
  return Array.from(arena.floats.subarray(base, base + count));
}

/** Fills the scores scratch with a value no kernel produces, to see what a call wrote. */
export function poisonScores(arena: SlotArena, count: number, value = 12345.5): void {
  const base = arena.scoresByteOffset >> 2;
  arena.floats.fill(value, base, base + count);
}
