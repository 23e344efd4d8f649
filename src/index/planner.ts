/**
 * The per-query planner: which strategy answers a search, from the filter's estimated
 * cardinality (payload/filter-estimate.ts) and a cost model in distance computations.
 *
 * - `graph`: unfiltered HNSW search.
 * - `flat-scan`: every live point checked (and scored if it matches). Exact.
 * - `candidates-exact`: only the slots the payload indexes name are checked and scored. Exact.
 * - `graph-filtered`: HNSW walk that returns only matching points (tombstones and non-matching
 *   nodes guide the walk but are never returned).
 * - `sample`: the estimate straddles the threshold; the caller measures the selectivity on a
 *   random sample and asks again with that.
 *
 * Cost model: scoring c candidates costs c distances. A filtered walk costs about
 * W · ef · m / selectivity, i.e. W · ef · m · n / matches, where W is the share of a node's links
 * a walk actually scores (most were visited already). The two are equal at
 * matches = sqrt(W · m · ef · n); below that, scoring the candidates is cheaper (and exact).
 * W = WALK_SHARE is calibrated on the filtered benchmark (bench/results/HISTORY.md, "Filtered
 * search (issue 4)"): on 100k × 128 a two-hop walk at 10% selectivity (the filter a bitset) cost
 * about what scoring 3,000 candidates did, since gathered candidates are scored at memory latency
 * while a walk's are mostly cached.
 * W = 0.2 puts the threshold near 4,500 matches there and near 1,300 on MNIST 9k × 784.
 */

export type Strategy = 'graph' | 'flat-scan' | 'candidates-exact' | 'graph-filtered' | 'sample' | 'sparse-index';

export interface Cardinality {
  readonly min: number;
  readonly expected: number;
  readonly max: number;
}

export interface PlanInput {
  /** Live points. */
  readonly n: number;
  /** Search breadth (max(ef, k)). */
  readonly ef: number;
  /** HNSW m; undefined when the collection has no graph. */
  readonly m: number | undefined;
  /** `params.exact`: no approximate strategy. */
  readonly exact: boolean;
  /** Matching points, undefined without a filter. */
  readonly matches: Cardinality | undefined;
  /** How many slots the payload indexes name (a superset of the matches), when they can. */
  readonly candidates: number | undefined;
  /** The caller already sampled: decide between exact and graph now. */
  readonly sampled?: boolean;
}

/** Share of a node's links a walk scores, relative to exact scoring's cost per candidate. */
export const WALK_SHARE = 0.2;

/** Matches below which scoring them exactly beats a filtered graph walk. */
export function exactThreshold(n: number, m: number, ef: number): number {
  return Math.sqrt(WALK_SHARE * m * ef * n);
}

/** The exact way to answer: score the candidates when they are under half the points, else scan. */
export function exactStrategy(candidates: number | undefined, n: number): 'candidates-exact' | 'flat-scan' {
  return candidates !== undefined && candidates < n / 2 ? 'candidates-exact' : 'flat-scan';
}

export function choosePlan(input: PlanInput): Strategy {
  const { n, m, matches, candidates } = input;
  if (matches === undefined) return m === undefined || input.exact ? 'flat-scan' : 'graph';
  const exact = exactStrategy(candidates, n);
  // Without a graph (or when asked to be exact), the only question is what to scan.
  if (m === undefined || input.exact) return exact;
  const threshold = exactThreshold(n, m, input.ef);
  if (candidates !== undefined && candidates <= threshold) return 'candidates-exact';
  if (matches.max <= threshold) return exact;
  if (matches.min > threshold || input.sampled === true) return matches.expected <= threshold ? exact : 'graph-filtered';
  return 'sample';
}
