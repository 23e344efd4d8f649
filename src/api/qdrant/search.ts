/**
 * Searches on the Qdrant port: POST …/points/search and …/search/batch (a vector), POST
 * …/points/query and …/query/batch (a vector, a point id whose vector is used and which is left
 * out of the answer, a recommendation, MMR, or no query at all: points in id order), POST
 * …/points/recommend and …/recommend/batch. Each request is translated into the engine's queries
 * (Collection.query: a vector, a point id, a recommendation; search/query-verbs.ts) or pages
 * (Collection.scroll), and the answers back; the engine reads the examples, leaves the points given
 * by id out (a has_id exclusion of the filter), and bounds the request's cost
 * (search/request-cost.ts) before any of it runs, examples included. This file checks only
 * what Qdrant's wire format requires (its ids, shapes and refusals).
 */
import type { FastifyInstance } from 'fastify';
import { LIMITS } from '../../segment/collection-config.js';
import { type Example, PointNotFoundError, type QueryRequest } from '../../search/query-verbs.js';
import type { SearchInput } from '../../search/collection-search.js';
import { addScroll, REQUEST_BUDGET, RequestCost } from '../../search/request-cost.js';
import { childPath } from '../../core/field-path.js';
import { describeJson, type PointId } from '../../core/point-id.js';
import type { Filter } from '../../payload/filter-types.js';
import { type PayloadSelector, parsePayloadSelector, selectorPatterns } from '../../payload/payload-selector.js';
import { okSliced } from '../envelope.js';
import { requestCollection } from './collections.js';
import { asObject, formatError, notSupported, optionalBoolean, optionalInteger, optionalNumber, QdrantHttpError, validationError } from './errors.js';
import { parseQdrantFilter } from './filter.js';
import { type QdrantId, toKithId, toQdrantId } from './ids.js';
import { denseVector } from './points.js';
import { parseVectorSelector, type QdrantScoredPoint } from './shape.js';
import type { QdrantCollection, QdrantStore } from './store.js';
import { mapInSlices } from '../../core/time-slices.js';

type NameParams = { Params: { name: string } };

/** A request's common fields, as the engine takes them. */
interface Common {
  filter?: Filter;
  limit: number;
  offset: number;
  scoreThreshold?: number;
  ef?: number;
  exact: boolean;
  withPayload: PayloadSelector;
  withVector: boolean;
}

/** Where a search's query vector comes from: given, a stored point's (left out of the answer), or a recommendation's examples. */
type Query = { kind: 'vector'; vector: unknown } | { kind: 'point'; point: QdrantId } | { kind: 'recommend'; positive: Example[]; negative: Example[] };

/** One search of a request: a query (a vector maybe re-ranked by MMR, a point, a recommendation), or a page in id order. */
type Plan = (Common & { kind: 'search'; query: Query; mmr?: { diversity: number; candidates: number } }) | (Common & { kind: 'list' });

function parseParams(raw: unknown, path: string): { ef?: number; exact: boolean } {
  const params = asObject(raw, path);
  const ef =
    params.hnsw_ef === undefined || params.hnsw_ef === null
      ? undefined
      : optionalInteger(params.hnsw_ef, childPath(path, 'hnsw_ef'), 0, LIMITS.efSearch.min, LIMITS.efSearch.max);
  const exact = optionalBoolean(params.exact, childPath(path, 'exact'), false);
  // quantization {ignore, rescore, oversampling} and indexed_only are accepted: kith scores sq8 codes
  // directly and searches every point, indexed or not.
  return { ...(ef === undefined ? {} : { ef }), exact };
}

function commonPlan(body: Record<string, unknown>, path: string, payloadDefault: boolean): Common {
  if (body.shard_key !== undefined && body.shard_key !== null) throw notSupported(childPath(path, 'shard_key'), 'custom sharding');
  const threshold = optionalNumber(body.score_threshold, childPath(path, 'score_threshold'));
  const filter = parseQdrantFilter(body.filter, childPath(path, 'filter'));
  return {
    ...(filter === undefined ? {} : { filter }),
    limit: optionalInteger(body.limit, childPath(path, 'limit'), 10, LIMITS.limit.min, LIMITS.limit.max),
    offset: optionalInteger(body.offset, childPath(path, 'offset'), 0, LIMITS.offset.min, LIMITS.offset.max),
    ...(threshold === undefined ? {} : { scoreThreshold: threshold }),
    ...parseParams(body.params, childPath(path, 'params')),
    withPayload: parsePayloadSelector(body.with_payload, childPath(path, 'with_payload'), payloadDefault),
    withVector: parseVectorSelector(body.with_vector, childPath(path, 'with_vector'), false),
  };
}

/** A search request body (the JS client sends with_payload true; Qdrant's own default is false). */
function searchPlan(raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  let vector = body.vector;
  if (typeof vector === 'object' && vector !== null && !Array.isArray(vector) && Object.hasOwn(vector, 'vector')) {
    const named = vector as { name?: unknown; vector?: unknown };
    if (named.name !== '' && named.name !== undefined) throw notSupported(childPath(path, 'vector.name'), 'named vectors');
    vector = named.vector;
  }
  if (vector === undefined || vector === null) throw formatError(childPath(path, 'vector'), 'required');
  return { kind: 'search', ...commonPlan(body, path, false), query: { kind: 'vector', vector: denseVector(vector, childPath(path, 'vector')) } };
}

const UNSUPPORTED_QUERIES = ['discover', 'context', 'order_by', 'fusion', 'rrf', 'formula', 'sample'];

/** A query request body: `query` is a vector, an id, `{nearest: vector | id, mmr?}`, `{recommend}`, or absent. */
function queryPlan(dim: number, raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  if (Array.isArray(body.prefetch) ? body.prefetch.length > 0 : body.prefetch !== undefined && body.prefetch !== null) {
    throw notSupported(childPath(path, 'prefetch'), '`prefetch` (multi-stage queries)');
  }
  if (body.using !== undefined && body.using !== null && body.using !== '') throw notSupported(childPath(path, 'using'), 'named vectors');
  if (body.lookup_from !== undefined && body.lookup_from !== null) throw notSupported(childPath(path, 'lookup_from'), '`lookup_from`');
  const common = commonPlan(body, path, false);
  let query = body.query;
  const queryPath = childPath(path, 'query');
  if (query === undefined || query === null) return { kind: 'list', ...common };
  let mmr: { diversity: number; candidates: number } | undefined;
  if (typeof query === 'object' && !Array.isArray(query)) {
    const q = query as Record<string, unknown>;
    const kind = UNSUPPORTED_QUERIES.find((k) => Object.hasOwn(q, k));
    if (kind !== undefined) throw notSupported(childPath(queryPath, kind), `the \`${kind}\` query`, true);
    if (Object.hasOwn(q, 'recommend')) {
      const recommendPath = childPath(queryPath, 'recommend');
      return { kind: 'search', ...common, query: recommendQuery(dim, asObject(q.recommend, recommendPath), recommendPath) };
    }
    if (!Object.hasOwn(q, 'nearest')) {
      if (Object.hasOwn(q, 'indices')) throw notSupported(queryPath, 'sparse vectors');
      throw formatError(queryPath, 'expected a vector, a point id or {nearest}');
    }
    query = q.nearest;
    if (q.mmr !== undefined && q.mmr !== null) {
      const mmrPath = childPath(queryPath, 'mmr');
      const raw = asObject(q.mmr, mmrPath);
      const diversity = optionalNumber(raw.diversity, childPath(mmrPath, 'diversity')) ?? 0.5;
      if (diversity < 0 || diversity > 1) throw validationError(childPath(mmrPath, 'diversity'), `must be between 0 and 1, got ${diversity}`);
      // Qdrant's default: as many candidates as the search returns.
      const candidates = optionalInteger(
        raw.candidates_limit,
        childPath(mmrPath, 'candidates_limit'),
        common.limit,
        LIMITS.mmrCandidates.min,
        LIMITS.mmrCandidates.max,
      );
      if (query === undefined || query === null) throw formatError(childPath(queryPath, 'nearest'), 'required with mmr');
      mmr = { diversity, candidates };
    }
  }
  if (query === undefined || query === null) throw formatError(queryPath, `expected a vector, a point id or {nearest}, got ${describeJson(query)}`);
  return { kind: 'search', ...common, query: nearestQuery(query, queryPath), ...(mmr === undefined ? {} : { mmr }) };
}

/** A nearest query: a vector, or a point id (the engine searches near its stored vector and leaves it out). */
function nearestQuery(query: unknown, path: string): Query {
  if (typeof query === 'number' || typeof query === 'string') {
    toKithId(query, path);
    return { kind: 'point', point: query };
  }
  return { kind: 'vector', vector: denseVector(query, path) };
}

/** One side of a recommendation, checked as Qdrant checks it: point ids and vectors of the collection's size. */
function examples(raw: unknown, path: string, dim: number): Example[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw formatError(path, `expected a list of point ids or vectors, got ${describeJson(raw)}`);
  return raw.map((example, i): Example => {
    // The common case, an unsigned integer id, without building its path (a side may list 131,072).
    if (typeof example === 'number' && Number.isSafeInteger(example) && example >= 0) return example;
    const at = childPath(path, i);
    if (typeof example === 'number' || typeof example === 'string') {
      toKithId(example, at);
      return example;
    }
    const vector = denseVector(example, at);
    if (!Array.isArray(vector) || vector.some((x) => typeof x !== 'number')) throw formatError(at, 'expected a point id or a vector of numbers');
    if (vector.length !== dim) throw formatError(at, `expected a vector of ${dim} numbers, got ${vector.length}`);
    return vector as number[];
  });
}

/** Qdrant's average_vector recommendation, translated: the engine reads the examples and leaves those given by id out. */
function recommendQuery(dim: number, body: Record<string, unknown>, path: string): Query {
  const strategy = body.strategy ?? 'average_vector';
  if (strategy !== 'average_vector') throw notSupported(childPath(path, 'strategy'), `the ${JSON.stringify(strategy)} strategy (only average_vector is)`);
  if (body.using !== undefined && body.using !== null && body.using !== '') throw notSupported(childPath(path, 'using'), 'named vectors');
  if (body.lookup_from !== undefined && body.lookup_from !== null) throw notSupported(childPath(path, 'lookup_from'), '`lookup_from`');
  const positive = examples(body.positive, childPath(path, 'positive'), dim);
  const negative = examples(body.negative, childPath(path, 'negative'), dim);
  if (positive.length === 0) throw formatError(childPath(path, 'positive'), 'at least one positive example is required');
  return { kind: 'recommend', positive, negative };
}

/** POST …/points/recommend: a recommendation's search. */
function recommendPlan(dim: number, raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  const common = commonPlan(body, path, false);
  return { kind: 'search', ...common, query: recommendQuery(dim, body, path) };
}

/** The engine's query for a plan. */
function engineQuery(plan: Extract<Plan, { kind: 'search' }>): QueryRequest<SearchInput> {
  const filter = plan.filter;
  const search = {
    limit: plan.limit,
    offset: plan.offset,
    ...(filter === undefined ? {} : { filter }),
    ...(plan.scoreThreshold === undefined ? {} : { score_threshold: plan.scoreThreshold }),
    with_payload: plan.withPayload,
    with_vector: plan.withVector,
    params: { ...(plan.ef === undefined ? {} : { ef: plan.ef }), exact: plan.exact },
    ...(plan.mmr === undefined ? {} : { mmr: plan.mmr }),
  };
  const query = plan.query;
  if (query.kind === 'point') return { kind: 'point', search: { ...search, point: query.point } };
  if (query.kind === 'recommend') return { kind: 'recommend', search: { ...search, positive: query.positive, negative: query.negative } };
  return { kind: 'vector', search: { ...search, vector: query.vector } };
}

/** Qdrant's answer for a point given by id that does not exist. */
async function pointsFound<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof PointNotFoundError) throw new QdrantHttpError(404, `Not found: No point with id ${JSON.stringify(error.given)} found`);
    throw error;
  }
}

/**
 * Runs the plans of one request (at `paths`), all checked against one cost before any runs:
 * searches through Collection.searchBatch, pages in id order through Collection.scroll.
 */
async function runPlans(collection: QdrantCollection, plans: readonly Plan[], paths: readonly string[], cost: RequestCost): Promise<QdrantScoredPoint[][]> {
  const vectorSize = (await collection.facts()).vector_size;
  const searchAt: number[] = [];
  plans.forEach((plan, i) => {
    if (plan.kind === 'search') searchAt.push(i);
    else
      addScroll(
        cost,
        { offset: plan.offset, limit: plan.limit, withVector: plan.withVector, vectorSize, payloadPaths: selectorPatterns(plan.withPayload) },
        paths[i] as string,
      );
  });
  const queries = searchAt.map((i) => engineQuery(plans[i] as Extract<Plan, { kind: 'search' }>));
  // Qdrant's parse (commonPlan, queryPlan) has checked every field: the engine only counts the cost.
  const outcomes = await pointsFound(() => collection.queryChecked(queries, { cost, paths: searchAt.map((i) => paths[i] as string) }));
  const answers: QdrantScoredPoint[][] = new Array(plans.length);
  // In slices: a batch may answer 131,072 hits.
  for (const [i, planIndex] of searchAt.entries()) {
    answers[planIndex] = await mapInSlices(outcomes[i] ?? [], (h) => scoredPoint(h.id, h.version, h.score, h.payload, h.vector));
  }
  for (const [i, plan] of plans.entries()) {
    if (plan.kind !== 'list') continue;
    const page = await collection.scroll({
      limit: plan.limit,
      offset: plan.offset,
      ...(plan.filter === undefined ? {} : { filter: plan.filter }),
      with_payload: plan.withPayload,
      with_vector: plan.withVector,
    });
    answers[i] = await mapInSlices(page.points, (p) => scoredPoint(p.id, p.version, 0, p.payload, p.vector));
  }
  return answers;
}

function scoredPoint(
  id: PointId,
  version: bigint,
  score: number,
  payload: Record<string, unknown> | undefined,
  vector: number[] | undefined,
): QdrantScoredPoint {
  const out: QdrantScoredPoint = { id: toQdrantId(id), version: Number(version), score };
  if (payload !== undefined) out.payload = payload;
  if (vector !== undefined) out.vector = vector;
  return out;
}

/** A batch's request bodies, at most REQUEST_BUDGET.searches of them (checked before any is parsed). */
function searches(body: unknown): unknown[] {
  const list = asObject(body, 'body').searches;
  if (!Array.isArray(list)) throw formatError('searches', `expected an array of requests, got ${describeJson(list)}`);
  if (list.length > REQUEST_BUDGET.searches) throw validationError('searches', `${list.length} requests; the limit is ${REQUEST_BUDGET.searches} per batch`);
  return list;
}

const pathsOf = (count: number): string[] => Array.from({ length: count }, (_, i) => childPath('searches', i));

export async function qdrantSearchRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  /** The collection's dimension, which recommendations' example vectors are checked against. */
  const dimOf = async (collection: QdrantCollection): Promise<number> => (await collection.facts()).vector_size;
  app.post<NameParams>('/collections/:name/points/search', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const [answer] = await runPlans(collection, [searchPlan(request.body, '')], [''], new RequestCost());
    return okSliced(reply, answer);
  });

  app.post<NameParams>('/collections/:name/points/search/batch', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const plans = searches(request.body).map((s, i) => searchPlan(s, childPath('searches', i)));
    return okSliced(reply, await runPlans(collection, plans, pathsOf(plans.length), new RequestCost()));
  });

  app.post<NameParams>('/collections/:name/points/query', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const [answer] = await runPlans(collection, [queryPlan(await dimOf(collection), request.body, '')], [''], new RequestCost());
    return okSliced(reply, { points: answer });
  });

  app.post<NameParams>('/collections/:name/points/query/batch', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const dim = await dimOf(collection);
    const plans = searches(request.body).map((s, i) => queryPlan(dim, s, childPath('searches', i)));
    const answers = await runPlans(collection, plans, pathsOf(plans.length), new RequestCost());
    return okSliced(
      reply,
      answers.map((points) => ({ points })),
    );
  });

  app.post<NameParams>('/collections/:name/points/recommend', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const [answer] = await runPlans(collection, [recommendPlan(await dimOf(collection), request.body, '')], [''], new RequestCost());
    return okSliced(reply, answer);
  });

  app.post<NameParams>('/collections/:name/points/recommend/batch', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const dim = await dimOf(collection);
    const plans = searches(request.body).map((s, i) => recommendPlan(dim, s, childPath('searches', i)));
    return okSliced(reply, await runPlans(collection, plans, pathsOf(plans.length), new RequestCost()));
  });
}
