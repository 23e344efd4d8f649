/**
 * Request JSON → `Filter`, with every error naming its field path (`filter.must[2].range.gt: …`).
 * Regexes are compiled here, once per request, with RE2 semantics (linear time, no backtracking).
 */
import { RE2JS } from 're2js';
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import { type Instant, parseDatetime } from './datetime.js';
import type { Condition, DatetimeRange, FieldCondition, Filter, NumberRange } from './filter-types.js';
import { checkJsonValue, isPlainObject, type JsonValue } from './json-value.js';

export const MAX_FILTER_DEPTH = 32;
export const MAX_REGEX_LENGTH = 1024;
export const MAX_KEY_LENGTH = 1024;

const FILTER_KEYS = new Set(['must', 'must_not', 'should']);
const CONDITION_KEYS = new Set(['key', 'type', 'match', 'range']);
const MATCH_KEYS = new Set(['value', 'any', 'except']);
const RANGE_KEYS = new Set(['gt', 'gte', 'lt', 'lte']);
const TYPES = new Set(['exact', 'range', 'prefix', 'contains', 'regex']);

/** Parses a filter; `null`/`undefined` mean "no filter" and give undefined. */
export function parseFilter(raw: unknown, path = 'filter'): Filter | undefined {
  if (raw === undefined || raw === null) return undefined;
  return parseFilterObject(raw, path, 1);
}

function parseFilterObject(raw: unknown, path: string, depth: number): Filter {
  if (!isPlainObject(raw)) throw badInput(path, `expected a filter object, got ${describeJson(raw)}`);
  if (depth > MAX_FILTER_DEPTH) throw badInput(path, `filters nest at most ${MAX_FILTER_DEPTH} levels deep`);
  rejectUnknownKeys(raw, FILTER_KEYS, path, 'must, must_not, should');
  return {
    must: parseConditionList(raw.must, childPath(path, 'must'), depth),
    mustNot: parseConditionList(raw.must_not, childPath(path, 'must_not'), depth),
    should: parseConditionList(raw.should, childPath(path, 'should'), depth),
  };
}

function parseConditionList(raw: unknown, path: string, depth: number): Condition[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw badInput(path, `expected an array of conditions, got ${describeJson(raw)}`);
  return raw.map((item, i) => parseCondition(item, childPath(path, i), depth));
}

function parseCondition(raw: unknown, path: string, depth: number): Condition {
  if (!isPlainObject(raw)) throw badInput(path, `expected a condition object, got ${describeJson(raw)}`);
  if (!Object.hasOwn(raw, 'key')) {
    if (Object.keys(raw).some((k) => CONDITION_KEYS.has(k))) {
      throw badInput(childPath(path, 'key'), 'required: a field condition names its payload key');
    }
    return { kind: 'nested', filter: parseFilterObject(raw, path, depth + 1) };
  }
  rejectUnknownKeys(raw, CONDITION_KEYS, path, 'key, type, match, range (or a nested filter with must, must_not, should)');
  return parseFieldCondition(raw, path);
}

function parseFieldCondition(raw: Record<string, unknown>, path: string): FieldCondition {
  const key = raw.key;
  const keyPath = childPath(path, 'key');
  if (typeof key !== 'string') throw badInput(keyPath, `expected a string, got ${describeJson(key)}`);
  if (key.length === 0) throw badInput(keyPath, 'must not be empty');
  if (key.length > MAX_KEY_LENGTH) throw badInput(keyPath, `longer than ${MAX_KEY_LENGTH} characters`);
  const base = { key, parts: key.split('.') };

  const typePath = childPath(path, 'type');
  let type: string;
  if (raw.type === undefined || raw.type === null) {
    type = raw.range !== undefined && raw.range !== null ? 'range' : 'exact';
  } else if (typeof raw.type !== 'string' || !TYPES.has(raw.type)) {
    throw badInput(typePath, `unknown condition type ${JSON.stringify(raw.type)}; expected exact, range, prefix, contains or regex`);
  } else {
    type = raw.type;
  }

  const matchPath = childPath(path, 'match');
  const rangePath = childPath(path, 'range');
  if (type === 'range') {
    if (raw.match !== undefined && raw.match !== null) throw badInput(matchPath, 'a range condition takes `range`, not `match`');
    return { ...base, kind: 'range', range: parseRange(raw.range, rangePath) };
  }
  if (raw.range !== undefined && raw.range !== null) {
    throw badInput(rangePath, `${type === 'exact' ? 'an' : 'a'} ${type} condition takes \`match\`, not \`range\``);
  }
  const match = raw.match;
  if (match === undefined || match === null) throw badInput(matchPath, `required for ${type === 'exact' ? 'an' : 'a'} ${type} condition`);
  if (!isPlainObject(match)) throw badInput(matchPath, `expected an object, got ${describeJson(match)}`);
  rejectUnknownKeys(match, MATCH_KEYS, matchPath, 'value, any, except');
  const given = [...MATCH_KEYS].filter((k) => Object.hasOwn(match, k));
  if (given.length !== 1) {
    throw badInput(matchPath, `give exactly one of value, any, except (got ${given.length === 0 ? 'none' : given.join(', ')})`);
  }
  const field = given[0] as 'value' | 'any' | 'except';
  const fieldPath = childPath(matchPath, field);
  if (field !== 'value' && type !== 'exact') throw badInput(fieldPath, `\`${field}\` is only for exact conditions`);

  if (field === 'any' || field === 'except') {
    const list = match[field];
    if (!Array.isArray(list)) throw badInput(fieldPath, `expected an array of values, got ${describeJson(list)}`);
    checkJsonValue(list, fieldPath);
    return { ...base, kind: field, values: list as JsonValue[] };
  }

  const value = match.value;
  checkJsonValue(value, fieldPath);
  switch (type) {
    case 'exact':
      return { ...base, kind: 'exact', value: value as JsonValue };
    case 'contains':
      return { ...base, kind: 'contains', value: value as JsonValue };
    case 'prefix':
      if (typeof value !== 'string') throw badInput(fieldPath, `a prefix is a string, got ${describeJson(value)}`);
      return { ...base, kind: 'prefix', prefix: value };
    default:
      return { ...base, kind: 'regex', pattern: expectPattern(value, fieldPath), regex: compileRegex(value, fieldPath) };
  }
}

function expectPattern(value: unknown, path: string): string {
  if (typeof value !== 'string') throw badInput(path, `a regex is a string, got ${describeJson(value)}`);
  if (value.length > MAX_REGEX_LENGTH) {
    throw badInput(path, `the pattern is ${value.length} characters long; the limit is ${MAX_REGEX_LENGTH}`);
  }
  return value;
}

function compileRegex(value: unknown, path: string): RE2JS {
  const pattern = expectPattern(value, path);
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw badInput(path, `invalid RE2 pattern: ${reason}`);
  }
}

function parseRange(raw: unknown, path: string): NumberRange | DatetimeRange {
  if (raw === undefined || raw === null) throw badInput(path, 'required for a range condition');
  if (!isPlainObject(raw)) throw badInput(path, `expected an object, got ${describeJson(raw)}`);
  rejectUnknownKeys(raw, RANGE_KEYS, path, 'gt, gte, lt, lte');
  // In the order written, so "the other bounds" in a message are the ones the user wrote first.
  const bounds = Object.keys(raw).filter((k) => raw[k] !== undefined && raw[k] !== null) as Array<'gt' | 'gte' | 'lt' | 'lte'>;
  if (bounds.length === 0) throw badInput(path, 'give at least one of gt, gte, lt, lte');
  const first = raw[bounds[0] as string];
  if (typeof first === 'number') {
    const range: { kind: 'number'; gt?: number; gte?: number; lt?: number; lte?: number } = { kind: 'number' };
    for (const bound of bounds) {
      const v = raw[bound];
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw badInput(childPath(path, bound), `expected a finite number like the other bounds, got ${describeJson(v)}`);
      }
      range[bound] = v;
    }
    return range;
  }
  const range: { kind: 'datetime'; gt?: Instant; gte?: Instant; lt?: Instant; lte?: Instant } = { kind: 'datetime' };
  for (const bound of bounds) {
    const v = raw[bound];
    const instant = typeof v === 'string' ? parseDatetime(v) : undefined;
    if (instant === undefined) {
      throw badInput(
        childPath(path, bound),
        typeof first === 'string' && bound !== bounds[0]
          ? `expected an RFC 3339 datetime like the other bounds, got ${JSON.stringify(v)}`
          : `expected a number or an RFC 3339 datetime string, got ${typeof v === 'string' ? JSON.stringify(v) : describeJson(v)}`,
      );
    }
    range[bound] = instant;
  }
  return range;
}

function rejectUnknownKeys(raw: Record<string, unknown>, allowed: ReadonlySet<string>, path: string, expected: string): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) throw badInput(childPath(path, key), `unknown field; expected ${expected}`);
  }
}
