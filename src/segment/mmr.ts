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

/**
 * Candidates as the greedy pick reads them, whatever the vector: their relevance to the query and,
 * for one picked candidate, the others' similarities to it (higher is more similar for both).
 */
export interface MmrPool {
  /** Each candidate's relevance, in the candidates' order (best first by the search's score). */
  readonly relevance: Float64Array;
  /** Writes into `out[f]` the similarity of candidate `others[f]` to candidate `picked` (positions in the pool). */
  similarities(picked: number, others: Int32Array, out: Float64Array): void;
}

/**
 * The greedy pick over a pool: the most relevant first, then each maximising (1 − diversity)·relevance
 * − diversity·(its highest similarity to those picked). Returns the picked positions in MMR order.
 */
export function mmrOrder(pool: MmrPool, picks: number, diversity: number): Int32Array {
  const relevance = pool.relevance;
  const n = relevance.length;
  const wanted = Math.min(picks, n);
  const closest = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  // The candidates not picked yet, as positions, compacted after each pick.
  const free = Int32Array.from({ length: n }, (_, i) => i);
  let freeCount = n;
  const scores = new Float64Array(n);
  const picked = new Int32Array(wanted);
  for (let p = 0; p < wanted; p++) {
    let best = -1;
    let bestValue = Number.NEGATIVE_INFINITY;
    for (let f = 0; f < freeCount; f++) {
      const i = free[f] as number;
      // The first pick is by relevance alone (Qdrant's too), whatever the diversity.
      const value = p === 0 ? (relevance[i] as number) : (1 - diversity) * (relevance[i] as number) - diversity * (closest[i] as number);
      // Strictly greater: among equals the earlier (more relevant, then lower id) candidate wins.
      if (value > bestValue || best === -1) {
        bestValue = value;
        best = f;
      }
    }
    const chosen = free[best] as number;
    picked[p] = chosen;
    // Removed by shifting, so the free list stays in relevance order and ties keep breaking towards the more relevant.
    free.copyWithin(best, best + 1, freeCount);
    freeCount--;
    if (p === wanted - 1 || freeCount === 0) break;
    pool.similarities(chosen, free.subarray(0, freeCount), scores);
    for (let f = 0; f < freeCount; f++) {
      const i = free[f] as number;
      const s = scores[f] as number;
      if (s > (closest[i] as number)) closest[i] = s;
    }
  }
  return picked;
}

/** The picked candidates, in MMR order, with their similarities to the query. */
export function pickMmr(reader: MmrReader, distance: Distance, work: MmrWork, stats?: SearchStats): SearchHits {
  const { slots, sims } = work.candidates;
  const ascending = scoresAscend(distance);
  // Higher is more similar for every distance: Euclid's score is a distance, so it is negated.
  const similarity = (sim: number): number => (ascending ? -similarityToScore(distance, sim) : similarityToScore(distance, sim));
  const otherSlots = new Int32Array(slots.length);
  const pool: MmrPool = {
    relevance: Float64Array.from(sims, similarity),
    similarities: (picked, others, out) => {
      for (let f = 0; f < others.length; f++) otherSlots[f] = slots[others[f] as number] as number;
      reader.scoreEach(reader.readVector(slots[picked] as number), otherSlots.subarray(0, others.length), out, stats);
      for (let f = 0; f < others.length; f++) out[f] = similarity(out[f] as number);
    },
  };
  const order = mmrOrder(pool, work.picks, work.diversity);
  return { slots: order.map((i) => slots[i] as number), sims: Float64Array.from(order, (i) => sims[i] as number) };
}
