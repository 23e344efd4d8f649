/**
 * Exact term-at-a-time search: every posting of the query's lists (from given start positions) is
 * added into a dense float64 accumulator indexed by slot, in query-term order, so a slot's score is
 * summed from 0 in the order sparseDot sums it. The slots touched are then offered to the heap;
 * `accept` is asked only about slots that could still enter it.
 *
 * The accumulator, the touched marks and the touched list are sized to the index's slot capacity
 * and reused across searches: they are all zero between searches (cleared through the touched
 * list, also when `accept` throws).
 */
import type { PostingList } from './posting-list.js';
import type { SparseTopK } from './sparse-top-k.js';

export class TermAtATimeScratch {
  acc = new Float64Array(0);
  mark = new Uint8Array(0);
  touched = new Int32Array(0);

  /** Makes room for slots below `capacity` (the scratch must be idle: between searches). */
  ensure(capacity: number): void {
    if (capacity <= this.acc.length) return;
    this.acc = new Float64Array(capacity);
    this.mark = new Uint8Array(capacity);
    this.touched = new Int32Array(capacity);
  }

  get byteLength(): number {
    return this.acc.byteLength + this.mark.byteLength + this.touched.byteLength;
  }
}

/**
 * Scores the postings of `lists[t]` from position `from[t]` (0 when `from` is absent) on, weighted
 * by `weights[t]`, and offers each touched slot to `top`. Callers that start past 0 must have
 * dealt with every slot below the start already (max-score.ts switching over mid-way).
 */
export function termAtATime(
  lists: readonly PostingList[],
  weights: readonly number[],
  from: Int32Array | undefined,
  top: SparseTopK,
  accept: ((slot: number) => boolean) | undefined,
  scratch: TermAtATimeScratch,
): void {
  const { acc, mark, touched } = scratch;
  let count = 0;
  for (let t = 0; t < lists.length; t++) {
    const list = lists[t] as PostingList;
    const w = weights[t] as number;
    const slots = list.slots;
    const values = list.weights;
    const n = list.length;
    for (let i = from === undefined ? 0 : (from[t] as number); i < n; i++) {
      const slot = slots[i] as number;
      if (mark[slot] === 0) {
        mark[slot] = 1;
        touched[count++] = slot;
      }
      acc[slot] = (acc[slot] as number) + w * (values[i] as number);
    }
  }
  try {
    for (let i = 0; i < count; i++) {
      const slot = touched[i] as number;
      const score = acc[slot] as number;
      if (score < top.floor) continue;
      if (accept !== undefined && !accept(slot)) continue;
      top.offer(slot, score);
    }
  } finally {
    for (let i = 0; i < count; i++) {
      const slot = touched[i] as number;
      acc[slot] = 0;
      mark[slot] = 0;
    }
  }
}
