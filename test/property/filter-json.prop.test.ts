/**
 * filterToJson (src/payload/filter-json.ts) is parseFilter's inverse. Random filters, the shared
 * generator's (test/helpers/filter-reference.ts) with the cases it leaves out added by a seeded
 * walk (both dialects and an explicit `should: []` at any level, datetime bounds anywhere in years
 * 0000 to 9999 at any offset, leap seconds, has_id with decimal-looking strings and UUID spellings,
 * `[]` projections in keys and in Qdrant's `nested` keys, regex, text, min_should of nothing, …),
 * are parsed, written back and parsed again (kith's dialect, as a receiving node parses):
 *
 * - the two Filters are structurally equal (compared as portableFilter, without the compiled
 *   regexes), also through JSON text (-0 aside: JSON.stringify writes it 0) and in either dialect;
 * - they select the same points on random payloads, and so does the written JSON by the naive
 *   reference evaluator, which shares no code with the parser.
 *
 * Beyond the budgets (a Qdrant-dialect filter whose added conditions take it past 256 conditions or
 * 32 levels), the JSON cannot be exact; the last tests check it then selects the same points.
 *
 * Replay a failure with KITH_SEED=<seed> (the seed is in the test name and its diagnostic).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseJson } from '../../src/core/json-text.js';
import { SeededRng } from '../../src/core/rng.js';
import { parseDatetime } from '../../src/payload/datetime.js';
import { compileFilter } from '../../src/payload/filter-compile.js';
import { filterToJson } from '../../src/payload/filter-json.js';
import { FILTER_LIMITS, type ParseFilterOptions, parseFilter } from '../../src/payload/filter-parse.js';
import { mapFilterConditions } from '../../src/payload/filter-map.js';
import type { Condition, Filter } from '../../src/payload/filter-types.js';
import { portableFilter } from '../../src/payload/thread-filter.js';
import { testSeed } from '../helpers/data.js';
import { filterArb, type Json, type JsonObject, payloadArb, refFilter, refHoldsVector } from '../helpers/filter-reference.js';

const SEED = testSeed(0xf1175);
const RUNS = 3000;
const PAYLOADS_PER_RUN = 4;

type Dialect = NonNullable<ParseFilterOptions['dialect']>;

function parsed(raw: unknown, dialect: Dialect = 'kith'): Filter {
  const filter = parseFilter(raw, 'filter', { dialect });
  assert.ok(filter !== undefined);
  return filter;
}

// ---- what the shared generator leaves out, drawn from a SeededRng ----------------------------

const UUID = '123e4567-e89b-12d3-a456-426614174000';
/** Point ids of the evaluated payloads: plain, decimal (an integer id's text), UUID, zero-led. */
const POINT_IDS = ['p0', '1', UUID, '007', 'p4', '5', 'x', '9007199254740993'];
/** has_id entries: numbers, decimal-looking strings (which stay strings), UUIDs in every spelling. */
const HAS_ID_ENTRIES: Json[] = [
  0,
  1,
  5,
  Number.MAX_SAFE_INTEGER,
  '1',
  '5',
  '007',
  '-1',
  '1.5',
  '1e3',
  '9007199254740993',
  'p0',
  'x',
  UUID.toUpperCase(),
  `{${UUID}}`,
  `urn:uuid:${UUID}`,
  UUID.replaceAll('-', ''),
  UUID,
];
/** Keys with `[]` projections, and plain ones the payloads have. */
const KEYS = ['a', 'a.b', 'n', 't', 'c', 'g', 'a[]', 'a[].b', 'a[].b[]', 'c[].a', 'c[]', '[]', 'x[]', 'a.b[]', 'c[].a[]', 'c[].n'];
/** Qdrant `nested` keys: a trailing `[]` is dropped once, so `c[][]` keeps one. */
const ELEMENT_KEYS = ['c', 'c[]', 'c[][]', 'a[].c', 'c[].a', 'a.b', '[]', '[][]', 'c.c[]'];
const REGEXES = ['a', '^a', 'b$', '[0-9]', 'x|b', '^ab?c', '\\d', '(ab)+', 'é', '^2024-02'];
const VALUES: Json[] = [0, -0, 1, 1.5, 1e21, -2, 'a', 'red', '', true, false, null, [1, 2], { p: 1 }, '2024-02-29T12:00:00Z'];

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * RFC 3339 text anywhere parseDatetime reads: years 0000 to 9999 (the ends often, where an offset
 * takes the instant's UTC date outside them), leap seconds, 0 to 12 fraction digits, any offset.
 */
function datetimeText(rng: SeededRng): string {
  const r = rng.next();
  let [year, month] = [rng.pick([1969, 1970, 2024, 2024, rng.int(10_000)]), 1 + rng.int(12)];
  let day = 1 + rng.int(daysIn(year, month));
  if (r < 0.12) [year, month, day] = [0, 1, 1];
  else if (r < 0.24) [year, month, day] = [9999, 12, 31];
  else if (r < 0.34) [year, month, day] = [2024, 2, 29];
  const date = `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}`;
  if (rng.next() < 0.08) return date;
  const edge = rng.next() < 0.3;
  const [hour, minute] = edge ? rng.pick([[0, 0] as const, [23, 59] as const, [12, 0] as const]) : [rng.int(24), rng.int(60)];
  const second = edge ? rng.pick([0, 59, 60]) : rng.int(61);
  const digits = rng.int(13);
  const fraction = digits === 0 ? '' : `.${Array.from({ length: digits }, () => rng.pick(['0', '9', String(rng.int(10))])).join('')}`;
  const sign = rng.pick(['+', '-']);
  const zone = rng.pick(['Z', 'z', '', '+00:00', '-00:00', `${sign}23:59`, `${sign}${two(rng.int(24))}:${two(rng.int(60))}`, '+05:30']);
  return `${date}${rng.pick(['T', 't', ' '])}${two(hour)}:${two(minute)}:${two(second)}${fraction}${zone}`;
}

/** A range of one to four bounds; a bound given as null counts as absent. */
function rangeOf(rng: SeededRng, bound: () => Json): JsonObject {
  const range: JsonObject = {};
  for (const name of ['gt', 'gte', 'lt', 'lte']) if (rng.next() < 0.5) range[name] = bound();
  if (Object.keys(range).length === 0) range[rng.pick(['gt', 'gte', 'lt', 'lte'])] = bound();
  const absent = ['gt', 'gte', 'lt', 'lte'].filter((b) => range[b] === undefined);
  if (absent.length > 0 && rng.next() < 0.1) range[rng.pick(absent)] = null;
  return range;
}

/** A ring with `points` corners (closed), and a hole or two inside [-2, 4]². */
function ring(rng: SeededRng, corners: number): JsonObject {
  const points = Array.from({ length: corners }, () => ({ lon: rng.int(7) - 2, lat: rng.int(7) - 2 }));
  return { points: [...points, points[0] as JsonObject] };
}

/** One condition of a kind the shared generator lacks or rarely makes, up to `depth` levels deep. */
function extraCondition(rng: SeededRng, depth: number): JsonObject {
  const key = rng.pick(KEYS);
  switch (rng.int(depth > 0 ? 18 : 16)) {
    case 0:
      return { has_id: Array.from({ length: rng.int(4) }, () => rng.pick(HAS_ID_ENTRIES)) };
    case 15:
      return { has_vector: rng.pick(['', 'dense', 'sparse', 'other']) };
    case 1:
    case 2:
      return { key: rng.pick(['t', 't', 'a', 'c[].a']), range: rangeOf(rng, () => datetimeText(rng)) };
    case 3:
      return { key: rng.pick(['n', 'a', 'c[].n']), range: rangeOf(rng, () => rng.pick([-0, 0, 1.5, -1e300, 3, 1e21, 2])) };
    case 4:
      // `type` written out, given as null (counts as absent) or left out: all mean exact.
      return { key, ...rng.pick<JsonObject>([{ type: 'exact' }, { type: null }, {}]), match: { value: rng.pick(VALUES) } };
    case 5:
      return { key, match: { [rng.pick(['any', 'except'])]: Array.from({ length: rng.int(4) }, () => rng.pick(VALUES)) } };
    case 6:
      return { key, type: 'regex', match: { value: rng.pick(REGEXES) } };
    case 7:
      return { key, match: { text: rng.pick(['', 'a', 're', '2024']) } };
    case 8:
      return { key, type: rng.pick(['prefix', 'contains']), match: { value: rng.pick(['', 'a', 'r', '2024']) } };
    case 9:
      return { key, values_count: rangeOf(rng, () => rng.int(4)) };
    case 10:
      return { [rng.pick(['is_empty', 'is_null'])]: { key } };
    case 11: {
      const polygon: JsonObject = { exterior: ring(rng, 3 + rng.int(3)) };
      const holes = rng.int(3);
      if (holes > 0 || rng.next() < 0.2) polygon.interiors = Array.from({ length: holes }, () => ring(rng, 3));
      return { key: rng.pick(['g', 'a.g', 'g[]']), geo_polygon: polygon };
    }
    case 12:
      return { key: 'g', geo_radius: { center: { lon: rng.int(7) - 2.5, lat: rng.int(7) - 2 }, radius: rng.pick([0, -0, 1e5, 2.5e5]) } };
    case 13:
      return { key: 'g', geo_bounding_box: { top_left: { lon: rng.int(7) - 2, lat: 4 }, bottom_right: { lon: rng.int(7) - 2, lat: rng.int(3) - 2 } } };
    case 14:
      // The nothing-condition written in kith's dialect, and min_should of nothing that always holds.
      return { min_should: { conditions: [], min_count: rng.int(2) } };
    case 16:
      return { nested: { key: rng.pick(ELEMENT_KEYS), filter: extraFilter(rng, depth - 1) } };
    default:
      return extraFilter(rng, depth - 1);
  }
}

function extraFilter(rng: SeededRng, depth: number): JsonObject {
  const filter: JsonObject = {};
  for (const clause of ['must', 'must_not', 'should']) {
    if (rng.next() < 0.4) filter[clause] = Array.from({ length: rng.int(3) }, () => extraCondition(rng, depth));
  }
  if (rng.next() < 0.15) filter.min_should = { conditions: Array.from({ length: rng.int(3) }, () => extraCondition(rng, depth)), min_count: rng.int(3) };
  return filter;
}

const CLAUSES = ['must', 'must_not', 'should'] as const;

/**
 * The shared generator's filter with extra conditions here and there, an explicit `should: []`
 * sometimes (no constraint in kith's dialect, no point in Qdrant's) and its nested filters
 * spiced the same way.
 */
function spice(filter: JsonObject, rng: SeededRng): JsonObject {
  const out: JsonObject = { ...filter };
  for (const clause of CLAUSES) {
    const given = out[clause];
    if (given !== undefined && given !== null) {
      out[clause] = Array.isArray(given) ? given.map((c) => spiceCondition(c as JsonObject, rng)) : spiceCondition(given as JsonObject, rng);
    }
    // Fewer in `must`, where most conditions make a point fail, so that both answers stay common.
    if (rng.next() < (clause === 'must' ? 0.06 : 0.12)) {
      const list = given === undefined || given === null ? [] : Array.isArray(given) ? (out[clause] as Json[]) : [out[clause] as Json];
      out[clause] = [...list, extraCondition(rng, 1)];
    }
  }
  if ((out.should === undefined || rng.next() < 0.05) && rng.next() < 0.12) out.should = [];
  const ms = out.min_should as JsonObject | undefined;
  if (ms !== undefined) out.min_should = { ...ms, conditions: (ms.conditions as JsonObject[]).map((c) => spiceCondition(c, rng)) };
  else if (rng.next() < 0.05) out.min_should = { conditions: [extraCondition(rng, 1)], min_count: rng.int(3) };
  return out;
}

function spiceCondition(condition: JsonObject, rng: SeededRng): JsonObject {
  const nested = condition.nested as JsonObject | undefined;
  if (nested !== undefined) return { nested: { ...nested, filter: spice(nested.filter as JsonObject, rng) } };
  const isFilter = !Object.hasOwn(condition, 'key') && !['is_empty', 'is_null', 'has_id', 'has_vector'].some((k) => Object.hasOwn(condition, k));
  return isFilter ? spice(condition, rng) : condition;
}

/** Payloads as the shared generator makes them; `t` sometimes a datetime from anywhere in the range. */
function payloadsFor(rng: SeededRng, pool: readonly JsonObject[]): JsonObject[] {
  return Array.from({ length: PAYLOADS_PER_RUN }, () => {
    const payload = { ...rng.pick(pool) };
    if (rng.next() < 0.3) payload.t = datetimeText(rng);
    return payload;
  });
}

// ---- comparing ---------------------------------------------------------------------------------

/** A portable filter with every -0 made 0, for comparing what went through JSON text. */
function withoutNegativeZero(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(withoutNegativeZero);
  if (value instanceof Set || typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutNegativeZero(v)]));
}

/** The value holds only what JSON text carries: plain objects, arrays, strings, finite numbers, booleans, null. */
function assertPlainJson(value: unknown, at: string): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    assert.ok(Number.isFinite(value), `${at}: ${value}`);
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) assertPlainJson(item, `${at}[${i}]`);
  } else {
    assert.ok(typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype, `${at}: not a plain object (${typeof value})`);
    for (const [k, v] of Object.entries(value)) assertPlainJson(v, `${at}.${k}`);
  }
}

/**
 * `has_vector` bound to the reference's rule (refHoldsVector), as the engine binds it to a
 * segment's holders; only `holds` is read when a filter is compiled.
 */
function bindRefHolders(filter: Filter): Filter {
  return mapFilterConditions(filter, (c) => {
    if (c.kind !== 'has_vector') return c;
    const name = c.name;
    const unused = (): never => {
      throw new Error('a compiled filter reads only holds()');
    };
    return { ...c, holders: { count: 0, holds: (id) => refHoldsVector(name, id), has: unused, forEach: unused, bits: unused } };
  });
}

/** What the random filters held, to check that every kind is exercised. */
function tally(filter: Filter, seen: Map<string, number>): void {
  const add = (what: string): void => {
    seen.set(what, (seen.get(what) ?? 0) + 1);
  };
  if (filter.minShould !== undefined) add('min_should');
  const visit = (c: Condition): void => {
    switch (c.kind) {
      case 'nested': {
        const f = c.filter;
        const nothing = f.must.length + f.mustNot.length + f.should.length === 0 && f.minShould?.conditions.length === 0 && f.minShould.minCount === 1;
        add(nothing ? 'nothing' : 'nested');
        tally(f, seen);
        return;
      }
      case 'elements':
        add(c.key.endsWith('[]') ? 'elements key ending []' : 'elements');
        tally(c.filter, seen);
        break;
      case 'has_id':
        add('has_id');
        for (const id of c.ids) add(/^\d+$/.test(id) ? 'has_id decimal' : id === UUID ? 'has_id uuid' : 'has_id string');
        return;
      case 'has_vector':
        add('has_vector');
        return;
      case 'range':
        add(`${c.range.kind} range`);
        break;
      case 'geo_polygon':
        add(c.interiors.length > 0 ? 'geo_polygon with interiors' : 'geo_polygon');
        break;
      default:
        add(c.kind);
    }
    if (c.projections !== undefined) add('projections');
  };
  for (const c of [...filter.must, ...filter.mustNot, ...filter.should, ...(filter.minShould?.conditions ?? [])]) visit(c);
}

const KINDS = [
  'exact',
  'any',
  'except',
  'number range',
  'datetime range',
  'prefix',
  'contains',
  'regex',
  'text',
  'values_count',
  'is_empty',
  'is_null',
  'geo_radius',
  'geo_bounding_box',
  'geo_polygon',
  'geo_polygon with interiors',
  'has_id',
  'has_id decimal',
  'has_id uuid',
  'has_id string',
  'has_vector',
  'nested',
  'nothing',
  'elements',
  'elements key ending []',
  'projections',
  'min_should',
];

test(`filterToJson: parse, write, parse again gives the same filter and the same points (seed ${SEED}, ${RUNS} runs)`, (t) => {
  t.diagnostic(`seed ${SEED} (KITH_SEED=${SEED} replays it)`);
  const rng = new SeededRng(SEED);
  // Drawn in bulk (one fast-check sample each), then spiced and combined per run from the SeededRng.
  const bases = fc.sample(filterArb(2, { hasId: true }), { seed: rng.nextUint32() | 0, numRuns: RUNS });
  const pool = fc.sample(payloadArb, { seed: rng.nextUint32() | 0, numRuns: 500 });
  const seen = new Map<string, number>();
  const dialects = { kith: 0, qdrant: 0 };
  let matched = 0;
  let evaluated = 0;
  for (const [run, base] of bases.entries()) {
    const raw = spice(base, rng);
    const dialect: Dialect = rng.next() < 0.5 ? 'qdrant' : 'kith';
    dialects[dialect]++;
    const context = (): string => `run ${run}, ${dialect} dialect\nraw  ${JSON.stringify(raw)}`;
    let first: Filter;
    try {
      first = parsed(raw, dialect);
    } catch (error) {
      assert.fail(`the generator made a filter the parser refuses (${String(error)}): ${context()}`);
    }
    tally(first, seen);
    const json = filterToJson(first);
    const shown = (): string => `${context()}\njson ${JSON.stringify(json)}`;
    assertPlainJson(json, 'filter');
    const second = parsed(json);
    assert.deepStrictEqual(portableFilter(second), portableFilter(first), shown());
    // The written JSON means the same to a receiver in either dialect (it has no empty `should`).
    assert.deepStrictEqual(portableFilter(parsed(json, 'qdrant')), portableFilter(second), `qdrant dialect: ${shown()}`);
    // As the JSON travels between nodes: as text.
    const travelled = parsed(parseJson(JSON.stringify(json)));
    assert.deepStrictEqual(withoutNegativeZero(portableFilter(travelled)), withoutNegativeZero(portableFilter(first)), `through JSON text: ${shown()}`);

    const before = compileFilter(bindRefHolders(first));
    const after = compileFilter(bindRefHolders(second));
    for (const payload of payloadsFor(rng, pool)) {
      const id = rng.pick(POINT_IDS);
      const expected = before(payload, id);
      const where = (): string => `${shown()}\npayload ${JSON.stringify(payload)} id ${id}`;
      assert.equal(after(payload, id), expected, where());
      // assertPlainJson above checked that the JSON is JSON.
      assert.equal(refFilter(json as JsonObject, payload, id), expected, `the reference evaluator on the written JSON: ${where()}`);
      evaluated++;
      if (expected) matched++;
    }
  }
  t.diagnostic(`dialects ${JSON.stringify(dialects)}; matched ${matched} of ${evaluated}; kinds ${JSON.stringify(Object.fromEntries(seen))}`);
  for (const kind of KINDS) assert.ok((seen.get(kind) ?? 0) >= 20, `only ${seen.get(kind) ?? 0} of ${kind} in ${RUNS} filters`);
  // Both answers common, so "the same points" says something (the extra conditions lean to no).
  assert.ok(matched > evaluated * 0.04 && matched < evaluated * 0.96, `${matched} of ${evaluated} matched`);
});

test(`datetime bounds read back to the nanosecond from anywhere in years 0000 to 9999 (seed ${SEED + 1})`, (t) => {
  t.diagnostic(`seed ${SEED + 1}`);
  const rng = new SeededRng(SEED + 1);
  const ends = ['0000-01-01T00:00:00+23:59', '0000-01-01T00:00:00Z', '9999-12-31T23:59:60.999999999-23:59', '9999-12-31T23:59:59.999999999Z'];
  const texts = [...ends, ...Array.from({ length: 2000 }, () => datetimeText(rng))];
  for (const text of texts) {
    const first = parsed({ must: { key: 't', range: { gte: text } } });
    const json = filterToJson(first);
    assert.deepStrictEqual(parsed(json), first, `${text} → ${JSON.stringify(json)}`);
    const written = (json as { must: [{ range: { gte: string } }] }).must[0].range.gte;
    assert.deepStrictEqual(parseDatetime(written), parseDatetime(text), `${text} → ${written}`);
    assert.match(written, /(Z|[+-]23:59)$/, 'UTC, or the widest offset where UTC has no four-digit year');
  }
});

// ---- beyond the budgets ------------------------------------------------------------------------

const CONDITION: JsonObject = { key: 'n', range: { gte: 1 } };
const PAYLOADS: JsonObject[] = [{}, { n: 0 }, { n: 2 }, { n: [0, 3] }, { n: 'x' }];

/** Filters selecting the same points of PAYLOADS; `json` within the kith dialect's budgets. */
function sameSelection(original: Filter, json: Record<string, unknown>): Filter {
  const again = parsed(json);
  const [a, b] = [compileFilter(original), compileFilter(again)];
  for (const payload of PAYLOADS) assert.equal(b(payload, 'p'), a(payload, 'p'), JSON.stringify(payload));
  return again;
}

test('a Qdrant-dialect filter that its added condition takes past 256 conditions is written as one that selects the same points', () => {
  const full = Array.from({ length: FILTER_LIMITS.conditions }, () => CONDITION);
  // The top level: it matches nothing, so it is written as the filter that matches nothing.
  const top = parsed({ must: full, should: [] }, 'qdrant');
  assert.equal(top.must.length, FILTER_LIMITS.conditions + 1);
  assert.throws(() => parseFilter({ must: [...full, {}] }), /more than 256 conditions/, 'the exact form is beyond the kith budget');
  assert.deepStrictEqual(filterToJson(top), { min_should: { conditions: [], min_count: 1 } });
  sameSelection(top, filterToJson(top));
  // A nested level: only that level is replaced, the rest is written as it was.
  const inner = parsed({ must: [...full.slice(3), { should: [], must: [CONDITION] }], should: [CONDITION] }, 'qdrant');
  const again = sameSelection(inner, filterToJson(inner));
  assert.equal(again.must.length, FILTER_LIMITS.conditions - 2);
  assert.deepStrictEqual(again.must.at(-1), { kind: 'nested', filter: { must: [], mustNot: [], should: [], minShould: { conditions: [], minCount: 1 } } });
  // One condition fewer and it fits: written exactly.
  const fits = parsed({ must: full.slice(1), should: [] }, 'qdrant');
  assert.deepStrictEqual(parsed(filterToJson(fits)), fits);
});

test('a Qdrant-dialect filter that its added condition takes past 32 levels is written as one that selects the same points', () => {
  const deep = (levels: number, innermost: JsonObject): JsonObject => (levels === 1 ? innermost : { must: [CONDITION, deep(levels - 1, innermost)] });
  const tooDeep = parsed(deep(FILTER_LIMITS.depth, { must: [CONDITION], should: [] }), 'qdrant');
  const again = sameSelection(tooDeep, filterToJson(tooDeep));
  let level: Filter = again;
  for (let i = 1; i < FILTER_LIMITS.depth; i++) level = (level.must[1] as Extract<Condition, { kind: 'nested' }>).filter;
  assert.deepStrictEqual(level, { must: [], mustNot: [], should: [], minShould: { conditions: [], minCount: 1 } });
  // One level less: written exactly.
  const fits = parsed(deep(FILTER_LIMITS.depth - 1, { must: [CONDITION], should: [] }), 'qdrant');
  assert.deepStrictEqual(parsed(filterToJson(fits)), fits);
});
