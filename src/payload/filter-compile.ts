/**
 * `Filter` → predicate over a payload. Each condition becomes one closure with its constants
 * (sets, parsed bounds, compiled regex) captured, so evaluating a point allocates nothing.
 */
import { compareInstants, type Instant, parseDatetime } from './datetime.js';
import type { Condition, DatetimeRange, FieldCondition, Filter, NumberRange } from './filter-types.js';
import { type JsonValue, jsonEqual, someValueAt } from './json-value.js';

type PayloadPredicate = (payload: Record<string, unknown>) => boolean;

/** Expected matches per condition (payload/filter-estimate.ts), to order the checks. */
export type ConditionCounts = ReadonlyMap<Condition, { readonly expected: number }>;

/**
 * Compiles a filter. With `counts`, checks run most-selective first where that decides sooner:
 * `must` by fewest expected matches (the likeliest to fail), `must_not` and `should` by most (the
 * likeliest to end the check). The answer is the same in any order; only the work differs.
 */
export function compileFilter(filter: Filter, counts?: ConditionCounts): PayloadPredicate {
  const expected = (c: Condition): number => counts?.get(c)?.expected ?? Number.POSITIVE_INFINITY;
  const order = (conditions: readonly Condition[], direction: 1 | -1): Condition[] =>
    counts === undefined ? [...conditions] : [...conditions].sort((a, b) => direction * (expected(a) - expected(b)) || 0);
  const must = order(filter.must, 1).map((c) => compileCondition(c, counts));
  const mustNot = order(filter.mustNot, -1).map((c) => compileCondition(c, counts));
  const should = order(filter.should, -1).map((c) => compileCondition(c, counts));
  return (payload) => {
    for (const p of must) if (!p(payload)) return false;
    for (const p of mustNot) if (p(payload)) return false;
    if (should.length === 0) return true;
    for (const p of should) if (p(payload)) return true;
    return false;
  };
}

function compileCondition(condition: Condition, counts: ConditionCounts | undefined): PayloadPredicate {
  if (condition.kind === 'nested') return compileFilter(condition.filter, counts);
  const test = compileValueTest(condition);
  const { key, parts } = condition;
  return (payload) => someValueAt(payload, key, parts, test);
}

/** The test one resolved payload value must pass; arrays are handled per condition type. */
function compileValueTest(condition: FieldCondition): (value: unknown) => boolean {
  switch (condition.kind) {
    case 'exact': {
      const target = condition.value;
      return (value) => jsonEqual(value, target) || (Array.isArray(value) && value.some((e) => jsonEqual(e, target)));
    }
    case 'any': {
      const isMember = memberTest(condition.values);
      return (value) => isMember(value) || (Array.isArray(value) && value.some(isMember));
    }
    case 'except': {
      const isMember = memberTest(condition.values);
      return (value) => (Array.isArray(value) ? value.some((e) => !isMember(e)) : !isMember(value));
    }
    case 'range': {
      const inRange = condition.range.kind === 'number' ? numberRangeTest(condition.range) : datetimeRangeTest(condition.range);
      return (value) => inRange(value) || (Array.isArray(value) && value.some(inRange));
    }
    case 'prefix': {
      const prefix = condition.prefix;
      const test = (v: unknown): boolean => typeof v === 'string' && v.startsWith(prefix);
      return (value) => test(value) || (Array.isArray(value) && value.some(test));
    }
    case 'contains': {
      const target = condition.value;
      return (value) =>
        Array.isArray(value)
          ? value.some((e) => jsonEqual(e, target))
          : typeof value === 'string' && typeof target === 'string' && value.includes(target);
    }
    case 'regex': {
      const regex = condition.regex;
      const test = (v: unknown): boolean => typeof v === 'string' && regex.test(v);
      return (value) => test(value) || (Array.isArray(value) && value.some(test));
    }
  }
}

/** Membership in a list of JSON values: a Set for scalars, deep equality for the rest. */
function memberTest(values: readonly JsonValue[]): (value: unknown) => boolean {
  const scalars = new Set<unknown>();
  const composites: JsonValue[] = [];
  for (const v of values) {
    if (typeof v === 'object' && v !== null) composites.push(v);
    else scalars.add(v);
  }
  if (composites.length === 0) return (value) => scalars.has(value);
  return (value) =>
    typeof value === 'object' && value !== null ? composites.some((c) => jsonEqual(value, c)) : scalars.has(value);
}

function numberRangeTest(range: NumberRange): (value: unknown) => boolean {
  const gt = range.gt ?? Number.NEGATIVE_INFINITY;
  const gte = range.gte ?? Number.NEGATIVE_INFINITY;
  const lt = range.lt ?? Number.POSITIVE_INFINITY;
  const lte = range.lte ?? Number.POSITIVE_INFINITY;
  const hasGt = range.gt !== undefined;
  const hasLt = range.lt !== undefined;
  return (value) =>
    typeof value === 'number' && (!hasGt || value > gt) && value >= gte && (!hasLt || value < lt) && value <= lte;
}

function datetimeRangeTest(range: DatetimeRange): (value: unknown) => boolean {
  return (value) => {
    if (typeof value !== 'string') return false;
    const at = parseDatetime(value);
    return at !== undefined && instantInRange(at, range);
  };
}

function instantInRange(at: Instant, range: DatetimeRange): boolean {
  if (range.gt !== undefined && compareInstants(at, range.gt) <= 0) return false;
  if (range.gte !== undefined && compareInstants(at, range.gte) < 0) return false;
  if (range.lt !== undefined && compareInstants(at, range.lt) >= 0) return false;
  if (range.lte !== undefined && compareInstants(at, range.lte) > 0) return false;
  return true;
}
