/**
 * The sq8 kernels of distance.wat over an Sq8Arena: f32 query × u8 codes, one call per
 * candidate list. The query's sum and squared norm come from the arena (computed when the query
 * was set), the per-slot parameters from its params region, whose offset moves on growth and is
 * therefore read at every call.
 */
import type { Distance } from '../core/distance.js';
import type { DistanceKernel } from './distance-kernel.js';
import { checkBatch } from './slot-arena.js';
import type { Sq8Arena } from './sq8-arena.js';
import { distanceExports, type Sq8Scorer } from './wasm-module.js';

/** The `$metric` argument of the sq8 exports (see $sq8_similarity in distance.wat). */
const METRIC: Readonly<Record<Distance, number>> = { Dot: 0, Cosine: 1, Euclid: 2 };

export class Sq8WasmKernel implements DistanceKernel {
  private readonly metric: number;
  private ids: Sq8Scorer | undefined;
  private range: Sq8Scorer | undefined;

  constructor(
    private readonly arena: Sq8Arena,
    readonly distance: Distance,
  ) {
    this.metric = METRIC[distance];
  }

  scoreIds(count: number): void {
    this.score(this.ids ?? this.bind().ids, this.arena.idsByteOffset, count);
  }

  scoreRange(start: number, count: number): void {
    this.score(this.range ?? this.bind().range, start, count);
  }

  /** `list` is the ids' byte offset (by ids) or the first slot (a range). */
  private score(scorer: Sq8Scorer, list: number, count: number): void {
    checkBatch(count);
    const a = this.arena;
    scorer(
      this.metric,
      a.queryByteOffset,
      list,
      count,
      a.scoresByteOffset,
      a.vectorsByteOffset,
      a.codeStride,
      a.paramsByteOffset,
      a.dim,
      a.querySum,
      a.queryNormSq,
    );
  }

  /** Instantiates on the first call: the arena's memory exists only once something was written. */
  private bind(): { ids: Sq8Scorer; range: Sq8Scorer } {
    const wasm = distanceExports(this.arena.wasmMemory);
    this.ids = wasm.scoreIdsSq8;
    this.range = wasm.scoreRangeSq8;
    return { ids: this.ids, range: this.range };
  }
}
