/**
 * The sum of stored vectors a recommendation averages (search/recommend.ts): scoring work, so it
 * runs wherever the segment is read, on the service thread or a search thread.
 */
import type { SearchStats } from '../index/vector-index.js';

/** The component-wise sum of the stored vectors of `slots`, read by `read` (on the service thread or a search thread). */
export function sumVectors(read: (slot: number) => Float32Array, slots: ArrayLike<number>, dim: number, stats?: SearchStats): Float64Array {
  const sum = new Float64Array(dim);
  for (let i = 0; i < slots.length; i++) {
    const v = read(slots[i] as number);
    for (let d = 0; d < dim; d++) sum[d] = (sum[d] as number) + (v[d] as number);
  }
  if (stats !== undefined) stats.scored += slots.length;
  return sum;
}
