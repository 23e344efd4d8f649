/**
 * The embedded API's inputs, checked as the REST API checks its bodies: a library caller passes
 * the same JSON (ids as numbers or strings, `number[]` vectors, the filter as the JSON the REST API
 * takes) and gets the same `ERR_BAD_INPUT` messages naming the field. The REST routes have already
 * validated their bodies with the route schemas, so for them these checks pass unchanged.
 *
 * A field added to `SearchInput` (collection-search.ts) must be added to the key lists below:
 * unknown fields are refused, so that a typo such as `fitler` is never silently ignored.
 */
import { badInput, isKithError, KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import { parseFilter } from '../payload/filter-parse.js';
import type { Filter } from '../payload/filter-types.js';
import { isPlainObject } from '../payload/json-value.js';
import { toPayloadSelector } from '../payload/payload-selector.js';
import { LIMITS } from '../segment/collection-config.js';
import type { SearchInput } from './collection-search.js';

/** A filter as the REST API takes it (`{"must":[…],"must_not":[…],"should":[…]}`), validated by `parseFilter`. */
export type FilterJson = { readonly [key: string]: unknown };

/** A filter given to the embedded API: parsed by `parseFilter`, or the raw JSON. */
export type FilterInput = Filter | FilterJson;

/** What `Collection.search` takes: a `SearchInput` whose filter may also be raw JSON. */
export type SearchRequest = Omit<SearchInput, 'filter'> & { readonly filter?: FilterInput | null };

const POINT_KEYS = new Set(['id', 'vector', 'payload', 'version', 'sparse_vectors', 'named_vectors']);
const SEARCH_KEYS = new Set([
  'vector',
  'sparse_vector',
  'named_vector',
  'limit',
  'offset',
  'filter',
  'score_threshold',
  'with_payload',
  'with_vector',
  'params',
  'mmr',
]);
const MMR_KEYS = new Set(['diversity', 'candidates']);
const PARAMS_KEYS = new Set(['ef', 'exact', 'explain', 'filter_walk', 'strategy']);
const FILTER_WALKS = ['two-hop', 'plain'];
const STRATEGIES = ['graph-filtered', 'candidates-exact', 'flat-scan'];

/**
 * A filter built by `parseFilter` has `mustNot` lists of parsed conditions (each with a `kind`);
 * the REST JSON spells it `must_not`, and `mustNot` is an unknown field there, so the two forms
 * cannot be confused.
 */
function isParsedFilter(value: unknown): value is Filter {
  if (!isPlainObject(value)) return false;
  const lists = [value.must, value.mustNot, value.should];
  return lists.every((list) => Array.isArray(list) && list.every((c: unknown) => isPlainObject(c) && typeof c.kind === 'string'));
}

/** A parsed filter for either form; `undefined` for an absent, `null` or (raw) missing filter. */
export function toFilter(raw: unknown, path = 'filter'): Filter | undefined {
  return isParsedFilter(raw) ? raw : parseFilter(raw, path);
}

function rejectUnknown(object: Record<string, unknown>, known: ReadonlySet<string>, path: string): void {
  for (const key of Object.keys(object)) if (!known.has(key)) throw badInput(childPath(path, key), 'unknown field');
}

function optionalInteger(value: unknown, path: string, range: { readonly min: number; readonly max: number }): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw badInput(path, `expected integer, got ${describeJson(value)}`);
  if (value < range.min) throw badInput(path, `must be >= ${range.min}`);
  if (value > range.max) throw badInput(path, `must be <= ${range.max}`);
}

function optionalBoolean(value: unknown, path: string): void {
  if (value !== undefined && value !== null && typeof value !== 'boolean') throw badInput(path, `expected boolean, got ${describeJson(value)}`);
}

function optionalOneOf(value: unknown, allowed: readonly string[], path: string): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw badInput(path, `expected ${allowed.map((a) => JSON.stringify(a)).join(' or ')}, got ${describeJson(value)}`);
  }
}

/** A point of an upsert batch is an object of known fields (`version` is accepted and ignored, as on the wire). */
export function checkPointShape(point: unknown, path: string): void {
  if (!isPlainObject(point)) throw badInput(path, `expected object, got ${describeJson(point)}`);
  rejectUnknown(point, POINT_KEYS, path);
}

/** Checks a search request as the REST schema does and parses its filter; the vector is checked by the search itself. */
export function checkSearchInput(input: SearchRequest): SearchInput {
  if (!isPlainObject(input)) throw badInput('body', `expected an object, got ${describeJson(input)}`);
  rejectUnknown(input, SEARCH_KEYS, '');
  optionalInteger(input.limit, 'limit', LIMITS.limit);
  optionalInteger(input.offset, 'offset', LIMITS.offset);
  const threshold = input.score_threshold;
  if (threshold !== undefined && threshold !== null && (typeof threshold !== 'number' || !Number.isFinite(threshold))) {
    throw badInput('score_threshold', `expected number, got ${describeJson(threshold)}`);
  }
  optionalBoolean(input.with_vector, 'with_vector');
  const params: unknown = input.params;
  if (params !== undefined && params !== null) {
    if (!isPlainObject(params)) throw badInput('params', `expected object, got ${describeJson(params)}`);
    rejectUnknown(params, PARAMS_KEYS, 'params');
    optionalInteger(params.ef, 'params.ef', LIMITS.efSearch);
    optionalBoolean(params.exact, 'params.exact');
    optionalBoolean(params.explain, 'params.explain');
    optionalOneOf(params.filter_walk, FILTER_WALKS, 'params.filter_walk');
    optionalOneOf(params.strategy, STRATEGIES, 'params.strategy');
  }
  const mmr: unknown = input.mmr;
  if (mmr !== undefined && mmr !== null) {
    if (!isPlainObject(mmr)) throw badInput('mmr', `expected object, got ${describeJson(mmr)}`);
    rejectUnknown(mmr, MMR_KEYS, 'mmr');
    if (typeof mmr.diversity !== 'number' || !(mmr.diversity >= 0 && mmr.diversity <= 1))
      throw badInput('mmr.diversity', `expected a number from 0 to 1, got ${describeJson(mmr.diversity)}`);
    if (mmr.candidates === undefined || mmr.candidates === null) throw badInput('mmr.candidates', 'required');
    optionalInteger(mmr.candidates, 'mmr.candidates', LIMITS.mmrCandidates);
  }
  return { ...input, filter: toFilter(input.filter), with_payload: toPayloadSelector(input.with_payload, 'with_payload', true) };
}

/** An error of the search (or other item) at `path` in a list, its field path prefixed with `path` (`searches[3].limit: …`). */
function prefixed(path: string, error: unknown): unknown {
  if (!isKithError(error) || error.statusCode !== 400) return error;
  const message = /^[^\s:]+: /.test(error.message) ? `${path}.${error.message}` : `${path}: ${error.message}`;
  return new KithError(error.code, message, { cause: error });
}

/** Runs `check` for the item at `path`, prefixing the path of a 400-class error. */
export function prefixErrors<T>(path: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw prefixed(path, error);
  }
}

/** As prefixErrors, for work that is asynchronous. */
export async function inSearch<T>(path: string, run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw prefixed(path, error);
  }
}
