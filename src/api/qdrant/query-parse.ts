/**
 * The Qdrant port's search and query bodies parsed into the engine's terms: a request's common
 * fields, where its query vector comes from (a vector, a point, a recommendation), and the
 * engine's query for it. Shared by the plain searches (search.ts) and the query API (query-plan.ts).
 */
import { LIMITS } from '../../segment/collection-config.js';
import type { ContextPairInput, Example, ExamplesInput, QueryRequest } from '../../search/query-verbs.js';
import type { SearchInput } from '../../search/collection-search.js';
import { checkSparseVector } from '../../search/sparse-search.js';
import { checkNamedVector } from '../../search/named-search.js';
import type { OrderByInput } from '../../search/order-by.js';
import type { Selection, Stage } from '../../search/multi-stage.js';
import { childPath } from '../../core/field-path.js';
import { describeJson } from '../../core/point-id.js';
import type { Filter } from '../../payload/filter-types.js';
import { type PayloadSelector, parsePayloadSelector } from '../../payload/payload-selector.js';
import { asObject, formatError, notSupported, optionalBoolean, optionalInteger, optionalNumber, unknownVariant } from './errors.js';
import { parseQdrantFilter } from './filter.js';
import { type QdrantId, toKithId } from './ids.js';
import { denseVector } from './points.js';
import {
  denseUsed,
  isSparseShape,
  parseVectorSelection,
  readsVectors,
  type UsedVector,
  usedVector,
  type VectorLayout,
  type VectorSelection,
} from './vector-layout.js';

/** A request's common fields, as the engine takes them. */
export interface Common {
  filter?: Filter;
  limit: number;
  offset: number;
  scoreThreshold?: number;
  ef?: number;
  exact: boolean;
  withPayload: PayloadSelector;
  /** Whether the engine reads vectors: some are shown. */
  withVector: boolean;
  /** Which of a point's vectors answers show (vector-layout.ts). */
  vectors: VectorSelection;
}

/**
 * Where a search's query vector comes from: given, a stored point's (left out of the answer), or a
 * recommendation's examples. `lookup`: the ids name points of that other collection (Qdrant's
 * `lookup_from`), whose vectors lookups.ts reads; they are not left out of the answer then.
 */
export type Query =
  | { kind: 'vector'; vector: unknown }
  | { kind: 'sparse'; name: string; vector: { indices: unknown; values: unknown } }
  | { kind: 'named'; name: string; vector: unknown }
  /** Scored by examples: best_score / sum_scores recommendations, discovery, context (search/example-scoring.ts). */
  | { kind: 'examples'; examples: ExamplesInput; using?: string; lookup?: Lookup }
  /** `using`: the named dense or sparse vector searched by (the point's own) and among; the main vector without. */
  | { kind: 'point'; point: QdrantId; lookup?: Lookup; using?: string }
  | { kind: 'recommend'; positive: Example[]; negative: Example[]; lookup?: Lookup; using?: string };

/**
 * Qdrant's `lookup_from {collection, vector}`: the collection whose points the ids name, and the
 * name of its vector they stand for (absent: the name the search uses, as Qdrant's
 * `get_lookup_vector_name`).
 */
export interface Lookup {
  readonly collection: string;
  readonly vector?: string;
}

export function parseLookupFrom(raw: unknown, path: string): Lookup | undefined {
  if (raw === undefined || raw === null) return undefined;
  const body = asObject(raw, path);
  if (typeof body.collection !== 'string' || body.collection === '')
    throw formatError(childPath(path, 'collection'), `expected a collection name, got ${describeJson(body.collection)}`);
  if (body.shard_key !== undefined && body.shard_key !== null) throw notSupported(childPath(path, 'shard_key'), 'custom sharding');
  const vector = body.vector;
  if (vector === undefined || vector === null) return { collection: body.collection };
  if (typeof vector !== 'string') throw formatError(childPath(path, 'vector'), `expected a vector name, got ${describeJson(vector)}`);
  return { collection: body.collection, vector };
}

/** One search of a request: a query (a vector maybe re-ranked by MMR, a point, a recommendation), or a page in id order. */
/** MMR re-ranking of a nearest query: how diverse, among how many candidates. */
export interface Mmr {
  diversity: number;
  candidates: number;
}

/**
 * One search of a request: a query (a vector maybe re-ranked by MMR, a point, a recommendation), a
 * page in id order, or stages over prefetches (search/multi-stage.ts).
 */
export type Plan =
  | (Common & { kind: 'search'; query: Query; mmr?: Mmr })
  | (Common & { kind: 'list'; orderBy?: OrderByInput; sample?: true })
  | (Common & { kind: 'stages'; stage: Stage; selection: Selection; lookups?: ReadonlyMap<Stage, PendingLookup> });

/**
 * A search stage whose query names points of another collection (`lookup_from`): its engine query
 * is made once lookups.ts has read their vectors, from the Qdrant query and the stage's fields.
 */
export interface PendingLookup {
  readonly query: Query;
  readonly common: Common;
  readonly mmr?: Mmr;
  readonly path: string;
}

export function parseParams(raw: unknown, path: string): { ef?: number; exact: boolean } {
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

export function commonPlan(body: Record<string, unknown>, path: string, payloadDefault: boolean, layout: VectorLayout): Common {
  if (body.shard_key !== undefined && body.shard_key !== null) throw notSupported(childPath(path, 'shard_key'), 'custom sharding');
  const threshold = optionalNumber(body.score_threshold, childPath(path, 'score_threshold'));
  const filter = parseQdrantFilter(body.filter, childPath(path, 'filter'));
  const vectors = parseVectorSelection(body.with_vector, childPath(path, 'with_vector'), false);
  return {
    ...(filter === undefined ? {} : { filter }),
    limit: optionalInteger(body.limit, childPath(path, 'limit'), 10, LIMITS.limit.min, LIMITS.limit.max),
    offset: optionalInteger(body.offset, childPath(path, 'offset'), 0, LIMITS.offset.min, LIMITS.offset.max),
    ...(threshold === undefined ? {} : { scoreThreshold: threshold }),
    ...parseParams(body.params, childPath(path, 'params')),
    withPayload: parsePayloadSelector(body.with_payload, childPath(path, 'with_payload'), payloadDefault),
    withVector: readsVectors(vectors, layout),
    vectors,
  };
}

/**
 * A search request body (the JS client sends with_payload true; Qdrant's own default is false):
 * `vector` is a dense vector, or `{name, vector}` naming the dense vector or a sparse one
 * (`{indices, values}`).
 */
export function searchPlan(layout: VectorLayout, raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  let vector = body.vector;
  let used: UsedVector = { kind: 'dense' };
  const vectorPath = childPath(path, 'vector');
  if (typeof vector === 'object' && vector !== null && !Array.isArray(vector) && Object.hasOwn(vector, 'vector')) {
    const named = vector as { name?: unknown; vector?: unknown };
    used = usedVector(named.name, layout, childPath(vectorPath, 'name'));
    vector = named.vector;
  } else {
    // A bare vector names the unnamed one, which a collection with a named dense vector lacks.
    used = usedVector('', layout, vectorPath);
  }
  if (vector === undefined || vector === null) throw formatError(vectorPath, 'required');
  const common = commonPlan(body, path, false, layout);
  return { kind: 'search', ...common, query: nearestQuery(vector, vectorPath, undefined, used, false) };
}

/**
 * A nearest query of the vector `used` names: a vector, or a point id (the engine searches near
 * its stored vector and leaves it out; of `lookup`'s collection when given). A sparse vector's
 * query is `{indices, values}`; `idAllowed`: a point id may stand for the vector.
 */
export function nearestQuery(query: unknown, path: string, lookup: Lookup | undefined, used: UsedVector, idAllowed = true): Query {
  if (used.kind === 'sparse') {
    if (idAllowed && (typeof query === 'number' || typeof query === 'string')) return pointById(query, path, used.name, lookup);
    if (!isSparseShape(query)) throw formatError(path, `expected a sparse vector {indices, values} for \`${used.name}\`, got ${describeJson(query)}`);
    checkSparseVector(query, path);
    return { kind: 'sparse', name: used.name, vector: query };
  }
  if (used.kind === 'named') {
    if (idAllowed && (typeof query === 'number' || typeof query === 'string')) return pointById(query, path, used.name, lookup);
    checkNamedVector(query, used.spec, path);
    return { kind: 'named', name: used.name, vector: query };
  }
  denseUsed(used);
  if (idAllowed && (typeof query === 'number' || typeof query === 'string')) {
    toKithId(query, path);
    return { kind: 'point', point: query, ...(lookup === undefined ? {} : { lookup }) };
  }
  if (isSparseShape(query)) throw formatError(path, 'a sparse vector {indices, values} needs `using` naming a sparse vector of the collection');
  return { kind: 'vector', vector: denseVector(query, path) };
}

/** A search near point `query`'s own vector `using` (the point left out of the answer; of `lookup`'s collection when given, and kept). */
function pointById(query: number | string, path: string, using: string, lookup: Lookup | undefined): Query {
  toKithId(query, path);
  return { kind: 'point', point: query, using, ...(lookup === undefined ? {} : { lookup }) };
}

/**
 * What the examples of a search by examples are: vectors of the collection's size (the main
 * vector), of a one-row named vector's, a multi-vector's rows, or sparse vectors; `using` names
 * the vector when it is not the main one.
 */
type ExampleShape =
  | { readonly kind: 'dense'; readonly dim: number; readonly using?: string }
  | { readonly kind: 'multi'; readonly spec: Extract<UsedVector, { kind: 'named' }>['spec']; readonly using: string }
  | { readonly kind: 'sparse'; readonly using: string };

function examplesVector(dim: number, used: UsedVector): ExampleShape {
  if (used.kind === 'sparse') return { kind: 'sparse', using: used.name };
  if (used.kind === 'named')
    return used.spec.multivector === true ? { kind: 'multi', spec: used.spec, using: used.name } : { kind: 'dense', dim: used.spec.size, using: used.name };
  denseUsed(used);
  return { kind: 'dense', dim };
}

/** One side of a recommendation, checked as Qdrant checks it: point ids and vectors of the vector the examples are of. */
function examples(raw: unknown, path: string, shape: ExampleShape): Example[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw formatError(path, `expected a list of point ids or vectors, got ${describeJson(raw)}`);
  return raw.map((example, i): Example => {
    // The common case, an unsigned integer id, without building its path (a side may list 131,072).
    if (typeof example === 'number' && Number.isSafeInteger(example) && example >= 0) return example;
    return oneExample(example, childPath(path, i), shape);
  });
}

/** One example at `at`: a point id, or a vector of the kind the examples are. */
function oneExample(example: unknown, at: string, shape: ExampleShape): Example {
  if (typeof example === 'number' || typeof example === 'string') {
    toKithId(example, at);
    return example;
  }
  if (shape.kind === 'sparse') {
    if (!isSparseShape(example)) throw formatError(at, `expected a point id or a sparse vector {indices, values}, got ${describeJson(example)}`);
    checkSparseVector(example, at);
    return example as Example;
  }
  if (shape.kind === 'multi') {
    checkNamedVector(example, shape.spec, at);
    return example as Example;
  }
  const vector = denseVector(example, at);
  if (!Array.isArray(vector) || vector.some((x) => typeof x !== 'number')) throw formatError(at, 'expected a point id or a vector of numbers');
  if (vector.length !== shape.dim) throw formatError(at, `expected a vector of ${shape.dim} numbers, got ${vector.length}`);
  return vector as number[];
}

/** Qdrant's average_vector recommendation, translated: the engine reads the examples and leaves those given by id out. */
export function recommendQuery(dim: number, body: Record<string, unknown>, path: string, outerLookup: Lookup | undefined, used: UsedVector): Query {
  const strategy = body.strategy ?? 'average_vector';
  if (strategy !== 'average_vector' && strategy !== 'best_score' && strategy !== 'sum_scores')
    throw unknownVariant(childPath(path, 'strategy'), strategy, ['average_vector', 'best_score', 'sum_scores']);
  const shape = examplesVector(dim, used);
  const using = shape.using === undefined ? {} : { using: shape.using };
  const lookup = parseLookupFrom(body.lookup_from, childPath(path, 'lookup_from')) ?? outerLookup;
  const lookedUp = lookup === undefined ? {} : { lookup };
  const positive = examples(body.positive, childPath(path, 'positive'), shape);
  const negative = examples(body.negative, childPath(path, 'negative'), shape);
  if (strategy !== 'average_vector') {
    if (positive.length + negative.length === 0) throw formatError(path, `the ${strategy} strategy needs at least one positive or negative example`);
    return { kind: 'examples', examples: { strategy, positive, negative }, ...using, ...lookedUp };
  }
  if (positive.length === 0) throw formatError(childPath(path, 'positive'), 'at least one positive example is required');
  return { kind: 'recommend', positive, negative, ...(lookup === undefined ? {} : { lookup }), ...using };
}

/** Context pairs `[{positive, negative}, …]` (one pair alone too), each example an id or a vector. */
function contextPairs(raw: unknown, path: string, shape: ExampleShape): ContextPairInput[] {
  if (raw === undefined || raw === null) return [];
  const items = Array.isArray(raw) ? raw : [raw];
  return items.map((pair, i) => {
    const at = Array.isArray(raw) ? childPath(path, i) : path;
    const p = asObject(pair, at);
    if (p.positive === undefined || p.negative === undefined) throw formatError(at, 'a context pair needs `positive` and `negative`');
    return { positive: oneExample(p.positive, childPath(at, 'positive'), shape), negative: oneExample(p.negative, childPath(at, 'negative'), shape) };
  });
}

/** `{discover: {target, context}}`: a target ranked within the context pairs' zones. */
export function discoverQuery(dim: number, body: Record<string, unknown>, path: string, used: UsedVector, lookup?: Lookup): Query {
  const shape = examplesVector(dim, used);
  if (body.target === undefined || body.target === null) throw formatError(childPath(path, 'target'), 'required');
  const target = oneExample(body.target, childPath(path, 'target'), shape);
  const context = contextPairs(body.context, childPath(path, 'context'), shape);
  return {
    kind: 'examples',
    examples: { target, context },
    ...(shape.using === undefined ? {} : { using: shape.using }),
    ...(lookup === undefined ? {} : { lookup }),
  };
}

/** `{context: pairs}`: the points on the positive side of every pair score 0, the others less. */
export function contextQuery(dim: number, raw: unknown, path: string, used: UsedVector, lookup?: Lookup): Query {
  const shape = examplesVector(dim, used);
  const context = contextPairs(raw, path, shape);
  if (context.length === 0) throw formatError(path, 'at least one context pair is required');
  return { kind: 'examples', examples: { context }, ...(shape.using === undefined ? {} : { using: shape.using }), ...(lookup === undefined ? {} : { lookup }) };
}

/** POST …/points/discover: `target` and `context` at the top of the body (either may be absent, not both). */
export function discoverPlan(target: PlanTarget, raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  const common = commonPlan(body, path, false, target.layout);
  const used = usedVector(body.using, target.layout, childPath(path, 'using'));
  const lookup = parseLookupFrom(body.lookup_from, childPath(path, 'lookup_from'));
  const query =
    body.target === undefined || body.target === null
      ? contextQuery(target.dim, body.context, childPath(path, 'context'), used, lookup)
      : discoverQuery(target.dim, body, path, used, lookup);
  return { kind: 'search', ...common, query };
}

/** POST …/points/recommend: a recommendation's search. */
export function recommendPlan(target: PlanTarget, raw: unknown, path: string): Plan {
  const body = asObject(raw, path);
  const common = commonPlan(body, path, false, target.layout);
  return {
    kind: 'search',
    ...common,
    query: recommendQuery(target.dim, body, path, undefined, usedVector(body.using, target.layout, childPath(path, 'using'))),
  };
}

/** What a request is planned against: the collection's dimension and vector names. */
export interface PlanTarget {
  readonly dim: number;
  readonly layout: VectorLayout;
}

/** The engine's query for a plan. */
export function engineQuery(plan: Extract<Plan, { kind: 'search' }>): QueryRequest<SearchInput> {
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
  const using = query.kind !== 'vector' && 'using' in query && query.using !== undefined ? { using: query.using } : {};
  if (query.kind === 'point') return { kind: 'point', search: { ...search, point: query.point, ...using } };
  if (query.kind === 'recommend') return { kind: 'recommend', search: { ...search, positive: query.positive, negative: query.negative, ...using } };
  if (query.kind === 'examples') {
    if (plan.mmr !== undefined) throw notSupported('query.mmr', 'MMR over a search by examples', true);
    return { kind: 'examples', search: { ...search, examples: query.examples, ...using } };
  }
  if (query.kind === 'sparse') {
    return { kind: 'vector', search: { ...search, sparse_vector: { name: query.name, ...query.vector } } };
  }
  if (query.kind === 'named') {
    return { kind: 'vector', search: { ...search, named_vector: { name: query.name, vector: query.vector } } };
  }
  return { kind: 'vector', search: { ...search, vector: query.vector } };
}
