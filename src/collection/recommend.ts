/**
 * Qdrant's `average_vector` recommendation: the mean of the positive examples, pushed away from
 * the mean of the negatives (avg_pos + (avg_pos − avg_neg)); with no negatives, the mean of the
 * positives. Its cost (examples × vector_size) is bounded per request (request-cost.ts) before the
 * examples are read.
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';

function mean(vectors: readonly ArrayLike<number>[], dim: number, path: string): Float64Array {
  const out = new Float64Array(dim);
  vectors.forEach((v, i) => {
    if (v.length !== dim) throw badInput(childPath(path, i), `expected a vector of ${dim} numbers, got ${v.length}`);
    for (let d = 0; d < dim; d++) out[d] = (out[d] as number) + (v[d] as number);
  });
  for (let d = 0; d < dim; d++) out[d] = (out[d] as number) / vectors.length;
  return out;
}

/** The query vector of a recommendation from its examples (at least one positive); `path` names the request. */
export function averageExamples(positive: readonly ArrayLike<number>[], negative: readonly ArrayLike<number>[], dim: number, path: string): number[] {
  if (positive.length === 0) throw badInput(childPath(path, 'positive'), 'at least one positive example is required');
  const pos = mean(positive, dim, childPath(path, 'positive'));
  if (negative.length === 0) return Array.from(pos);
  const neg = mean(negative, dim, childPath(path, 'negative'));
  return Array.from(pos, (p, d) => p + (p - (neg[d] as number)));
}
