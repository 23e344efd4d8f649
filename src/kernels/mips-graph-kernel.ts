/**
 * The kernel HNSW builds a Dot collection's graph with. Inner product is not a distance, and the
 * neighbour heuristic (keep a candidate only if it is nearer to the node than to every kept
 * neighbour) needs one: on vectors of unequal length it prunes nearly every link towards the
 * longest vectors, and whole regions fall off the graph.
 *
 * So the graph is built in the space where inner-product search is nearest-neighbour search
 * (Bachrach et al., "Speeding up the Xbox recommender system using a Euclidean transformation for
 * inner-product spaces", 2014): each stored vector v gains one coordinate a(v) = √(M² − |v|²),
 * M the largest norm seen, so that all have length M and
 *
 *   |v' − w'|² = 2M² − 2 (v·w + a(v)·a(w)),
 *
 * a true distance that this kernel scores as the similarity v·w + a(v)·a(w). A query q is
 * extended with 0, so |q' − v'|² ranks like −q·v: searches keep the plain Dot kernel. M only
 * grows; vectors placed before it grew keep the links they got, which stay good links.
 *
 * The norms live in a SharedArrayBuffer: a thread inserting alongside the owner (index/hnsw/
 * insert-job.ts) builds its own kernel over them (`follow`), with the owner's extremes.
 */
import { grownArray, sharedArray } from '../core/shared-array.js';
import type { DistanceKernel } from './distance-kernel.js';
import type { SlotArena } from './slot-arena.js';

/**
 * Below this relative spread of squared norms, every stored vector counts as having the same length:
 * the lifts are all 0 (to float precision) and the kernel scores plain dot products, as Cosine does.
 */
const EQUAL_LENGTH_SPREAD = 1e-5;

/** What a kernel on another thread needs to score as this one does. */
export interface MipsNorms {
  readonly normsSq: Float64Array<ArrayBufferLike>;
  readonly maxNormSq: number;
  readonly minNormSq: number;
}

export class MipsGraphKernel implements DistanceKernel {
  readonly distance = 'Dot' as const;
  /** |v|² per slot, kept by `noteVector`. */
  private normsSq: Float64Array<ArrayBufferLike> = sharedArray(Float64Array, 0);
  private maxNormSq = 0;
  private minNormSq = Number.POSITIVE_INFINITY;
  /** a(q) of the scratch query, for the arena's query version `liftVersion`. */
  private queryLiftValue = 0;
  private liftVersion = -1;
  private liftMax = -1;

  constructor(
    private readonly arena: SlotArena,
    private readonly dot: DistanceKernel,
  ) {}

  /** The norms and extremes another thread's kernel follows; the array is replaced when it grows (compare it). */
  get shared(): MipsNorms {
    return { normsSq: this.normsSq, maxNormSq: this.maxNormSq, minNormSq: this.minNormSq };
  }

  /** Scores with the owner's norms and extremes, as they are now (on another thread). */
  follow(norms: MipsNorms): void {
    this.normsSq = norms.normsSq;
    this.maxNormSq = norms.maxNormSq;
    this.minNormSq = norms.minNormSq;
  }

  /** Records the vector just written to `slot` (its norm, and the largest norm). */
  noteVector(slot: number): void {
    if (slot >= this.normsSq.length) {
      this.normsSq = grownArray(Float64Array, this.normsSq, Math.max(slot + 1, this.normsSq.length * 2, 1024));
    }
    const v = this.arena.read(slot);
    let normSq = 0;
    for (let i = 0; i < v.length; i++) normSq += (v[i] as number) * (v[i] as number);
    this.normsSq[slot] = normSq;
    if (normSq > this.maxNormSq) this.maxNormSq = normSq;
    if (normSq < this.minNormSq) this.minNormSq = normSq;
  }

  scoreIds(count: number): void {
    this.dot.scoreIds(count);
    const lift = this.queryLift();
    if (lift === 0) return;
    const arena = this.arena;
    const ids = arena.uint32s;
    const scores = arena.floats;
    const idsBase = arena.idsByteOffset >> 2;
    const scoresBase = arena.scoresByteOffset >> 2;
    for (let i = 0; i < count; i++) scores[scoresBase + i] = (scores[scoresBase + i] as number) + lift * this.liftOf(ids[idsBase + i] as number);
  }

  scoreRange(start: number, count: number): void {
    this.dot.scoreRange(start, count);
    const lift = this.queryLift();
    if (lift === 0) return;
    const scores = this.arena.floats;
    const scoresBase = this.arena.scoresByteOffset >> 2;
    for (let i = 0; i < count; i++) scores[scoresBase + i] = (scores[scoresBase + i] as number) + lift * this.liftOf(start + i);
  }

  /** a(q) for the query in the scratch area (a stored vector while the graph is built); 0 when all lengths are equal. */
  private queryLift(): number {
    if (this.maxNormSq - this.minNormSq <= EQUAL_LENGTH_SPREAD * this.maxNormSq) return 0;
    const version = this.arena.queryVersion;
    if (version === this.liftVersion && this.maxNormSq === this.liftMax) return this.queryLiftValue;
    const floats = this.arena.floats;
    const q = this.arena.queryByteOffset >> 2;
    let normSq = 0;
    for (let i = 0; i < this.arena.dim; i++) normSq += (floats[q + i] as number) * (floats[q + i] as number);
    this.queryLiftValue = Math.sqrt(Math.max(0, this.maxNormSq - normSq));
    this.liftVersion = version;
    this.liftMax = this.maxNormSq;
    return this.queryLiftValue;
  }

  private liftOf(slot: number): number {
    return Math.sqrt(Math.max(0, this.maxNormSq - (this.normsSq[slot] as number)));
  }
}
