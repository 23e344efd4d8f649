/**
 * Maximal marginal relevance: re-ranks a search's nearest candidates for diversity. Greedily, each
 * pick is the candidate maximising (1 − diversity)·relevance − diversity·(its highest similarity to
 * those already picked); the first pick is the most relevant. Similarities are the collection's
 * own (cosine or dot product, and the negated L2 distance for Euclid), computed by the distance
 * kernels: each pick scores the remaining candidates against the picked vector, so the work is
 * picks × candidates × vector_size (bounded per request, search/request-cost.ts). It runs
 * where the search's other scoring runs: on a search thread when the service has them, or here.
 */
import { type Distance, scoresAscend, similarityToScore } from '../core/distance.js';
import type { SearchHits, SearchStats } from '../index/vector-index.js';

/** What MMR reads: stored vectors, and the kernel scoring slots against a vector. */
export interface MmrReader {
  readVector(slot: number): Float32Array;
  scoreEach(query: Float32Array, slots: ArrayLike<number>, out: Float64Array, stats?: SearchStats): void;
}

export interface MmrWork {
  /** Candidates, best first (their similarities to the query in `sims`), distinct. */
  readonly candidates: SearchHits;
  /** How many to pick (offset + limit). */
  readonly picks: number;
  /** 0: relevance only; 1: diversity only. */
  readonly diversity: number;
}

/** The picked candidates, in MMR order, with their similarities to the query. */
export function pickMmr(reader: MmrReader, distance: Distance, work: MmrWork, stats?: SearchStats): SearchHits {
  const { slots, sims } = work.candidates;
  const n = slots.length;
  const picks = Math.min(work.picks, n);
  const ascending = scoresAscend(distance);
  // Higher is more similar for every distance: Euclid's score is a distance, so it is negated.
  const similarity = (sim: number): number => (ascending ? -similarityToScore(distance, sim) : similarityToScore(distance, sim));
  const relevance = Float64Array.from(sims, similarity);
  const closest = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  // The candidates not picked yet, as positions into `slots`, compacted after each pick.
  const free = Int32Array.from({ length: n }, (_, i) => i);
  let freeCount = n;
  const freeSlots = new Int32Array(n);
  const scores = new Float64Array(n);
  const picked = new Int32Array(picks);
  const pickedSims = new Float64Array(picks);
  for (let p = 0; p < picks; p++) {
    let best = -1;
    let bestValue = Number.NEGATIVE_INFINITY;
    for (let f = 0; f < freeCount; f++) {
      const i = free[f] as number;
      const penalty = p === 0 ? 0 : (closest[i] as number);
      const value = (1 - work.diversity) * (relevance[i] as number) - work.diversity * penalty;
      // Strictly greater: among equals the earlier (more relevant, then lower id) candidate wins.
      if (value > bestValue || best === -1) {
        bestValue = value;
        best = f;
      }
    }
    const chosen = free[best] as number;
    picked[p] = slots[chosen] as number;
    pickedSims[p] = sims[chosen] as number;
    // Removed by shifting, so the free list stays in relevance order and ties keep breaking towards the more relevant.
    free.copyWithin(best, best + 1, freeCount);
    freeCount--;
    if (p === picks - 1 || freeCount === 0) break;
    for (let f = 0; f < freeCount; f++) freeSlots[f] = slots[free[f] as number] as number;
    reader.scoreEach(reader.readVector(slots[chosen] as number), freeSlots.subarray(0, freeCount), scores, stats);
    for (let f = 0; f < freeCount; f++) {
      const i = free[f] as number;
      const s = similarity(scores[f] as number);
      if (s > (closest[i] as number)) closest[i] = s;
    }
  }
  return { slots: picked, sims: pickedSims };
}
