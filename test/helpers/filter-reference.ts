/**
 * A naive reference evaluator for filters, written straight from the contract's "Filters" section,
 * and fast-check generators of random payloads and filters (JSON, as a request would carry them).
 * Shared by the filter property tests (test/property/filter.prop.test.ts) and the payload-index
 * model test (test/property/payload-index.prop.test.ts).
 *
 * The reference shares no code with src/payload: its own JSON equality, own key walk, own RFC 3339
 * parser (BigInt nanoseconds from a civil-date formula), and JS RegExp for a pool of patterns whose
 * meaning is the same in RE2 and in JS.
 */
import fc from 'fast-check';
import { idKey } from './id-key.js';
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

// ---------------------------------------------------------------------------------------------
// The reference evaluator.

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A canonical text per JSON value: sorted keys, numbers by value (`-0` is `0`). */
function canon(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(v[k] as Json)}`)
      .join(',')}}`;
  }
  if (typeof v === 'number') return v === 0 ? '0' : String(v);
  return JSON.stringify(v);
}
const eq = (a: Json, b: Json): boolean => canon(a) === canon(b);

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function monthLength(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** RFC 3339 (plus `t`/space, date-only, no offset = UTC) → nanoseconds since the epoch. */
export function refInstant(text: string): bigint | undefined {
  const m = /^(\d{4})-(\d\d)-(\d\d)(?:[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?([Zz]|([+-])(\d\d):(\d\d))?)?$/.exec(text);
  if (m === null) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (month < 1 || month > 12 || day < 1 || day > monthLength(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetSeconds = 0;
  if (m[9] !== undefined) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 23 || om > 59) return undefined;
    offsetSeconds = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds;
  const nanos = BigInt(`${m[7] ?? ''}000000000`.slice(0, 9));
  return BigInt(seconds) * 1_000_000_000n + nanos;
}

type Bound = 'gt' | 'gte' | 'lt' | 'lte';
const BOUNDS: readonly Bound[] = ['gt', 'gte', 'lt', 'lte'];

function compare<T extends number | bigint>(v: T, bound: Bound, b: T): boolean {
  if (bound === 'gt') return v > b;
  if (bound === 'gte') return v >= b;
  if (bound === 'lt') return v < b;
  return v <= b;
}

function inRange(v: Json, range: JsonObject): boolean {
  const given = BOUNDS.filter((b) => range[b] !== undefined && range[b] !== null);
  if (typeof range[given[0] as Bound] === 'number') {
    return typeof v === 'number' && given.every((b) => compare(v, b, range[b] as number));
  }
  const at = typeof v === 'string' ? refInstant(v) : undefined;
  return at !== undefined && given.every((b) => compare(at, b, refInstant(range[b] as string) as bigint));
}

/**
 * Every value a key reaches: the top-level key as written, else the dot walk through arrays; a
 * part written `name[]` takes the elements of the array there (nothing when it is not an array).
 */
function resolve(payload: JsonObject, key: string): Json[] {
  if (Object.hasOwn(payload, key)) return [payload[key] as Json];
  if (!key.includes('.') && !key.endsWith('[]')) return [];
  let frontier: Json[] = [payload];
  for (const written of key.split('.')) {
    const projected = written.endsWith('[]');
    const part = projected ? written.slice(0, -2) : written;
    const next: Json[] = [];
    const visit = (node: Json): void => {
      if (Array.isArray(node)) node.forEach(visit);
      else if (isObject(node) && Object.hasOwn(node, part)) {
        const found = node[part] as Json;
        if (!projected) next.push(found);
        else if (Array.isArray(found)) next.push(...found);
      }
    };
    frontier.forEach(visit);
    frontier = next;
  }
  return frontier;
}

/** Mean Earth radius in meters, as the contract states for geo_radius. */
const EARTH_M = 6_371_008.8;

/** Great-circle distance (haversine in its atan2 form). */
function refDistance(a: { lon: number; lat: number }, b: { lon: number; lat: number }): number {
  const r = (d: number): number => (d * Math.PI) / 180;
  const x = Math.sin(r(b.lat - a.lat) / 2) ** 2 + Math.cos(r(a.lat)) * Math.cos(r(b.lat)) * Math.sin(r(b.lon - a.lon) / 2) ** 2;
  return 2 * EARTH_M * Math.atan2(Math.sqrt(x), Math.sqrt(1 - x));
}

/** Winding number of a closed ring around a point (lon as x, lat as y); odd is inside (the even-odd rule). */
function winding(ring: JsonObject[], x: number, y: number): number {
  let w = 0;
  for (let i = 0; i + 1 < ring.length; i++) {
    const [ax, ay] = [ring[i]?.lon as number, ring[i]?.lat as number];
    const [bx, by] = [ring[i + 1]?.lon as number, ring[i + 1]?.lat as number];
    const side = (bx - ax) * (y - ay) - (x - ax) * (by - ay);
    if (ay <= y && by > y && side > 0) w++;
    else if (ay > y && by <= y && side < 0) w--;
  }
  return w;
}

function geoPoint(v: Json): { lon: number; lat: number } | undefined {
  if (!isObject(v) || typeof v.lon !== 'number' || typeof v.lat !== 'number') return undefined;
  return { lon: v.lon, lat: v.lat };
}

function geoHolds(c: JsonObject, v: Json): [string, boolean] {
  const inside = (p: { lon: number; lat: number }): boolean => {
    if (isObject(c.geo_radius)) return refDistance(p, c.geo_radius.center as { lon: number; lat: number }) < (c.geo_radius.radius as number);
    if (isObject(c.geo_bounding_box)) {
      const tl = c.geo_bounding_box.top_left as JsonObject;
      const br = c.geo_bounding_box.bottom_right as JsonObject;
      const [w, e, n, s] = [tl.lon as number, br.lon as number, tl.lat as number, br.lat as number];
      const lonOk = w <= e ? w < p.lon && p.lon < e : p.lon > w || p.lon < e;
      return lonOk && s < p.lat && p.lat < n;
    }
    const poly = c.geo_polygon as JsonObject;
    const ring = (r: Json): JsonObject[] => (r as JsonObject).points as JsonObject[];
    const odd = (r: Json): boolean => Math.abs(winding(ring(r), p.lon, p.lat)) % 2 === 1;
    if (!odd(poly.exterior as Json)) return false;
    return !((poly.interiors ?? []) as Json[]).some(odd);
  };
  const kind = isObject(c.geo_radius) ? 'geo_radius' : isObject(c.geo_bounding_box) ? 'geo_bounding_box' : 'geo_polygon';
  const test = (e: Json): boolean => {
    const p = geoPoint(e);
    return p !== undefined && inside(p);
  };
  return [kind, test(v) || (Array.isArray(v) && v.some(test))];
}

/** Outcomes per condition type, to check the generators exercise both answers of each. */
export const outcomes = new Map<string, { yes: number; no: number }>();

function record(kind: string, result: boolean): boolean {
  const o = outcomes.get(kind) ?? { yes: 0, no: 0 };
  if (result) o.yes++;
  else o.no++;
  outcomes.set(kind, o);
  return result;
}

function valueHolds(c: JsonObject, v: Json): [string, boolean] {
  const type = (c.type ?? (c.range !== undefined && c.range !== null ? 'range' : 'exact')) as string;
  const match = (c.match ?? {}) as JsonObject;
  const someElement = (test: (e: Json) => boolean): boolean => test(v) || (Array.isArray(v) && v.some(test));
  switch (type) {
    case 'exact': {
      const exactly = (target: Json): boolean => someElement((e) => eq(e, target));
      if (Array.isArray(match.any)) return ['any', match.any.some(exactly)];
      if (Array.isArray(match.except)) {
        const list = match.except;
        const notIn = (e: Json): boolean => !list.some((x) => eq(e, x));
        return ['except', Array.isArray(v) ? v.some(notIn) : notIn(v)];
      }
      return ['exact', exactly(match.value as Json)];
    }
    case 'range': {
      const range = c.range as JsonObject;
      const kind = BOUNDS.some((b) => typeof range[b] === 'number') ? 'number range' : 'datetime range';
      return [kind, someElement((e) => inRange(e, range))];
    }
    case 'prefix':
      return ['prefix', someElement((e) => typeof e === 'string' && e.startsWith(match.value as string))];
    case 'contains': {
      const target = match.value as Json;
      if (Array.isArray(v)) return ['contains', v.some((e) => eq(e, target))];
      return ['contains', typeof v === 'string' && typeof target === 'string' && v.includes(target)];
    }
    case 'regex': {
      const re = new RegExp(match.value as string, 'u');
      return ['regex', someElement((e) => typeof e === 'string' && re.test(e))];
    }
    default:
      throw new Error(`reference: unexpected type ${type}`);
  }
}

/**
 * Which vectors the reference's points hold, for `has_vector`: the main vector ("") every point,
 * "dense" and "sparse" the points whose id's character codes sum to an even (or odd) number,
 * any other name none. A test that binds `has_vector` (search/filter-bind.ts) binds it to this rule.
 */
export function refHoldsVector(name: string, id: string): boolean {
  if (name === '') return true;
  let sum = 0;
  for (let i = 0; i < id.length; i++) sum += id.charCodeAt(i);
  if (name === 'dense') return sum % 2 === 0;
  if (name === 'sparse') return sum % 2 === 1;
  return false;
}

/** The whole condition over every value the key reaches (is_empty, is_null, values_count, nested). */
function keyWide(c: JsonObject, payload: JsonObject, id: string | undefined): [string, boolean] | undefined {
  if (isObject(c.is_empty)) {
    const values = resolve(payload, c.is_empty.key as string);
    return ['is_empty', values.every((v) => v === null || (Array.isArray(v) && v.length === 0))];
  }
  if (isObject(c.is_null)) {
    const values = resolve(payload, c.is_null.key as string);
    return ['is_null', values.some((v) => v === null || (Array.isArray(v) && v.includes(null)))];
  }
  if (Array.isArray(c.has_id)) {
    if (id === undefined) throw new Error('reference: has_id needs the point id');
    return ['has_id', c.has_id.some((x) => (typeof x === 'number' || typeof x === 'string') && idKey(x) === id)];
  }
  if (typeof c.has_vector === 'string') {
    if (id === undefined) throw new Error('reference: has_vector needs the point id');
    return ['has_vector', refHoldsVector(c.has_vector, id)];
  }
  if (isObject(c.nested)) {
    let key = c.nested.key as string;
    if (key.length > 2 && key.endsWith('[]')) key = key.slice(0, -2);
    const elements = resolve(payload, key).flatMap((v) => (Array.isArray(v) ? v.filter(isObject) : []));
    const inner = c.nested.filter as JsonObject;
    return ['nested', elements.some((e) => refFilter(inner, e, id))];
  }
  if (isObject(c.values_count)) {
    const bounds = c.values_count;
    const counts = resolve(payload, c.key as string).map((v) => (v === null ? 0 : Array.isArray(v) ? v.length : 1));
    const ok = (n: number): boolean => BOUNDS.every((b) => bounds[b] === undefined || bounds[b] === null || compare(n, b, bounds[b] as number));
    return ['values_count', (counts.length === 0 ? [0] : counts).some(ok)];
  }
  return undefined;
}

export function refCondition(c: JsonObject, payload: JsonObject, id?: string): boolean {
  const wide = keyWide(c, payload, id);
  if (wide !== undefined) return record(wide[0], wide[1]);
  if (!Object.hasOwn(c, 'key')) return refFilter(c, payload, id);
  const values = resolve(payload, c.key as string);
  const isGeo = isObject(c.geo_radius) || isObject(c.geo_bounding_box) || isObject(c.geo_polygon);
  const holds = (v: Json): [string, boolean] => {
    if (isGeo) return geoHolds(c, v);
    const match = c.match as JsonObject | undefined;
    if (isObject(match) && typeof match.text === 'string') {
      const text = match.text;
      const has = (e: Json): boolean => typeof e === 'string' && e.includes(text);
      return ['text', has(v) || (Array.isArray(v) && v.some(has))];
    }
    return valueHolds(c, v);
  };
  if (values.length === 0) {
    const [kind] = holds(null);
    return record(`${kind} (missing key)`, false);
  }
  let result = false;
  let kind = '';
  for (const v of values) {
    const [k, yes] = holds(v);
    kind = k;
    if (yes) result = true;
  }
  return record(kind, result);
}

/** Whether the filter holds for a point (`id` is needed only by `has_id`). */
export function refFilter(f: JsonObject, payload: JsonObject, id?: string): boolean {
  // A clause may be one condition object instead of a list.
  const list = (name: string): JsonObject[] => {
    const v = f[name];
    return v === undefined || v === null ? [] : Array.isArray(v) ? (v as JsonObject[]) : [v as JsonObject];
  };
  const must = list('must').map((c) => refCondition(c, payload, id));
  const mustNot = list('must_not').map((c) => refCondition(c, payload, id));
  const should = list('should').map((c) => refCondition(c, payload, id));
  let minShould = true;
  if (isObject(f.min_should)) {
    const ms = f.min_should;
    const conditions = Array.isArray(ms.conditions) ? (ms.conditions as JsonObject[]) : [ms.conditions as JsonObject];
    const held = conditions.filter((c) => refCondition(c, payload, id)).length;
    minShould = record('min_should', held >= (ms.min_count as number));
  }
  return must.every(Boolean) && !mustNot.some(Boolean) && (should.length === 0 || should.some(Boolean)) && minShould;
}

// ---------------------------------------------------------------------------------------------
// Generators (JSON, as a request would carry it).

const DATE_PARTS = ['2024-02-28', '2024-02-29', '2023-02-29', '2024-02-30', '2024-03-01', '2024-12-31', '2025-01-01'];
const TIMES = ['00:00:00', '00:30:00', '12:00:00', '23:30:00', '23:59:59', '24:00:00'];
const FRACTIONS = ['', '', '.5', '.000000001', '.999999999', '.1234567891', '.12'];
const ZONES = ['Z', 'z', '', '+00:00', '+01:00', '-01:00', '+05:30', '-00:30', '-23:59', '+24:00', '+01:60'];

/** Instants a few nanoseconds apart around one noon, in several spellings. */
const NEAR_NOON = [
  '2024-02-29T12:00:00Z',
  '2024-02-29T12:00:00.000000001Z',
  '2024-02-29T13:00:00.000000001+01:00',
  '2024-02-29T12:00:00.000000002Z',
  '2024-02-29T11:59:59.999999999Z',
  '2024-02-29t12:00:00.0000000015z',
  '2024-02-29 12:00:00.000001Z',
  '2024-02-29T12:00:00.0000010001Z',
  '2024-02-29T06:30:00.0000005-05:30',
];

export const datetimeArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...DATE_PARTS), weight: 1 },
  { arbitrary: fc.constantFrom(...NEAR_NOON), weight: 3 },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom(...DATE_PARTS),
        fc.constantFrom('T', 'T', 't', ' '),
        fc.constantFrom(...TIMES),
        fc.constantFrom(...FRACTIONS),
        fc.constantFrom(...ZONES),
      )
      .map(([d, sep, t, f, z]) => `${d}${sep}${t}${f}${z}`),
    weight: 6,
  },
);
export const validDatetimeArb = datetimeArb.filter((s) => refInstant(s) !== undefined);

export const NUMBERS = [-2, -1, -0, 0, 0.5, 1, 1.5, 2, 3, 10, 1e21];
export const STRINGS = ['', 'a', 'ab', 'abc', 'b', 'ba', 'A', 'x1', 'é', 'a.b', 'red', 'Red', 'red car', '2024', '12'];
export const numberArb: fc.Arbitrary<number> = fc.oneof(fc.constantFrom(...NUMBERS), fc.integer({ min: -3, max: 12 }));
export const stringArb: fc.Arbitrary<string> = fc.oneof({ arbitrary: fc.constantFrom(...STRINGS), weight: 2 }, { arbitrary: datetimeArb, weight: 1 });
const COMPOSITES: Json[] = [[1, 2], [2, 1], [], {}, { p: 1, q: 'x' }, { q: 'x', p: 1 }, [[1]], ['a', 'b'], { p: [1, 2] }];

/** A small pool shared by payloads and filters, so that equalities really happen. */
export const COMMON: Json[] = [0, 1, 2, 'a', 'ab', 'red', true, null, '2024-02-29T12:00:00Z'];

export const leafArb: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: fc.constantFrom(...COMMON), weight: 8 },
  { arbitrary: numberArb, weight: 3 },
  { arbitrary: stringArb, weight: 3 },
  { arbitrary: fc.boolean(), weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: fc.constantFrom(...COMPOSITES), weight: 1 },
);

/** Top-level payload keys: plain, dotted (to race the walk), prototype names, the empty key. */
const PAYLOAD_KEYS = ['a', 'b', 'c', 'n', 't', 'g', 'a.b', 'b.c', 'constructor', 'toString', ''];
/** Keys of nested objects. */
const NESTED_KEYS = ['a', 'b', 'c', 'n', 't'];
/** Filter keys: mostly ones payloads have, some deeper paths, odd dots and prototype names. */
const FILTER_KEYS = ['a', 'b', 'c', 'n', 't', 'a.b', 'a.c', 'b.c', 'a.b.c', 'c.a', 'a.a', 'a.t', 'a.n', 'b.a.b', 'a[]', 'a[].b', 'c[].a', 'b[].n'];
const ODD_FILTER_KEYS = ['constructor', 'toString', '__proto__', 'a.constructor', 'valueOf', 'a..b', '.a', 'a.', 'x', 'n.n'];

function valueArb(depth: number): fc.Arbitrary<Json> {
  if (depth === 0) return leafArb;
  return fc.oneof(
    { arbitrary: leafArb, weight: 4 },
    { arbitrary: fc.array(valueArb(depth - 1), { maxLength: 3 }), weight: 1 },
    { arbitrary: objectArb(depth - 1), weight: 2 },
  );
}

function objectArb(depth: number): fc.Arbitrary<JsonObject> {
  return fc.array(fc.tuple(fc.constantFrom(...NESTED_KEYS), valueArb(depth)), { maxLength: 3 }).map((entries) => Object.fromEntries(entries) as JsonObject);
}

/**
 * Geo points on a 1° grid offset by (0.137, 0.291), so that no point lies on an edge of the
 * generated boxes and polygons (integer corners) nor at a generated radius from a center.
 */
export const geoPointArb: fc.Arbitrary<Json> = fc
  .tuple(fc.integer({ min: -2, max: 4 }), fc.integer({ min: -2, max: 4 }))
  .map(([x, y]) => ({ lon: x + 0.137, lat: y + 0.291 }));
const geoValueArb: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: geoPointArb, weight: 4 },
  { arbitrary: fc.array(geoPointArb, { maxLength: 3 }), weight: 2 },
  { arbitrary: fc.constantFrom<Json>({ lon: 1 }, { lon: '1', lat: 1 }, null, 'x', [null]), weight: 1 },
);

/** Values for a top-level key: `n` leans to numbers, `t` to datetimes, `g` to geo points, for their conditions to bite. */
function topValueArb(key: string): fc.Arbitrary<Json> {
  const lean: fc.Arbitrary<Json> | undefined =
    key === 'n'
      ? numberArb
      : key === 't'
        ? datetimeArb
        : key === 'g'
          ? geoValueArb
          : key === 'c'
            ? fc.array(objectArb(1), { minLength: 1, maxLength: 3 })
            : undefined;
  if (lean === undefined) return valueArb(3);
  return fc.oneof({ arbitrary: lean, weight: 3 }, { arbitrary: fc.array(lean, { maxLength: 3 }), weight: 1 }, { arbitrary: valueArb(3), weight: 1 });
}

/** A payload: each top-level key present about two times in three. */
export const payloadArb: fc.Arbitrary<JsonObject> = fc
  .tuple(
    ...PAYLOAD_KEYS.map((key) =>
      fc.option(
        topValueArb(key).map((v): [string, Json] => [key, v]),
        { nil: undefined, freq: 3 },
      ),
    ),
  )
  .map((entries) => Object.fromEntries(entries.filter((e) => e !== undefined)) as JsonObject);

/** `type` written out or left to the default, where the default means the same. */
const withType = (type: string, omittable: boolean): fc.Arbitrary<{ type?: string }> =>
  omittable ? fc.constantFrom<{ type?: string }>({}, { type }) : fc.constant({ type });

const keyArb = fc.oneof({ arbitrary: fc.constantFrom(...FILTER_KEYS), weight: 6 }, { arbitrary: fc.constantFrom(...ODD_FILTER_KEYS), weight: 1 });

/** Mostly `key` (or `a.key`), sometimes any key. */
const leaningKeyArb = (key: string): fc.Arbitrary<string> =>
  fc.oneof({ arbitrary: fc.constantFrom(key, key, `a.${key}`), weight: 2 }, { arbitrary: keyArb, weight: 1 });

function rangeArb<T extends Json>(bound: fc.Arbitrary<T>): fc.Arbitrary<JsonObject> {
  return fc
    .tuple(fc.subarray([...BOUNDS], { minLength: 1 }), fc.array(bound, { minLength: 4, maxLength: 4 }))
    .map(([bounds, values]) => Object.fromEntries(bounds.map((b, i) => [b, values[i] as Json])));
}

const REGEXES = ['a', '^a', 'b$', 'a.c', '^$', '[0-9]', 'x|b', 'a*', '^ab?c', 'é', '\\d', '[^a]', 'A', '^2024', 'Z$', ':00', '(ab)+', '\\.', 'e$', ' '];
const PREFIXES = ['', 'a', 'ab', 'A', 'r', 'red ', '2024-02', '2024', 'é', 'x1'];

export const fieldConditionArb: fc.Arbitrary<JsonObject> = fc.oneof(
  fc.tuple(keyArb, withType('exact', true), leafArb).map(([key, t, value]) => ({ key, ...t, match: { value } })),
  fc.tuple(keyArb, withType('exact', true), fc.array(leafArb, { maxLength: 3 })).map(([key, t, any]) => ({ key, ...t, match: { any } })),
  fc.tuple(keyArb, withType('exact', true), fc.array(leafArb, { maxLength: 3 })).map(([key, t, except]) => ({ key, ...t, match: { except } })),
  fc.tuple(leaningKeyArb('n'), withType('range', true), rangeArb(numberArb)).map(([key, t, range]) => ({ key, ...t, range })),
  fc.tuple(leaningKeyArb('t'), withType('range', true), rangeArb(validDatetimeArb)).map(([key, t, range]) => ({ key, ...t, range })),
  fc.tuple(keyArb, fc.constantFrom(...PREFIXES)).map(([key, value]) => ({ key, type: 'prefix', match: { value } })),
  fc.tuple(keyArb, leafArb).map(([key, value]) => ({ key, type: 'contains', match: { value } })),
  fc.tuple(keyArb, fc.constantFrom(...STRINGS)).map(([key, value]) => ({ key, type: 'contains', match: { value } })),
  fc.tuple(keyArb, fc.constantFrom(...REGEXES)).map(([key, value]) => ({ key, type: 'regex', match: { value } })),
);

const cornerArb = fc.tuple(fc.integer({ min: -2, max: 4 }), fc.integer({ min: -2, max: 4 }));
const geoCornerArb = cornerArb.map(([lon, lat]) => ({ lon, lat }));

/** Boxes and polygons with integer corners; a box may cross the antimeridian of this small world (west > east). */
const geoConditionArb: fc.Arbitrary<JsonObject> = fc.oneof(
  fc
    .tuple(fc.constantFrom('g', 'g', 'a', 'a.g'), geoCornerArb, fc.constantFrom(0, 50_000, 150_000, 250_000, 400_000))
    .map(([key, center, radius]) => ({ key, geo_radius: { center, radius } })),
  fc
    .tuple(fc.constantFrom('g', 'g', 'a'), cornerArb, cornerArb)
    .map(([key, [w, n], [e, s]]) => ({ key, geo_bounding_box: { top_left: { lon: w, lat: Math.max(n, s) }, bottom_right: { lon: e, lat: Math.min(n, s) } } })),
  fc
    .tuple(
      fc.constantFrom('g', 'g', 'a'),
      fc.array(geoCornerArb, { minLength: 3, maxLength: 5 }),
      fc.option(fc.array(geoCornerArb, { minLength: 3, maxLength: 4 }), { nil: undefined }),
    )
    .map(([key, ring, hole]) => {
      const closed = (r: JsonObject[]): Json => ({ points: [...r, r[0] as JsonObject] });
      const polygon: JsonObject = { exterior: closed(ring) };
      if (hole !== undefined) polygon.interiors = [closed(hole)];
      return { key, geo_polygon: polygon };
    }),
);

const countBoundsArb: fc.Arbitrary<JsonObject> = fc
  .tuple(fc.subarray([...BOUNDS], { minLength: 1, maxLength: 2 }), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 2, maxLength: 2 }))
  .map(([bounds, values]) => Object.fromEntries(bounds.map((b, i) => [b, values[i] as Json])));

/** The conditions Qdrant adds (all but has_id, which needs point ids): key-wide, text, geo. */
export const qdrantConditionArb: fc.Arbitrary<JsonObject> = fc.oneof(
  fc.tuple(keyArb, countBoundsArb).map(([key, values_count]) => ({ key, values_count })),
  keyArb.map((key) => ({ is_empty: { key } })),
  keyArb.map((key) => ({ is_null: { key } })),
  fc.tuple(keyArb, fc.constantFrom(...STRINGS)).map(([key, text]) => ({ key, match: { text } })),
  geoConditionArb,
);

/** Point ids of generated points: `p0`, `p1`, …, and numbers that name `"0"`, `"1"`, …. */
const idListArb: fc.Arbitrary<Json[]> = fc.array(fc.oneof(fc.constantFrom('p0', 'p1', 'p2', 'p3', 'x'), fc.integer({ min: 0, max: 3 })), { maxLength: 3 });

/** Options of the filter generators. */
export interface FilterArbOptions {
  /** Generate `has_id` too: only where the reference is given each point's id. */
  readonly hasId?: boolean;
}

export function conditionArb(depth: number, options: FilterArbOptions = {}): fc.Arbitrary<JsonObject> {
  const leaf: Array<fc.WeightedArbitrary<JsonObject>> = [
    { arbitrary: fieldConditionArb, weight: 8 },
    { arbitrary: qdrantConditionArb, weight: 3 },
  ];
  if (options.hasId === true) leaf.push({ arbitrary: idListArb.map((has_id) => ({ has_id })), weight: 1 });
  if (depth === 0) return fc.oneof(...leaf);
  // Inner filters lean to one condition, so that some element passes them often enough.
  const innerArb = fc.oneof(
    { arbitrary: conditionArb(0, options).map((c): JsonObject => ({ must: [c] })), weight: 3 },
    { arbitrary: conditionArb(0, options).map((c): JsonObject => ({ must_not: [c] })), weight: 1 },
    { arbitrary: filterArb(depth - 1, options), weight: 1 },
  );
  const nestedArb = fc.tuple(fc.constantFrom('c', 'c', 'c[]', 'a', 'a.b', 'c.a'), innerArb).map(([key, filter]) => ({ nested: { key, filter } }));
  return fc.oneof(...leaf, { arbitrary: filterArb(depth - 1, options), weight: 2 }, { arbitrary: nestedArb, weight: 1 });
}

/**
 * A filter with each of must/must_not/should absent, empty, a short list or (as Qdrant accepts)
 * one condition object; sometimes a `min_should`.
 */
export function filterArb(depth: number, options: FilterArbOptions = {}): fc.Arbitrary<JsonObject> {
  const condition = conditionArb(depth, options);
  const clause = fc.option(
    fc.oneof({ arbitrary: fc.array(condition, { maxLength: 3 }), weight: 5 }, { arbitrary: condition as fc.Arbitrary<Json>, weight: 1 }),
    {
      nil: undefined,
      freq: 3,
    },
  );
  const minShould = fc.option(fc.record({ conditions: fc.array(condition, { maxLength: 3 }), min_count: fc.integer({ min: 0, max: 3 }) }), {
    nil: undefined,
    freq: 4,
  });
  return fc.tuple(clause, clause, clause, minShould).map(([must, mustNot, should, ms]) => {
    const f: JsonObject = {};
    if (must !== undefined) f.must = must as Json;
    if (mustNot !== undefined) f.must_not = mustNot as Json;
    if (should !== undefined) f.should = should as Json;
    if (ms !== undefined) f.min_should = ms as unknown as Json;
    return f;
  });
}

// ---------------------------------------------------------------------------------------------
// Single-valued payloads: every path holds at most one scalar (a one-element array at most), so
// payload indexes keep their exact fast paths (exact candidates, exact counts) in play.

const scalarArb: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: fc.constantFrom(...COMMON), weight: 4 },
  { arbitrary: fc.constantFrom(...STRINGS), weight: 2 },
  { arbitrary: fc.boolean(), weight: 1 },
);

/** A scalar, sometimes wrapped in a one-element array (still one indexed value). */
const singleArb = (scalar: fc.Arbitrary<Json>): fc.Arbitrary<Json> =>
  fc.oneof({ arbitrary: scalar, weight: 4 }, { arbitrary: scalar.map((v) => [v]), weight: 1 });

const SCALAR_PAYLOAD_VALUES: ReadonlyArray<[string, fc.Arbitrary<Json>]> = [
  ['a', fc.oneof({ arbitrary: singleArb(scalarArb), weight: 3 }, { arbitrary: fc.record({ b: scalarArb, n: numberArb }), weight: 1 })],
  ['b', singleArb(scalarArb)],
  ['c', singleArb(scalarArb)],
  ['n', singleArb(numberArb)],
  ['t', singleArb(datetimeArb)],
];

/** A payload whose every path holds at most one scalar value. */
export const scalarPayloadArb: fc.Arbitrary<JsonObject> = fc
  .tuple(
    ...SCALAR_PAYLOAD_VALUES.map(([key, arb]) =>
      fc.option(
        arb.map((v): [string, Json] => [key, v]),
        { nil: undefined, freq: 5 },
      ),
    ),
  )
  .map((entries) => Object.fromEntries(entries.filter((e) => e !== undefined)) as JsonObject);

// ---------------------------------------------------------------------------------------------
// Simple filters: one or two conditions of the kinds payload indexes answer (equality, lists,
// one- or two-sided ranges, prefixes, scalar `contains`), in the shapes a query usually has.

const SIMPLE_KEYS = ['a', 'b', 'c', 'n', 't', 'a.b', 'a.n'];
const simpleKeyArb = fc.constantFrom(...SIMPLE_KEYS);
const scalarLeafArb: fc.Arbitrary<Json> = leafArb.filter((v) => v === null || typeof v !== 'object');

/** A lower bound (gt/gte), an upper one (lt/lte), or both. */
function simpleRangeArb<T extends Json>(bound: fc.Arbitrary<T>): fc.Arbitrary<JsonObject> {
  return fc
    .tuple(fc.constantFrom('gt', 'gte', undefined), fc.constantFrom('lt', 'lte', undefined), bound, bound)
    .filter(([lo, hi]) => lo !== undefined || hi !== undefined)
    .map(([lo, hi, a, b]) => {
      const [low, high] = typeof a === 'number' && typeof b === 'number' && a > b ? [b, a] : [a, b];
      const range: JsonObject = {};
      if (lo !== undefined) range[lo] = low;
      if (hi !== undefined) range[hi] = high;
      return range;
    });
}

export const simpleConditionArb: fc.Arbitrary<JsonObject> = fc.oneof(
  { arbitrary: fc.tuple(simpleKeyArb, scalarLeafArb).map(([key, value]) => ({ key, match: { value } })), weight: 4 },
  { arbitrary: fc.tuple(simpleKeyArb, fc.array(scalarLeafArb, { minLength: 1, maxLength: 3 })).map(([key, any]) => ({ key, match: { any } })), weight: 2 },
  { arbitrary: fc.tuple(fc.constantFrom('n', 'a.n'), simpleRangeArb(numberArb)).map(([key, range]) => ({ key, range })), weight: 4 },
  { arbitrary: fc.tuple(fc.constantFrom('t', 'b'), simpleRangeArb(validDatetimeArb)).map(([key, range]) => ({ key, range })), weight: 2 },
  {
    arbitrary: fc.tuple(simpleKeyArb, fc.constantFrom('', 'a', 'r', '2024', 'x')).map(([key, value]) => ({ key, type: 'prefix', match: { value } })),
    weight: 1,
  },
  { arbitrary: fc.tuple(simpleKeyArb, scalarLeafArb).map(([key, value]) => ({ key, type: 'contains', match: { value } })), weight: 2 },
  { arbitrary: fieldConditionArb, weight: 1 },
);

/** One or two simple conditions as must, must_not, should, or must with must_not. */
export const simpleFilterArb: fc.Arbitrary<JsonObject> = fc.oneof(
  { arbitrary: simpleConditionArb.map((c) => ({ must: [c] })), weight: 4 },
  { arbitrary: fc.tuple(simpleConditionArb, simpleConditionArb).map(([a, b]) => ({ must: [a, b] })), weight: 2 },
  { arbitrary: simpleConditionArb.map((c) => ({ must_not: [c] })), weight: 2 },
  { arbitrary: fc.tuple(simpleConditionArb, simpleConditionArb).map(([a, b]) => ({ should: [a, b] })), weight: 1 },
  { arbitrary: fc.tuple(simpleConditionArb, simpleConditionArb).map(([a, b]) => ({ must: [a], must_not: [b] })), weight: 1 },
);
