/**
 * Searches on the Qdrant port: POST …/points/search and …/search/batch (a vector), POST
 * …/points/query and …/query/batch (a vector, a point id whose vector is used and which is left
 * out of the answer, or no query at all: points in id order).
 */
import type { FastifyInstance } from 'fastify';
import type { Collection } from '../../collection/collection.js';
import { LIMITS } from '../../collection/collection-config.js';
import { childPath } from '../../core/field-path.js';
import { describeJson, type PointId } from '../../core/point-id.js';
import type { Database } from '../../db/database.js';
import type { Filter } from '../../payload/filter-types.js';
import { ok } from '../envelope.js';
import { collectionOf } from './collections.js';
import { asObject, formatError, notSupported, optionalBoolean, optionalInteger, optionalNumber, QdrantHttpError, validationError } from './errors.js';
import { parseQdrantFilter } from './filter.js';
import { toKithId, toQdrantId } from './ids.js';
import { checkVectorVolume, denseVector, findPoint, orderedMatches } from './points.js';
import { type PayloadSelector, parsePayloadSelector, parseVectorSelector, type QdrantScoredPoint, selectPayload } from './shape.js';

type NameParams = { Params: { name: string } };

interface Plan {
  /** The query vector; undefined lists points in id order. */
  vector?: unknown;
  /** Points left out of the answer (a query by id, the examples of a recommendation). */
  exclude?: ReadonlySet<PointId>;
  filter?: Filter;
  limit: number;
  offset: number;
  scoreThreshold?: number;
  ef?: number;
  exact?: boolean;
  withPayload: PayloadSelector;
  withVector: boolean;
  /** Maximal marginal relevance: re-rank this many nearest candidates for diversity. */
  mmr?: { diversity: number; candidates: number };
}

function parseParams(raw: unknown, path: string): { ef?: number; exact?: boolean } {
  const params = asObject(raw, path);
  const ef = params.hnsw_ef === undefined || params.hnsw_ef === null ? undefined : optionalInteger(params.hnsw_ef, childPath(path, 'hnsw_ef'), 0, LIMITS.efSearch.min, LIMITS.efSearch.max);
  const exact = optionalBoolean(params.exact, childPath(path, 'exact'), false);
  // quantization {ignore, rescore, oversampling} and indexed_only are accepted: kith scores sq8 codes
  // directly and searches every point, indexed or not.
  return { ...(ef === undefined ? {} : { ef }), exact };
}

function commonPlan(body: Record<string, unknown>, path: string, payloadDefault: boolean): Omit<Plan, 'vector' | 'exclude'> {
  if (body.shard_key !== undefined && body.shard_key !== null) throw notSupported(childPath(path, 'shard_key'), 'custom sharding');
  const threshold = optionalNumber(body.score_threshold, childPath(path, 'score_threshold'));
  return {
    filter: parseQdrantFilter(body.filter, childPath(path, 'filter')),
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
  return { ...commonPlan(body, path, false), vector: denseVector(vector, childPath(path, 'vector')) };
}

const UNSUPPORTED_QUERIES = ['discover', 'context', 'order_by', 'fusion', 'rrf', 'formula', 'sample'];

/** A query request body: `query` is a vector, an id, `{nearest: vector | id}`, or absent. */
function queryPlan(collection: Collection, raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  if (Array.isArray(body.prefetch) ? body.prefetch.length > 0 : body.prefetch !== undefined && body.prefetch !== null) {
    throw notSupported(childPath(path, 'prefetch'), '`prefetch` (multi-stage queries)');
  }
  if (body.using !== undefined && body.using !== null && body.using !== '') throw notSupported(childPath(path, 'using'), 'named vectors');
  if (body.lookup_from !== undefined && body.lookup_from !== null) throw notSupported(childPath(path, 'lookup_from'), '`lookup_from`');
  const common = commonPlan(body, path, false);
  let query = body.query;
  const queryPath = childPath(path, 'query');
  if (query === undefined || query === null) return common;
  if (typeof query === 'object' && !Array.isArray(query)) {
    const q = query as Record<string, unknown>;
    const kind = UNSUPPORTED_QUERIES.find((k) => Object.hasOwn(q, k));
    if (kind !== undefined) throw notSupported(childPath(queryPath, kind), `the \`${kind}\` query`, true);
    if (Object.hasOwn(q, 'recommend')) {
      const { vector, exclude } = recommendVector(collection, asObject(q.recommend, childPath(queryPath, 'recommend')), childPath(queryPath, 'recommend'));
      return { ...common, vector, exclude };
    }
    if (!Object.hasOwn(q, 'nearest')) {
      if (Object.hasOwn(q, 'indices')) throw notSupported(queryPath, 'sparse vectors');
      throw formatError(queryPath, 'expected a vector, a point id or {nearest}');
    }
    query = q.nearest;
    if (q.mmr !== undefined && q.mmr !== null) {
      const mmrPath = childPath(queryPath, 'mmr');
      const mmr = asObject(q.mmr, mmrPath);
      const diversity = optionalNumber(mmr.diversity, childPath(mmrPath, 'diversity')) ?? 0.5;
      if (diversity < 0 || diversity > 1) throw validationError(childPath(mmrPath, 'diversity'), `must be between 0 and 1, got ${diversity}`);
      const candidates = optionalInteger(mmr.candidates_limit, childPath(mmrPath, 'candidates_limit'), common.limit, 1, LIMITS.limit.max);
      if (query === undefined || query === null) throw formatError(childPath(queryPath, 'nearest'), 'required with mmr');
      return { ...common, ...queryVector(collection, query, queryPath), mmr: { diversity, candidates } };
    }
  }
  if (query === undefined || query === null) throw formatError(queryPath, `expected a vector, a point id or {nearest}, got ${describeJson(query)}`);
  return { ...common, ...queryVector(collection, query, queryPath) };
}

/** A nearest query: a vector, or a point id (its stored vector; the point is left out). */
function queryVector(collection: Collection, query: unknown, path: string): Pick<Plan, 'vector' | 'exclude'> {
  if (typeof query === 'number' || typeof query === 'string') {
    const id = toKithId(query, path);
    const point = findPoint(collection, id);
    if (point === undefined) throw new QdrantHttpError(404, `Not found: No point with id ${JSON.stringify(query)} found`);
    return { vector: point.vector, exclude: new Set([id]) };
  }
  return { vector: denseVector(query, path) };
}

/** Examples of a recommendation: point ids (their stored vectors; the points are left out) or vectors. */
function exampleVectors(collection: Collection, raw: unknown, path: string, exclude: Set<PointId>): number[][] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw formatError(path, `expected a list of point ids or vectors, got ${describeJson(raw)}`);
  return raw.map((example, i) => {
    const at = childPath(path, i);
    if (typeof example === 'number' || typeof example === 'string') {
      const id = toKithId(example, at);
      const point = findPoint(collection, id);
      if (point === undefined) throw new QdrantHttpError(404, `Not found: No point with id ${JSON.stringify(example)} found`);
      exclude.add(id);
      return point.vector;
    }
    const vector = denseVector(example, at);
    if (!Array.isArray(vector) || vector.some((x) => typeof x !== 'number')) throw formatError(at, 'expected a point id or a vector of numbers');
    return vector as number[];
  });
}

function mean(vectors: readonly number[][], dim: number, path: string): number[] {
  const out = new Array<number>(dim).fill(0);
  for (const v of vectors) {
    if (v.length !== dim) throw formatError(path, `expected vectors of ${dim} numbers, got ${v.length}`);
    for (let i = 0; i < dim; i++) out[i] = (out[i] as number) + (v[i] as number) / vectors.length;
  }
  return out;
}

/**
 * Qdrant's average_vector strategy: the mean of the positives, pushed away from the mean of the
 * negatives (avg_pos + (avg_pos − avg_neg)); the examples given by id are left out of the answer.
 */
function recommendVector(collection: Collection, body: Record<string, unknown>, path: string): { vector: number[]; exclude: Set<PointId> } {
  const strategy = body.strategy ?? 'average_vector';
  if (strategy !== 'average_vector') throw notSupported(childPath(path, 'strategy'), `the ${JSON.stringify(strategy)} strategy (only average_vector is)`);
  if (body.using !== undefined && body.using !== null && body.using !== '') throw notSupported(childPath(path, 'using'), 'named vectors');
  if (body.lookup_from !== undefined && body.lookup_from !== null) throw notSupported(childPath(path, 'lookup_from'), '`lookup_from`');
  const exclude = new Set<PointId>();
  const dim = collection.describe().vector_size;
  const positive = exampleVectors(collection, body.positive, childPath(path, 'positive'), exclude);
  const negative = exampleVectors(collection, body.negative, childPath(path, 'negative'), exclude);
  if (positive.length === 0) throw formatError(childPath(path, 'positive'), 'at least one positive example is required');
  const pos = mean(positive, dim, childPath(path, 'positive'));
  if (negative.length === 0) return { vector: pos, exclude };
  const neg = mean(negative, dim, childPath(path, 'negative'));
  return { vector: pos.map((p, i) => p + (p - (neg[i] as number))), exclude };
}

/** POST …/points/recommend: the recommendation's vector, then a search (the client sends with_payload true). */
function recommendPlan(collection: Collection, raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  const { vector, exclude } = recommendVector(collection, body, path);
  return { ...commonPlan(body, path, false), vector, exclude };
}

/** `spread`: one of several searches sent at once (a batch): see Collection.searchParallel. */
async function run(collection: Collection, plan: Plan, spread = false): Promise<QdrantScoredPoint[]> {
  if (plan.withVector) checkVectorVolume(plan.limit, collection.describe().vector_size, 'limit');
  if (plan.vector === undefined) {
    const page = orderedMatches(collection, plan.filter).slice(plan.offset, plan.offset + plan.limit);
    return page.map((p) => {
      const point = collection.getPoint(p.id);
      const out: QdrantScoredPoint = { id: toQdrantId(p.id), version: Number(point.version), score: 0 };
      const payload = selectPayload(point.payload, plan.withPayload);
      if (payload !== undefined) out.payload = payload;
      if (plan.withVector) out.vector = point.vector;
      return out;
    });
  }
  if (plan.mmr !== undefined) return await runMmr(collection, plan, plan.mmr, spread);
  // Leaving points out: ask for that many more from the start, drop them, then apply the offset here.
  const extra = plan.exclude === undefined ? 0 : plan.exclude.size;
  const limit = plan.limit + (extra === 0 ? 0 : plan.offset) + extra;
  if (limit > LIMITS.limit.max) {
    throw new QdrantHttpError(422, `Validation error in JSON body: limit + offset + excluded examples: at most ${LIMITS.limit.max} for a query by id or a recommendation`);
  }
  // searchParallel: the search threads score it, as on kith's own port.
  const { points: hits } = await collection.searchParallel({
    vector: plan.vector,
    limit,
    offset: extra === 0 ? plan.offset : 0,
    ...(plan.filter === undefined ? {} : { filter: plan.filter }),
    ...(plan.scoreThreshold === undefined ? {} : { score_threshold: plan.scoreThreshold }),
    with_payload: plan.withPayload.kind !== 'none',
    with_vector: plan.withVector,
    params: { ...(plan.ef === undefined ? {} : { ef: plan.ef }), exact: plan.exact ?? false },
    },
    { spread },
  );
  const excluded = plan.exclude;
  const kept = excluded === undefined ? hits : hits.filter((h) => !excluded.has(h.id)).slice(plan.offset, plan.offset + plan.limit);
  return kept.map((h) => {
    const out: QdrantScoredPoint = { id: toQdrantId(h.id), version: Number(h.version), score: h.score };
    const payload = h.payload === undefined ? undefined : selectPayload(h.payload, plan.withPayload);
    if (payload !== undefined) out.payload = payload;
    if (h.vector !== undefined) out.vector = h.vector;
    return out;
  });
}

/**
 * Maximal marginal relevance: the `candidates` nearest points, then a greedy pick of offset + limit
 * of them, each maximising (1 − diversity)·relevance − diversity·(its highest similarity to those
 * already picked). Similarities are the collection's: cosine or dot product, and the negated
 * distance for Euclid. Hits keep their score against the query.
 */
async function runMmr(collection: Collection, plan: Plan, mmr: { diversity: number; candidates: number }, spread: boolean): Promise<QdrantScoredPoint[]> {
  const distance = collection.distance;
  const excluded = plan.exclude ?? new Set<PointId>();
  const wanted = Math.max(mmr.candidates, plan.offset + plan.limit);
  if (wanted + excluded.size > LIMITS.limit.max) throw validationError('query.mmr.candidates_limit', `at most ${LIMITS.limit.max} candidates (with offset + limit)`);
  const { points: found } = await collection.searchParallel({
      vector: plan.vector,
      limit: wanted + excluded.size,
      ...(plan.filter === undefined ? {} : { filter: plan.filter }),
      ...(plan.scoreThreshold === undefined ? {} : { score_threshold: plan.scoreThreshold }),
      with_payload: plan.withPayload.kind !== 'none',
      with_vector: true,
      params: { ...(plan.ef === undefined ? {} : { ef: plan.ef }), exact: plan.exact ?? false },
    },
    { spread },
  );
  const hits = found.filter((h) => !excluded.has(h.id)).slice(0, wanted);
  const vectors = hits.map((h) => h.vector as number[]);
  const similarity = (a: readonly number[], b: readonly number[]): number => {
    let s = 0;
    if (distance === 'Euclid') {
      for (let i = 0; i < a.length; i++) s += ((a[i] as number) - (b[i] as number)) ** 2;
      return -Math.sqrt(s);
    }
    for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
    return s;
  };
  const relevance = hits.map((h) => (distance === 'Euclid' ? -h.score : h.score));
  const closest = new Array<number>(hits.length).fill(Number.NEGATIVE_INFINITY);
  const picked: number[] = [];
  const free = new Set(hits.map((_, i) => i));
  while (picked.length < plan.offset + plan.limit && free.size > 0) {
    let best = -1;
    let bestValue = Number.NEGATIVE_INFINITY;
    for (const i of free) {
      const penalty = picked.length === 0 ? 0 : (closest[i] as number);
      const value = (1 - mmr.diversity) * (relevance[i] as number) - mmr.diversity * penalty;
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    picked.push(best);
    free.delete(best);
    for (const i of free) closest[i] = Math.max(closest[i] as number, similarity(vectors[i] as number[], vectors[best] as number[]));
  }
  return picked.slice(plan.offset).map((i) => {
    const h = hits[i] as (typeof hits)[number];
    const out: QdrantScoredPoint = { id: toQdrantId(h.id), version: Number(h.version), score: h.score };
    const payload = h.payload === undefined ? undefined : selectPayload(h.payload, plan.withPayload);
    if (payload !== undefined) out.payload = payload;
    if (plan.withVector) out.vector = h.vector as number[];
    return out;
  });
}

function searches(body: unknown): unknown[] {
  const list = asObject(body, 'body').searches;
  if (!Array.isArray(list)) throw formatError('searches', `expected an array of requests, got ${describeJson(list)}`);
  return list;
}

export async function qdrantSearchRoutes(app: FastifyInstance, { db }: { db: Database }): Promise<void> {
  app.post<NameParams>('/collections/:name/points/search', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    return ok(reply, await run(collection, searchPlan(request.body, '')));
  });

  app.post<NameParams>('/collections/:name/points/search/batch', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const plans = searches(request.body).map((s, i) => searchPlan(s, childPath('searches', i)));
    return ok(reply, await Promise.all(plans.map((plan) => run(collection, plan, true))));
  });

  app.post<NameParams>('/collections/:name/points/query', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    return ok(reply, { points: await run(collection, queryPlan(collection, request.body, '')) });
  });

  app.post<NameParams>('/collections/:name/points/recommend', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    return ok(reply, await run(collection, recommendPlan(collection, request.body, '')));
  });

  app.post<NameParams>('/collections/:name/points/recommend/batch', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const plans = searches(request.body).map((s, i) => recommendPlan(collection, s, childPath('searches', i)));
    return ok(reply, await Promise.all(plans.map((plan) => run(collection, plan, true))));
  });

  app.post<NameParams>('/collections/:name/points/query/batch', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const plans = searches(request.body).map((s, i) => queryPlan(collection, s, childPath('searches', i)));
    return ok(reply, await Promise.all(plans.map(async (plan) => ({ points: await run(collection, plan, true) }))));
  });
}
