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
import type { ExampleQuery, ExampleVector } from './example-scoring.js';
import { parseSparseVector, type SparseVector, sparseToJson } from '../index/sparse/sparse-vector.js';
import type { NamedVector } from '../segment/named-vectors.js';
import { vectorArray } from '../core/vector-math.js';

/**
 * An example of a recommendation: a point id (its stored vector) or a vector: the numbers of the
 * main or a one-row named vector, a multi-vector's rows, or a sparse vector.
 */
export type Example = PointId | number | readonly number[] | readonly (readonly number[])[] | SparseExample;

/** A sparse vector given as an example, as requests write one. */
export interface SparseExample {
  readonly indices: readonly number[];
  readonly values: readonly number[];
}

/**
 * A search near the stored vector of `point`, which is left out of the answer. `S`: a search as
 * the library gives it (checked by the engine), or one checked at the edge (`SearchInput`).
 */
export type PointQueryRequest<S extends SearchRequest = SearchRequest> = Omit<S, 'vector'> & {
  readonly point: PointId | number;
  /** The named dense or sparse vector of the point to search by (and among); the main vector without. */
  readonly using?: string | null;
};

/**
 * A recommendation (average_vector): near the positives' mean, away from the negatives'; examples
 * given by id are left out. Of a multi-vector, Qdrant's "average" is every positive row and every
 * negative row negated, as one multi-vector query.
 */
export type RecommendRequest<S extends SearchRequest = SearchRequest> = Omit<S, 'vector'> & {
  readonly positive: readonly Example[];
  readonly negative?: readonly Example[] | null;
  /** The named dense (one-row or multi) or sparse vector the examples are of (and the search is by); the main vector without. */
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
  /** The named dense (one-row or multi) or sparse vector the examples are of (and the points are scored by); the main vector without. */
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
  /** An existing point's vector `name` (a named dense one's rows, flat, or a sparse one), read-only (it may be the stored one); undefined when it lacks it. */
  storedOf?(name: string, id: PointId): NamedVector | SparseVector | undefined;
  /** A given vector of the named vector `name` (a row, or a multi-vector's rows) as searched (checked; unit length under Cosine). */
  prepareNamed?(name: string, vector: unknown, path: string): NamedVector;
}

/** The plain search a query stands for; `path` names it in errors, `cost` counts its examples. */
export async function resolveQuery<S extends SearchRequest>(source: QuerySource, request: QueryRequest<S>, path: string, cost: RequestCost): Promise<S> {
  if (request.kind === 'vector') return request.search;
  if (request.kind === 'examples') {
    const { examples, using, ...rest } = request.search;
    const excluded: PointId[] = [];
    const reader = new ExampleReader(source, exampleSpace(source, using, path), excluded, cost);
    // Named as the request wrote them (`positive`, `context[2]`), without the engine's `examples` wrapper.
    const query = resolveExamples(reader, examples, path);
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
  const space = exampleSpace(source, using, path);
  if (space.kind === 'sparse' || (space.kind === 'named' && space.multivector)) {
    const excluded: PointId[] = [];
    const reader = new ExampleReader(source, space, excluded, cost);
    const positives = reader.list(positive, childPath(path, 'positive'));
    const negatives = reader.list(negative, childPath(path, 'negative'));
    if (positives.length === 0)
      throw badInput(childPath(path, 'positive'), `at least one positive example holding the vector ${JSON.stringify(space.name)} is required`);
    const search =
      space.kind === 'sparse'
        ? { sparse_vector: { name: space.name, ...sparseRecommendation(positives as SparseVector[], negatives as SparseVector[]) } }
        : { named_vector: { name: space.name, vector: multiRecommendation(positives as NamedVector[], negatives as NamedVector[], space.size) } };
    return excluding({ ...rest, ...search } as unknown as S, excluded, path);
  }
  const count = (list: unknown): number => (Array.isArray(list) ? list.length : 0);
  const named = space.kind === 'named' ? space : undefined;
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

/** The vector a search by examples reads: the main one, a named dense one (one row or a multi-vector) or a sparse one. */
type ExampleSpace =
  | { readonly kind: 'main' }
  | { readonly kind: 'named'; readonly name: string; readonly size: number; readonly multivector: boolean }
  | { readonly kind: 'sparse'; readonly name: string };

function exampleSpace(source: QuerySource, using: unknown, path: string): ExampleSpace {
  if (using === undefined || using === null) return { kind: 'main' };
  const kind = usingKind(source, using, path);
  const name = using as string;
  return kind.kind === 'sparse' ? { kind: 'sparse', name } : { kind: 'named', name, size: kind.size, multivector: kind.multivector };
}

/**
 * Qdrant's average of sparse examples: per index, the positives' mean, pushed away from the
 * negatives' (2·pos − neg, an index missing on one side counting 0 there), indices ascending.
 */
function sparseRecommendation(positive: readonly SparseVector[], negative: readonly SparseVector[]): { indices: number[]; values: number[] } {
  const mean = (side: readonly SparseVector[]): Map<number, number> => {
    const sums = new Map<number, number>();
    for (const v of side)
      for (let i = 0; i < v.indices.length; i++) sums.set(v.indices[i] as number, (sums.get(v.indices[i] as number) ?? 0) + (v.values[i] as number));
    for (const [index, sum] of sums) sums.set(index, sum / side.length);
    return sums;
  };
  const pos = mean(positive);
  const merged = negative.length === 0 ? pos : new Map<number, number>();
  if (negative.length > 0) {
    const neg = mean(negative);
    for (const index of new Set([...pos.keys(), ...neg.keys()])) merged.set(index, 2 * (pos.get(index) ?? 0) - (neg.get(index) ?? 0));
  }
  const indices = [...merged.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((index) => merged.get(index) as number) };
}

/** Qdrant's "average" of multi-vector examples: every positive row, then every negative row negated, as one multi-vector. */
function multiRecommendation(positive: readonly NamedVector[], negative: readonly NamedVector[], size: number): number[][] {
  const rows: number[][] = [];
  for (const [side, sign] of [
    [positive, 1],
    [negative, -1],
  ] as const) {
    for (const v of side) for (let r = 0; r < v.rows; r++) rows.push(Array.from(v.data.subarray(r * size, (r + 1) * size), (x) => sign * x));
  }
  return rows;
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
  if ('indices' in stored) return { ...rest, sparse_vector: { name, ...sparseToJson(stored) } };
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

/**
 * Reads examples of one vector: a point id's stored vector (the id added to `excluded`), or a
 * given vector checked as that vector's queries are. Counts what it reads on `cost`: a list's
 * length × the vector's size before reading it (the main and one-row named vectors), or each
 * multi-vector's rows and each sparse vector's indices as read.
 */
class ExampleReader {
  constructor(
    private readonly source: QuerySource,
    readonly space: ExampleSpace,
    private readonly excluded: PointId[],
    private readonly cost: RequestCost,
  ) {}

  /** Components counted per example before a list is read; 0 where each is counted as read. */
  private get perExample(): number {
    const space = this.space;
    if (space.kind === 'main') return this.source.vectorSize;
    return space.kind === 'named' && !space.multivector ? space.size : 0;
  }

  /** One example; undefined when a point given by id lacks the vector and is not `required` (Qdrant leaves it out; else its 404). */
  maybe(raw: unknown, at: string, required: boolean): ExampleVector | undefined {
    const source = this.source;
    const space = this.space;
    if (typeof raw === 'number' || typeof raw === 'string') {
      const id = normalizePointId(raw, at);
      if (space.kind === 'main') {
        const vector = source.vectorOf(id);
        if (vector === undefined) throw new PointNotFoundError(raw, source.name);
        this.excluded.push(id);
        return vector;
      }
      if (!source.hasPoint(id)) throw new PointNotFoundError(raw, source.name);
      this.excluded.push(id);
      const stored = source.storedOf?.(space.name, id);
      if (stored === undefined) {
        if (required) throw new VectorNotFoundError(raw, space.name, source.name);
        return undefined;
      }
      return this.counted(stored, at);
    }
    if (space.kind === 'main') return source.prepare(raw, at);
    if (space.kind === 'sparse') return this.counted(parseSparseVector(raw, at), at);
    if (source.prepareNamed === undefined) throw badInput(at, 'vectors of named vectors are not read here');
    return this.counted(source.prepareNamed(space.name, raw, at), at);
  }

  /** A multi-vector's or a sparse vector's components, counted once read. */
  private counted<V extends NamedVector | SparseVector>(vector: V, at: string): V {
    if (this.perExample > 0) return vector;
    this.cost.add('exampleComponents', 'indices' in vector ? vector.indices.length : vector.data.length, at);
    return vector;
  }

  one(raw: unknown, at: string): ExampleVector {
    return this.maybe(raw, at, true) as ExampleVector;
  }

  /** A list's examples, those given by id that lack the vector left out. */
  list(raw: unknown, at: string): ExampleVector[] {
    if (raw === undefined || raw === null) return [];
    if (!Array.isArray(raw)) throw badInput(at, `expected a list of point ids or vectors, got ${describeJson(raw)}`);
    this.cost.add('exampleComponents', raw.length * this.perExample, at);
    return raw.map((e, i) => this.maybe(e, childPath(at, i), false)).filter((v): v is ExampleVector => v !== undefined);
  }

  /** Context pairs `[{positive, negative}, …]` (one pair alone too); both examples of a pair are required. */
  pairs(raw: unknown, at: string): Array<{ positive: ExampleVector; negative: ExampleVector }> {
    if (raw === undefined || raw === null) return [];
    const items = Array.isArray(raw) ? raw : [raw];
    this.cost.add('exampleComponents', 2 * items.length * this.perExample, at);
    return items.map((pair, i) => {
      const pairAt = Array.isArray(raw) ? childPath(at, i) : at;
      if (typeof pair !== 'object' || pair === null || Array.isArray(pair)) throw badInput(pairAt, `expected {positive, negative}, got ${describeJson(pair)}`);
      const p = pair as { positive?: unknown; negative?: unknown };
      if (p.positive === undefined || p.negative === undefined) throw badInput(pairAt, 'a context pair needs a positive and a negative example');
      return { positive: this.one(p.positive, childPath(pairAt, 'positive')), negative: this.one(p.negative, childPath(pairAt, 'negative')) };
    });
  }
}

/** The examples' vectors (ids read from the collection, which are added to `excluded`), checked as Qdrant checks them. */
function resolveExamples(reader: ExampleReader, examples: ExamplesInput, path: string): ExampleQuery {
  if (typeof examples !== 'object' || examples === null) throw badInput(path, `expected examples, got ${describeJson(examples)}`);
  const space = reader.space;
  const using = space.kind === 'main' ? {} : { using: space.name };
  if ('strategy' in examples) {
    const given = (raw: unknown): number => (Array.isArray(raw) ? raw.length : 0);
    if (given(examples.positive) + given(examples.negative) === 0) throw badInput(path, `${examples.strategy} needs at least one positive or negative example`);
    const positive = reader.list(examples.positive, childPath(path, 'positive'));
    const negative = reader.list(examples.negative, childPath(path, 'negative'));
    return { kind: examples.strategy, positive, negative, ...using };
  }
  if ('target' in examples && examples.target !== undefined && examples.target !== null) {
    const target = reader.one(examples.target, childPath(path, 'target'));
    return { kind: 'discover', target, pairs: reader.pairs(examples.context, childPath(path, 'context')), ...using };
  }
  const context = reader.pairs((examples as { context?: unknown }).context, childPath(path, 'context'));
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
