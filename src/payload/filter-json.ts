/**
 * `Filter` → filter JSON: the inverse of parseFilter, for a cluster node that sends a filter it
 * parsed (in either dialect) to other nodes, which parse it again with kith's default dialect.
 *
 * `parseFilter(filterToJson(f))` is structurally equal to `f` for every `f` parseFilter makes,
 * regexes aside (they are compiled again from their patterns):
 *
 * - keys are written as they were (`parts` and `projections` are read from them again);
 * - datetime bounds as RFC 3339 text that reads back to the same nanosecond (formatDatetime);
 * - `has_id` ids as their strings: an id in the set is already normalised (a number as its decimal
 *   text, a UUID in its canonical form), and normalising it again leaves it as it is;
 * - `must`, `must_not` and `should` only when not empty, so the text reads the same in both
 *   dialects (the Qdrant dialect gives an explicit empty `should` a meaning). The condition that
 *   the Qdrant dialect adds for one (a nested filter of `min_should` 1 of no conditions) is written
 *   as that nested filter, which reads back to the same condition.
 *
 * The text holds as many conditions and list values as the filter (has_id's duplicates are gone),
 * so it is within parseFilter's budgets when the filter was: except where the Qdrant dialect's
 * added conditions, which its own parse did not count, take a filter past 256 conditions or 32
 * levels. Such a filter cannot be written exactly (kith's dialect counts every condition), so it
 * is written as one that selects the same points: each level holding such a condition in `must`
 * (no point passes it) becomes `{"min_should": {"conditions": [], "min_count": 1}}`. A filter
 * built in code beyond the budgets is written as it is, and the receiver refuses it as it would a
 * request.
 *
 * The JSON shares the filter's values (match values and lists): read it, do not change it. It holds
 * only plain objects, arrays, strings, finite numbers, booleans and null; JSON.stringify writes a
 * `-0` in a filter as `0`, which selects the same points.
 */
import { formatDatetime, type Instant } from './datetime.js';
import { FILTER_LIMITS } from './filter-parse.js';
import type { Condition, DatetimeRange, FieldCondition, Filter, GeoPoint, NumberRange } from './filter-types.js';

type Json = Record<string, unknown>;

/** The filter as kith-dialect JSON that parseFilter reads back to it (see above). */
export function filterToJson(filter: Filter): Record<string, unknown> {
  const size = { conditions: 0, depth: 0 };
  measure(filter, 1, size);
  const fits = size.conditions <= FILTER_LIMITS.conditions && size.depth <= FILTER_LIMITS.depth;
  return filterJson(fits ? filter : withoutNothing(filter));
}

/** Conditions at all levels and the deepest level, as parseFilter counts them in kith's dialect. */
function measure(filter: Filter, depth: number, size: { conditions: number; depth: number }): void {
  size.depth = Math.max(size.depth, depth);
  for (const condition of allConditions(filter)) {
    size.conditions++;
    if (condition.kind === 'nested' || condition.kind === 'elements') measure(condition.filter, depth + 1, size);
  }
}

function allConditions(filter: Filter): readonly Condition[] {
  return [...filter.must, ...filter.mustNot, ...filter.should, ...(filter.minShould?.conditions ?? [])];
}

/** At least one of no conditions: what the Qdrant dialect adds for an explicit empty `should`. */
const NONE_OF_NOTHING: Filter = { must: [], mustNot: [], should: [], minShould: { conditions: [], minCount: 1 } };

/** A nested filter no point passes by its shape alone: `min_should` of no conditions, at least one. */
function isNothing(condition: Condition): boolean {
  if (condition.kind !== 'nested') return false;
  const { must, mustNot, should, minShould } = condition.filter;
  return (
    must.length === 0 && mustNot.length === 0 && should.length === 0 && minShould !== undefined && minShould.conditions.length === 0 && minShould.minCount > 0
  );
}

/**
 * The filter with every level that must pass a nothing-condition replaced by NONE_OF_NOTHING: the
 * same points, without the replaced levels' conditions (the nothing-conditions among them) and the
 * levels below them, so no more conditions or levels than parseFilter counted in the Qdrant dialect.
 */
function withoutNothing(filter: Filter): Filter {
  if (filter.must.some(isNothing)) return NONE_OF_NOTHING;
  const inner = (condition: Condition): Condition =>
    condition.kind === 'nested' || condition.kind === 'elements' ? { ...condition, filter: withoutNothing(condition.filter) } : condition;
  const out: Filter = { must: filter.must.map(inner), mustNot: filter.mustNot.map(inner), should: filter.should.map(inner) };
  if (filter.minShould === undefined) return out;
  return { ...out, minShould: { conditions: filter.minShould.conditions.map(inner), minCount: filter.minShould.minCount } };
}

function filterJson(filter: Filter): Json {
  const out: Json = {};
  if (filter.must.length > 0) out.must = filter.must.map(conditionJson);
  if (filter.mustNot.length > 0) out.must_not = filter.mustNot.map(conditionJson);
  if (filter.should.length > 0) out.should = filter.should.map(conditionJson);
  if (filter.minShould !== undefined) out.min_should = { conditions: filter.minShould.conditions.map(conditionJson), min_count: filter.minShould.minCount };
  return out;
}

function conditionJson(condition: Condition): Json {
  switch (condition.kind) {
    case 'nested':
      // A filter object standing as a condition: parseFilter reads it as a nested filter.
      return filterJson(condition.filter);
    case 'elements':
      return { nested: { key: elementsKey(condition.key), filter: filterJson(condition.filter) } };
    case 'has_id':
      return { has_id: [...condition.ids] };
    case 'has_vector':
      return { has_vector: condition.name };
    default:
      return fieldJson(condition);
  }
}

/**
 * The key of Qdrant's `nested` as parseFilter reads it back: it drops one trailing `[]` from a key
 * longer than two characters (`data[]` names the arrays `data` does), so a key that still ends in
 * `[]` after that (written `a[][]`) gets the dropped `[]` back.
 */
function elementsKey(key: string): string {
  return key.length > 2 && key.endsWith('[]') ? `${key}[]` : key;
}

function fieldJson(condition: FieldCondition): Json {
  const key = condition.key;
  switch (condition.kind) {
    case 'exact':
      return { key, match: { value: condition.value } };
    case 'any':
      return { key, match: { any: condition.values } };
    case 'except':
      return { key, match: { except: condition.values } };
    case 'text':
      // The bound text index is not written: the receiver binds its collection's own.
      return { key, match: { [condition.match]: condition.text } };
    case 'prefix':
      return { key, type: 'prefix', match: { value: condition.prefix } };
    case 'contains':
      return { key, type: 'contains', match: { value: condition.value } };
    case 'regex':
      return { key, type: 'regex', match: { value: condition.pattern } };
    case 'range':
      return { key, range: rangeJson(condition.range) };
    case 'values_count':
      return { key, values_count: boundsJson(condition.count, (n) => n) };
    case 'is_empty':
    case 'is_null':
      return { [condition.kind]: { key } };
    case 'geo_radius':
      return { key, geo_radius: { center: pointJson(condition.center), radius: condition.radius } };
    case 'geo_bounding_box':
      return { key, geo_bounding_box: { top_left: pointJson(condition.topLeft), bottom_right: pointJson(condition.bottomRight) } };
    case 'geo_polygon': {
      const polygon: Json = { exterior: ringJson(condition.exterior) };
      // Absent and empty interiors read back the same; absent is shorter.
      if (condition.interiors.length > 0) polygon.interiors = condition.interiors.map(ringJson);
      return { key, geo_polygon: polygon };
    }
    default:
      return unreachable(condition);
  }
}

function rangeJson(range: NumberRange | DatetimeRange): Json {
  // A datetime bound is text, a number bound a number: the first bound tells parseFilter which.
  return range.kind === 'number' ? boundsJson(range, (n) => n) : boundsJson(range, formatDatetime);
}

/** The bounds given, each written by `write`. */
function boundsJson<T extends number | Instant>(
  range: { readonly gt?: T; readonly gte?: T; readonly lt?: T; readonly lte?: T },
  write: (bound: T) => unknown,
): Json {
  const out: Json = {};
  for (const bound of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = range[bound];
    if (value !== undefined) out[bound] = write(value);
  }
  return out;
}

function pointJson(point: GeoPoint): Json {
  return { lon: point.lon, lat: point.lat };
}

function ringJson(points: readonly GeoPoint[]): Json {
  return { points: points.map(pointJson) };
}

/** A condition kind added to filter-types.ts without a case above fails to compile here. */
function unreachable(condition: never): never {
  throw new Error(`filterToJson: unknown condition ${JSON.stringify(condition)}`);
}
