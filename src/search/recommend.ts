/**
 * Qdrant's `average_vector` recommendation: the mean of the positive examples, pushed away from
 * the mean of the negatives (avg_pos + (avg_pos − avg_neg)); with no negatives, the mean of the
 * positives. Its cost (examples × vector_size) is bounded per request (request-cost.ts) before the
 * examples are read; the sums come from segment/sum-vectors.ts.
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';

/** A recommendation's examples on one side: the sum of their vectors and how many there are. */
export interface ExampleSum {
  readonly sum: Float64Array;
  readonly count: number;
}

/** The query vector from the examples' sums: the positives' mean, pushed away from the negatives' mean when there are any. */
export function recommendationVector(positive: ExampleSum, negative: ExampleSum, path: string): number[] {
  if (positive.count === 0) throw badInput(childPath(path, 'positive'), 'at least one positive example is required');
  const pos = Array.from(positive.sum, (x) => x / positive.count);
  if (negative.count === 0) return pos;
  return pos.map((p, d) => p + (p - (negative.sum[d] as number) / negative.count));
}
