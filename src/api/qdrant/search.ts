/**
 * Searches on the Qdrant port: POST …/points/search and …/search/batch (a vector), POST
 * …/points/query and …/query/batch (a vector, a point id whose vector is used and which is left
 * out of the answer, a recommendation, MMR, or no query at all: points in id order), POST
 * …/points/recommend and …/recommend/batch. Each request is translated into the engine's searches
 * (Collection.searchBatch) or pages (Collection.scroll); the engine bounds the request's cost
 * (collection/request-cost.ts) before any of it runs, examples included.
 */
import type { FastifyInstance } from 'fastify';
import type { Collection } from '../../collection/collection.js';
import { LIMITS } from '../../collection/collection-config.js';
import type { SearchRequest } from '../../collection/embedded-input.js';
import { type ExampleSum, recommendationVector } from '../../collection/recommend.js';
import { addScroll, REQUEST_BUDGET, RequestCost } from '../../collection/request-cost.js';
import { childPath } from '../../core/field-path.js';
import { describeJson, type PointId } from '../../core/point-id.js';
import type { Database } from '../../db/database.js';
import { excludingIds, type Filter } from '../../payload/filter-types.js';
import { type PayloadSelector, parsePayloadSelector, selectorPatterns } from '../../payload/payload-selector.js';
import { okSliced } from '../envelope.js';
import { collectionOf } from './collections.js';
import { asObject, formatError, notSupported, optionalBoolean, optionalInteger, optionalNumber, QdrantHttpError, validationError } from './errors.js';
import { parseQdrantFilter } from './filter.js';
import { toKithId, toQdrantId } from './ids.js';
import { denseVector, findPoint } from './points.js';
import { parseVectorSelector, type QdrantScoredPoint } from './shape.js';
import { mapInSlices, TimeSlices } from '../../core/time-slices.js';

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

/** One search of a request: a vector query (maybe re-ranked by MMR, maybe leaving points out), or a page in id order. */
type Plan =
  | (Common & { kind: 'search'; vector: unknown; exclude?: ReadonlySet<PointId>; mmr?: { diversity: number; candidates: number } })
  | (Common & { kind: 'list' });

function parseParams(raw: unknown, path: string): { ef?: number; exact: boolean } {
  const params = asObject(raw, path);
  const ef = params.hnsw_ef === undefined || params.hnsw_ef === null ? undefined : optionalInteger(params.hnsw_ef, childPath(path, 'hnsw_ef'), 0, LIMITS.efSearch.min, LIMITS.efSearch.max);
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
  return { kind: 'search', ...commonPlan(body, path, false), vector: denseVector(vector, childPath(path, 'vector')) };
}

const UNSUPPORTED_QUERIES = ['discover', 'context', 'order_by', 'fusion', 'rrf', 'formula', 'sample'];

/** A query request body: `query` is a vector, an id, `{nearest: vector | id, mmr?}`, `{recommend}`, or absent. */
async function queryPlan(collection: Collection, raw: unknown, path: string, cost: RequestCost): Promise<Plan> {
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
      return { kind: 'search', ...common, ...(await recommendVector(collection, asObject(q.recommend, recommendPath), recommendPath, cost)) };
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
      const candidates = optionalInteger(raw.candidates_limit, childPath(mmrPath, 'candidates_limit'), common.limit, LIMITS.mmrCandidates.min, LIMITS.mmrCandidates.max);
      if (query === undefined || query === null) throw formatError(childPath(queryPath, 'nearest'), 'required with mmr');
      mmr = { diversity, candidates };
    }
  }
  if (query === undefined || query === null) throw formatError(queryPath, `expected a vector, a point id or {nearest}, got ${describeJson(query)}`);
  return { kind: 'search', ...common, ...queryVector(collection, query, queryPath), ...(mmr === undefined ? {} : { mmr }) };
}

/** A nearest query: a vector, or a point id (its stored vector; the point is left out). */
function queryVector(collection: Collection, query: unknown, path: string): { vector: unknown; exclude?: ReadonlySet<PointId> } {
  if (typeof query === 'number' || typeof query === 'string') {
    const id = toKithId(query, path);
    const point = findPoint(collection, id);
    if (point === undefined) throw new QdrantHttpError(404, `Not found: No point with id ${JSON.stringify(query)} found`);
    return { vector: point.vector, exclude: new Set([id]) };
  }
  return { vector: denseVector(query, path) };
}

/**
 * One side of a recommendation: the ids given (their stored vectors; the points are left out) and
 * the vectors given. In time slices: a side may list 131,072 ids.
 */
async function examples(collection: Collection, raw: unknown, path: string, exclude: Set<PointId>): Promise<{ ids: PointId[]; vectors: number[][] }> {
  const out = { ids: [] as PointId[], vectors: [] as number[][] };
  if (raw === undefined || raw === null) return out;
  if (!Array.isArray(raw)) throw formatError(path, `expected a list of point ids or vectors, got ${describeJson(raw)}`);
  const dim = collection.describe().vector_size;
  const slices = new TimeSlices();
  for (let i = 0; i < raw.length; i++) {
    if (slices.due(i)) await slices.pause();
    const example: unknown = raw[i];
    if (typeof example === 'number' || typeof example === 'string') {
      const id = toKithId(example, childPath(path, i));
      if (!collection.hasPoint(id)) throw new QdrantHttpError(404, `Not found: No point with id ${JSON.stringify(example)} found`);
      exclude.add(id);
      out.ids.push(id);
      continue;
    }
    const at = childPath(path, i);
    const vector = denseVector(example, at);
    if (!Array.isArray(vector) || vector.some((x) => typeof x !== 'number')) throw formatError(at, 'expected a point id or a vector of numbers');
    if (vector.length !== dim) throw formatError(at, `expected a vector of ${dim} numbers, got ${vector.length}`);
    out.vectors.push(vector as number[]);
  }
  return out;
}

/** The sum of one side's examples: the stored vectors summed by the engine (on a search thread), then the given ones. */
async function exampleSum(collection: Collection, side: { ids: PointId[]; vectors: number[][] }): Promise<ExampleSum> {
  const sum = await collection.sumOfVectors(side.ids);
  for (const v of side.vectors) for (let d = 0; d < sum.length; d++) sum[d] = (sum[d] as number) + (v[d] as number);
  return { sum, count: side.ids.length + side.vectors.length };
}

/**
 * Qdrant's average_vector strategy (collection/recommend.ts); the examples given by id are left out
 * of the answer. The examples' cost is counted before any is read.
 */
async function recommendVector(collection: Collection, body: Record<string, unknown>, path: string, cost: RequestCost): Promise<{ vector: number[]; exclude: ReadonlySet<PointId> }> {
  const strategy = body.strategy ?? 'average_vector';
  if (strategy !== 'average_vector') throw notSupported(childPath(path, 'strategy'), `the ${JSON.stringify(strategy)} strategy (only average_vector is)`);
  if (body.using !== undefined && body.using !== null && body.using !== '') throw notSupported(childPath(path, 'using'), 'named vectors');
  if (body.lookup_from !== undefined && body.lookup_from !== null) throw notSupported(childPath(path, 'lookup_from'), '`lookup_from`');
  const dim = collection.describe().vector_size;
  const count = (list: unknown): number => (Array.isArray(list) ? list.length : 0);
  cost.add('exampleComponents', (count(body.positive) + count(body.negative)) * dim, childPath(path, 'positive'));
  const exclude = new Set<PointId>();
  const positive = await examples(collection, body.positive, childPath(path, 'positive'), exclude);
  const negative = await examples(collection, body.negative, childPath(path, 'negative'), exclude);
  if (positive.ids.length + positive.vectors.length === 0) throw formatError(childPath(path, 'positive'), 'at least one positive example is required');
  return { vector: recommendationVector(await exampleSum(collection, positive), await exampleSum(collection, negative), path), exclude };
}

/** POST …/points/recommend: the recommendation's vector, then a search. */
async function recommendPlan(collection: Collection, raw: unknown, path: string, cost: RequestCost): Promise<Plan> {
  const body = asObject(raw, path);
  const common = commonPlan(body, path, false);
  return { kind: 'search', ...common, ...(await recommendVector(collection, body, path, cost)) };
}

/** The engine's search for a plan: the points to leave out are a `has_id` exclusion of its filter. */
function engineSearch(plan: Extract<Plan, { kind: 'search' }>): SearchRequest {
  const filter = plan.exclude === undefined ? plan.filter : excludingIds(plan.filter, plan.exclude);
  return {
    vector: plan.vector,
    limit: plan.limit,
    offset: plan.offset,
    ...(filter === undefined ? {} : { filter }),
    ...(plan.scoreThreshold === undefined ? {} : { score_threshold: plan.scoreThreshold }),
    with_payload: plan.withPayload,
    with_vector: plan.withVector,
    params: { ...(plan.ef === undefined ? {} : { ef: plan.ef }), exact: plan.exact },
    ...(plan.mmr === undefined ? {} : { mmr: plan.mmr }),
  };
}

/**
 * Runs the plans of one request (at `paths`), all checked against one cost before any runs:
 * searches through Collection.searchBatch, pages in id order through Collection.scroll.
 */
async function runPlans(collection: Collection, plans: readonly Plan[], paths: readonly string[], cost: RequestCost): Promise<QdrantScoredPoint[][]> {
  const vectorSize = collection.describe().vector_size;
  const searchAt: number[] = [];
  plans.forEach((plan, i) => {
    if (plan.kind === 'search') searchAt.push(i);
    else addScroll(cost, { offset: plan.offset, limit: plan.limit, withVector: plan.withVector, vectorSize, payloadPaths: selectorPatterns(plan.withPayload) }, paths[i] as string);
  });
  const searches = searchAt.map((i) => engineSearch(plans[i] as Extract<Plan, { kind: 'search' }>));
  const outcomes = await collection.searchBatch(searches, { cost, paths: searchAt.map((i) => paths[i] as string) });
  const answers: QdrantScoredPoint[][] = new Array(plans.length);
  // In slices: a batch may answer 131,072 hits.
  for (const [i, planIndex] of searchAt.entries()) {
    answers[planIndex] = await mapInSlices(outcomes[i]?.points ?? [], (h) => scoredPoint(h.id, h.version, h.score, h.payload, h.vector));
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

function scoredPoint(id: PointId, version: bigint, score: number, payload: Record<string, unknown> | undefined, vector: number[] | undefined): QdrantScoredPoint {
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

/** A batch's plans, one after another (each may read examples, in order, so errors name the first bad one). */
async function plansOf(bodies: readonly unknown[], plan: (body: unknown, i: number) => Promise<Plan>): Promise<Plan[]> {
  const plans: Plan[] = [];
  for (const [i, body] of bodies.entries()) plans.push(await plan(body, i));
  return plans;
}

const pathsOf = (count: number): string[] => Array.from({ length: count }, (_, i) => childPath('searches', i));

export async function qdrantSearchRoutes(app: FastifyInstance, { db }: { db: Database }): Promise<void> {
  app.post<NameParams>('/collections/:name/points/search', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const [answer] = await runPlans(collection, [searchPlan(request.body, '')], [''], new RequestCost());
    return okSliced(reply, answer);
  });

  app.post<NameParams>('/collections/:name/points/search/batch', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const plans = searches(request.body).map((s, i) => searchPlan(s, childPath('searches', i)));
    return okSliced(reply, await runPlans(collection, plans, pathsOf(plans.length), new RequestCost()));
  });

  app.post<NameParams>('/collections/:name/points/query', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const cost = new RequestCost();
    const [answer] = await runPlans(collection, [await queryPlan(collection, request.body, '', cost)], [''], cost);
    return okSliced(reply, { points: answer });
  });

  app.post<NameParams>('/collections/:name/points/query/batch', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const cost = new RequestCost();
    const plans = await plansOf(searches(request.body), (s, i) => queryPlan(collection, s, childPath('searches', i), cost));
    const answers = await runPlans(collection, plans, pathsOf(plans.length), cost);
    return okSliced(reply, answers.map((points) => ({ points })));
  });

  app.post<NameParams>('/collections/:name/points/recommend', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const cost = new RequestCost();
    const [answer] = await runPlans(collection, [await recommendPlan(collection, request.body, '', cost)], [''], cost);
    return okSliced(reply, answer);
  });

  app.post<NameParams>('/collections/:name/points/recommend/batch', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const cost = new RequestCost();
    const plans = await plansOf(searches(request.body), (s, i) => recommendPlan(collection, s, childPath('searches', i), cost));
    return okSliced(reply, await runPlans(collection, plans, pathsOf(plans.length), cost));
  });
}
