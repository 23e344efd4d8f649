/**
 * One cost model for every request, on both ports and in the library: what a request asks for is
 * added up here, from its parsed form and the collection's dimension, before any work starts, and a
 * request that asks for more than REQUEST_BUDGET allows is refused with ERR_OVER_LIMIT naming the
 * field that crossed the bound, the total and the limit. Nothing has been done when it is refused.
 *
 * What is counted (docs/params.md, "Request limits", gives the measurements behind each number):
 * - searches in one request (a batch);
 * - hits: offset + limit of every search, summed: each is a candidate kept and ranked, and each
 *   returned one is shaped and serialised (4,096 searches × limit 10,000 ran the service out of memory);
 * - returned vector components: returned points × vector_size, when vectors are asked for
 *   (serialising costs ~1.7 µs per component);
 * - payload selection: returned points × payload paths of an include/exclude selector (each path
 *   is checked against every value of every returned payload);
 * - filter terms (conditions and the values of their lists), summed over a request's filters (each
 *   is checked per point);
 * - example vectors of recommendations (each is read and averaged): examples × vector_size;
 * - MMR: picks × candidates × vector_size (each pick scores every remaining candidate);
 * - ids named in one request whose points are answered or rewritten (retrieve, payload updates by
 *   id; a delete by ids is bounded by the body only, being checked and applied in slices).
 * Per-field bounds that hold for one search alone (limit, offset, ef, filter size, regexes) are
 * where the field is parsed; this adds up what a request's parts ask for together.
 */
import { KithError } from '../core/errors.js';

export const REQUEST_BUDGET = {
  /** Searches (or queries, recommendations) in one batch request. */
  searches: 4096,
  /** Σ (offset + limit) over a request's searches; one search alone may ask for 110,000 (offset 100,000 + limit 10,000). */
  hits: 131_072,
  /** Σ returned points × vector_size, for answers that carry vectors. */
  vectorComponents: 524_288,
  /** Σ returned points × payload paths of an include/exclude selector. */
  payloadPathChecks: 1_048_576,
  /** Σ filter terms (conditions and list values) over a request's filters (one filter alone: 256 conditions and 1,024 values). */
  filterTerms: 16_384,
  /** Σ example vectors × vector_size over a request's recommendations. */
  exampleComponents: 16_777_216,
  /** Σ picks × candidates × vector_size over a request's MMR re-rankings. */
  mmrComponents: 268_435_456,
  /** Point ids named in one request whose points are answered or rewritten (retrieve, payload updates by id). */
  ids: 100_000,
  /** Σ indices of a request's sparse queries. */
  sparseTerms: 65_536,
  /** Σ postings a request's sparse searches walk (each query index's points in the collection). */
  sparsePostings: 16_777_216,
  /**
   * Σ floats a request's named-vector searches read: the name's stored floats (or, among listed
   * ids, theirs at most) × the query's rows. They are scored on the service thread, about 2 ns each
   * for one row (33,554,432: about 70 ms) and 0.9 ns for a multi-vector's.
   */
  namedComponents: 33_554_432,
  /** Σ points × examples × vector_size a request's searches by examples score (kernels, ~0.1 ns a component at 128-d). */
  exampleScoring: 268_435_456,
  /** Σ candidates × expression nodes a request's score formulas evaluate (in slices, about 20 ns a node). */
  formulaNodes: 33_554_432,
} as const;

export type BudgetName = keyof typeof REQUEST_BUDGET;

/** What one bound is about, for messages: `limit: the request asks for 41,000,000 hits (…); the limit is 131,072`. */
const WHAT: Record<BudgetName, string> = {
  searches: 'searches',
  hits: 'hits (offset + limit, over all its searches)',
  vectorComponents: 'returned vector components (returned points × vector_size)',
  payloadPathChecks: 'payload path checks (returned points × payload paths)',
  filterTerms: 'filter terms (conditions and list values, over all its filters)',
  exampleComponents: 'example vector components (examples × vector_size)',
  mmrComponents: 'MMR work (picks × candidates × vector_size)',
  ids: 'point ids',
  sparseTerms: 'sparse query indices',
  sparsePostings: 'sparse postings walked (points holding each query index, over all its sparse searches)',
  namedComponents: 'named vector components read (stored components × query rows, over all its named-vector searches)',
  exampleScoring: 'components scored by examples (points × examples × vector_size, over all its searches by examples)',
  formulaNodes: 'formula evaluations (candidates × expression nodes, over all its formulas)',
};

const number = new Intl.NumberFormat('en-US');

/**
 * The running totals of one request. Each `add` checks its total at once, so the error names the
 * first field that crossed the bound (e.g. `searches[812].limit`).
 */
export class RequestCost {
  private readonly totals: Record<BudgetName, number> = {
    searches: 0,
    hits: 0,
    vectorComponents: 0,
    payloadPathChecks: 0,
    filterTerms: 0,
    exampleComponents: 0,
    mmrComponents: 0,
    ids: 0,
    sparseTerms: 0,
    sparsePostings: 0,
    namedComponents: 0,
    exampleScoring: 0,
    formulaNodes: 0,
  };

  /** Adds `amount` to a total; ERR_OVER_LIMIT naming `path` when the total passes its bound. */
  add(name: BudgetName, amount: number, path: string): void {
    const total = this.totals[name] + amount;
    this.totals[name] = total;
    const limit = REQUEST_BUDGET[name];
    if (total > limit) {
      throw new KithError(
        'ERR_OVER_LIMIT',
        `${path === '' ? 'body' : path}: the request asks for ${number.format(total)} ${WHAT[name]}; the limit is ${number.format(limit)} (docs/params.md, "Request limits"): ask for less or split the request`,
      );
    }
  }

  /** The running total of one bound (for tests and explain). */
  total(name: BudgetName): number {
    return this.totals[name];
  }
}

/** What a search asks for, in the terms of the budget. */
export interface SearchShape {
  readonly offset: number;
  readonly limit: number;
  /** Points returned with their vectors (0 without with_vector). */
  readonly withVector: boolean;
  readonly vectorSize: number;
  /** Paths of an include/exclude payload selector (0 for all or none). */
  readonly payloadPaths: number;
  /** Terms of its filter (payload/filter-types.ts filterTerms; 0 without one). */
  readonly filterTerms: number;
  /** MMR's candidates, when the search re-ranks them for diversity. */
  readonly mmrCandidates?: number;
}

/** Adds one search (the one at `path`, e.g. `searches[3]`) to the request's cost. */
export function addSearch(cost: RequestCost, search: SearchShape, path: string): void {
  const at = (field: string): string => (path === '' ? field : `${path}.${field}`);
  cost.add('searches', 1, path === '' ? 'body' : path);
  const returned = search.offset + search.limit;
  const candidates = search.mmrCandidates ?? 0;
  cost.add('hits', Math.max(returned, candidates), candidates > returned ? at('mmr.candidates') : at('limit'));
  if (candidates > 0) cost.add('mmrComponents', returned * candidates * search.vectorSize, at('mmr.candidates'));
  if (search.withVector) cost.add('vectorComponents', search.limit * search.vectorSize, at('with_vector'));
  cost.add('payloadPathChecks', search.limit * search.payloadPaths, at('with_payload'));
  cost.add('filterTerms', search.filterTerms, at('filter'));
}

/** Adds records returned by id or by page (retrieve, scroll): count × (vector components, payload paths). */
export function addRecords(cost: RequestCost, count: number, shape: Pick<SearchShape, 'withVector' | 'vectorSize' | 'payloadPaths'>, path: string): void {
  if (shape.withVector) cost.add('vectorComponents', count * shape.vectorSize, path);
  cost.add('payloadPathChecks', count * shape.payloadPaths, path);
}

/** Adds a page of points in id order (scroll, a query without a vector): the page's hits and its records. */
export function addScroll(
  cost: RequestCost,
  page: { readonly offset: number; readonly limit: number } & Pick<SearchShape, 'withVector' | 'vectorSize' | 'payloadPaths'>,
  path: string,
): void {
  const at = (field: string): string => (path === '' ? field : `${path}.${field}`);
  cost.add('hits', page.offset + page.limit + 1, at('limit'));
  addRecords(cost, page.limit, page, at('limit'));
}
