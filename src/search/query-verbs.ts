/**
 * The searches whose query vector comes from stored points: a query by a point's id (its stored
 * vector; the point itself is left out) and a recommendation (Qdrant's average_vector over example
 * ids and vectors; the examples given by id are left out). Each is turned into one plain search
 * (a `SearchRequest`), the points to leave out as a `has_id` exclusion of its filter — no
 * over-fetch. `Collection.query` runs them, any mix with plain searches, as one batch.
 */
import { badInput, KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson, normalizePointId, type PointId } from '../core/point-id.js';
import { excludingIds } from '../payload/filter-types.js';
import { type SearchRequest, toFilter } from './embedded-input.js';
import { type ExampleSum, recommendationVector } from './recommend.js';
import type { RequestCost } from './request-cost.js';
import { TimeSlices } from '../core/time-slices.js';
import type { ExampleQuery } from './example-scoring.js';
import { vectorArray } from '../core/vector-math.js';

/** An example of a recommendation: a point id (its stored vector) or a vector. */
export type Example = PointId | number | readonly number[];

/**
 * A search near the stored vector of `point`, which is left out of the answer. `S`: a search as
 * the library gives it (checked by the engine), or one checked at the edge (`SearchInput`).
 */
export type PointQueryRequest<S extends SearchRequest = SearchRequest> = Omit<S, 'vector'> & {
  readonly point: PointId | number;
  /** The named dense or sparse vector of the point to search by (and among); the main vector without. */
  readonly using?: string | null;
};

/** A recommendation (average_vector): near the positives' mean, away from the negatives'; examples given by id are left out. */
export type RecommendRequest<S extends SearchRequest = SearchRequest> = Omit<S, 'vector'> & {
  readonly positive: readonly Example[];
  readonly negative?: readonly Example[] | null;
  /** A one-row named dense vector the examples are of (and the search is by); the main vector without. */
  readonly using?: string | null;
};

/**
 * A search scored by examples (search/example-scoring.ts): Qdrant's recommend strategies
 * `best_score` and `sum_scores`, its discovery (`target` and context pairs) and context searches.
 * Examples given by id are left out of the answer.
 */
export type ExamplesInput =
  | { readonly strategy: 'best_score' | 'sum_scores'; readonly positive?: readonly Example[] | null; readonly negative?: readonly Example[] | null }
  | { readonly target: Example; readonly context?: readonly ContextPairInput[] | null }
  | { readonly context: readonly ContextPairInput[] };

export interface ContextPairInput {
  readonly positive: Example;
  readonly negative: Example;
}

export type ExamplesRequest<S extends SearchRequest = SearchRequest> = Omit<S, 'vector'> & {
  readonly examples: ExamplesInput;
  /** A one-row named dense vector the examples are of (and the points are scored by); the main vector without. */
  readonly using?: string | null;
};

/** One search of `Collection.query` (`Collection.queryChecked` for `SearchInput`s). */
export type QueryRequest<S extends SearchRequest = SearchRequest> =
  | { readonly kind: 'vector'; readonly search: S }
  | { readonly kind: 'point'; readonly search: PointQueryRequest<S> }
  | { readonly kind: 'recommend'; readonly search: RecommendRequest<S> }
  | { readonly kind: 'examples'; readonly search: ExamplesRequest<S> };

/** A point's id was given and no such point exists: the id as given, so a port can word the answer its own way. */
export class PointNotFoundError extends KithError {
  constructor(
    readonly given: PointId | number,
    collection: string,
  ) {
    super('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(given)} does not exist in collection "${collection}"`);
  }
}

/**
 * A point was given by id for a vector it does not hold (Qdrant answers 404 "Vector with name … for
 * point"); `name` is the vector's name.
 */
export class VectorNotFoundError extends KithError {
  constructor(
    readonly given: PointId | number,
    readonly vectorName: string,
    collection: string,
  ) {
    super('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(given)} of collection "${collection}" has no vector named ${JSON.stringify(vectorName)}`);
  }
}

/** What a `using` name is in the collection: a named dense vector (of `size` floats a row) or a sparse one. */
export type UsingKind = { readonly kind: 'named'; readonly size: number; readonly multivector: boolean } | { readonly kind: 'sparse' };

/** What resolving reads of the collection. */
export interface QuerySource {
  readonly name: string;
  readonly vectorSize: number;
  /** The vector a point is searched as; undefined when it does not exist. */
  vectorOf(id: PointId): Float32Array | undefined;
  hasPoint(id: PointId): boolean;
  /** The sum of the stored vectors of these (existing) ids. */
  sumOfVectors(ids: readonly PointId[]): Promise<Float64Array>;
  /** A given vector as the kernels take it (checked: the collection's size, finite; unit length under Cosine). */
  prepare(vector: unknown, path: string): Float32Array;
  /** What the vector `name` is; undefined when the collection has none of that name. */
  usingOf?(name: string): UsingKind | undefined;
  /** An existing point's vector `name` (a named dense one's rows, flat, or a sparse one), a copy; undefined when it lacks it. */
  storedOf?(
    name: string,
    id: PointId,
  ): { readonly rows: number; readonly data: Float32Array } | { readonly indices: number[]; readonly values: number[] } | undefined;
  /** A given vector of the one-row named vector `name` as the kernels take it (checked; unit length under Cosine). */
  prepareNamed?(name: string, vector: unknown, path: string): Float32Array;
}

/** The plain search a query stands for; `path` names it in errors, `cost` counts its examples. */
export async function resolveQuery<S extends SearchRequest>(source: QuerySource, request: QueryRequest<S>, path: string, cost: RequestCost): Promise<S> {
  if (request.kind === 'vector') return request.search;
  if (request.kind === 'examples') {
    const { examples, using, ...rest } = request.search;
    const excluded: PointId[] = [];
    const named = using === undefined || using === null ? undefined : oneRowNamed(source, using, path);
    // Named as the request wrote them (`positive`, `context[2]`), without the engine's `examples` wrapper.
    const query = resolveExamples(source, examples, path, excluded, cost, named);
    return excluding({ ...rest, example_query: query } as unknown as S, excluded, path);
  }
  if (request.kind === 'point') {
    const { point, using, ...rest } = request.search;
    const id = normalizePointId(point, childPath(path, 'point'));
    if (using !== undefined && using !== null) return excluding(byStoredVector(source, using, point, id, path, rest) as unknown as S, [id], path);
    const vector = source.vectorOf(id);
    if (vector === undefined) throw new PointNotFoundError(point, source.name);
    return excluding({ ...rest, vector: vectorArray(vector) } as unknown as S, [id], path);
  }
  const { positive, negative, using, ...rest } = request.search;
  const count = (list: unknown): number => (Array.isArray(list) ? list.length : 0);
  const named = using === undefined || using === null ? undefined : oneRowNamed(source, using, path);
  const dim = named === undefined ? source.vectorSize : named.size;
  cost.add('exampleComponents', (count(positive) + count(negative)) * dim, childPath(path, 'positive'));
  const excluded: PointId[] = [];
  const positives = await examples(source, positive, childPath(path, 'positive'), excluded, dim);
  const negatives = await examples(source, negative, childPath(path, 'negative'), excluded, dim);
  if (named !== undefined) {
    const vector = recommendationVector(namedSum(source, named.name, positives, dim), namedSum(source, named.name, negatives, dim), path);
    return excluding({ ...rest, named_vector: { name: named.name, vector } } as unknown as S, excluded, path);
  }
  const vector = recommendationVector(await exampleSum(source, positives), await exampleSum(source, negatives), path);
  return excluding({ ...rest, vector } as unknown as S, excluded, path);
}

/** What `using` names, checked: ERR_BAD_INPUT at `path.using` when the collection has no such vector. */
function usingKind(source: QuerySource, using: unknown, path: string): UsingKind {
  const at = childPath(path, 'using');
  if (typeof using !== 'string') throw badInput(at, `expected a vector name, got ${describeJson(using)}`);
  const kind = source.usingOf?.(using);
  if (kind === undefined) throw badInput(at, `the collection has no named or sparse vector ${JSON.stringify(using)}`);
  return kind;
}

/** A one-row named dense vector `using` names (searches by examples read no other kind). */
function oneRowNamed(source: QuerySource, using: unknown, path: string): { name: string; size: number } {
  const kind = usingKind(source, using, path);
  const name = using as string;
  if (kind.kind === 'sparse') throw badInput(childPath(path, 'using'), `searches by examples of the sparse vector ${JSON.stringify(name)} are not supported`);
  if (kind.multivector) throw badInput(childPath(path, 'using'), `searches by examples of the multi-vector ${JSON.stringify(name)} are not supported`);
  return { name, size: kind.size };
}

/**
 * The search near point `id`'s vector `using` (a named dense one, its rows for a multi-vector, or a
 * sparse one): ERR_POINT_NOT_FOUND when the point does not exist, VectorNotFoundError when it lacks
 * the vector (Qdrant's 404).
 */
function byStoredVector(source: QuerySource, using: unknown, point: PointId | number, id: PointId, path: string, rest: object): object {
  const kind = usingKind(source, using, path);
  const name = using as string;
  if (!source.hasPoint(id)) throw new PointNotFoundError(point, source.name);
  const stored = source.storedOf?.(name, id);
  if (stored === undefined) throw new VectorNotFoundError(point, name, source.name);
  if ('indices' in stored) return { ...rest, sparse_vector: { name, indices: stored.indices, values: stored.values } };
  const size = kind.kind === 'named' ? kind.size : stored.data.length;
  const rows = Array.from({ length: stored.rows }, (_, r) => vectorArray(stored.data.subarray(r * size, (r + 1) * size)));
  return { ...rest, named_vector: { name, vector: kind.kind === 'named' && kind.multivector ? rows : rows[0] } };
}

/**
 * The sum of one side's examples of the one-row named vector `name`: the points' stored vectors
 * (those that lack it are left out, as Qdrant leaves them out) and the given vectors.
 */
function namedSum(source: QuerySource, name: string, side: { ids: PointId[]; vectors: number[][] }, dim: number): ExampleSum {
  const sum = new Float64Array(dim);
  let count = 0;
  for (const id of side.ids) {
    const stored = source.storedOf?.(name, id);
    if (stored === undefined || 'indices' in stored) continue;
    for (let d = 0; d < dim; d++) sum[d] = (sum[d] as number) + (stored.data[d] as number);
    count++;
  }
  for (const v of side.vectors) for (let d = 0; d < dim; d++) sum[d] = (sum[d] as number) + (v[d] as number);
  return { sum, count: count + side.vectors.length };
}

/** The examples' vectors (ids read from the collection, which are added to `excluded`), checked as Qdrant checks them. */
function resolveExamples(
  source: QuerySource,
  examples: ExamplesInput,
  path: string,
  excluded: PointId[],
  cost: RequestCost,
  named?: { readonly name: string; readonly size: number },
): ExampleQuery {
  if (typeof examples !== 'object' || examples === null) throw badInput(path, `expected examples, got ${describeJson(examples)}`);
  const dim = named === undefined ? source.vectorSize : named.size;
  const using = named === undefined ? {} : { using: named.name };
  // A point without the named vector: undefined (a recommendation leaves it out, as Qdrant does); `required`, Qdrant's 404.
  const maybe = (raw: unknown, at: string, required: boolean): Float32Array | undefined => {
    if (typeof raw === 'number' || typeof raw === 'string') {
      const id = normalizePointId(raw, at);
      if (named === undefined) {
        const vector = source.vectorOf(id);
        if (vector === undefined) throw new PointNotFoundError(raw, source.name);
        excluded.push(id);
        return vector;
      }
      if (!source.hasPoint(id)) throw new PointNotFoundError(raw, source.name);
      excluded.push(id);
      const stored = source.storedOf?.(named.name, id);
      if (stored === undefined || 'indices' in stored) {
        if (required) throw new VectorNotFoundError(raw, named.name, source.name);
        return undefined;
      }
      return stored.data;
    }
    if (named !== undefined && source.prepareNamed !== undefined) return source.prepareNamed(named.name, raw, at);
    return source.prepare(raw, at);
  };
  const one = (raw: unknown, at: string): Float32Array => maybe(raw, at, true) as Float32Array;
  const list = (raw: unknown, at: string): Float32Array[] => {
    if (raw === undefined || raw === null) return [];
    if (!Array.isArray(raw)) throw badInput(at, `expected a list of point ids or vectors, got ${describeJson(raw)}`);
    cost.add('exampleComponents', raw.length * dim, at);
    return raw.map((e, i) => maybe(e, childPath(at, i), false)).filter((v): v is Float32Array => v !== undefined);
  };
  const pairs = (raw: unknown, at: string): Array<{ positive: Float32Array; negative: Float32Array }> => {
    if (raw === undefined || raw === null) return [];
    const items = Array.isArray(raw) ? raw : [raw];
    cost.add('exampleComponents', 2 * items.length * dim, at);
    return items.map((pair, i) => {
      const pairAt = Array.isArray(raw) ? childPath(at, i) : at;
      if (typeof pair !== 'object' || pair === null || Array.isArray(pair)) throw badInput(pairAt, `expected {positive, negative}, got ${describeJson(pair)}`);
      const p = pair as { positive?: unknown; negative?: unknown };
      if (p.positive === undefined || p.negative === undefined) throw badInput(pairAt, 'a context pair needs a positive and a negative example');
      return { positive: one(p.positive, childPath(pairAt, 'positive')), negative: one(p.negative, childPath(pairAt, 'negative')) };
    });
  };
  if ('strategy' in examples) {
    const given = (raw: unknown): number => (Array.isArray(raw) ? raw.length : 0);
    if (given(examples.positive) + given(examples.negative) === 0) throw badInput(path, `${examples.strategy} needs at least one positive or negative example`);
    const positive = list(examples.positive, childPath(path, 'positive'));
    const negative = list(examples.negative, childPath(path, 'negative'));
    return { kind: examples.strategy, positive, negative, ...using };
  }
  if ('target' in examples && examples.target !== undefined && examples.target !== null) {
    const target = one(examples.target, childPath(path, 'target'));
    return { kind: 'discover', target, pairs: pairs(examples.context, childPath(path, 'context')), ...using };
  }
  const context = pairs((examples as { context?: unknown }).context, childPath(path, 'context'));
  if (context.length === 0) throw badInput(childPath(path, 'context'), 'a context search needs at least one pair');
  return { kind: 'context', pairs: context, ...using };
}

/** The search with `ids` left out through its filter's `has_id` exclusion. */
function excluding<S extends SearchRequest>(search: S, ids: readonly PointId[], path: string): S {
  const filter = search.filter === undefined || search.filter === null ? undefined : toFilter(search.filter, childPath(path, 'filter'));
  const without = excludingIds(filter, new Set(ids));
  return without === undefined ? search : { ...search, filter: without };
}

/**
 * One side's examples: the ids (each must exist; added to `excluded`) and the vectors (of the
 * collection's size). In time slices: a side may list 131,072 ids (95-174 ms in one loop).
 */
async function examples(
  source: QuerySource,
  raw: readonly Example[] | null | undefined,
  path: string,
  excluded: PointId[],
  dim: number,
): Promise<{ ids: PointId[]; vectors: number[][] }> {
  const out = { ids: [] as PointId[], vectors: [] as number[][] };
  if (raw === undefined || raw === null) return out;
  if (!Array.isArray(raw)) throw badInput(path, `expected a list of point ids or vectors, got ${describeJson(raw)}`);
  const slices = new TimeSlices();
  for (const [i, example] of (raw as readonly unknown[]).entries()) {
    if (slices.due(i)) await slices.pause();
    const at = childPath(path, i);
    if (typeof example === 'number' || typeof example === 'string') {
      const id = normalizePointId(example, at);
      if (!source.hasPoint(id)) throw new PointNotFoundError(example, source.name);
      excluded.push(id);
      out.ids.push(id);
      continue;
    }
    if (!Array.isArray(example) || example.some((x) => typeof x !== 'number' || !Number.isFinite(x)))
      throw badInput(at, 'expected a point id or a vector of finite numbers');
    if (example.length !== dim) throw badInput(at, `expected a vector of ${dim} numbers, got ${example.length}`);
    out.vectors.push(example as number[]);
  }
  return out;
}

/** The sum of one side's examples: the stored vectors summed by the engine (on a search thread when there are), then the given ones. */
async function exampleSum(source: QuerySource, side: { ids: PointId[]; vectors: number[][] }): Promise<ExampleSum> {
  const sum = await source.sumOfVectors(side.ids);
  for (const v of side.vectors) for (let d = 0; d < sum.length; d++) sum[d] = (sum[d] as number) + (v[d] as number);
  return { sum, count: side.ids.length + side.vectors.length };
}
