/**
 * The distance-heavy part of a search as data, and the one function that runs it on a view of a
 * segment: the service thread's `Segment` (search/collection-search.ts) and a search thread's view
 * of the shared memory (threads/search-thread.ts) run the same `runWork`.
 *
 * A work item says which slots it may return with a `SlotFilter`: every live slot, those of a
 * bitset, or those passing a predicate. The predicate is generic, because each side carries it its
 * own way: the service thread a parsed filter with its compiled (or index-answered) test, a search
 * thread a portable filter it runs on the shared payload records (payload/thread-filter.ts). The
 * view turns it into a test (`WorkView.acceptOf`); everything else in a work item is plain data
 * that crosses to a thread as it is (typed arrays over shared memory by reference, the rest copied).
 */
import type { Distance } from '../core/distance.js';
import { hasBit } from '../core/slot-bits.js';
import type { SearchHits, SearchOptions, SearchStats } from '../index/vector-index.js';
import { pickMmr } from './mmr.js';
import { sumVectors } from './sum-vectors.js';

/** Which slots a work item may return. */
export type SlotFilter<P> =
  | { readonly kind: 'all' }
  /** Exactly the set bits (core/slot-bits.ts): the payload indexes answered the filter. */
  | { readonly kind: 'bits'; readonly bits: Uint32Array }
  /** The slots that pass the predicate (and hold a live point). */
  | { readonly kind: 'predicate'; readonly predicate: P };

export const ALL_SLOTS: SlotFilter<never> = { kind: 'all' };

/** One piece of a search's scoring, and the two other jobs a thread takes (MMR's picks, a recommendation's vector sums). */
export type SearchWork<P> =
  /** An HNSW walk; `twoHop` looks past rejected neighbours (filtered walks). */
  | { readonly kind: 'graph'; readonly query: Float32Array; readonly k: number; readonly ef: number; readonly only: SlotFilter<P>; readonly twoHop?: boolean }
  /** Every live slot scored. */
  | { readonly kind: 'flat'; readonly query: Float32Array; readonly k: number; readonly only: SlotFilter<P> }
  /** The listed slots (distinct, live) scored. */
  | { readonly kind: 'slots'; readonly query: Float32Array; readonly k: number; readonly slots: Int32Array; readonly only: SlotFilter<P> }
  /** MMR's picks among candidates already found, best first (segment/mmr.ts); the hits come back in MMR order. */
  | { readonly kind: 'mmr'; readonly slots: Int32Array; readonly sims: Float64Array; readonly picks: number; readonly diversity: number }
  /** The component-wise sum of the stored vectors of `slots`: it comes back as the hits' `sims`, with no slots. */
  | { readonly kind: 'sum'; readonly slots: Int32Array };

/** What running work reads of a segment. */
export interface WorkView<P> {
  readonly distance: Distance;
  readonly dim: number;
  /** An HNSW search (the view adds what it must, e.g. keeping ties on a thread, which has no ids). */
  searchGraph(options: SearchOptions): SearchHits;
  searchFlat(options: SearchOptions): SearchHits;
  scoreSlots(query: Float32Array, slots: ArrayLike<number>, k: number, stats: SearchStats): SearchHits;
  scoreEach(query: Float32Array, slots: ArrayLike<number>, out: Float64Array, stats?: SearchStats): void;
  readVector(slot: number): Float32Array;
  /** The test of a predicate, for the one work item being run. */
  acceptOf(predicate: P): (slot: number) => boolean;
}

/** The test of a slot filter, as a function and (when there is one) as the bitset graph walks read inline. */
function testOf<P>(view: WorkView<P>, only: SlotFilter<P>): { accept?: (slot: number) => boolean; acceptBits?: Uint32Array } {
  switch (only.kind) {
    case 'all':
      return {};
    case 'bits': {
      const bits = only.bits;
      return { accept: (slot) => hasBit(bits, slot), acceptBits: bits };
    }
    case 'predicate':
      return { accept: view.acceptOf(only.predicate) };
  }
}

/** Runs one work item on a view; the distances it computes are added to `stats`. */
export function runWork<P>(view: WorkView<P>, work: SearchWork<P>, stats: SearchStats): SearchHits {
  switch (work.kind) {
    case 'graph': {
      const { accept, acceptBits } = testOf(view, work.only);
      return view.searchGraph({ query: work.query, k: work.k, ef: work.ef, accept, acceptBits, twoHop: work.twoHop, stats });
    }
    case 'flat':
      return view.searchFlat({ query: work.query, k: work.k, accept: testOf(view, work.only).accept, stats });
    case 'slots': {
      const accept = testOf(view, work.only).accept;
      return view.scoreSlots(work.query, accept === undefined ? work.slots : work.slots.filter(accept), work.k, stats);
    }
    case 'mmr':
      return pickMmr(view, view.distance, { candidates: { slots: work.slots, sims: work.sims }, picks: work.picks, diversity: work.diversity }, stats);
    case 'sum':
      return { slots: new Int32Array(0), sims: sumVectors((slot) => view.readVector(slot), work.slots, view.dim, stats) };
  }
}
