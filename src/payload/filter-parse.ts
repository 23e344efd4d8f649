/**
 * Request JSON → `Filter`, with every error naming its field path (`filter.must[2].range.gt: …`).
 * Regexes are compiled here, once per request, with RE2 semantics (linear time, no backtracking).
 *
 * Every size that makes a request cost more is bounded here (FILTER_LIMITS; docs/params.md says
 * why each value): conditions, value lists, and the regexes' compiled size, which RE2 lets grow to
 * 1.4 million instructions (seconds of compiling, and a match cost proportional to it per string).
 */
import { RE2JS } from 're2js';
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson, normalizePointId } from '../core/point-id.js';
import { type Instant, parseDatetime } from './datetime.js';
import type { Condition, CountRange, DatetimeRange, FieldCondition, Filter, GeoPoint, KeyPath, MinShould, NumberRange } from './filter-types.js';
import { checkJsonValue, isPlainObject, type JsonValue } from './json-value.js';
import { queryWords, type TextMatch } from './text-index.js';

/** The bounds of one request's filter. */
export const FILTER_LIMITS = {
  /** Nesting levels (the top filter is level 1). */
  depth: 32,
  /** Conditions at all levels together, nested filters included. */
  conditions: 256,
  /**
   * Values in the `match.any` / `match.except` lists of the filter, all lists together; the ids of
   * `has_id`, the points of `geo_polygon` rings and a text query's words after its first count here too.
   */
  values: 1024,
  /** Characters of a `match.text`, `match.text_any` or `match.phrase` query. */
  textLength: 1024,
  /** Characters of a payload key. */
  keyLength: 1024,
  /** Characters of one regex pattern, and of all of a request's patterns together. */
  regexLength: 1024,
  regexTotalLength: 2048,
  /** Compiled RE2 instructions of one pattern, and of all of a request's patterns together. */
  regexInstructions: 1000,
  regexTotalInstructions: 2000,
  /** A counted repetition `{n}`, `{n,m}`, `{n,}`: RE2's own bound, refused here with its path. */
  regexRepeat: 1000,
} as const;

export const MAX_FILTER_DEPTH = FILTER_LIMITS.depth;
export const MAX_REGEX_LENGTH = FILTER_LIMITS.regexLength;
export const MAX_KEY_LENGTH = FILTER_LIMITS.keyLength;

/**
 * A pattern whose estimated size (estimateRegexSize) is above this many times the instruction
 * limits is refused before compiling: compiling costs about 5 µs per instruction, so the estimate
 * keeps a hostile pattern from costing seconds, while the slack keeps the (pessimistic) estimate
 * from refusing a pattern the exact check after compiling would accept.
 */
const ESTIMATE_SLACK = 4;

/** What one request's filter has used of FILTER_LIMITS so far. */
interface Budget {
  conditions: number;
  values: number;
  regexLength: number;
  regexInstructions: number;
  regexEstimate: number;
}

const FILTER_KEYS = new Set(['must', 'must_not', 'should', 'min_should']);
/** The parts of a field condition that say what to test; at most one per condition. */
const TESTS = ['match', 'range', 'values_count', 'geo_radius', 'geo_bounding_box', 'geo_polygon'] as const;
const CONDITION_KEYS = new Set(['key', 'type', ...TESTS]);
/** Conditions without a `key` of their own, by the one field that names them. */
const KEYLESS = ['is_empty', 'is_null', 'has_id', 'has_vector', 'nested'] as const;
const MATCH_KEYS = new Set(['value', 'any', 'except', 'text', 'text_any', 'phrase']);
const GEO_POINT_KEYS = new Set(['lon', 'lat']);
/** Mean Earth radius in meters (IUGG), for `geo_radius`; documented in docs/filters.md. */
export const EARTH_RADIUS_M = 6_371_008.8;
const RANGE_KEYS = new Set(['gt', 'gte', 'lt', 'lte']);
const TYPES = new Set(['exact', 'range', 'prefix', 'contains', 'regex']);

export interface ParseFilterOptions {
  /**
   * `kith` (the default): an empty `should` adds no constraint. `qdrant`: an explicit empty
   * `should` list matches no point, as Qdrant answers it (for the Qdrant-dialect routes).
   */
  readonly dialect?: 'kith' | 'qdrant';
}

/** Parses a filter; `null`/`undefined` mean "no filter" and give undefined. */
export function parseFilter(raw: unknown, path = 'filter', options: ParseFilterOptions = {}): Filter | undefined {
  if (raw === undefined || raw === null) return undefined;
  const budget = { conditions: 0, values: 0, regexLength: 0, regexInstructions: 0, regexEstimate: 0 };
  return parseFilterObject(raw, path, 1, budget, options.dialect === 'qdrant');
}

/** A filter no point passes: at least one of no conditions. */
const NOTHING: Condition = { kind: 'nested', filter: { must: [], mustNot: [], should: [], minShould: { conditions: [], minCount: 1 } } };

function parseFilterObject(raw: unknown, path: string, depth: number, budget: Budget, qdrant: boolean): Filter {
  if (!isPlainObject(raw)) throw badInput(path, `expected a filter object, got ${describeJson(raw)}`);
  if (depth > MAX_FILTER_DEPTH) throw badInput(path, `filters nest at most ${MAX_FILTER_DEPTH} levels deep`);
  rejectUnknownKeys(raw, FILTER_KEYS, path, 'must, must_not, should, min_should');
  const must = parseConditionList(raw.must, childPath(path, 'must'), depth, budget, qdrant);
  const mustNot = parseConditionList(raw.must_not, childPath(path, 'must_not'), depth, budget, qdrant);
  const should = parseConditionList(raw.should, childPath(path, 'should'), depth, budget, qdrant);
  if (qdrant && Array.isArray(raw.should) && raw.should.length === 0) must.push(NOTHING);
  const minShould = parseMinShould(raw.min_should, childPath(path, 'min_should'), depth, budget, qdrant);
  return minShould === undefined ? { must, mustNot, should } : { must, mustNot, should, minShould };
}

function parseMinShould(raw: unknown, path: string, depth: number, budget: Budget, qdrant: boolean): MinShould | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isPlainObject(raw)) throw badInput(path, `expected an object {conditions, min_count}, got ${describeJson(raw)}`);
  rejectUnknownKeys(raw, new Set(['conditions', 'min_count']), path, 'conditions, min_count');
  const countPath = childPath(path, 'min_count');
  const minCount = raw.min_count;
  if (minCount === undefined || minCount === null) throw badInput(countPath, 'required: how many of the conditions must hold');
  if (typeof minCount !== 'number' || !Number.isSafeInteger(minCount) || minCount < 0) {
    throw badInput(countPath, `expected a non-negative integer, got ${typeof minCount === 'number' ? minCount : describeJson(minCount)}`);
  }
  const conditionsPath = childPath(path, 'conditions');
  if (raw.conditions === undefined || raw.conditions === null) throw badInput(conditionsPath, 'required: the conditions to count');
  return { conditions: parseConditionList(raw.conditions, conditionsPath, depth, budget, qdrant), minCount };
}

/** A list of conditions, or (as Qdrant accepts) one condition object standing for a list of one. */
function parseConditionList(raw: unknown, path: string, depth: number, budget: Budget, qdrant: boolean): Condition[] {
  if (raw === undefined || raw === null) return [];
  if (isPlainObject(raw)) {
    takeConditions(1, path, budget);
    return [parseCondition(raw, path, depth, budget, qdrant)];
  }
  if (!Array.isArray(raw)) throw badInput(path, `expected an array of conditions (or one condition object), got ${describeJson(raw)}`);
  // Counted before parsing any of them, so a huge list is refused without walking it.
  takeConditions(raw.length, path, budget);
  return raw.map((item, i) => parseCondition(item, childPath(path, i), depth, budget, qdrant));
}

function takeConditions(count: number, path: string, budget: Budget): void {
  if (budget.conditions + count > FILTER_LIMITS.conditions) {
    throw badInput(path, `the filter has more than ${FILTER_LIMITS.conditions} conditions (all levels together); the limit is ${FILTER_LIMITS.conditions}`);
  }
  budget.conditions += count;
}

/** Reserves `count` list values in the budget (FILTER_LIMITS.values), or refuses naming `path`. */
function takeValues(count: number, path: string, budget: Budget, what: string): void {
  if (budget.values + count > FILTER_LIMITS.values) {
    throw badInput(
      path,
      `${count} ${what}${budget.values > 0 ? ` (${budget.values + count} list values in the filter together)` : ''}; the limit is ${FILTER_LIMITS.values} (match.any, match.except, has_id, geo_polygon points and text query words after each first together)`,
    );
  }
  budget.values += count;
}

function parseCondition(raw: unknown, path: string, depth: number, budget: Budget, qdrant: boolean): Condition {
  if (!isPlainObject(raw)) throw badInput(path, `expected a condition object, got ${describeJson(raw)}`);
  if (!Object.hasOwn(raw, 'key')) {
    const keyless = KEYLESS.find((k) => Object.hasOwn(raw, k));
    if (keyless !== undefined) return parseKeylessCondition(raw, keyless, path, depth, budget, qdrant);
    if (Object.keys(raw).some((k) => CONDITION_KEYS.has(k))) {
      throw badInput(childPath(path, 'key'), 'required: a field condition names its payload key');
    }
    return { kind: 'nested', filter: parseFilterObject(raw, path, depth + 1, budget, qdrant) };
  }
  rejectUnknownKeys(
    raw,
    CONDITION_KEYS,
    path,
    `${[...CONDITION_KEYS].join(', ')} (or is_empty, is_null, has_id, has_vector, nested, or a nested filter with must, must_not, should, min_should)`,
  );
  return parseFieldCondition(raw, path, budget);
}

function parseKeylessCondition(
  raw: Record<string, unknown>,
  kind: (typeof KEYLESS)[number],
  path: string,
  depth: number,
  budget: Budget,
  qdrant: boolean,
): Condition {
  rejectUnknownKeys(raw, new Set([kind]), path, `only ${kind} in this condition`);
  const at = childPath(path, kind);
  const body = raw[kind];
  switch (kind) {
    case 'has_id': {
      if (!Array.isArray(body)) throw badInput(at, `expected an array of point ids, got ${describeJson(body)}`);
      takeValues(body.length, at, budget, 'ids');
      return { kind: 'has_id', ids: new Set(body.map((id, i) => normalizePointId(id, childPath(at, i)))) };
    }
    case 'has_vector': {
      if (typeof body !== 'string') throw badInput(at, `expected a vector name (a string; "" names the unnamed vector), got ${describeJson(body)}`);
      return { kind: 'has_vector', name: body };
    }
    case 'nested': {
      if (!isPlainObject(body)) throw badInput(at, `expected an object {key, filter}, got ${describeJson(body)}`);
      rejectUnknownKeys(body, new Set(['key', 'filter']), at, 'key, filter');
      // `data[]` names the same arrays as `data` here (the elements are what the filter reads).
      const key = typeof body.key === 'string' && body.key.length > 2 && body.key.endsWith('[]') ? body.key.slice(0, -2) : body.key;
      const keyPath = parseKeyPath(key, childPath(at, 'key'));
      const filterPath = childPath(at, 'filter');
      if (body.filter === undefined || body.filter === null) throw badInput(filterPath, 'required: the filter each array element is checked against');
      return { kind: 'elements', ...keyPath, filter: parseFilterObject(body.filter, filterPath, depth + 1, budget, qdrant) };
    }
    default: {
      if (!isPlainObject(body)) throw badInput(at, `expected an object {key}, got ${describeJson(body)}`);
      rejectUnknownKeys(body, new Set(['key']), at, 'key');
      return { kind, ...parseKeyPath(body.key, childPath(at, 'key')) };
    }
  }
}

/** A payload key: dots walk into objects, a part ending in `[]` takes an array's elements. */
export function parseKeyPath(key: unknown, keyPath: string): KeyPath {
  if (key === undefined || key === null) throw badInput(keyPath, 'required: the payload key');
  if (typeof key !== 'string') throw badInput(keyPath, `expected a string, got ${describeJson(key)}`);
  if (key.length === 0) throw badInput(keyPath, 'must not be empty');
  if (key.length > MAX_KEY_LENGTH) throw badInput(keyPath, `${key.length} characters long; the limit is ${MAX_KEY_LENGTH}`);
  const raw = key.split('.');
  if (!raw.some((p) => p.endsWith('[]'))) return { key, parts: raw };
  return { key, parts: raw.map((p) => (p.endsWith('[]') ? p.slice(0, -2) : p)), projections: raw.map((p) => p.endsWith('[]')) };
}

function parseFieldCondition(raw: Record<string, unknown>, path: string, budget: Budget): FieldCondition {
  const base = parseKeyPath(raw.key, childPath(path, 'key'));
  const given = TESTS.filter((t) => raw[t] !== undefined && raw[t] !== null);
  const other = given.find((t) => t !== 'match' && t !== 'range');
  if (other !== undefined) {
    if (given.length > 1) throw badInput(childPath(path, given[1] as string), `give one of ${TESTS.join(', ')} per condition (got ${given.join(', ')})`);
    if (raw.type !== undefined && raw.type !== null) throw badInput(childPath(path, 'type'), `\`type\` is for match and range conditions, not ${other}`);
    const at = childPath(path, other);
    switch (other) {
      case 'values_count':
        return { ...base, kind: 'values_count', count: parseCountRange(raw[other], at) };
      case 'geo_radius':
        return { ...base, kind: 'geo_radius', ...parseGeoRadius(raw[other], at) };
      case 'geo_bounding_box':
        return { ...base, kind: 'geo_bounding_box', ...parseGeoBox(raw[other], at) };
      default:
        return { ...base, kind: 'geo_polygon', ...parseGeoPolygon(raw[other], at, budget) };
    }
  }

  const typePath = childPath(path, 'type');
  let type: string;
  if (raw.type === undefined || raw.type === null) {
    type = raw.range !== undefined && raw.range !== null ? 'range' : 'exact';
  } else if (typeof raw.type !== 'string' || !TYPES.has(raw.type)) {
    const got = typeof raw.type === 'string' ? quote(raw.type) : describeJson(raw.type);
    throw badInput(typePath, `unknown condition type ${got}; expected exact, range, prefix, contains or regex`);
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
  rejectUnknownKeys(match, MATCH_KEYS, matchPath, 'value, any, except, text, text_any, phrase');
  const fields = [...MATCH_KEYS].filter((k) => Object.hasOwn(match, k));
  if (fields.length !== 1) {
    throw badInput(matchPath, `give exactly one of value, any, except, text, text_any, phrase (got ${fields.length === 0 ? 'none' : fields.join(', ')})`);
  }
  const field = fields[0] as 'value' | 'any' | 'except' | TextMatch;
  const fieldPath = childPath(matchPath, field);
  if (field !== 'value' && type !== 'exact') throw badInput(fieldPath, `\`${field}\` is only for exact conditions`);

  if (field === 'text' || field === 'text_any' || field === 'phrase') {
    const text = match[field];
    if (typeof text !== 'string') throw badInput(fieldPath, `expected a string, got ${describeJson(text)}`);
    if (text.length > FILTER_LIMITS.textLength) throw badInput(fieldPath, `${text.length} characters long; the limit is ${FILTER_LIMITS.textLength}`);
    // Each word after the first is checked per point as a list value is, and counted with them.
    takeValues(Math.max(0, queryWords(text) - 1), fieldPath, budget, 'more query words');
    return { ...base, kind: 'text', match: field, text };
  }
  if (field === 'any' || field === 'except') {
    const list = match[field];
    if (!Array.isArray(list)) throw badInput(fieldPath, `expected an array of values, got ${describeJson(list)}`);
    takeValues(list.length, fieldPath, budget, 'values');
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
    default: {
      if (typeof value !== 'string') throw badInput(fieldPath, `a regex is a string, got ${describeJson(value)}`);
      return { ...base, kind: 'regex', pattern: value, regex: compileRegex(value, fieldPath, budget) };
    }
  }
}

/** At most 100 characters of a string the client sent, quoted, for a message. */
function quote(text: string): string {
  return text.length <= 100 ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, 100))}… (${text.length} characters)`;
}

/** Checks the pattern against FILTER_LIMITS (before compiling when that can tell), compiles it, checks its size. */
function compileRegex(pattern: string, path: string, budget: Budget): RE2JS {
  const limits = FILTER_LIMITS;
  if (pattern.length > limits.regexLength) throw badInput(path, `the pattern is ${pattern.length} characters long; the limit is ${limits.regexLength}`);
  if (budget.regexLength + pattern.length > limits.regexTotalLength) {
    throw badInput(path, `the filter's patterns are ${budget.regexLength + pattern.length} characters long together; the limit is ${limits.regexTotalLength}`);
  }
  budget.regexLength += pattern.length;
  const estimate = estimateRegexSize(pattern, path);
  if (estimate > ESTIMATE_SLACK * limits.regexInstructions) {
    throw badInput(
      path,
      `the pattern expands to about ${estimate} instructions (counted repetitions copy what they repeat); the limit is ${limits.regexInstructions}`,
    );
  }
  if (budget.regexEstimate + estimate > ESTIMATE_SLACK * limits.regexTotalInstructions) {
    throw badInput(
      path,
      `the filter's patterns expand to about ${budget.regexEstimate + estimate} instructions together; the limit is ${limits.regexTotalInstructions}`,
    );
  }
  budget.regexEstimate += estimate;
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw badInput(path, `invalid RE2 pattern: ${reason.length > 200 ? `${reason.slice(0, 200)}…` : reason}`);
  }
  const size = regex.programSize();
  if (size > limits.regexInstructions) {
    throw badInput(
      path,
      `the compiled pattern has ${size} instructions; the limit is ${limits.regexInstructions} (matching costs time in proportion to it for every string checked)`,
    );
  }
  if (budget.regexInstructions + size > limits.regexTotalInstructions) {
    throw badInput(
      path,
      `the filter's compiled patterns have ${budget.regexInstructions + size} instructions together; the limit is ${limits.regexTotalInstructions}`,
    );
  }
  budget.regexInstructions += size;
  return regex;
}

/** One open group of estimateRegexSize: finished alternatives, the current one, its last item. */
interface GroupFrame {
  alternatives: number;
  bars: number;
  sum: number;
  last: number;
}

const REPEAT = /^\{(\d+)(,(\d*))?\}/;

/**
 * An upper estimate of the RE2 program size of a pattern, read from its text without compiling:
 * re2js exposes the size only after compiling (RE2JS.programSize()), and compiling is what a
 * hostile pattern makes slow (a{1000} repeated 146 times: 146,002 instructions, 0.8 s). Every
 * character counts as at least one instruction (a class or an escape is one), a group adds 3, `|`
 * 1, `*` 3, `+` and `?` 2, and a counted repetition copies what it repeats (x{n,m}: m
 * copies plus m−n, plus 2). The test suite checks that it is never below the compiled size. A
 * repetition count above FILTER_LIMITS.regexRepeat is refused here, naming the count.
 */
export function estimateRegexSize(pattern: string, path = 'pattern'): number {
  const stack: GroupFrame[] = [];
  let frame: GroupFrame = { alternatives: 0, bars: 0, sum: 0, last: 0 };
  const push = (cost: number): void => {
    frame.sum += frame.last;
    frame.last = cost;
  };
  const close = (f: GroupFrame): number => f.alternatives + f.sum + f.last + f.bars;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end === -1 ? pattern.length : end + 2;
        push(Math.max(1, stop - i));
        i = stop;
        continue;
      }
      // \x{…} and \p{…} hold braces that are not a repetition.
      if ((next === 'x' || next === 'p' || next === 'P') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        i = end === -1 ? pattern.length : end + 1;
      } else {
        i += 2;
      }
      push(1);
    } else if (c === '[') {
      i = classEnd(pattern, i);
      push(1);
    } else if (c === '(') {
      if (pattern[i + 1] === '?' && /^\(\?[a-zA-Z-]*\)/.test(pattern.slice(i, i + 12))) {
        // (?i) and the like set flags and open nothing.
        i = pattern.indexOf(')', i) + 1;
        continue;
      }
      stack.push(frame);
      frame = { alternatives: 0, bars: 0, sum: 0, last: 0 };
      i++;
    } else if (c === ')') {
      const inner = close(frame);
      frame = stack.pop() ?? { alternatives: 0, bars: 0, sum: 0, last: 0 };
      push(inner + 3);
      i++;
    } else if (c === '|') {
      frame.alternatives += frame.sum + frame.last;
      frame.sum = 0;
      frame.last = 0;
      frame.bars++;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      frame.last += c === '*' ? 3 : 2;
      i++;
    } else if (c === '{' && REPEAT.test(pattern.slice(i, i + 24))) {
      const m = REPEAT.exec(pattern.slice(i, i + 24)) as RegExpExecArray;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? min : Number(m[3]);
      for (const n of [min, max]) {
        if (n > FILTER_LIMITS.regexRepeat) {
          throw badInput(path, `the repetition count ${n} (at character ${i + 1}) is above the limit of ${FILTER_LIMITS.regexRepeat}`);
        }
      }
      const sub = frame.last;
      frame.last = 2 + (m[2] === undefined ? min * sub : m[3] === '' ? min * sub + sub + 3 : max * sub + (max - min));
      i += m[0].length;
    } else {
      push(1);
      i++;
    }
  }
  let total = close(frame);
  // Unclosed groups are a syntax error for the compiler; count what they hold anyway.
  while (stack.length > 0) {
    const outer = stack.pop() as GroupFrame;
    outer.sum += outer.last;
    outer.last = total + 2;
    total = close(outer);
  }
  // The program's own match and fail instructions, and some slack.
  return total + 4;
}

/** The index just past the character class starting at `start` (`[`), or the pattern's end. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') i += 2;
    else if (c === '[' && pattern[i + 1] === ':') {
      const end = pattern.indexOf(':]', i + 2);
      i = end === -1 ? i + 1 : end + 2;
    } else if (c === ']') return i + 1;
    else i++;
  }
  return pattern.length;
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

function parseCountRange(raw: unknown, path: string): CountRange {
  if (!isPlainObject(raw)) throw badInput(path, `expected an object with gt, gte, lt, lte, got ${describeJson(raw)}`);
  rejectUnknownKeys(raw, RANGE_KEYS, path, 'gt, gte, lt, lte');
  const range: { gt?: number; gte?: number; lt?: number; lte?: number } = {};
  for (const bound of ['gt', 'gte', 'lt', 'lte'] as const) {
    const v = raw[bound];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw badInput(childPath(path, bound), `a count is a non-negative integer, got ${typeof v === 'number' ? v : describeJson(v)}`);
    }
    range[bound] = v;
  }
  if (Object.keys(range).length === 0) throw badInput(path, 'give at least one of gt, gte, lt, lte');
  return range;
}

function parseGeoPoint(raw: unknown, path: string): GeoPoint {
  if (!isPlainObject(raw)) throw badInput(path, `expected a point {lon, lat}, got ${describeJson(raw)}`);
  rejectUnknownKeys(raw, GEO_POINT_KEYS, path, 'lon, lat');
  const coordinate = (name: 'lon' | 'lat', limit: number): number => {
    const v = raw[name];
    const at = childPath(path, name);
    if (v === undefined || v === null) throw badInput(at, 'required');
    if (typeof v !== 'number' || !Number.isFinite(v)) throw badInput(at, `expected a finite number of degrees, got ${describeJson(v)}`);
    if (v < -limit || v > limit) throw badInput(at, `${v} is outside [-${limit}, ${limit}]`);
    return v;
  };
  return { lon: coordinate('lon', 180), lat: coordinate('lat', 90) };
}

function parseGeoRadius(raw: unknown, path: string): { center: GeoPoint; radius: number } {
  if (!isPlainObject(raw)) throw badInput(path, `expected an object {center, radius}, got ${describeJson(raw)}`);
  rejectUnknownKeys(raw, new Set(['center', 'radius']), path, 'center, radius');
  const center = parseGeoPoint(raw.center, childPath(path, 'center'));
  const radius = raw.radius;
  const at = childPath(path, 'radius');
  if (radius === undefined || radius === null) throw badInput(at, 'required: meters');
  if (typeof radius !== 'number' || !Number.isFinite(radius) || radius < 0) {
    throw badInput(at, `expected a finite non-negative number of meters, got ${typeof radius === 'number' ? radius : describeJson(radius)}`);
  }
  return { center, radius };
}

function parseGeoBox(raw: unknown, path: string): { topLeft: GeoPoint; bottomRight: GeoPoint } {
  if (!isPlainObject(raw)) throw badInput(path, `expected an object {top_left, bottom_right}, got ${describeJson(raw)}`);
  rejectUnknownKeys(raw, new Set(['top_left', 'bottom_right']), path, 'top_left, bottom_right');
  return { topLeft: parseGeoPoint(raw.top_left, childPath(path, 'top_left')), bottomRight: parseGeoPoint(raw.bottom_right, childPath(path, 'bottom_right')) };
}

function parseGeoPolygon(raw: unknown, path: string, budget: Budget): { exterior: GeoPoint[]; interiors: GeoPoint[][] } {
  if (!isPlainObject(raw)) throw badInput(path, `expected an object {exterior, interiors}, got ${describeJson(raw)}`);
  rejectUnknownKeys(raw, new Set(['exterior', 'interiors']), path, 'exterior, interiors');
  const exterior = parseRing(raw.exterior, childPath(path, 'exterior'), budget);
  const interiorsPath = childPath(path, 'interiors');
  const interiors = raw.interiors;
  if (interiors === undefined || interiors === null) return { exterior, interiors: [] };
  if (!Array.isArray(interiors)) throw badInput(interiorsPath, `expected an array of rings, got ${describeJson(interiors)}`);
  return { exterior, interiors: interiors.map((ring, i) => parseRing(ring, childPath(interiorsPath, i), budget)) };
}

/** A closed ring `{points: [...]}`: at least 4 points, the last equal to the first (as Qdrant requires). */
function parseRing(raw: unknown, path: string, budget: Budget): GeoPoint[] {
  if (raw === undefined || raw === null) throw badInput(path, 'required: a ring {points}');
  if (!isPlainObject(raw)) throw badInput(path, `expected a ring {points}, got ${describeJson(raw)}`);
  rejectUnknownKeys(raw, new Set(['points']), path, 'points');
  const at = childPath(path, 'points');
  const list = raw.points;
  if (!Array.isArray(list)) throw badInput(at, `expected an array of points {lon, lat}, got ${describeJson(list)}`);
  takeValues(list.length, at, budget, 'points');
  const points = list.map((p, i) => parseGeoPoint(p, childPath(at, i)));
  if (points.length < 4) throw badInput(at, `a ring has at least 4 points (the last repeating the first), got ${points.length}`);
  const first = points[0] as GeoPoint;
  const last = points[points.length - 1] as GeoPoint;
  if (first.lon !== last.lon || first.lat !== last.lat) throw badInput(at, 'a ring is closed: its last point must equal its first');
  return points;
}

function rejectUnknownKeys(raw: Record<string, unknown>, allowed: ReadonlySet<string>, path: string, expected: string): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) throw badInput(childPath(path, key), `unknown field; expected ${expected}`);
  }
}
