/**
 * Searches whose query comes from stored points or examples, as kith's port and the library write
 * them, checked and turned into the engine's queries (query-verbs.ts):
 *
 *   { "point": 17 }                                        near point 17's vector (17 left out)
 *   { "recommend": { "positive": [1, [0.1, …]], "negative": [4], "strategy": "average_vector" } }
 *   { "discover": { "target": 3, "context": [{ "positive": 1, "negative": 2 }] } }
 *   { "context": [{ "positive": 1, "negative": 2 }] }
 *
 * An example is a point id (its stored vector; the point is left out of the answer) or a vector.
 * The shapes are checked here, each error naming its field (`recommend.positive[2]`), so that the
 * engine's reading of the examples only finds missing points (ERR_POINT_NOT_FOUND, a 404) and
 * budgets; vectors are checked against the collection's size when it is known.
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson, normalizePointId, type PointId } from '../core/point-id.js';
import { isPlainObject } from '../payload/json-value.js';
import type { SearchRequest } from './embedded-input.js';
import type { ContextPairInput, Example, QueryRequest } from './query-verbs.js';

export type RecommendStrategy = 'average_vector' | 'best_score' | 'sum_scores';

/** A recommendation: near the positives, away from the negatives, by a strategy (average_vector by default). */
export interface RecommendInput {
  readonly positive?: readonly Example[] | null;
  readonly negative?: readonly Example[] | null;
  readonly strategy?: RecommendStrategy | null;
}

/** A discovery: a target ranked within the context pairs' zones; without a target, a context search. */
export interface DiscoverInput {
  readonly target?: Example | null;
  readonly context?: readonly ContextPairInput[] | null;
}

const STRATEGIES: readonly string[] = ['average_vector', 'best_score', 'sum_scores'];

/** The query near a stored point's vector (under `search.using` when it names one); the point is left out of the answer. */
export function pointQuery<S extends SearchRequest>(point: unknown, path: string, search: Omit<S, 'vector'> & { using?: string }): QueryRequest<S> {
  checkedId(point, path);
  return { kind: 'point', search: { ...search, point: point as PointId | number } } as QueryRequest<S>;
}

/** A recommendation's query: average_vector searches near one vector, the others score every point against each example. */
export function recommendQuery<S extends SearchRequest>(raw: unknown, path: string, search: Omit<S, 'vector'>, vectorSize?: number): QueryRequest<S> {
  const body = fieldsOf(raw, path, ['positive', 'negative', 'strategy']);
  const strategy = body.strategy ?? 'average_vector';
  if (typeof strategy !== 'string' || !STRATEGIES.includes(strategy))
    throw badInput(childPath(path, 'strategy'), `expected one of ${STRATEGIES.join(', ')}, got ${describeJson(strategy)}`);
  const positive = exampleList(body.positive, childPath(path, 'positive'), vectorSize);
  const negative = exampleList(body.negative, childPath(path, 'negative'), vectorSize);
  if (strategy === 'average_vector') {
    if (positive.length === 0) throw badInput(childPath(path, 'positive'), 'average_vector needs at least one positive example');
    return { kind: 'recommend', search: { ...search, positive, negative } } as QueryRequest<S>;
  }
  if (positive.length + negative.length === 0) throw badInput(path === '' ? 'positive' : path, `${strategy} needs at least one positive or negative example`);
  return { kind: 'examples', search: { ...search, examples: { strategy, positive, negative } } } as QueryRequest<S>;
}

/** A discovery's query: `target` ranked within the pairs' zones; no target, a context search (which needs pairs). */
export function discoverQuery<S extends SearchRequest>(raw: unknown, path: string, search: Omit<S, 'vector'>, vectorSize?: number): QueryRequest<S> {
  const body = fieldsOf(raw, path, ['target', 'context']);
  if (body.target === undefined || body.target === null) return contextQuery(body.context, childPath(path, 'context'), search, vectorSize);
  const target = example(body.target, childPath(path, 'target'), vectorSize);
  const context = pairList(body.context, childPath(path, 'context'), vectorSize);
  return { kind: 'examples', search: { ...search, examples: { target, context } } } as QueryRequest<S>;
}

/** A context search's query: points on the positive side of every pair score 0, the others less. */
export function contextQuery<S extends SearchRequest>(raw: unknown, path: string, search: Omit<S, 'vector'>, vectorSize?: number): QueryRequest<S> {
  const context = pairList(raw, path, vectorSize);
  if (context.length === 0) throw badInput(path, 'a context search needs at least one {positive, negative} pair (or give a target)');
  return { kind: 'examples', search: { ...search, examples: { context } } } as QueryRequest<S>;
}

/** The object at `path` with only these fields. */
function fieldsOf(raw: unknown, path: string, allowed: readonly string[]): Record<string, unknown> {
  if (!isPlainObject(raw)) throw badInput(path || 'body', `expected an object, got ${describeJson(raw)}`);
  for (const key of Object.keys(raw)) if (!allowed.includes(key)) throw badInput(childPath(path, key), `unknown field (${allowed.join(', ')})`);
  return raw;
}

function checkedId(raw: unknown, path: string): void {
  normalizePointId(raw, path);
}

/**
 * One example: a point id, or a vector of finite numbers (of `vectorSize` when known: the main
 * vector's). Without `vectorSize` (a search `using` another vector) a vector may also be a
 * multi-vector's rows or a sparse vector; the engine checks it against the vector `using` names.
 */
function example(raw: unknown, path: string, vectorSize: number | undefined): Example {
  if (typeof raw === 'number' || typeof raw === 'string') {
    checkedId(raw, path);
    return raw;
  }
  if (vectorSize === undefined && (isPlainObject(raw) || (Array.isArray(raw) && raw.some((row) => Array.isArray(row))))) return raw as Example;
  if (!Array.isArray(raw)) throw badInput(path, `expected a point id or a vector, got ${describeJson(raw)}`);
  for (const [i, x] of raw.entries())
    if (typeof x !== 'number' || !Number.isFinite(x)) throw badInput(childPath(path, i), `expected a finite number, got ${describeJson(x)}`);
  if (vectorSize !== undefined && raw.length !== vectorSize) throw badInput(path, `expected a vector of ${vectorSize} numbers, got ${raw.length}`);
  return raw as number[];
}

function exampleList(raw: unknown, path: string, vectorSize: number | undefined): Example[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw badInput(path, `expected a list of point ids or vectors, got ${describeJson(raw)}`);
  // The common case, an unsigned integer id, without building its path (a side may list 131,072).
  return raw.map((e, i) => (typeof e === 'number' && Number.isSafeInteger(e) && e >= 0 ? e : example(e, childPath(path, i), vectorSize)));
}

function pairList(raw: unknown, path: string, vectorSize: number | undefined): ContextPairInput[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw badInput(path, `expected a list of {positive, negative} pairs, got ${describeJson(raw)}`);
  return raw.map((pair, i) => {
    const at = childPath(path, i);
    const p = fieldsOf(pair, at, ['positive', 'negative']);
    if (p.positive === undefined || p.positive === null) throw badInput(childPath(at, 'positive'), 'required');
    if (p.negative === undefined || p.negative === null) throw badInput(childPath(at, 'negative'), 'required');
    return { positive: example(p.positive, childPath(at, 'positive'), vectorSize), negative: example(p.negative, childPath(at, 'negative'), vectorSize) };
  });
}
