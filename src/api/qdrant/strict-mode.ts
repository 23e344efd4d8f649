/**
 * Qdrant's strict mode, enforced on the Qdrant port: a preHandler hook (app.ts) that, for a
 * collection whose stored strict_mode_config is enabled (strict-mode-config.ts), makes the checks
 * each route is subject to (strict-mode-checks.ts) on the request's JSON before the route runs,
 * then takes the request's tokens from the collection's read or write rate limiter
 * (rate-limit.ts). A refused request has changed nothing. Routes without a check here (GET
 * collection info, PATCH, aliases, snapshots, the cluster's) are not limited, as in Qdrant.
 * kith's own port never reads strict mode: it keeps its fixed limits (docs/qdrant.md).
 */
import type { FastifyRequest } from 'fastify';
import { isPlainObject } from '../../payload/json-value.js';
import { collectionOf, extrasOf } from './collections.js';
import { QdrantHttpError } from './errors.js';
import { RateLimiters } from './rate-limit.js';
import {
  checkCollectionSize,
  checkExact,
  checkFilter,
  checkFormula,
  checkFullScan,
  checkGroupBy,
  checkLimit,
  checkPayloadIndexCount,
  checkResidentMemory,
  checkSearchParams,
  checkWrittenVectors,
  type MemoryReading,
  numberOf,
  readMemory,
  type WrittenVectors,
} from './strict-mode-checks.js';
import { activeStrictMode, type StrictModeConfig } from './strict-mode-config.js';
import { conditionCount, type IndexSchemas, usesTenantKey } from './strict-filter.js';
import type { QdrantCollection, QdrantStore } from './store.js';

/** What a checked request costs its collection's rate limiters, in Qdrant's tokens. */
type Demand = { readonly read: number } | { readonly write: number };

/** What a route's check reads: the config, the collection and its declared indexes, the request's JSON. */
interface Checked {
  readonly config: StrictModeConfig;
  readonly collection: QdrantCollection;
  readonly options: Readonly<Record<string, unknown>>;
  readonly schemas: IndexSchemas;
  readonly body: Record<string, unknown>;
  readonly memory: () => MemoryReading;
}

type RouteCheck = (c: Checked) => Promise<Demand>;

/** Qdrant's default `limit` of a search, recommendation, discovery and query. */
const DEFAULT_LIMIT = 10;
/** Qdrant's SPARSE_DIMS_COST_UNIT: a sparse query costs a token per 64 indices. */
const SPARSE_COST_UNIT = 64;
/** Beyond this depth of prefetches the walk stops (the route refuses such nesting itself). */
const MAX_PREFETCH_DEPTH = 16;

const list = (raw: unknown): unknown[] => (Array.isArray(raw) ? raw : []);
const bodyOf = (raw: unknown): Record<string, unknown> => (isPlainObject(raw) ? raw : {});

/** A query vector's tokens: 1 for a dense vector or a point id, one per vector of a multi-vector, one per 64 indices of a sparse one. */
function vectorCost(vector: unknown): number {
  if (Array.isArray(vector)) return vector.length > 0 && Array.isArray(vector[0]) ? vector.length : 1;
  if (isPlainObject(vector)) {
    if (Array.isArray(vector.indices)) return Math.ceil(vector.indices.length / SPARSE_COST_UNIT);
    if (Object.hasOwn(vector, 'vector')) return vectorCost(vector.vector);
  }
  return 1;
}

/** A recommendation's tokens: every example for best_score and sum_scores, one averaged vector otherwise. */
function recommendCost(body: Record<string, unknown>): number {
  if (body.strategy !== 'best_score' && body.strategy !== 'sum_scores') return 1;
  return [...list(body.positive), ...list(body.negative)].reduce<number>((sum, v) => sum + vectorCost(v), 0);
}

/** A discovery's tokens: its target and both examples of every context pair. */
function discoverCost(target: unknown, context: unknown): number {
  const pairs = Array.isArray(context) ? context : isPlainObject(context) ? [context] : [];
  const examples = pairs.reduce<number>((sum, pair) => (isPlainObject(pair) ? sum + vectorCost(pair.positive) + vectorCost(pair.negative) : sum), 0);
  return (target === undefined || target === null ? 0 : vectorCost(target)) + examples;
}

/** A universal query's `query`: whether it searches a vector (a full scan without a graph), and its tokens. */
function queryKind(query: unknown): { readonly searches: boolean; readonly cost: number } {
  if (query === undefined || query === null) return { searches: false, cost: 0 };
  if (!isPlainObject(query) || Array.isArray(query.indices)) return { searches: true, cost: vectorCost(query) };
  if (Object.hasOwn(query, 'nearest')) return { searches: true, cost: vectorCost(query.nearest) };
  if (isPlainObject(query.recommend)) return { searches: true, cost: recommendCost(query.recommend) };
  if (isPlainObject(query.discover)) return { searches: true, cost: discoverCost(query.discover.target, query.discover.context) };
  if (Object.hasOwn(query, 'context')) return { searches: true, cost: discoverCost(undefined, query.context) };
  return { searches: false, cost: 0 }; // fusion, rrf, order_by, formula, sample: they rank what the prefetches found
}

/** The graph's m and payload_m of a vector, as GET shows them: its own hnsw_config over the collection's. */
async function graphOf(c: Checked, using: string): Promise<{ m: number; payloadM: number } | undefined> {
  const facts = await c.collection.facts();
  if (Object.hasOwn(facts.sparse_vectors ?? {}, using)) return undefined; // sparse vectors are always indexed
  const collectionHnsw = bodyOf(c.options.hnsw_config);
  const globalM = facts.hnsw ? facts.parameters.m : 0;
  const isMain = using === (facts.vector_name ?? '');
  const own = isMain ? {} : bodyOf(bodyOf(bodyOf(c.options.vectors)[using]).hnsw_config);
  const m = isMain ? globalM : (numberOf(own.m) ?? globalM);
  return { m, payloadM: numberOf(own.payload_m) ?? numberOf(collectionHnsw.payload_m) ?? m };
}

/** One search-like request (search, recommend, discover, a query or one of its prefetches): limit, filter, params. */
function checkSearchLike(c: Checked, body: Record<string, unknown>, limit: number | undefined): void {
  checkLimit(limit, c.config.max_query_limit, 'limit');
  checkFilter(body.filter, c.config.unindexed_filtering_retrieve, c.schemas, c.config);
  checkSearchParams(body.params, c.config);
}

/** A universal query and its prefetches, checked; its tokens. */
async function checkQuery(c: Checked, body: Record<string, unknown>, limit: number | undefined, depth = 0): Promise<number> {
  let cost = 0;
  const prefetches = Array.isArray(body.prefetch) ? body.prefetch : isPlainObject(body.prefetch) ? [body.prefetch] : [];
  if (depth < MAX_PREFETCH_DEPTH) for (const p of prefetches) cost += await checkQuery(c, bodyOf(p), numberOf(bodyOf(p).limit) ?? DEFAULT_LIMIT, depth + 1);
  const query = body.query;
  if (isPlainObject(query) && Object.hasOwn(query, 'formula')) checkFormula(query.formula, c.schemas, c.config);
  const kind = queryKind(query);
  if (kind.searches) {
    const using = typeof body.using === 'string' ? body.using : '';
    const graph = await graphOf(c, using);
    if (graph !== undefined) checkFullScan(using, graph.m, graph.payloadM, usesTenantKey(body.filter, c.schemas), c.config);
  }
  checkSearchLike(c, body, limit);
  // A query with neither vector nor prefetches reads pages: a scroll's token.
  const own = kind.searches ? kind.cost : prefetches.length === 0 ? 1 : 0;
  return cost + own + conditionCount(body.filter);
}

/** A batch's requests, at most search_max_batchsize of them. */
function batchOf(c: Checked): Record<string, unknown>[] {
  const searches = list(c.body.searches);
  checkLimit(searches.length, c.config.search_max_batchsize, 'search batch size');
  return searches.map(bodyOf);
}

const searchCost = (body: Record<string, unknown>): number => vectorCost(body.vector) + conditionCount(body.filter);
const recommendTokens = (body: Record<string, unknown>): number => recommendCost(body) + conditionCount(body.filter);
const discoverTokens = (body: Record<string, unknown>): number => discoverCost(body.target, body.context) + conditionCount(body.filter);

/** A search, recommend or discover route and its batch: each request's limit, filter and params; tokens by `cost`. */
function searchRoutes(cost: (body: Record<string, unknown>) => number): { one: RouteCheck; batch: RouteCheck } {
  const one = (c: Checked, body: Record<string, unknown>): number => {
    checkSearchLike(c, body, numberOf(body.limit) ?? DEFAULT_LIMIT);
    return cost(body);
  };
  return {
    one: async (c) => ({ read: one(c, c.body) }),
    batch: async (c) => ({ read: batchOf(c).reduce((sum, body) => sum + one(c, body), 0) }),
  };
}

/** A groups route: group_by indexed, then `limit × group_size` as the limit. */
function groupsRoute(defaults: { limit: number; size: number } | undefined, cost: (c: Checked) => Promise<number>): RouteCheck {
  return async (c) => {
    checkGroupBy(c.body.group_by, c.schemas, c.config);
    const groups = numberOf(c.body.limit) ?? defaults?.limit ?? 1;
    const size = numberOf(c.body.group_size) ?? defaults?.size ?? 1;
    checkLimit(groups * size, c.config.max_query_limit, 'limit');
    return { read: await cost(c) };
  };
}

/** Scroll, count, facet: their limit when given, filter, exact; a token and one per condition. */
function pageRoute(exactByDefault: boolean): RouteCheck {
  return async (c) => {
    checkLimit(numberOf(c.body.limit), c.config.max_query_limit, 'limit');
    checkFilter(c.body.filter, c.config.unindexed_filtering_retrieve, c.schemas, c.config);
    checkExact(c.body.exact ?? exactByDefault, c.config);
    return { read: 1 + conditionCount(c.body.filter) };
  };
}

/** The multi-vectors and sparse vectors one point's `vector` gives, by name. */
function collectVectors(vector: unknown, into: { multi: Array<[string, number]>; sparse: Array<[string, number]> }): void {
  if (!isPlainObject(vector)) return;
  for (const [name, value] of Object.entries(vector)) noteVector(name, value, into);
}

function noteVector(name: string, value: unknown, into: { multi: Array<[string, number]>; sparse: Array<[string, number]> }): void {
  if (Array.isArray(value) && value.length > 0 && Array.isArray(value[0])) into.multi.push([name, value.length]);
  else if (isPlainObject(value) && Array.isArray(value.indices)) into.sparse.push([name, value.indices.length]);
}

/** An upsert's or vector update's points: how many, and their multi and sparse vectors. */
function writtenPoints(body: Record<string, unknown>): { count: number; vectors: WrittenVectors } {
  const vectors = { multi: [] as Array<[string, number]>, sparse: [] as Array<[string, number]> };
  if (Array.isArray(body.points)) {
    for (const p of body.points) collectVectors(bodyOf(p).vector, vectors);
    return { count: body.points.length, vectors };
  }
  const batch = bodyOf(body.batch);
  if (isPlainObject(batch.vectors)) for (const [name, column] of Object.entries(batch.vectors)) for (const v of list(column)) noteVector(name, v, vectors);
  return { count: list(batch.ids).length, vectors };
}

/** A selector's write tokens: one per id, or Qdrant's estimate for a filter no index answers, half the collection's points. */
async function selectorCost(c: Checked, body: Record<string, unknown>): Promise<number> {
  if (Array.isArray(body.points)) return Math.max(1, body.points.length);
  if (body.filter === undefined || body.filter === null) return 1;
  return Math.max(1, Math.floor((await c.collection.facts()).points_count / 2));
}

/** Kinds of write, as Qdrant's update operations and POST …/points/batch name them. */
type WriteKind = 'upsert' | 'update_vectors' | 'delete' | 'set_payload' | 'overwrite_payload' | 'delete_payload' | 'clear_payload' | 'delete_vectors';

/** One write's checks, in Qdrant's order; its write tokens. */
async function checkWrite(c: Checked, kind: WriteKind, body: Record<string, unknown>): Promise<number> {
  if (kind === 'upsert' || kind === 'update_vectors') {
    checkResidentMemory(c.config, c.memory);
    const { count, vectors } = writtenPoints(body);
    checkLimit(count, c.config.upsert_max_batchsize, kind === 'upsert' ? 'upsert limit' : 'update limit');
    await checkCollectionSize(c.collection, c.config, false);
    checkWrittenVectors(vectors, c.config);
    return Math.max(1, count);
  }
  if (kind === 'set_payload' || kind === 'overwrite_payload') {
    checkResidentMemory(c.config, c.memory);
    await checkCollectionSize(c.collection, c.config, true);
  }
  checkFilter(body.filter, c.config.unindexed_filtering_update, c.schemas, c.config);
  return selectorCost(c, body);
}

const WRITE_KINDS = new Set<string>([
  'upsert',
  'update_vectors',
  'delete',
  'set_payload',
  'overwrite_payload',
  'delete_payload',
  'clear_payload',
  'delete_vectors',
]);

const write =
  (kind: WriteKind): RouteCheck =>
  async (c) => ({ write: await checkWrite(c, kind, c.body) });

const search = searchRoutes(searchCost);
const recommend = searchRoutes(recommendTokens);
const discover = searchRoutes(discoverTokens);
const P = '/collections/:name/points';

/** The routes strict mode applies to, by method and URL pattern. */
const ROUTE_CHECKS: Readonly<Record<string, RouteCheck>> = {
  [`POST ${P}/search`]: search.one,
  [`POST ${P}/search/batch`]: search.batch,
  [`POST ${P}/recommend`]: recommend.one,
  [`POST ${P}/recommend/batch`]: recommend.batch,
  [`POST ${P}/discover`]: discover.one,
  [`POST ${P}/discover/batch`]: discover.batch,
  [`POST ${P}/query`]: async (c) => ({ read: await checkQuery(c, c.body, numberOf(c.body.limit) ?? DEFAULT_LIMIT) }),
  [`POST ${P}/query/batch`]: async (c) => {
    let read = 0;
    for (const body of batchOf(c)) read += await checkQuery(c, body, numberOf(body.limit) ?? DEFAULT_LIMIT);
    return { read };
  },
  [`POST ${P}/search/groups`]: groupsRoute(undefined, async (c) => {
    checkSearchLike(c, c.body, undefined);
    return searchCost(c.body);
  }),
  [`POST ${P}/recommend/groups`]: groupsRoute(undefined, async (c) => {
    checkSearchLike(c, c.body, undefined);
    return recommendTokens(c.body);
  }),
  [`POST ${P}/query/groups`]: groupsRoute({ limit: 10, size: 3 }, (c) => checkQuery(c, c.body, undefined)),
  [`POST ${P}/search/matrix/pairs`]: matrixCheck,
  [`POST ${P}/search/matrix/offsets`]: matrixCheck,
  [`POST ${P}/scroll`]: pageRoute(false),
  [`POST ${P}/count`]: pageRoute(true),
  'POST /collections/:name/facet': pageRoute(false),
  [`POST ${P}`]: async (c) => ({ read: list(c.body.ids).length }),
  [`GET ${P}/:id`]: async () => ({ read: 1 }),
  [`PUT ${P}`]: write('upsert'),
  [`PUT ${P}/vectors`]: write('update_vectors'),
  [`POST ${P}/vectors/delete`]: write('delete_vectors'),
  [`POST ${P}/delete`]: write('delete'),
  [`POST ${P}/payload`]: write('set_payload'),
  [`PUT ${P}/payload`]: write('overwrite_payload'),
  [`POST ${P}/payload/delete`]: write('delete_payload'),
  [`POST ${P}/payload/clear`]: write('clear_payload'),
  [`POST ${P}/batch`]: async (c) => {
    let tokens = 0;
    for (const operation of list(c.body.operations)) {
      const [kind, body] = Object.entries(bodyOf(operation))[0] ?? [];
      if (kind !== undefined && WRITE_KINDS.has(kind)) tokens += await checkWrite(c, kind as WriteKind, bodyOf(body));
    }
    return { write: Math.max(1, tokens) };
  },
  'PUT /collections/:name/index': async (c) => {
    const field = c.body.field_name;
    if (typeof field !== 'string' || !Object.hasOwn(c.schemas, field)) checkPayloadIndexCount(Object.keys(c.schemas).length, c.config);
    return { write: 1 };
  },
  'DELETE /collections/:name/index/:field': async () => ({ write: 1 }),
};

/** The distance matrix: `sample × limit` as the limit (Qdrant's defaults 10 and 3); a search per sampled point. */
async function matrixCheck(c: Checked): Promise<Demand> {
  const sample = numberOf(c.body.sample) ?? 10;
  checkLimit(sample * (numberOf(c.body.limit) ?? 3), c.config.max_query_limit, 'limit');
  checkFilter(c.body.filter, c.config.unindexed_filtering_retrieve, c.schemas, c.config);
  return { read: sample * (1 + conditionCount(c.body.filter)) };
}

/** What the hook needs beyond the store: the rate limiters, and how memory is read (tests give their own). */
export interface StrictModeOptions {
  readonly limiters?: RateLimiters;
  readonly memory?: () => MemoryReading;
}

/** The preHandler hook of the Qdrant port's routes. */
export function strictModeHook(store: QdrantStore, options: StrictModeOptions = {}): (request: FastifyRequest) => Promise<void> {
  const limiters = options.limiters ?? new RateLimiters();
  const memory = options.memory ?? readMemory;
  return async (request) => {
    const route = `${request.method} ${request.routeOptions.url}`;
    const name = (request.params as { name?: unknown } | undefined)?.name;
    if (typeof name !== 'string') return;
    // A collection dropped (and perhaps created again under its name) leaves its buckets behind.
    if (route === 'DELETE /collections/:name') limiters.forget(name);
    const check = ROUTE_CHECKS[route];
    if (check === undefined) return;
    let collection: QdrantCollection;
    try {
      collection = await collectionOf(store, name);
    } catch (error) {
      if (error instanceof QdrantHttpError) return; // the route answers it (a 404, a name too long)
      throw error;
    }
    const extras = extrasOf(collection);
    const config = activeStrictMode(extras.options);
    if (config === undefined) {
      limiters.forget(collection.name);
      return;
    }
    const timeout = (request.query as Record<string, unknown> | undefined)?.timeout;
    if (typeof timeout === 'string' && /^\d+$/.test(timeout)) checkLimit(Number(timeout), config.max_timeout, 'timeout');
    const schemas = { ...extras.payload_schema, ...collection.textIndexSchemas?.() };
    const demand = await check({ config, collection, options: extras.options, schemas, body: bodyOf(request.body), memory });
    if ('read' in demand) limiters.take(collection.name, 'read', config.read_rate_limit, demand.read);
    else limiters.take(collection.name, 'write', config.write_rate_limit, demand.write);
  };
}
