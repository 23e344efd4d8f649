/**
 * Exact document-at-a-time search with MaxScore pruning (Turtle & Flood), over posting lists sorted
 * by slot.
 *
 * Each query term t has an upper bound on what it can add to a score: ub(t) = max(0, w·max, w·min)
 * over its list's weight bounds, valid for weights of any sign. Terms are ordered by ub ascending;
 * once the heap holds k hits with floor F, the longest prefix of that order whose ub sum is below F
 * is "non-essential": a slot found only in those lists cannot reach F, so candidates come from the
 * other (essential) lists alone, and the non-essential lists are only probed (galloping forward)
 * for a candidate while its partial score plus the remaining bounds can still reach F.
 *
 * Pruning uses strict comparisons with a small relative margin, so a slot whose score could tie F
 * (and win the tie-break) is always scored, and float rounding of partial sums cannot prune a slot
 * that belongs in the answer. The score of a slot that is scored is summed in query-term order
 * from 0, exactly as the term-at-a-time search and sparseDot sum it.
 *
 * Every CHECK_EVERY candidates it checks whether pruning pays; when it does not, the rest is handed
 * to the term-at-a-time search from the current cursors (slots below them are all dealt with).
 */
import type { PostingList } from './posting-list.js';
import type { SparseTopK } from './sparse-top-k.js';
import { type TermAtATimeScratch, termAtATime } from './term-at-a-time.js';

/** Relative slack on pruning comparisons: far above float64 rounding of sums of a few thousand terms. */
const MARGIN = 1e-9;

/**
 * Candidates between checks of whether pruning pays. When at a check the essential lists still
 * hold more than 1/DAAT_COST of the postings left (nothing pruned yet because the heap is not
 * full or its floor is low, as under a selective accept; or only short lists pruned), the rest is
 * scored term at a time, which costs less per posting than the candidate loop.
 */
const CHECK_EVERY = 1024;
/** What a posting costs walked by the candidate loop, in postings added term at a time (measured ≈ 2–3). */
const DAAT_COST = 2.5;

/** Reusable per-index scratch, grown to the longest query seen. */
export class MaxScoreScratch {
  ub = new Float64Array(16);
  order = new Int32Array(16);
  prefix = new Float64Array(16);
  pos = new Int32Array(16);
  contribution = new Float64Array(16);

  ensure(m: number): void {
    if (m <= this.ub.length) return;
    const size = Math.max(m, 2 * this.ub.length);
    this.ub = new Float64Array(size);
    this.order = new Int32Array(size);
    this.prefix = new Float64Array(size);
    this.pos = new Int32Array(size);
    this.contribution = new Float64Array(size);
  }
}

/**
 * Offers to `top` every slot that can rank among its best (and passes `accept`), with its exact
 * score. `lists[t]` and `weights[t]` are the query's terms in ascending index order.
 */
export function maxScoreSearch(
  lists: readonly PostingList[],
  weights: readonly number[],
  top: SparseTopK,
  accept: ((slot: number) => boolean) | undefined,
  scratch: MaxScoreScratch,
  fallback: TermAtATimeScratch,
): void {
  const m = lists.length;
  scratch.ensure(m);
  const { ub, order, prefix, pos, contribution } = scratch;
  for (let t = 0; t < m; t++) {
    const list = lists[t] as PostingList;
    const w = weights[t] as number;
    ub[t] = Math.max(0, w * list.max, w * list.min);
    order[t] = t;
    pos[t] = 0;
  }
  // Insertion sort by ub ascending (m is a handful of terms); ties by term position for determinism.
  for (let i = 1; i < m; i++) {
    const t = order[i] as number;
    let j = i - 1;
    while (j >= 0 && (ub[order[j] as number] as number) > (ub[t] as number)) {
      order[j + 1] = order[j] as number;
      j--;
    }
    order[j + 1] = t;
  }
  let sum = 0;
  for (let i = 0; i < m; i++) {
    sum += ub[order[i] as number] as number;
    prefix[i] = sum;
  }
  /** order[0 … firstEssential) are the non-essential terms. */
  let firstEssential = 0;
  let floor = top.floor;
  let untilCheck = CHECK_EVERY;
  /** The last candidate taken. */
  let last = -1;
  for (;;) {
    if (--untilCheck === 0) {
      untilCheck = CHECK_EVERY;
      let essential = 0;
      let remaining = 0;
      for (let e = 0; e < m; e++) {
        const t = order[e] as number;
        const left = (lists[t] as PostingList).length - (pos[t] as number);
        remaining += left;
        if (e >= firstEssential) essential += left;
      }
      if (essential * DAAT_COST >= remaining) {
        // Every slot up to `last` is dealt with and the essential cursors stand past it. The others
        // may lag: move them up too (what they would add to a slot behind could not reach the floor
        // anyway, it is work saved).
        for (let e = 0; e < firstEssential; e++) {
          const t = order[e] as number;
          pos[t] = advance(lists[t] as PostingList, pos[t] as number, last + 1);
        }
        termAtATime(lists, weights, pos, top, accept, fallback);
        return;
      }
    }
    // The next candidate: the lowest slot at the heads of the essential lists.
    let slot = 0x7fffffff;
    for (let e = firstEssential; e < m; e++) {
      const t = order[e] as number;
      const list = lists[t] as PostingList;
      const p = pos[t] as number;
      if (p < list.length) {
        const s = list.slots[p] as number;
        if (s < slot) slot = s;
      }
    }
    if (slot === 0x7fffffff) return;
    last = slot;
    contribution.fill(0, 0, m);
    let partial = 0;
    let magnitude = 0;
    for (let e = firstEssential; e < m; e++) {
      const t = order[e] as number;
      const list = lists[t] as PostingList;
      const p = pos[t] as number;
      if (p < list.length && list.slots[p] === slot) {
        const c = (weights[t] as number) * (list.weights[p] as number);
        contribution[t] = c;
        partial += c;
        magnitude += Math.abs(c);
        pos[t] = p + 1;
      }
    }
    let pruned = false;
    for (let e = firstEssential - 1; e >= 0; e--) {
      const rest = prefix[e] as number;
      if (partial + rest < floor - MARGIN * (magnitude + rest + Math.abs(floor))) {
        pruned = true;
        break;
      }
      const t = order[e] as number;
      const list = lists[t] as PostingList;
      const p = advance(list, pos[t] as number, slot);
      pos[t] = p;
      if (p < list.length && list.slots[p] === slot) {
        const c = (weights[t] as number) * (list.weights[p] as number);
        contribution[t] = c;
        partial += c;
        magnitude += Math.abs(c);
      }
    }
    if (pruned) continue;
    if (partial < floor - MARGIN * (magnitude + Math.abs(floor))) continue;
    if (accept !== undefined && !accept(slot)) continue;
    let score = 0;
    for (let t = 0; t < m; t++) score += contribution[t] as number;
    if (score < floor) continue;
    top.offer(slot, score);
    if (top.floor !== floor) {
      floor = top.floor;
      while (firstEssential < m && (prefix[firstEssential] as number) < floor - MARGIN * ((prefix[firstEssential] as number) + Math.abs(floor))) {
        firstEssential++;
      }
    }
  }
}

/** First position ≥ `from` whose slot is ≥ `slot`: galloping, then binary search. */
function advance(list: PostingList, from: number, slot: number): number {
  const slots = list.slots;
  const n = list.length;
  if (from >= n || (slots[from] as number) >= slot) return from;
  let step = 1;
  let lo = from;
  while (lo + step < n && (slots[lo + step] as number) < slot) {
    lo += step;
    step *= 2;
  }
  let hi = Math.min(n, lo + step);
  lo++;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((slots[mid] as number) < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
