/**
 * The query API's body (POST …/points/query): a vector, a point id, `{nearest}` (maybe with MMR),
 * `{recommend}`, no query at all (points in id order), or stages over `prefetch`es
 * (search/multi-stage.ts): a fusion of them (`{fusion: "rrf" | "dbsf"}`, `{rrf: {k, weights}}`) or
 * a query re-scoring their candidates. A prefetch has a query, a filter, params, a score
 * threshold, a limit (10 by default) and prefetches of its own; the request's filter applies to
 * every prefetch, as in Qdrant.
 */
import { LIMITS } from '../../segment/collection-config.js';
import { childPath } from '../../core/field-path.js';
import { describeJson } from '../../core/point-id.js';
import { bothFilters, type Filter } from '../../payload/filter-types.js';
import { DEFAULT_RRF_K } from '../../search/fusion.js';
import { checkOrderBy, type OrderByInput } from '../../search/order-by.js';
import { type Fusion, MAX_DEPTH, MAX_STAGES, prefetchPath, type Stage } from '../../search/multi-stage.js';
import { asObject, formatError, notSupported, optionalInteger, optionalNumber, QdrantHttpError, validationError } from './errors.js';
import {
  type Common,
  commonPlan,
  contextQuery,
  discoverQuery,
  engineQuery,
  type Lookup,
  type Mmr,
  nearestQuery,
  type PendingLookup,
  parseLookupFrom,
  type Plan,
  type PlanTarget,
  type Query,
  recommendQuery,
} from './query-parse.js';
import { type UsedVector, usedVector } from './vector-layout.js';
import { parseFormulaQuery } from './formula-parse.js';
import type { Formula } from '../../search/formula.js';

/** What a `query` asks for: nothing, a fusion of the prefetches, a search (maybe with MMR), or points in payload order. */
type QueryPart =
  | { kind: 'none' }
  | { kind: 'fuse'; fusion: Fusion }
  | { kind: 'search'; query: Query; mmr?: Mmr }
  | { kind: 'order'; orderBy: OrderByInput }
  | { kind: 'sample' }
  | { kind: 'formula'; formula: Formula };

/** A query request body. */
export function queryPlan(target: PlanTarget, raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  const used = usedOf(body, target, path);
  const common = commonPlan(body, path, false, target.layout);
  const queryPath = childPath(path, 'query');
  const lookup = parseLookupFrom(body.lookup_from, childPath(path, 'lookup_from'));
  const part = queryPart(target.dim, body.query, queryPath, common.limit, used, lookup);
  const prefetches = prefetchList(body.prefetch, path);
  if (prefetches.length === 0) {
    if (part.kind === 'none') {
      if (common.scoreThreshold !== undefined)
        throw badRequest("A query is needed to use the score_threshold. Can't have score_threshold without defining a query.");
      return { kind: 'list', ...common };
    }
    if (part.kind === 'fuse') throw formatError(queryPath, 'a fusion needs prefetches to fuse');
    if (part.kind === 'formula') throw badRequest('A formula re-scores the prefetches. Give it prefetches to re-score.');
    if (part.kind === 'order') return { kind: 'list', ...common, orderBy: part.orderBy };
    if (part.kind === 'sample') {
      // One draw of offset + limit points, the first offset skipped: a draw is a page's size at most.
      if (common.offset + common.limit > LIMITS.limit.max)
        throw validationError('offset', `offset + limit is at most ${LIMITS.limit.max} with a random sample, got ${common.offset + common.limit}`);
      return { kind: 'list', ...common, sample: true };
    }
    return { kind: 'search', ...common, query: part.query, ...(part.mmr === undefined ? {} : { mmr: part.mmr }) };
  }
  if (part.kind === 'none') throw badRequest("A query is needed to merge the prefetches. Can't have prefetches without defining a query.");
  const walk: Walk = { stages: 1, lookups: new Map() };
  const sources = prefetches.map((p, i) => prefetchStage(target, p, prefetchPath(path, i, Array.isArray(body.prefetch)), common.filter, 1, walk));
  const stage = stageOf(part, common, sources, path, walk);
  return {
    kind: 'stages',
    ...common,
    stage,
    selection: { with_payload: common.withPayload, with_vector: common.withVector },
    ...(walk.lookups.size === 0 ? {} : { lookups: walk.lookups }),
  };
}

/** What building a stage tree carries: the stages counted so far, and the search stages waiting for a lookup. */
interface Walk {
  stages: number;
  readonly lookups: Map<Stage, PendingLookup>;
}

/** A prefetch (at `depth`), its filter joined with the ones above it. */
function prefetchStage(target: PlanTarget, raw: unknown, path: string, above: Filter | undefined, depth: number, walk: Walk): Stage {
  if (depth > MAX_DEPTH) throw validationError(path, `prefetches nest at most ${MAX_DEPTH} deep`);
  walk.stages++;
  if (walk.stages > MAX_STAGES) throw validationError(path, `a query has at most ${MAX_STAGES} stages (prefetches at every depth)`);
  const body = asObject(raw, path);
  const used = usedOf(body, target, path);
  const lookup = parseLookupFrom(body.lookup_from, childPath(path, 'lookup_from'));
  for (const key of ['offset', 'with_payload', 'with_vector']) {
    if (body[key] !== undefined && body[key] !== null) throw formatError(childPath(path, key), 'not a field of a prefetch (give it on the request)');
  }
  const own = commonPlan(body, path, false, target.layout);
  const common: Common = { ...own, ...joined(above, own.filter) };
  const part = queryPart(target.dim, body.query, childPath(path, 'query'), common.limit, used, lookup);
  const prefetches = prefetchList(body.prefetch, path);
  const sources = prefetches.map((p, i) => prefetchStage(target, p, prefetchPath(path, i, Array.isArray(body.prefetch)), common.filter, depth + 1, walk));
  if (part.kind !== 'none') return stageOf(part, common, sources, path, walk);
  if (sources.length > 0) throw badRequest("A query is needed to merge the prefetches. Can't have prefetches without defining a query.");
  if (common.scoreThreshold !== undefined)
    throw badRequest("A query is needed to use the score_threshold. Can't have score_threshold without defining a query.");
  return { kind: 'list', path, limit: common.limit, ...(common.filter === undefined ? {} : { filter: common.filter }) };
}

function stageOf(part: Exclude<QueryPart, { kind: 'none' }>, common: Common, sources: Stage[], path: string, walk: Walk): Stage {
  if (part.kind === 'formula') {
    if (sources.length === 0) throw badRequest('A formula re-scores the prefetches. Give it prefetches to re-score.');
    return {
      kind: 'formula',
      path,
      formula: part.formula,
      sources,
      limit: common.limit,
      offset: common.offset,
      ...(common.scoreThreshold === undefined ? {} : { threshold: common.scoreThreshold }),
    };
  }
  if (part.kind === 'order') throw notSupported(childPath(childPath(path, 'query'), 'order_by'), 'order_by over prefetches or in a prefetch', true);
  if (part.kind === 'sample') throw notSupported(childPath(childPath(path, 'query'), 'sample'), 'sampling over prefetches or in a prefetch', true);
  if (part.kind === 'search') {
    const mmr = part.mmr === undefined ? {} : { mmr: part.mmr };
    const stage: Stage = { kind: 'search', path, query: engineQuery({ kind: 'search', ...common, query: part.query, ...mmr }), sources };
    // Its ids are another collection's: the engine query is made again once their vectors are read.
    if ('lookup' in part.query && part.query.lookup !== undefined) walk.lookups.set(stage, { query: part.query, common, ...mmr, path });
    return stage;
  }
  if (sources.length === 0) throw formatError(childPath(path, 'query'), 'a fusion needs prefetches to fuse');
  const weights = part.fusion.kind === 'rrf' ? part.fusion.weights : undefined;
  if (weights !== undefined && weights.length !== sources.length) {
    throw validationError(
      childPath(childPath(childPath(path, 'query'), 'rrf'), 'weights'),
      `${weights.length} weights for ${sources.length} prefetches: give one per prefetch`,
    );
  }
  return {
    kind: 'fuse',
    path,
    fusion: part.fusion,
    sources,
    limit: common.limit,
    offset: common.offset,
    ...(common.scoreThreshold === undefined ? {} : { threshold: common.scoreThreshold }),
  };
}

/** `prefetch`: absent, one prefetch, or a list of them. */
function prefetchList(raw: unknown, path: string): unknown[] {
  if (raw === undefined || raw === null) return [];
  if (Array.isArray(raw)) return raw;
  if (typeof raw === 'object') return [raw];
  throw formatError(childPath(path, 'prefetch'), `expected a prefetch or a list of them, got ${describeJson(raw)}`);
}

/** Both filters (a point must match both), as a plan's optional field. */
function joined(above: Filter | undefined, own: Filter | undefined): { filter?: Filter } {
  const filter = bothFilters(above, own);
  return filter === undefined ? {} : { filter };
}

/** The vector a request or prefetch searches by (`using`). */
function usedOf(body: Record<string, unknown>, target: PlanTarget, path: string): UsedVector {
  return usedVector(body.using, target.layout, childPath(path, 'using'));
}

/** Qdrant's "Bad request" for a query that cannot be answered as asked, in its words. */
function badRequest(message: string): QdrantHttpError {
  return new QdrantHttpError(400, `Bad request: ${message}`);
}

/** `query`: a vector, an id, `{nearest: vector | id, mmr?}`, `{recommend}`, a fusion, or absent. */
function queryPart(dim: number, raw: unknown, queryPath: string, limit: number, used: UsedVector, lookup?: Lookup): QueryPart {
  let query = raw;
  if (query === undefined || query === null) return { kind: 'none' };
  let mmr: Mmr | undefined;
  if (typeof query === 'object' && !Array.isArray(query)) {
    const q = query as Record<string, unknown>;
    if (Object.hasOwn(q, 'formula')) return { kind: 'formula', formula: parseFormulaQuery(q, queryPath) };
    if (Object.hasOwn(q, 'sample')) {
      if (q.sample !== 'random') throw formatError(childPath(queryPath, 'sample'), `expected "random", got ${describeJson(q.sample)}`);
      return { kind: 'sample' };
    }
    if (Object.hasOwn(q, 'order_by')) {
      const orderPath = childPath(queryPath, 'order_by');
      checkOrderBy(q.order_by, orderPath);
      return { kind: 'order', orderBy: q.order_by as OrderByInput };
    }
    if (Object.hasOwn(q, 'discover')) {
      const discoverPath = childPath(queryPath, 'discover');
      return { kind: 'search', query: discoverQuery(dim, asObject(q.discover, discoverPath), discoverPath, used, lookup) };
    }
    if (Object.hasOwn(q, 'context')) return { kind: 'search', query: contextQuery(dim, q.context, childPath(queryPath, 'context'), used, lookup) };
    if (Object.hasOwn(q, 'fusion')) return { kind: 'fuse', fusion: namedFusion(q.fusion, childPath(queryPath, 'fusion')) };
    if (Object.hasOwn(q, 'rrf')) return { kind: 'fuse', fusion: rrfFusion(q.rrf, childPath(queryPath, 'rrf')) };
    if (Object.hasOwn(q, 'recommend')) {
      const recommendPath = childPath(queryPath, 'recommend');
      return { kind: 'search', query: recommendQuery(dim, asObject(q.recommend, recommendPath), recommendPath, lookup, used) };
    }
    if (Object.hasOwn(q, 'indices')) return { kind: 'search', query: nearestQuery(q, queryPath, lookup, used) };
    if (!Object.hasOwn(q, 'nearest')) throw formatError(queryPath, 'expected a vector, a point id, {nearest}, {recommend}, {fusion} or {rrf}');
    query = q.nearest;
    if (q.mmr !== undefined && q.mmr !== null) {
      const mmrPath = childPath(queryPath, 'mmr');
      const mmrBody = asObject(q.mmr, mmrPath);
      const diversity = optionalNumber(mmrBody.diversity, childPath(mmrPath, 'diversity')) ?? 0.5;
      if (diversity < 0 || diversity > 1) throw validationError(childPath(mmrPath, 'diversity'), `must be between 0 and 1, got ${diversity}`);
      // Qdrant's default: as many candidates as the search returns.
      const candidates = optionalInteger(
        mmrBody.candidates_limit,
        childPath(mmrPath, 'candidates_limit'),
        limit,
        LIMITS.mmrCandidates.min,
        LIMITS.mmrCandidates.max,
      );
      if (query === undefined || query === null) throw formatError(childPath(queryPath, 'nearest'), 'required with mmr');
      mmr = { diversity, candidates };
    }
  }
  if (query === undefined || query === null) throw formatError(queryPath, `expected a vector, a point id or {nearest}, got ${describeJson(query)}`);
  return { kind: 'search', query: nearestQuery(query, queryPath, lookup, used), ...(mmr === undefined ? {} : { mmr }) };
}

/** `{fusion: "rrf" | "dbsf"}`. */
function namedFusion(raw: unknown, path: string): Fusion {
  if (raw === 'rrf') return { kind: 'rrf', k: DEFAULT_RRF_K };
  if (raw === 'dbsf') return { kind: 'dbsf' };
  throw formatError(path, `expected "rrf" or "dbsf", got ${describeJson(raw)}`);
}

/** `{rrf: {k?, weights?}}`: k a whole number ≥ 1 (2 by default), weights one number per prefetch. */
function rrfFusion(raw: unknown, path: string): Fusion {
  const body = asObject(raw, path);
  const k = optionalInteger(body.k, childPath(path, 'k'), DEFAULT_RRF_K, 1, 1_000_000);
  if (body.weights === undefined || body.weights === null) return { kind: 'rrf', k };
  const weights = body.weights;
  if (!Array.isArray(weights) || weights.some((w) => typeof w !== 'number' || !Number.isFinite(w))) {
    throw formatError(childPath(path, 'weights'), `expected a list of numbers, got ${describeJson(weights)}`);
  }
  if (weights.some((w) => (w as number) < 0)) throw validationError(childPath(path, 'weights'), 'weights must be 0 or more');
  return { kind: 'rrf', k, weights: weights as number[] };
}
