/**
 * The distance matrix (Qdrant's `search/matrix/pairs` and `…/offsets`): a random sample of the
 * matching points and, for each, its `limit` nearest among the sample (itself left out). Each
 * row is the engine's own exact search restricted to the sample (a `has_id` condition), so its
 * scores are a plain search's; the rows run as one batch, on the search threads when there are.
 * The sample is ordered by id, as Qdrant orders it, so the rows and offsets are stable for a
 * sample that holds every match.
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { compareIds, describeJson, type PointId } from '../core/point-id.js';
import type { Filter } from '../payload/filter-types.js';
import { NO_PAYLOAD } from '../payload/payload-selector.js';
import type { ScoredPoint, SearchInput } from './collection-search.js';
import type { QueryRequest } from './query-verbs.js';
import { addSearch, REQUEST_BUDGET, RequestCost } from './request-cost.js';
import { LIMITS } from '../segment/collection-config.js';

/** Sampled points and neighbours per point when a request does not say (Qdrant's defaults). */
export const DEFAULT_MATRIX_SAMPLE = 10;
export const DEFAULT_MATRIX_LIMIT = 3;

export interface MatrixRequest {
  readonly filter?: Filter;
  readonly sample: number;
  readonly limit: number;
  /** A named dense or sparse vector beside the main one: the points that hold it are sampled, and scored by it (Qdrant's `using`). */
  readonly using?: string;
}

/** A sampled point's vector as its row's search asks by it: the main vector, a named one (a multi-vector's rows), or a sparse one. */
export type MatrixQuery = Pick<SearchInput, 'vector' | 'named_vector' | 'sparse_vector'>;

/** The sampled ids in id order, and per sampled point its nearest others, best first. */
export interface Matrix {
  readonly ids: PointId[];
  readonly rows: { readonly id: PointId; readonly score: number }[][];
}

export interface MatrixSource {
  /** The size of the vector the matrix scores by (the main one's, the named one's it uses, a sparse one's most indices). */
  readonly vectorSize: number;
  /** Counts what the rows may score at most, where the search's own count cannot see it before the sample is drawn (a sparse `using`). */
  boundRows?(sample: number, cost: RequestCost, path: string): void;
  /** A uniform random sample of the matching points (those holding `using`'s vector), each with its row's query by its stored vector. */
  sample(filter: Filter | undefined, size: number, using?: string): Promise<{ readonly id: PointId; readonly query: MatrixQuery }[]>;
  queryChecked(
    queries: readonly QueryRequest<SearchInput>[],
    options: { readonly cost: RequestCost; readonly paths: readonly string[] },
  ): Promise<ScoredPoint[][]>;
}

/** `sample` 2…4,096 (one search each, a batch's bound), `limit` 1…9,999; sample × (limit + 1) within the hits bound is countMatrix's. */
export function checkMatrix(raw: { readonly sample?: unknown; readonly limit?: unknown }, path = ''): { sample: number; limit: number } {
  const whole = (value: unknown, field: string, fallback: number, min: number, max: number): number => {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
      throw badInput(childPath(path, field), `expected a whole number from ${min} to ${max}, got ${describeJson(value)}`);
    return value;
  };
  const sample = whole(raw.sample, 'sample', DEFAULT_MATRIX_SAMPLE, 2, REQUEST_BUDGET.searches);
  // Each row asks for one more than `limit` (itself): a search's own bound.
  const limit = whole(raw.limit, 'limit', DEFAULT_MATRIX_LIMIT, 1, LIMITS.limit.max - 1);
  return { sample, limit };
}

/** Counted before the sample is drawn: its vectors, read for the rows, and `sample` searches of limit + 1 hits, one has_id each. */
export function countMatrix(request: MatrixRequest, vectorSize: number, cost: RequestCost, path: string): void {
  cost.add('vectorComponents', request.sample * vectorSize, childPath(path, 'sample'));
  for (let row = 0; row < request.sample; row++) {
    addSearch(cost, { offset: 0, limit: request.limit + 1, withVector: false, vectorSize, payloadPaths: 0, filterTerms: 1 }, path);
  }
}

export async function searchMatrix(source: MatrixSource, request: MatrixRequest, path = ''): Promise<Matrix> {
  const cost = new RequestCost();
  countMatrix(request, source.vectorSize, cost, path);
  source.boundRows?.(request.sample, cost, path);
  const sampled = (await source.sample(request.filter, request.sample, request.using)).sort((a, b) => compareIds(a.id, b.id));
  if (sampled.length < 2) return { ids: [], rows: [] };
  const ids = new Set(sampled.map((p) => p.id));
  const among: Filter = { must: [{ kind: 'has_id', ids }], mustNot: [], should: [] };
  const queries = sampled.map(
    (point): QueryRequest<SearchInput> => ({
      kind: 'vector',
      search: {
        ...point.query,
        limit: request.limit + 1,
        offset: 0,
        filter: among,
        with_payload: NO_PAYLOAD,
        with_vector: false,
        params: { exact: true },
      },
    }),
  );
  const answers = await source.queryChecked(queries, { cost: new RequestCost(), paths: queries.map(() => path) });
  const rows = sampled.map((point, i) => {
    const hits = answers[i] ?? [];
    const self = hits.findIndex((h) => h.id === point.id);
    // Itself, or (when duplicates outrank it) the last of the limit + 1.
    if (self >= 0) hits.splice(self, 1);
    else if (hits.length > request.limit) hits.pop();
    return hits.map((h) => ({ id: h.id, score: h.score }));
  });
  return { ids: sampled.map((p) => p.id), rows };
}
