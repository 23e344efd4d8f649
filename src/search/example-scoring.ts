/**
 * Scores by examples rather than by one query vector (Qdrant's recommend strategies `best_score`
 * and `sum_scores`, and its discovery and context searches), from a point's similarity to each
 * example, as Qdrant 1.18 defines them (lib/segment/src/vector_storage/query/; our own code):
 *
 * - best_score: the best similarity to a positive, squashed into (0, 1), when it beats the best
 *   similarity to a negative; else minus the squashed best negative (so only negatives: < 0).
 * - sum_scores: Σ similarities to the positives − Σ similarities to the negatives.
 * - discover: per context pair +1 when nearer its positive, −1 when nearer its negative (0 on a
 *   tie), summed, plus the target similarity squashed into (0, 1): the pairs rank, the target
 *   orders within a rank.
 * - context: per pair, min(sim(positive) − sim(negative) − ε, 0) squashed into (−1, 0], summed:
 *   0 for a point on the positive side of every pair.
 *
 * Similarities are the kernels' (core/distance.ts): dot products, or −‖a − b‖² under Euclid; a
 * multi-vector's max_sim; a sparse vector's dot product (the examples' weights times idf under the
 * idf modifier, as Qdrant weights every query vector). Larger scores are better whatever the
 * distance. The squashing is Qdrant's fast sigmoid x / (1 + |x|).
 */
import type { SparseVector } from '../index/sparse/sparse-vector.js';
import type { NamedVector } from '../segment/named-vectors.js';

/**
 * One example as it is scored: the main vector's (as the kernels take it), a named dense vector's
 * rows (one, or a multi-vector's), or a sparse vector (indices ascending).
 */
export type ExampleVector = Float32Array | NamedVector | SparseVector;

/** One context pair's vectors, as the kernels take them. */
export interface ContextPair<V> {
  readonly positive: V;
  readonly negative: V;
}

/** A search by examples, its vectors prepared as the kernels take them (unit length under Cosine). */
export type ExampleQuery<V = ExampleVector> = (
  | { readonly kind: 'best_score' | 'sum_scores'; readonly positive: readonly V[]; readonly negative: readonly V[] }
  | { readonly kind: 'discover'; readonly target: V; readonly pairs: readonly ContextPair<V>[] }
  | { readonly kind: 'context'; readonly pairs: readonly ContextPair<V>[] }
) & {
  /**
   * The named dense vector (NamedVector examples) or sparse vector (SparseVector examples) the
   * examples are of and the points are scored by, those without it not scored; without, the main
   * vector (Float32Array examples).
   */
  readonly using?: string;
};

/** Every example vector, in the order `exampleScore` reads their similarities. */
export function exampleVectors<V>(query: ExampleQuery<V>): V[] {
  switch (query.kind) {
    case 'best_score':
    case 'sum_scores':
      return [...query.positive, ...query.negative];
    case 'discover':
      return [query.target, ...query.pairs.flatMap((p) => [p.positive, p.negative])];
    case 'context':
      return query.pairs.flatMap((p) => [p.positive, p.negative]);
  }
}

/** Qdrant's fast sigmoid, in (−1, 1). */
function fastSigmoid(x: number): number {
  return x / (1 + Math.abs(x));
}

/** Into (0, 1). */
function scaledSigmoid(x: number): number {
  return 0.5 * (fastSigmoid(x) + 1);
}

/** The smallest positive float32 step above 1: Qdrant's margin in a context pair. */
const MARGIN = 2 ** -23;

/** A point's score from `sim(i)`, its similarity to the i-th of `exampleVectors(query)`. */
export function exampleScore(query: ExampleQuery<unknown>, sim: (i: number) => number): number {
  switch (query.kind) {
    case 'best_score': {
      let bestPositive = Number.NEGATIVE_INFINITY;
      let bestNegative = Number.NEGATIVE_INFINITY;
      const p = query.positive.length;
      for (let i = 0; i < p; i++) bestPositive = Math.max(bestPositive, sim(i));
      for (let i = 0; i < query.negative.length; i++) bestNegative = Math.max(bestNegative, sim(p + i));
      return bestPositive > bestNegative ? scaledSigmoid(bestPositive) : -scaledSigmoid(bestNegative);
    }
    case 'sum_scores': {
      let score = 0;
      const p = query.positive.length;
      for (let i = 0; i < p; i++) score += sim(i);
      for (let i = 0; i < query.negative.length; i++) score -= sim(p + i);
      return score;
    }
    case 'discover': {
      let rank = 0;
      for (let i = 0; i < query.pairs.length; i++) rank += Math.sign(sim(1 + 2 * i) - sim(2 + 2 * i));
      return rank + scaledSigmoid(sim(0));
    }
    case 'context': {
      let loss = 0;
      for (let i = 0; i < query.pairs.length; i++) loss += fastSigmoid(Math.min(sim(2 * i) - sim(2 * i + 1) - MARGIN, 0));
      return loss;
    }
  }
}
