/**
 * The f32 kernels of distance.wat over a VectorArena. One call scores a whole candidate list;
 * the TypeScript side only passes the arena's byte offsets.
 */
import type { Distance } from '../core/distance.js';
import type { DistanceKernel } from './distance-kernel.js';
import { checkBatch } from './slot-arena.js';
import type { VectorArena } from './vector-arena.js';
import { type DistanceExports, distanceExports, type F32Scorer } from './wasm-module.js';

export class WasmKernel implements DistanceKernel {
  private ids: F32Scorer | undefined;
  private range: F32Scorer | undefined;

  constructor(
    private readonly arena: VectorArena,
    readonly distance: Distance,
  ) {}

  scoreIds(count: number): void {
    checkBatch(count);
    const a = this.arena;
    const score = this.ids ?? this.bind().ids;
    score(a.queryByteOffset, a.idsByteOffset, count, a.scoresByteOffset, a.vectorsByteOffset, a.strideBytes, a.dim);
  }

  scoreRange(start: number, count: number): void {
    checkBatch(count);
    const a = this.arena;
    const score = this.range ?? this.bind().range;
    score(a.queryByteOffset, start, count, a.scoresByteOffset, a.vectorsByteOffset, a.strideBytes, a.dim);
  }

  /**
   * Instantiates on the first call rather than in the constructor: the arena creates its memory
   * lazily (an empty collection holds none), and by the first score there is a query in it.
   */
  private bind(): { ids: F32Scorer; range: F32Scorer } {
    const wasm: DistanceExports = distanceExports(this.arena.wasmMemory);
    const euclid = this.distance === 'Euclid';
    this.ids = euclid ? wasm.scoreIdsL2 : wasm.scoreIdsDot;
    this.range = euclid ? wasm.scoreRangeL2 : wasm.scoreRangeDot;
    return { ids: this.ids, range: this.range };
  }
}
