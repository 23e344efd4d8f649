/**
 * Ground truth for recall: exact top-k by cosine similarity in float64, computed in the bench
 * process on the very float32 values that were sent to the server. Ties break by row index.
 */
import type { VectorSet } from '../datasets/synthetic.js';

export interface GroundTruth {
  readonly k: number;
  /** Row indices, `k` per query, best first. */
  readonly ids: Int32Array;
  /** Their float64 cosine similarities. */
  readonly scores: Float64Array;
}

/** Float64 copy of a set with every row scaled to unit length (cosine = dot product). */
function unitRows64(set: VectorSet): Float64Array {
  const { dim, data } = set;
  const out = new Float64Array(data.length);
  for (let r = 0; r < data.length / dim; r++) {
    let norm2 = 0;
    for (let j = 0; j < dim; j++) {
      const x = data[r * dim + j] as number;
      out[r * dim + j] = x;
      norm2 += x * x;
    }
    const inv = norm2 > 0 ? 1 / Math.sqrt(norm2) : 0;
    for (let j = 0; j < dim; j++) out[r * dim + j] = (out[r * dim + j] as number) * inv;
  }
  return out;
}

export function exactCosineTopK(base: VectorSet, queries: VectorSet, k: number): GroundTruth {
  const dim = base.dim;
  const n = base.data.length / dim;
  const nq = queries.data.length / dim;
  const b = unitRows64(base);
  const q = unitRows64(queries);
  const ids = new Int32Array(nq * k).fill(-1);
  const scores = new Float64Array(nq * k).fill(Number.NEGATIVE_INFINITY);
  const topIds = new Int32Array(k);
  const topScores = new Float64Array(k);
  for (let qi = 0; qi < nq; qi++) {
    topIds.fill(-1);
    topScores.fill(Number.NEGATIVE_INFINITY);
    const qo = qi * dim;
    for (let r = 0; r < n; r++) {
      const ro = r * dim;
      let s = 0;
      for (let j = 0; j < dim; j++) s += (q[qo + j] as number) * (b[ro + j] as number);
      // Insertion into a sorted array of k: strictly better only, so the lower index wins a tie.
      if (s <= (topScores[k - 1] as number)) continue;
      let pos = k - 1;
      while (pos > 0 && s > (topScores[pos - 1] as number)) {
        topScores[pos] = topScores[pos - 1] as number;
        topIds[pos] = topIds[pos - 1] as number;
        pos--;
      }
      topScores[pos] = s;
      topIds[pos] = r;
    }
    ids.set(topIds, qi * k);
    scores.set(topScores, qi * k);
  }
  return { k, ids, scores };
}

/** Float64 cosine similarity of query `qi` and base row `r`. */
export function exactCosine(base: VectorSet, queries: VectorSet, qi: number, r: number): number {
  const dim = base.dim;
  let dot = 0;
  let nq = 0;
  let nb = 0;
  for (let j = 0; j < dim; j++) {
    const x = queries.data[qi * dim + j] as number;
    const y = base.data[r * dim + j] as number;
    dot += x * y;
    nq += x * x;
    nb += y * y;
  }
  return nq === 0 || nb === 0 ? 0 : dot / Math.sqrt(nq * nb);
}

export interface RecallReport {
  /** Mean over queries of |returned ∩ true top-k| / k. */
  readonly recall: number;
  readonly queries: number;
  /** Returned ids that are not in the true top-k. */
  readonly misses: number;
  /** Of those, how many score within `tie_tolerance` of the true k-th score (float ties, not errors). */
  readonly misses_within_tolerance: number;
  readonly tie_tolerance: number;
  /** Largest |server score − float64 score| over every returned hit. */
  readonly max_score_error: number;
}

/**
 * `returned[qi]` holds the server's hits for query `qi` (ids as the decimal strings of row indices).
 */
export function recallAtK(
  truth: GroundTruth,
  returned: readonly (readonly { id: string; score: number }[])[],
  base: VectorSet,
  queries: VectorSet,
  tieTolerance = 1e-6,
): RecallReport {
  const k = truth.k;
  let found = 0;
  let misses = 0;
  let tolerated = 0;
  let maxScoreError = 0;
  for (let qi = 0; qi < returned.length; qi++) {
    const hits = returned[qi] ?? [];
    const expected = new Set<number>();
    for (let i = 0; i < k; i++) expected.add(truth.ids[qi * k + i] as number);
    const kth = truth.scores[qi * k + k - 1] as number;
    for (const hit of hits.slice(0, k)) {
      const row = Number(hit.id);
      const exact = exactCosine(base, queries, qi, row);
      maxScoreError = Math.max(maxScoreError, Math.abs(exact - hit.score));
      if (expected.has(row)) found++;
      else {
        misses++;
        if (exact >= kth - tieTolerance) tolerated++;
      }
    }
  }
  const n = returned.length;
  return {
    recall: n === 0 ? Number.NaN : found / (n * k),
    queries: n,
    misses,
    misses_within_tolerance: tolerated,
    tie_tolerance: tieTolerance,
    max_score_error: maxScoreError,
  };
}
