/**
 * The inverted index of one sparse vector field: for every index (term) present, the slots whose
 * vector holds it, with the weight. Exact search by dot product.
 *
 * What Qdrant does (read in qdrant/qdrant v1.18.0, lib/sparse and lib/segment's sparse_index), and
 * what this file does about it:
 *
 * - Which points a search returns: only points that share at least one index with the query; a
 *   point sharing none is never a hit, even for a limit larger than the matches. Qdrant's scorer
 *   reports "no overlap" apart from a 0 sum. Its batched search path does skip a point whose
 *   summed score is exactly 0.0, but its other paths (the last remaining posting list, and the
 *   small-filter plain search) keep such points, as they keep negative scores. We follow the rule
 *   the paths agree on: every point with an index in common is a candidate, whatever the sign of
 *   its score, 0 included.
 * - Empty vectors are not put in Qdrant's inverted index at all and are not counted in its vector
 *   count. So `documentCount` here counts slots holding a NON-empty vector; an empty vector is
 *   accepted by add/remove but is never a hit and is not in idf's N.
 * - idf (`modifier: "idf"`): applied to the QUERY weights only, stored weights stay as given.
 *   Each query weight is multiplied by ln(1 + (N − df + 0.5) / (df + 0.5)), where N is the number
 *   of indexed (non-empty) vectors and df the length of the index's posting list (points holding
 *   that index, a stored weight of 0 included). A query index no point holds gets df = 0.
 *   Qdrant sums N and df over all segments of the collection: a caller with several indexes does
 *   the same through `documentFrequency` and `idf`, and searches with `searchWeighted`.
 *   Qdrant computes in float32; `idf` rounds each step to float32 and `weighted` stores float32.
 * - Scores: Qdrant sums float32 products in float32. We sum in float64, query terms in ascending
 *   index order, which makes a score independent of insertion order and equal, bit for bit, to
 *   `sparseDot(weighted(query), vector)`.
 * - Ties: Qdrant orders by score alone (an unstable sort), so equal scores come back in no
 *   particular order. Here equal scores are ordered by `idOf(slot)` ascending when the caller
 *   passes `idOf` (kith's rule: external id ascending), else by slot ascending.
 *
 * Search, two ways with the same answer: term at a time (every posting of the query's lists added
 * into a dense float64 accumulator indexed by slot, kept between searches and cleared through the
 * list of slots touched, then the best `k` of the touched slots picked with a heap), or document
 * at a time with MaxScore pruning (max-score.ts), which skips postings that cannot reach the k-th
 * score. `accept` is asked only about slots that could still enter the heap. One search at a time
 * per index: the scratch is shared (an `accept` must not search the same index).
 */
import { MaxScoreScratch, maxScoreSearch } from './max-score.js';
import { PostingList } from './posting-list.js';
import type { SparseVector } from './sparse-vector.js';
import { SparseTopK } from './sparse-top-k.js';
import { TermAtATimeScratch, termAtATime } from './term-at-a-time.js';

export interface SparseIndexOptions {
  /** Qdrant's `modifier: "idf"`: query weights are multiplied by their index's idf. */
  readonly idf: boolean;
  /**
   * How search walks the postings; all give the same hits. 'auto' (the default): MaxScore for
   * queries of two or more indexed terms (it goes over to term at a time by itself when pruning
   * does not pay), term at a time for one. 'term-at-a-time' never prunes; 'max-score' uses MaxScore
   * even for one list. For tests and benchmarks.
   */
  readonly search?: 'auto' | 'term-at-a-time' | 'max-score';
}

export interface SparseHits {
  readonly slots: Int32Array;
  readonly scores: Float64Array;
}

/** Slot states in `held`. */
const ABSENT = 0;
const EMPTY = 1;
const INDEXED = 2;

/** Rough per-posting-list overhead beyond its arrays: the object, two typed array views and buffers, a Map entry. */
const LIST_OVERHEAD_BYTES = 240;

/**
 * Qdrant's idf, each step rounded to float32 as Qdrant computes it:
 * ln(1 + (n − df + 0.5) / (df + 0.5)).
 */
export function idf(n: number, df: number): number {
  const f = Math.fround;
  const ratio = f(f(f(n) - f(df)) + 0.5) / f(f(df) + 0.5);
  return f(Math.log(f(f(ratio) + 1)));
}

export class SparseIndex {
  readonly options: SparseIndexOptions;
  private readonly lists = new Map<number, PostingList>();
  /** Per slot: ABSENT, EMPTY or INDEXED. */
  private held = new Uint8Array(64);
  private indexed = 0;
  private postingCount = 0;
  private widestSeen = 0;

  // Search scratch, reused across searches; the accumulator's sized to `held`'s capacity.
  private readonly scratch = new TermAtATimeScratch();
  private readonly maxScore = new MaxScoreScratch();

  constructor(options: SparseIndexOptions) {
    this.options = { idf: options.idf, search: options.search ?? 'auto' };
  }

  /** Slots holding a non-empty vector: idf's N. Empty vectors are not counted (as in Qdrant). */
  get documentCount(): number {
    return this.indexed;
  }

  /** Postings stored, over all indices. */
  get postings(): number {
    return this.postingCount;
  }

  /**
   * The most indices any vector added has held (not lowered on removal): an upper bound of one
   * vector's length, for bounding work that reads stored vectors (MMR's comparisons).
   */
  get widest(): number {
    return this.widestSeen;
  }

  /** Number of slots holding the index (Qdrant's df: the posting list's length). */
  documentFrequency(index: number): number {
    return this.lists.get(index)?.length ?? 0;
  }

  /** Adds the slot's vector; the slot must not hold one already. */
  add(slot: number, vector: SparseVector): void {
    checkSlot(slot);
    this.ensureSlots(slot + 1);
    if (this.held[slot] !== ABSENT) throw new Error(`sparse index: slot ${slot} already holds a vector`);
    const { indices, values } = vector;
    if (indices.length === 0) {
      this.held[slot] = EMPTY;
      return;
    }
    for (let i = 0; i < indices.length; i++) {
      const index = indices[i] as number;
      let list = this.lists.get(index);
      if (list === undefined) {
        list = new PostingList();
        this.lists.set(index, list);
      }
      list.insert(slot, values[i] as number);
    }
    this.held[slot] = INDEXED;
    this.widestSeen = Math.max(this.widestSeen, indices.length);
    this.indexed++;
    this.postingCount += indices.length;
  }

  /** Removes the slot's vector; `vector` must be the one added at the slot. Nothing changes on error. */
  remove(slot: number, vector: SparseVector): void {
    checkSlot(slot);
    const state = slot < this.held.length ? this.held[slot] : ABSENT;
    if (state === ABSENT) throw new Error(`sparse index: slot ${slot} holds no vector`);
    const indices = vector.indices;
    if ((state === EMPTY) !== (indices.length === 0)) {
      throw new Error(`sparse index: slot ${slot} holds ${state === EMPTY ? 'an empty' : 'a non-empty'} vector, not the one given`);
    }
    for (let i = 0; i < indices.length; i++) {
      if (this.lists.get(indices[i] as number)?.has(slot) !== true) {
        throw new Error(`sparse index: slot ${slot} has no posting for index ${indices[i]}`);
      }
    }
    for (let i = 0; i < indices.length; i++) {
      const index = indices[i] as number;
      const list = this.lists.get(index) as PostingList;
      list.remove(slot);
      if (list.length === 0) this.lists.delete(index);
    }
    this.held[slot] = ABSENT;
    if (indices.length > 0) {
      this.indexed--;
      this.postingCount -= indices.length;
    }
  }

  /** The query weights as scored: multiplied by each index's idf (float32) when the modifier is on. */
  weighted(query: SparseVector): SparseVector {
    if (!this.options.idf) return query;
    const n = this.indexed;
    const values = new Float32Array(query.values.length);
    for (let i = 0; i < values.length; i++) {
      values[i] = (query.values[i] as number) * idf(n, this.documentFrequency(query.indices[i] as number));
    }
    return { indices: query.indices, values };
  }

  /** Postings a search of `query` walks at most: the sum of its indices' posting lengths. */
  cost(query: SparseVector): number {
    let total = 0;
    for (let i = 0; i < query.indices.length; i++) total += this.documentFrequency(query.indices[i] as number);
    return total;
  }

  /**
   * Exact top `k` by dot product with the query (idf-weighted when the modifier is on), among slots
   * sharing an index with it and passing `accept`. Best first; ties by `idOf` ascending, else slot.
   */
  search(query: SparseVector, k: number, accept?: (slot: number) => boolean, idOf?: (slot: number) => string): SparseHits {
    return this.searchWeighted(this.weighted(query), k, accept, idOf);
  }

  /** `search` with the query weights taken as they are (no idf applied): for callers that weight across indexes. */
  searchWeighted(query: SparseVector, k: number, accept?: (slot: number) => boolean, idOf?: (slot: number) => string): SparseHits {
    const lists: PostingList[] = [];
    const weights: number[] = [];
    let cost = 0;
    for (let t = 0; t < query.indices.length; t++) {
      const list = this.lists.get(query.indices[t] as number);
      if (list === undefined) continue;
      lists.push(list);
      weights.push(query.values[t] as number);
      cost += list.length;
    }
    if (k <= 0 || cost === 0) return { slots: new Int32Array(0), scores: new Float64Array(0) };
    const top = new SparseTopK(Math.min(k, cost), idOf);
    const strategy = this.options.search ?? 'auto';
    if (strategy === 'max-score' || (strategy === 'auto' && lists.length > 1)) {
      maxScoreSearch(lists, weights, top, accept, this.maxScore, this.scratch);
    } else {
      termAtATime(lists, weights, undefined, top, accept, this.scratch);
    }
    return top.drain();
  }

  /**
   * Gives back the posting arrays' spare capacity (up to half of them after growth by doubling):
   * for after a bulk load. Later adds grow the lists again.
   */
  trim(): void {
    for (const list of this.lists.values()) list.trim();
  }

  /** Bytes held: posting arrays (capacity), an estimate of each list's object overhead, per-slot state and search scratch. */
  memoryBytes(): number {
    let bytes = this.held.byteLength + this.scratch.byteLength;
    for (const list of this.lists.values()) bytes += list.byteLength + LIST_OVERHEAD_BYTES;
    return bytes;
  }

  private ensureSlots(needed: number): void {
    if (needed > this.held.length) {
      let capacity = this.held.length;
      while (capacity < needed) capacity *= 2;
      const held = new Uint8Array(capacity);
      held.set(this.held);
      this.held = held;
    }
    this.scratch.ensure(this.held.length);
  }
}

function checkSlot(slot: number): void {
  if (!Number.isInteger(slot) || slot < 0 || slot > 0x7fff_ffff) throw new Error(`sparse index: slot ${slot} is not a slot number`);
}
