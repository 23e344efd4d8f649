/**
 * `Filter` → predicate over a point's payload and id. Each condition becomes one closure with its
 * constants (sets, parsed bounds, compiled regex) captured, so evaluating a point allocates nothing.
 */
import { compareInstants, type Instant, parseDatetime } from './datetime.js';
import { EARTH_RADIUS_M } from './filter-parse.js';
import type { Condition, CountRange, DatetimeRange, ElementsCondition, FieldCondition, Filter, GeoPoint, NumberRange } from './filter-types.js';
import { isPlainObject, type JsonValue, jsonEqual, someValueAt } from './json-value.js';
import { textMatcher } from './text-index.js';

/** Whether the point (its payload, and its id for `has_id` and `has_vector`) passes the filter. */
export type PayloadPredicate = (payload: Record<string, unknown>, id: string) => boolean;

/** Expected matches per condition (payload/filter-estimate.ts), to order the checks. */
export type ConditionCounts = ReadonlyMap<Condition, { readonly expected: number }>;

/**
 * Compiles a filter. With `counts`, checks run most-selective first where that decides sooner
 * (`orderFilter`); without, in the order given.
 */
export function compileFilter(filter: Filter, counts?: ConditionCounts): PayloadPredicate {
  return compileOrdered(counts === undefined ? filter : orderFilter(filter, counts));
}

/**
 * The filter with its conditions in the order that decides soonest, at every level: `must` by
 * fewest expected matches (the likeliest to fail), `must_not` and `should` by most (the likeliest
 * to end the check). The answer is the same in any order; only the work differs.
 */
export function orderFilter(filter: Filter, counts: ConditionCounts): Filter {
  const expected = (c: Condition): number => counts.get(c)?.expected ?? Number.POSITIVE_INFINITY;
  const order = (conditions: readonly Condition[], direction: 1 | -1): Condition[] =>
    [...conditions].sort((a, b) => direction * (expected(a) - expected(b)) || 0).map((c) => orderCondition(c, counts));
  const ordered: Filter = { must: order(filter.must, 1), mustNot: order(filter.mustNot, -1), should: order(filter.should, -1) };
  if (filter.minShould === undefined) return ordered;
  return { ...ordered, minShould: { conditions: filter.minShould.conditions.map((c) => orderCondition(c, counts)), minCount: filter.minShould.minCount } };
}

function orderCondition(condition: Condition, counts: ConditionCounts): Condition {
  return condition.kind === 'nested' || condition.kind === 'elements' ? { ...condition, filter: orderFilter(condition.filter, counts) } : condition;
}

function compileOrdered(filter: Filter): PayloadPredicate {
  const must = filter.must.map(compileCondition);
  const mustNot = filter.mustNot.map(compileCondition);
  const should = filter.should.map(compileCondition);
  const minShould = filter.minShould === undefined ? undefined : compileMinShould(filter.minShould.conditions, filter.minShould.minCount);
  return (payload, id) => {
    for (const p of must) if (!p(payload, id)) return false;
    for (const p of mustNot) if (p(payload, id)) return false;
    if (minShould !== undefined && !minShould(payload, id)) return false;
    if (should.length === 0) return true;
    for (const p of should) if (p(payload, id)) return true;
    return false;
  };
}

/** At least `minCount` of the conditions hold; stops as soon as the answer is known. */
function compileMinShould(conditions: readonly Condition[], minCount: number): PayloadPredicate {
  const checks = conditions.map(compileCondition);
  return (payload, id) => {
    let held = 0;
    for (let i = 0; i < checks.length; i++) {
      if (held >= minCount) return true;
      if (held + (checks.length - i) < minCount) return false;
      if ((checks[i] as PayloadPredicate)(payload, id)) held++;
    }
    return held >= minCount;
  };
}

function compileCondition(condition: Condition): PayloadPredicate {
  switch (condition.kind) {
    case 'nested':
      return compileOrdered(condition.filter);
    case 'has_id': {
      const ids = condition.ids;
      return (_payload, id) => ids.has(id);
    }
    case 'has_vector': {
      const holders = condition.holders;
      // Unbound, the answer is unknown: a path that skipped binding must fail loudly, not match nothing.
      if (holders === undefined) throw new Error(`has_vector "${condition.name}" compiled without binding it to a segment (search/filter-bind.ts)`);
      return (_payload, id) => holders.holds(id);
    }
    case 'elements':
      return compileElements(condition);
    case 'is_empty': {
      const { key, parts, projections } = condition;
      // Empty: no value at the key, or only nulls and empty arrays.
      return (payload) => !someValueAt(payload, key, parts, isNonEmpty, projections);
    }
    case 'values_count':
      return compileValuesCount(condition);
    case 'text':
      return compileText(condition);
    default: {
      const test = compileValueTest(condition);
      const { key, parts, projections } = condition;
      return (payload) => someValueAt(payload, key, parts, test, projections);
    }
  }
}

const isNonEmpty = (value: unknown): boolean => value !== null && !(Array.isArray(value) && value.length === 0);

/** Some array at the key has an object element that passes the inner filter by itself. */
function compileElements(condition: ElementsCondition): PayloadPredicate {
  const inner = compileOrdered(condition.filter);
  const { key, parts, projections } = condition;
  // The point's id for the inner filter's has_id; set before each walk (evaluation is synchronous).
  let currentId = '';
  const element = (e: unknown): boolean => isPlainObject(e) && inner(e, currentId);
  const test = (value: unknown): boolean => Array.isArray(value) && value.some(element);
  return (payload, id) => {
    currentId = id;
    return someValueAt(payload, key, parts, test, projections);
  };
}

/**
 * Some value at the key has a count within the bounds (null counts 0, an array its length, any
 * other value 1); with no value at all the count is 0.
 */
function compileValuesCount(condition: Extract<FieldCondition, { kind: 'values_count' }>): PayloadPredicate {
  const within = countTest(condition.count);
  const { key, parts, projections } = condition;
  let found = false;
  const test = (value: unknown): boolean => {
    found = true;
    return within(value === null ? 0 : Array.isArray(value) ? value.length : 1);
  };
  const zero = within(0);
  return (payload) => {
    found = false;
    return someValueAt(payload, key, parts, test, projections) || (!found && zero);
  };
}

export function countTest(range: CountRange): (count: number) => boolean {
  const { gt, gte, lt, lte } = range;
  return (count) =>
    (gt === undefined || count > gt) && (gte === undefined || count >= gte) && (lt === undefined || count < lt) && (lte === undefined || count <= lte);
}

/**
 * A text condition reads all of the key's strings at once (an array's string elements included):
 * an indexed field's tokens are pooled over them (text-index.ts).
 */
function compileText(condition: Extract<FieldCondition, { kind: 'text' }>): PayloadPredicate {
  const matches = textMatcher(condition.match, condition.text, condition.index);
  const { key, parts, projections } = condition;
  const strings: string[] = [];
  const collect = (value: unknown): boolean => {
    if (typeof value === 'string') strings.push(value);
    else if (Array.isArray(value)) for (const e of value) if (typeof e === 'string') strings.push(e);
    return false;
  };
  return (payload) => {
    strings.length = 0;
    someValueAt(payload, key, parts, collect, projections);
    return matches(strings);
  };
}

/** The test one resolved payload value must pass; arrays are handled per condition type. */
function compileValueTest(condition: FieldCondition): (value: unknown) => boolean {
  switch (condition.kind) {
    case 'is_null':
      return (value) => value === null || (Array.isArray(value) && value.includes(null));
    case 'geo_radius':
      return geoTest(radiusTest(condition.center, condition.radius));
    case 'geo_bounding_box':
      return geoTest(boxTest(condition.topLeft, condition.bottomRight));
    case 'geo_polygon':
      return geoTest(polygonTest(condition.exterior, condition.interiors));
    case 'is_empty':
    case 'values_count':
    case 'text':
      // Answered over all of a key's values at once (compileCondition).
      throw new Error(`unreachable: ${condition.kind} is not a per-value test`);
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
        Array.isArray(value) ? value.some((e) => jsonEqual(e, target)) : typeof value === 'string' && typeof target === 'string' && value.includes(target);
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
  return (value) => (typeof value === 'object' && value !== null ? composites.some((c) => jsonEqual(value, c)) : scalars.has(value));
}

function numberRangeTest(range: NumberRange): (value: unknown) => boolean {
  const gt = range.gt ?? Number.NEGATIVE_INFINITY;
  const gte = range.gte ?? Number.NEGATIVE_INFINITY;
  const lt = range.lt ?? Number.POSITIVE_INFINITY;
  const lte = range.lte ?? Number.POSITIVE_INFINITY;
  const hasGt = range.gt !== undefined;
  const hasLt = range.lt !== undefined;
  return (value) => typeof value === 'number' && (!hasGt || value > gt) && value >= gte && (!hasLt || value < lt) && value <= lte;
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

/** A test of a payload geo point `{lon, lat}` (finite numbers), applied to the value or any element. */
function geoTest(inside: (lon: number, lat: number) => boolean): (value: unknown) => boolean {
  const test = (v: unknown): boolean => {
    if (!isPlainObject(v)) return false;
    const { lon, lat } = v;
    return typeof lon === 'number' && typeof lat === 'number' && Number.isFinite(lon) && Number.isFinite(lat) && inside(lon, lat);
  };
  return (value) => test(value) || (Array.isArray(value) && value.some(test));
}

const RAD = Math.PI / 180;

/** Great-circle distance in meters (haversine, mean Earth radius). */
export function haversineMeters(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Strictly closer than `radius` meters to the center. */
function radiusTest(center: GeoPoint, radius: number): (lon: number, lat: number) => boolean {
  return (lon, lat) => haversineMeters(lon, lat, center.lon, center.lat) < radius;
}

/** Strictly inside the box; when top_left.lon > bottom_right.lon the box crosses the antimeridian. */
function boxTest(topLeft: GeoPoint, bottomRight: GeoPoint): (lon: number, lat: number) => boolean {
  const west = topLeft.lon;
  const east = bottomRight.lon;
  const north = topLeft.lat;
  const south = bottomRight.lat;
  const wraps = west > east;
  return (lon, lat) => lat < north && lat > south && (wraps ? lon > west || lon < east : lon > west && lon < east);
}

/** Inside the exterior ring and outside every interior ring (even-odd rule on lon/lat as a plane). */
function polygonTest(exterior: readonly GeoPoint[], interiors: readonly (readonly GeoPoint[])[]): (lon: number, lat: number) => boolean {
  return (lon, lat) => {
    if (!inRing(exterior, lon, lat)) return false;
    for (const ring of interiors) if (inRing(ring, lon, lat)) return false;
    return true;
  };
}

/** Ray casting towards +lon: an odd number of edge crossings means inside. */
function inRing(ring: readonly GeoPoint[], lon: number, lat: number): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const a = ring[i] as GeoPoint;
    const b = ring[j] as GeoPoint;
    if (a.lat > lat !== b.lat > lat) {
      const crossLon = a.lon + ((lat - a.lat) * (b.lon - a.lon)) / (b.lat - a.lat);
      if (lon < crossLon) inside = !inside;
    }
  }
  return inside;
}
