/**
 * The kernel interface: score a whole list of candidates per call against the query held in the
 * arena's scratch area. Similarities are "higher is better" (see core/distance.ts).
 *
 * The factories pick the WASM SIMD kernels when distance.wasm loads and validates, and the
 * plain-TypeScript ones otherwise or when KITH_KERNEL=reference (see wasm-module.ts).
 */
import type { Distance } from '../core/distance.js';
import { ReferenceKernel } from './reference-kernel.js';
import type { Sq8Arena } from './sq8-arena.js';
import { Sq8ReferenceKernel } from './sq8-reference-kernel.js';
import { Sq8WasmKernel } from './sq8-wasm-kernel.js';
import type { VectorArena } from './vector-arena.js';
import { WasmKernel } from './wasm-kernel.js';
import { kernelBackend } from './wasm-module.js';

export interface DistanceKernel {
  readonly distance: Distance;
  /**
   * For `i < count`: scores[i] = similarity(query, slot ids[i]), where query, ids and scores are
   * the arena's scratch buffers (`queryByteOffset`, `idsByteOffset`, `scoresByteOffset`).
   * `count` is at most SCRATCH_BATCH; slots may repeat.
   */
  scoreIds(count: number): void;
  /** For `i < count`: scores[i] = similarity(query, slot start + i). */
  scoreRange(start: number, count: number): void;
}

/** Kernels over float32 vectors: Cosine and Dot score the dot product, Euclid -|q - v|². */
export function createKernel(arena: VectorArena, distance: Distance): DistanceKernel {
  return kernelBackend() === 'wasm' ? new WasmKernel(arena, distance) : new ReferenceKernel(arena, distance);
}

/**
 * Kernels over sq8 codes, scoring what the f32 kernels would score on the dequantized vectors
 * (re-normalised under Cosine). `distance` must be the arena's: it decides how `read` and
 * `setQueryFromSlot` reconstruct vectors.
 */
export function createSq8Kernel(arena: Sq8Arena, distance: Distance): DistanceKernel {
  if (distance !== arena.distance) throw new RangeError(`sq8 kernel for ${distance} over an arena built for ${arena.distance}`);
  return kernelBackend() === 'wasm' ? new Sq8WasmKernel(arena, distance) : new Sq8ReferenceKernel(arena, distance);
}
