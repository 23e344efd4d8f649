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
import { describeJson } from '../core/point-id.js';
import { type Instant, parseDatetime } from './datetime.js';
import type { Condition, DatetimeRange, FieldCondition, Filter, NumberRange } from './filter-types.js';
import { checkJsonValue, isPlainObject, type JsonValue } from './json-value.js';

/** The bounds of one request's filter. */
export const FILTER_LIMITS = {
  /** Nesting levels (the top filter is level 1). */
  depth: 32,
  /** Conditions at all levels together, nested filters included. */
  conditions: 256,
  /** Values in the `match.any` / `match.except` lists of the filter, all lists together. */
  values: 1024,
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

const FILTER_KEYS = new Set(['must', 'must_not', 'should']);
const CONDITION_KEYS = new Set(['key', 'type', 'match', 'range']);
const MATCH_KEYS = new Set(['value', 'any', 'except']);
const RANGE_KEYS = new Set(['gt', 'gte', 'lt', 'lte']);
const TYPES = new Set(['exact', 'range', 'prefix', 'contains', 'regex']);

/** Parses a filter; `null`/`undefined` mean "no filter" and give undefined. */
export function parseFilter(raw: unknown, path = 'filter'): Filter | undefined {
  if (raw === undefined || raw === null) return undefined;
  return parseFilterObject(raw, path, 1, { conditions: 0, values: 0, regexLength: 0, regexInstructions: 0, regexEstimate: 0 });
}

function parseFilterObject(raw: unknown, path: string, depth: number, budget: Budget): Filter {
  if (!isPlainObject(raw)) throw badInput(path, `expected a filter object, got ${describeJson(raw)}`);
  if (depth > MAX_FILTER_DEPTH) throw badInput(path, `filters nest at most ${MAX_FILTER_DEPTH} levels deep`);
  rejectUnknownKeys(raw, FILTER_KEYS, path, 'must, must_not, should');
  return {
    must: parseConditionList(raw.must, childPath(path, 'must'), depth, budget),
    mustNot: parseConditionList(raw.must_not, childPath(path, 'must_not'), depth, budget),
    should: parseConditionList(raw.should, childPath(path, 'should'), depth, budget),
  };
}

function parseConditionList(raw: unknown, path: string, depth: number, budget: Budget): Condition[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw badInput(path, `expected an array of conditions, got ${describeJson(raw)}`);
  // Counted before parsing any of them, so a huge list is refused without walking it.
  if (budget.conditions + raw.length > FILTER_LIMITS.conditions) {
    throw badInput(path, `the filter has more than ${FILTER_LIMITS.conditions} conditions (all levels together); the limit is ${FILTER_LIMITS.conditions}`);
  }
  budget.conditions += raw.length;
  return raw.map((item, i) => parseCondition(item, childPath(path, i), depth, budget));
}

function parseCondition(raw: unknown, path: string, depth: number, budget: Budget): Condition {
  if (!isPlainObject(raw)) throw badInput(path, `expected a condition object, got ${describeJson(raw)}`);
  if (!Object.hasOwn(raw, 'key')) {
    if (Object.keys(raw).some((k) => CONDITION_KEYS.has(k))) {
      throw badInput(childPath(path, 'key'), 'required: a field condition names its payload key');
    }
    return { kind: 'nested', filter: parseFilterObject(raw, path, depth + 1, budget) };
  }
  rejectUnknownKeys(raw, CONDITION_KEYS, path, 'key, type, match, range (or a nested filter with must, must_not, should)');
  return parseFieldCondition(raw, path, budget);
}

function parseFieldCondition(raw: Record<string, unknown>, path: string, budget: Budget): FieldCondition {
  const key = raw.key;
  const keyPath = childPath(path, 'key');
  if (typeof key !== 'string') throw badInput(keyPath, `expected a string, got ${describeJson(key)}`);
  if (key.length === 0) throw badInput(keyPath, 'must not be empty');
  if (key.length > MAX_KEY_LENGTH) throw badInput(keyPath, `${key.length} characters long; the limit is ${MAX_KEY_LENGTH}`);
  const base = { key, parts: key.split('.') };

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
    if (budget.values + list.length > FILTER_LIMITS.values) {
      throw badInput(
        fieldPath,
        `${list.length} values${budget.values > 0 ? ` (${budget.values + list.length} in the filter's lists together)` : ''}; the limit is ${FILTER_LIMITS.values} (lists of objects are compared with every payload value checked)`,
      );
    }
    budget.values += list.length;
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
    throw badInput(path, `the pattern expands to about ${estimate} instructions (counted repetitions copy what they repeat); the limit is ${limits.regexInstructions}`);
  }
  if (budget.regexEstimate + estimate > ESTIMATE_SLACK * limits.regexTotalInstructions) {
    throw badInput(path, `the filter's patterns expand to about ${budget.regexEstimate + estimate} instructions together; the limit is ${limits.regexTotalInstructions}`);
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
    throw badInput(path, `the compiled pattern has ${size} instructions; the limit is ${limits.regexInstructions} (matching costs time in proportion to it for every string checked)`);
  }
  if (budget.regexInstructions + size > limits.regexTotalInstructions) {
    throw badInput(path, `the filter's compiled patterns have ${budget.regexInstructions + size} instructions together; the limit is ${limits.regexTotalInstructions}`);
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

function rejectUnknownKeys(raw: Record<string, unknown>, allowed: ReadonlySet<string>, path: string, expected: string): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) throw badInput(childPath(path, key), `unknown field; expected ${expected}`);
  }
}
