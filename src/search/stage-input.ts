/**
 * Multi-stage queries as kith's port and the library write them (Collection.queryStages): a
 * search body with `prefetch`es and a `fusion` or a `formula`, parsed into the engine's stage tree
 * (multi-stage.ts), which the Qdrant port's `prefetch` also runs on.
 *
 *   { "prefetch": [ { "vector": [...], "limit": 100 }, { "vector": [...], "filter": {...} } ],
 *     "fusion": "rrf" | "dbsf" | { "method": "rrf", "k": 60, "weights": [2, 1] },
 *     "limit": 10, "offset": 0, "filter": {...}, "score_threshold": 0.1,
 *     "with_payload": true, "with_vector": false }
 *
 * A stage is a search (`vector`, `sparse_vector`, `named_vector`, or by stored points and examples:
 * `point`, `recommend`, `discover`, `context` (example-input.ts); with prefetches, the search
 * re-scores their candidates exactly), a fusion of its prefetches (`fusion`), their candidates
 * re-scored by a `formula` (search/formula-parse.ts, with `defaults`), or, for a prefetch with
 * none of these, its first `limit` points in id order. A prefetch has a stage's fields but
 * `offset`, `with_payload` and `with_vector`, which only the request has; its `limit` is 10 by
 * default, and the filters above it apply to it too. Depth and stage counts are multi-stage.ts's bounds; every field error
 * names its path (`prefetch[1].limit`).
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import { bothFilters, type Filter } from '../payload/filter-types.js';
import { isPlainObject } from '../payload/json-value.js';
import { NO_PAYLOAD, type PayloadSelector, type PayloadSelectorJson, toPayloadSelector } from '../payload/payload-selector.js';
import { LIMITS } from '../segment/collection-config.js';
import type { SearchInput } from './collection-search.js';
import { type FilterInput, toFilter } from './embedded-input.js';
import { DEFAULT_RRF_K } from './fusion.js';
import type { SparseQueryInput } from './sparse-search.js';
import type { NamedQueryInput } from './named-search.js';
import { type Fusion, MAX_DEPTH, MAX_STAGES, prefetchPath, type Selection, type Stage } from './multi-stage.js';
import { contextQuery, type DiscoverInput, discoverQuery, pointQuery, type RecommendInput, recommendQuery } from './example-input.js';
import type { ContextPairInput, QueryRequest } from './query-verbs.js';
import type { PointId } from '../core/point-id.js';
import { type FormulaDialect, parseFormula } from './formula-parse.js';
import type { FormulaJson } from './formula-json.js';
import { parseFilter } from '../payload/filter-parse.js';

/** A prefetch: a stage of the tree below the request. */
export interface PrefetchInput {
  readonly vector?: readonly number[] | null;
  /** A search by a sparse vector instead of `vector`: `{name, indices, values}` (search/sparse-search.ts). */
  readonly sparse_vector?: SparseQueryInput | null;
  /** A search by a named dense vector instead: `{name, vector}` (search/named-search.ts). */
  readonly named_vector?: NamedQueryInput | null;
  /** A search near a stored point's vector (the point left out). */
  readonly point?: PointId | number | null;
  /** A recommendation by examples (example-input.ts). */
  readonly recommend?: RecommendInput | null;
  /** A discovery: a target within context pairs' zones. */
  readonly discover?: DiscoverInput | null;
  /** A context search by pairs. */
  readonly context?: readonly ContextPairInput[] | null;
  /** The named dense or sparse vector `point`, `recommend`, `discover` or `context` is of; the main vector without. */
  readonly using?: string | null;
  readonly fusion?: FusionInput | null;
  /** The prefetches' candidates re-scored by this expression (search/formula-parse.ts). */
  readonly formula?: FormulaJson | null;
  /** Values of the formula's variables for points that lack them, by variable as written. */
  readonly defaults?: Readonly<Record<string, unknown>> | null;
  readonly prefetch?: readonly PrefetchInput[] | null;
  readonly filter?: FilterInput | null;
  readonly limit?: number | null;
  readonly score_threshold?: number | null;
  readonly params?: { readonly ef?: number | null; readonly exact?: boolean | null } | null;
}

/** A multi-stage query: the top stage, with what the answer carries. */
export interface StagesInput extends PrefetchInput {
  readonly offset?: number | null;
  readonly with_payload?: boolean | readonly string[] | PayloadSelectorJson | PayloadSelector | null;
  readonly with_vector?: boolean | null;
}

export type FusionInput =
  | 'rrf'
  | 'dbsf'
  | { readonly method: 'rrf'; readonly k?: number | null; readonly weights?: readonly number[] | null }
  | { readonly method: 'dbsf' };

const QUERY_KEYS = ['vector', 'sparse_vector', 'named_vector', 'point', 'recommend', 'discover', 'context'] as const;
type QueryKey = (typeof QUERY_KEYS)[number];
const STAGE_KEYS = new Set<string>([...QUERY_KEYS, 'using', 'fusion', 'formula', 'defaults', 'prefetch', 'filter', 'limit', 'score_threshold', 'params']);
/** The queries whose vector comes from points or examples: `using` names the vector they are of. */
const EXAMPLE_KEYS: readonly QueryKey[] = ['point', 'recommend', 'discover', 'context'];
const TOP_KEYS = new Set([...STAGE_KEYS, 'offset', 'with_payload', 'with_vector']);

/** kith's words for a formula's errors, and its filter conditions. */
const KITH_FORMULAS: FormulaDialect = {
  malformed: badInput,
  invalid: badInput,
  condition: (body, path) => parseFilter({ must: [body] }, path) as Filter,
};

/** What parsing a tree carries: stages counted so far, and the collection's vector size (examples' vectors checked against it) when known. */
interface Walk {
  stages: number;
  readonly vectorSize?: number;
}

/** The stage tree and the answer's selection, every field checked (400 naming its path). */
export function parseStages(input: StagesInput, options: { readonly vectorSize?: number } = {}): { stage: Stage; selection: Selection } {
  if (!isPlainObject(input)) throw badInput('body', `expected an object, got ${describeJson(input)}`);
  const counter: Walk = { stages: 0, ...options };
  const body = input as Record<string, unknown>;
  // A formula without prefetches is named by parseStage, which says what it lacks.
  if (!hasPrefetches(body) && !hasQuery(body) && (body.formula === undefined || body.formula === null))
    throw badInput('vector', 'required without prefetches (a page in id order is a scroll: POST …/points/scroll)');
  const stage = parseStage(body, '', undefined, 0, counter, true);
  const selection = {
    with_payload: toPayloadSelector(body.with_payload, 'with_payload', true),
    with_vector: optionalBoolean(body.with_vector, 'with_vector') ?? false,
  };
  return { stage, selection };
}

/** The query fields a stage gives (a search takes exactly one). */
function queriesOf(body: Record<string, unknown>): QueryKey[] {
  return QUERY_KEYS.filter((key) => body[key] !== undefined && body[key] !== null);
}

/** Whether a stage searches: by the main vector, a sparse one, a named one, a point or examples. */
function hasQuery(body: Record<string, unknown>): boolean {
  return queriesOf(body).length > 0;
}

function hasPrefetches(body: Record<string, unknown>): boolean {
  return Array.isArray(body.prefetch) && body.prefetch.length > 0;
}

function parseStage(body: Record<string, unknown>, path: string, above: Filter | undefined, depth: number, counter: Walk, top: boolean): Stage {
  if (depth > MAX_DEPTH) throw badInput(path, `prefetches nest at most ${MAX_DEPTH} deep`);
  counter.stages++;
  if (counter.stages > MAX_STAGES) throw badInput(path, `a query has at most ${MAX_STAGES} stages (prefetches at every depth)`);
  const allowed = top ? TOP_KEYS : STAGE_KEYS;
  for (const key of Object.keys(body)) {
    if (!allowed.has(key))
      throw badInput(childPath(path, key), top ? 'unknown field' : 'not a field of a prefetch (offset, with_payload and with_vector are the request’s)');
  }
  const filter = bothFilters(above, toFilter(body.filter, childPath(path, 'filter')));
  const limit = optionalInteger(body.limit, childPath(path, 'limit'), LIMITS.limit) ?? 10;
  const offset = top ? (optionalInteger(body.offset, 'offset', LIMITS.offset) ?? 0) : 0;
  const threshold = optionalNumber(body.score_threshold, childPath(path, 'score_threshold'));
  const rawPrefetch = body.prefetch;
  if (rawPrefetch !== undefined && rawPrefetch !== null && !Array.isArray(rawPrefetch))
    throw badInput(childPath(path, 'prefetch'), `expected a list of prefetches, got ${describeJson(rawPrefetch)}`);
  const sources = ((rawPrefetch as unknown[] | undefined | null) ?? []).map((raw, i) => {
    const at = prefetchPath(path, i, true);
    if (!isPlainObject(raw)) throw badInput(at, `expected a prefetch object, got ${describeJson(raw)}`);
    return parseStage(raw, at, filter, depth + 1, counter, false);
  });
  const queries = queriesOf(body);
  if (queries.length > 1) throw badInput(childPath(path, queries[1] as string), `give one of ${QUERY_KEYS.join(', ')}, not ${queries.join(' and ')}`);
  const hasVector = hasQuery(body);
  const hasFusion = body.fusion !== undefined && body.fusion !== null;
  const hasFormula = body.formula !== undefined && body.formula !== null;
  if (hasVector && hasFusion) throw badInput(childPath(path, 'fusion'), 'give either a vector (re-score the prefetches) or a fusion, not both');
  if (hasFormula && (hasVector || hasFusion))
    throw badInput(childPath(path, 'formula'), `give either a formula or ${hasFusion ? 'a fusion' : `a query (${queries[0]})`}, not both`);
  if (!hasFormula && body.defaults !== undefined && body.defaults !== null) throw badInput(childPath(path, 'defaults'), 'defaults are a formula’s');
  if (!hasVector) stageUsing(body, path, undefined);
  if (hasFormula) {
    if (sources.length === 0) throw badInput(childPath(path, 'formula'), 'a formula re-scores prefetches: give it prefetches');
    const formula = parseFormula(KITH_FORMULAS, body.formula, childPath(path, 'formula'), body.defaults, childPath(path, 'defaults'));
    return { kind: 'formula', path, formula, sources, limit, offset, ...(threshold === undefined ? {} : { threshold }) };
  }
  if (hasFusion) {
    if (sources.length === 0) throw badInput(childPath(path, 'fusion'), 'a fusion needs prefetches to fuse');
    const fusion = parseFusion(body.fusion, childPath(path, 'fusion'), sources.length);
    return { kind: 'fuse', path, fusion, sources, limit, offset, ...(threshold === undefined ? {} : { threshold }) };
  }
  if (!hasVector) {
    if (sources.length > 0)
      throw badInput(path === '' ? 'vector' : childPath(path, 'vector'), 'prefetches need a vector (or another query) to re-score them, a fusion or a formula');
    if (threshold !== undefined) throw badInput(childPath(path, 'score_threshold'), 'a threshold needs a vector to score by');
    return { kind: 'list', path, limit, ...(filter === undefined ? {} : { filter }) };
  }
  const search: Omit<SearchInput, 'vector'> = {
    limit,
    offset,
    ...(filter === undefined ? {} : { filter }),
    ...(threshold === undefined ? {} : { score_threshold: threshold }),
    with_payload: NO_PAYLOAD,
    with_vector: false,
    params: parseParams(body.params, childPath(path, 'params')),
  };
  const using = stageUsing(body, path, queries[0] as QueryKey);
  const query =
    using === undefined
      ? stageQuery(queries[0] as QueryKey, body, path, search, counter.vectorSize)
      : stageQuery(queries[0] as QueryKey, body, path, { ...search, using }, undefined);
  return { kind: 'search', path, query, sources };
}

/**
 * A stage's `using`: the named dense or sparse vector a query by a point or by examples is of
 * (its examples then checked by the engine against that vector); "" or none, the main vector.
 */
function stageUsing(body: Record<string, unknown>, path: string, key: QueryKey | undefined): string | undefined {
  const using = body.using;
  if (using === undefined || using === null || using === '') return undefined;
  const at = childPath(path, 'using');
  if (typeof using !== 'string') throw badInput(at, `expected a vector name, got ${describeJson(using)}`);
  if (key === undefined) throw badInput(at, `names the vector of a query by ${EXAMPLE_KEYS.join(', ')}; this stage has none`);
  if (!EXAMPLE_KEYS.includes(key))
    throw badInput(at, `names the vector of ${EXAMPLE_KEYS.join(', ')}; ${key} names its own (${key === 'vector' ? 'the main vector' : `${key}.name`})`);
  return using;
}

/** The engine's query for a stage's query field `key`. */
function stageQuery(
  key: QueryKey,
  body: Record<string, unknown>,
  path: string,
  search: Omit<SearchInput, 'vector'> & { using?: string },
  vectorSize: number | undefined,
): QueryRequest<SearchInput> {
  const at = childPath(path, key);
  switch (key) {
    case 'sparse_vector':
      return { kind: 'vector', search: { ...search, sparse_vector: body.sparse_vector as SparseQueryInput } };
    case 'named_vector':
      return { kind: 'vector', search: { ...search, named_vector: body.named_vector as NamedQueryInput } };
    case 'point':
      return pointQuery(body.point, at, search);
    case 'recommend':
      return recommendQuery(body.recommend, at, search, vectorSize);
    case 'discover':
      return discoverQuery(body.discover, at, search, vectorSize);
    case 'context':
      return contextQuery(body.context, at, search, vectorSize);
    default:
      return { kind: 'vector', search: { ...search, vector: body.vector } as SearchInput };
  }
}

function parseFusion(raw: unknown, path: string, sources: number): Fusion {
  if (raw === 'rrf') return { kind: 'rrf', k: DEFAULT_RRF_K };
  if (raw === 'dbsf') return { kind: 'dbsf' };
  if (!isPlainObject(raw)) throw badInput(path, `expected "rrf", "dbsf" or {method, k, weights}, got ${describeJson(raw)}`);
  for (const key of Object.keys(raw)) if (key !== 'method' && key !== 'k' && key !== 'weights') throw badInput(childPath(path, key), 'unknown field');
  if (raw.method === 'dbsf') {
    if (raw.k !== undefined || raw.weights !== undefined) throw badInput(path, 'k and weights are rrf’s');
    return { kind: 'dbsf' };
  }
  if (raw.method !== 'rrf') throw badInput(childPath(path, 'method'), `expected "rrf" or "dbsf", got ${describeJson(raw.method)}`);
  const k = optionalInteger(raw.k, childPath(path, 'k'), { min: 1, max: 1_000_000 }) ?? DEFAULT_RRF_K;
  const weights = raw.weights;
  if (weights === undefined || weights === null) return { kind: 'rrf', k };
  if (!Array.isArray(weights) || weights.some((w) => typeof w !== 'number' || !Number.isFinite(w) || w < 0))
    throw badInput(childPath(path, 'weights'), `expected a list of numbers ≥ 0, got ${describeJson(weights)}`);
  if (weights.length !== sources) throw badInput(childPath(path, 'weights'), `${weights.length} weights for ${sources} prefetches: give one per prefetch`);
  return { kind: 'rrf', k, weights: weights as number[] };
}

function parseParams(raw: unknown, path: string): { ef?: number; exact: boolean } {
  if (raw === undefined || raw === null) return { exact: false };
  if (!isPlainObject(raw)) throw badInput(path, `expected an object, got ${describeJson(raw)}`);
  for (const key of Object.keys(raw)) if (key !== 'ef' && key !== 'exact') throw badInput(childPath(path, key), 'unknown field (ef, exact)');
  const ef = optionalInteger(raw.ef, childPath(path, 'ef'), LIMITS.efSearch);
  return { ...(ef === undefined ? {} : { ef }), exact: optionalBoolean(raw.exact, childPath(path, 'exact')) ?? false };
}

function optionalInteger(raw: unknown, path: string, bounds: { readonly min: number; readonly max: number }): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < bounds.min || raw > bounds.max)
    throw badInput(path, `expected an integer from ${bounds.min} to ${bounds.max}, got ${describeJson(raw)}`);
  return raw;
}

function optionalNumber(raw: unknown, path: string): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'number' || !Number.isFinite(raw)) throw badInput(path, `expected a number, got ${describeJson(raw)}`);
  return raw;
}

function optionalBoolean(raw: unknown, path: string): boolean | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'boolean') throw badInput(path, `expected a boolean, got ${describeJson(raw)}`);
  return raw;
}
