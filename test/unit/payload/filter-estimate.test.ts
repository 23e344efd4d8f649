/**
 * Cardinality estimates and candidate sets from a hand-built PayloadIndex, checked against the
 * reference evaluator (test/helpers/filter-reference.ts) on the same payloads:
 * - every estimate brackets the truth (min <= actual <= max, min <= expected <= max);
 * - candidates are a superset of the matches, `count` bounds the visits, and candidates marked
 *   `exact` are exactly the matches, each once (callers then skip the filter check);
 * - single-valued keyword/bool/number conditions are counted exactly; conditions the indexes
 *   cannot answer are [0, points having the key] (or [0, n] for an unindexed key), marked as not
 *   counted; conditions on a key the indexes know no point holds are exact (0, or n for is_empty).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../../src/core/rng.js';
import { bitsToArray } from '../../../src/core/slot-bits.js';
import { type Candidates, type FilterEstimate, estimateFilter } from '../../../src/payload/filter-estimate.js';
import { parseFilter } from '../../../src/payload/filter-parse.js';
import { PayloadIndex } from '../../../src/payload/payload-index.js';
import { type JsonObject, refFilter } from '../../helpers/filter-reference.js';

/** Slot → payload of the live points, and the index over them. */
class Indexed {
  readonly index: PayloadIndex;
  readonly live = new Map<number, JsonObject>();
  constructor(enabled = true) {
    this.index = new PayloadIndex(enabled);
  }
  add(slot: number, payload: JsonObject): void {
    this.index.add(slot, payload);
    this.live.set(slot, payload);
  }
  remove(slot: number): void {
    this.index.remove(slot, this.live.get(slot) as JsonObject);
    this.live.delete(slot);
  }
}

interface Analysis {
  estimate: FilterEstimate;
  actual: number[];
  visits: number[];
}

function visitsOf(candidates: Candidates): number[] {
  const out: number[] = [];
  candidates.forEach((slot) => {
    out.push(slot);
  });
  return out;
}

const sorted = (xs: Iterable<number>): number[] => [...xs].sort((a, b) => a - b);

/** Estimates `json` and checks every guarantee the module makes; returns what it found. */
function analyse(data: Indexed, json: JsonObject): Analysis {
  const filter = parseFilter(json);
  assert.ok(filter !== undefined);
  const n = data.live.size;
  const estimate = estimateFilter(filter, data.index, n);
  const actual = sorted([...data.live].filter(([, p]) => refFilter(json, p)).map(([slot]) => slot));
  const context = `filter ${JSON.stringify(json)}: estimate ${JSON.stringify(estimate.estimate)}, actual ${actual.length}`;
  const { min, expected, max } = estimate.estimate;
  assert.ok(min <= actual.length && actual.length <= max, `${context}: not bracketed`);
  assert.ok(min <= expected && expected <= max, `${context}: expected outside [min, max]`);
  assert.ok(max <= n, `${context}: max above n = ${n}`);
  const candidates = estimate.candidates;
  if (candidates === undefined) return { estimate, actual, visits: [] };
  const visits = visitsOf(candidates);
  assert.ok(visits.length <= candidates.count, `${context}: ${visits.length} visits, count ${candidates.count}`);
  const named = new Set(visits);
  const missed = actual.filter((slot) => !named.has(slot));
  assert.deepEqual(missed, [], `${context}: candidates miss matching slots`);
  if (candidates.exact === true) {
    assert.deepEqual(sorted(visits), actual, `${context}: exact candidates are not exactly the matches (each once)`);
    if (candidates.has !== undefined)
      for (const slot of data.live.keys()) assert.equal(candidates.has(slot), actual.includes(slot), `${context}: has(${slot})`);
  }
  const array = candidates.array?.();
  if (array !== undefined) assert.deepEqual(sorted(new Set(array)), sorted(named), `${context}: array() and forEach differ`);
  const bits = candidates.bits?.();
  if (bits !== undefined) assert.deepEqual(Array.from(bitsToArray(bits)), sorted(named), `${context}: bits() and forEach differ`);
  return { estimate, actual, visits };
}

const COLORS = ['red', 'green', 'blue', 'grey'];
const SIZES = ['S', 'M', 'L'];
const TAGS = ['a', 'b', 'c'];

/** 60 points: single-valued color/size/ok/price/when/title, multi-valued tags/nums, some keys absent. */
function shop(): Indexed {
  const rng = new SeededRng(0xe57);
  const data = new Indexed();
  for (let slot = 0; slot < 60; slot++) {
    const p: JsonObject = {};
    if (slot % 7 !== 0) p.color = rng.pick(COLORS);
    p.size = rng.pick(SIZES);
    if (slot % 5 !== 1) p.ok = rng.int(2) === 0;
    if (slot % 6 !== 2) p.price = rng.int(10) + (slot % 4 === 0 ? 0.5 : 0);
    p.when = `2024-03-${String(1 + (slot % 28)).padStart(2, '0')}T${slot % 2 === 0 ? '08' : '20'}:00:00Z`;
    p.title = `${rng.pick(['green', 'great', 'red', 'blue'])} item ${slot}`;
    p.tags = Array.from({ length: rng.int(4) }, () => rng.pick(TAGS));
    p.nums = Array.from({ length: rng.int(3) }, () => rng.int(4));
    p.meta = { region: rng.pick(['eu', 'us']) };
    data.add(slot, p);
  }
  return data;
}

const exact = (key: string, value: unknown): JsonObject => ({ must: [{ key, match: { value } }] }) as JsonObject;

test('single-valued keyword, bool and number conditions are counted exactly, with exact candidates', () => {
  const data = shop();
  const filters: JsonObject[] = [
    ...COLORS.map((c) => exact('color', c)),
    exact('color', 'violet'),
    ...SIZES.map((s) => exact('size', s)),
    exact('ok', true),
    exact('ok', false),
    exact('price', 3),
    exact('price', 4.5),
    exact('price', 11),
    exact('meta.region', 'eu'),
  ];
  for (const lo of [undefined, 2, 4.5])
    for (const hi of [undefined, 4.5, 7])
      for (const [g, l] of [
        ['gt', 'lt'],
        ['gte', 'lte'],
        ['gt', 'lte'],
        ['gte', 'lt'],
      ] as const) {
        if (lo === undefined && hi === undefined) continue;
        const range: Record<string, number> = {};
        if (lo !== undefined) range[g] = lo;
        if (hi !== undefined) range[l] = hi;
        filters.push({ must: [{ key: 'price', range }] } as JsonObject);
      }
  for (const json of filters) {
    const { estimate, actual } = analyse(data, json);
    const context = JSON.stringify(json);
    assert.deepEqual(estimate.estimate, { min: actual.length, expected: actual.length, max: actual.length }, context);
    assert.equal(estimate.candidates?.exact, true, `${context}: candidates exact`);
  }
});

test('multi-valued arrays: estimates bracket the truth and candidates are supersets', () => {
  const data = shop();
  for (const json of [
    exact('tags', 'a'),
    exact('tags', 'c'),
    exact('nums', 3),
    { must: [{ key: 'tags', match: { any: ['a', 'c'] } }] },
    { must: [{ key: 'nums', match: { any: [0, 3] } }] },
    { must: [{ key: 'nums', range: { gte: 1, lt: 3 } }] },
    { must: [{ key: 'nums', type: 'contains', match: { value: 2 } }] },
    { must: [{ key: 'tags', type: 'contains', match: { value: 'b' } }] },
    { must: [{ key: 'size', match: { any: ['S', 'L', 'S'] } }] },
  ] as JsonObject[]) {
    const { estimate, actual } = analyse(data, json);
    assert.ok(actual.length > 0, `${JSON.stringify(json)} matches some point`);
    assert.ok(estimate.estimate.max >= actual.length);
  }
});

test('conditions the indexes cannot answer are [0, points with the key], or [0, n] without an index, and not counted', () => {
  const data = shop();
  const n = data.live.size;
  const withKey = (key: string): number => [...data.live.values()].filter((p) => Object.hasOwn(p, key)).length;
  const cases: Array<[JsonObject, number]> = [
    [{ must: [{ key: 'title', type: 'regex', match: { value: '^gre' } }] } as JsonObject, withKey('title')],
    [{ must: [{ key: 'title', type: 'contains', match: { value: 'item 1' } }] } as JsonObject, withKey('title')],
    [{ must: [{ key: 'color', match: { except: ['red'] } }] } as JsonObject, withKey('color')],
    [{ must: [{ key: 'price', match: { value: [1, 2] } }] } as JsonObject, withKey('price')],
    [{ must: [{ key: 'ok', match: { value: null } }] } as JsonObject, withKey('ok')],
    // Deeper than the indexed paths go: no index says whether some point holds a value there.
    [{ must: [{ key: 'meta.a.b.c.d', match: { value: 1 } }] } as JsonObject, n],
  ];
  for (const [json, max] of cases) {
    const { estimate } = analyse(data, json);
    assert.equal(estimate.estimate.min, 0, JSON.stringify(json));
    assert.equal(estimate.estimate.max, max, JSON.stringify(json));
    assert.equal(estimate.candidates, undefined, `${JSON.stringify(json)}: no candidates`);
    assert.equal(estimate.counted, false, `${JSON.stringify(json)}: not counted`);
  }
  assert.ok(withKey('color') < n && withKey('ok') < n, 'some points lack the key');
  // The same data without payload indexes: everything is unknown over all points.
  const plain = new Indexed(false);
  for (const [slot, p] of data.live) plain.add(slot, p);
  for (const json of [exact('color', 'red'), exact('price', 3), { must: [{ key: 'price', range: { gt: 1 } }] } as JsonObject]) {
    const { estimate } = analyse(plain, json);
    assert.deepEqual([estimate.estimate.min, estimate.estimate.max, estimate.candidates], [0, n, undefined], JSON.stringify(json));
    assert.equal(estimate.indexedKeys.size, 0);
  }
});

/** Field conditions to combine: exact, inexact and unknown ones. */
const ATOMS: JsonObject[] = [
  { key: 'color', match: { value: 'red' } },
  { key: 'size', match: { value: 'L' } },
  { key: 'ok', match: { value: true } },
  { key: 'price', range: { gte: 3, lt: 6 } },
  { key: 'price', match: { value: 7 } },
  { key: 'tags', match: { value: 'a' } },
  { key: 'nums', range: { gt: 1 } },
  { key: 'title', type: 'regex', match: { value: 'ea' } },
  { key: 'color', match: { except: ['blue'] } },
  { key: 'when', range: { gte: '2024-03-10T00:00:00Z', lt: '2024-03-20T12:00:00Z' } },
  { key: 'title', type: 'prefix', match: { value: 'gre' } },
  { key: 'meta.region', match: { any: ['us'] } },
  { key: 'missing', match: { value: 1 } },
];

test('AND, OR and NOT combinations bracket the truth; candidates are supersets, exact ones are the matches', () => {
  const data = shop();
  let checked = 0;
  for (const a of ATOMS)
    for (const b of ATOMS) {
      for (const json of [
        { must: [a, b] },
        { should: [a, b] },
        { must_not: [a, b] },
        { must: [a], must_not: [b] },
        { must: [a], should: [b, { must_not: [a] }] },
        { must: [{ should: [a, b] }, { must_not: [b] }] },
        { should: [{ must: [a, b] }, { must_not: [a] }] },
        { must: [a, b, { key: 'size', match: { any: ['S', 'M'] } }] },
      ] as JsonObject[]) {
        analyse(data, json);
        checked++;
      }
    }
  assert.equal(checked, ATOMS.length * ATOMS.length * 8);
});

test('the intersection of two keyword conditions (or keyword and bool) is exact', () => {
  const data = shop();
  for (const json of [
    {
      must: [
        { key: 'color', match: { value: 'red' } },
        { key: 'size', match: { value: 'L' } },
      ],
    },
    {
      must: [
        { key: 'size', match: { value: 'S' } },
        { key: 'color', match: { value: 'green' } },
      ],
    },
    {
      must: [
        { key: 'color', match: { value: 'blue' } },
        { key: 'ok', match: { value: false } },
      ],
    },
  ] as JsonObject[]) {
    const { estimate, actual } = analyse(data, json);
    const context = JSON.stringify(json);
    assert.equal(estimate.candidates?.exact, true, context);
    assert.ok(actual.length > 0 && actual.length < data.live.size, `${context}: a selective filter`);
    const keys = (json.must as JsonObject[]).map((c) => c.key as string).sort();
    assert.deepEqual([...estimate.indexedKeys].sort(), keys, `${context}: indexed keys`);
  }
});

test('any of several values of a single-valued keyword (repeats included) is counted exactly, and so is an AND of it', () => {
  const data = shop();
  for (const json of [
    { must: [{ key: 'color', match: { any: ['red', 'blue'] } }] },
    { must: [{ key: 'color', match: { any: ['red', 'red', 'green'] } }] },
    {
      must: [
        { key: 'color', match: { any: ['red', 'blue'] } },
        { key: 'size', match: { value: 'L' } },
      ],
    },
    {
      should: [
        { key: 'size', match: { value: 'S' } },
        { key: 'size', match: { value: 'M' } },
      ],
    },
  ] as JsonObject[]) {
    const { estimate, actual } = analyse(data, json);
    const context = JSON.stringify(json);
    assert.ok(actual.length > 0 && actual.length < data.live.size, `${context}: a selective filter`);
    if (json.should !== undefined) continue; // OR across conditions: bracketed (checked above), not claimed exact
    assert.deepEqual(estimate.estimate, { min: actual.length, expected: actual.length, max: actual.length }, context);
    assert.equal(estimate.candidates?.exact, true, `${context}: candidates exact`);
  }
});

test('prefix: exact over single-valued keywords; unknown while a string too long to index is held', () => {
  const data = shop();
  const prefix = { must: [{ key: 'title', type: 'prefix', match: { value: 'gre' } }] } as JsonObject;
  const before = analyse(data, prefix);
  assert.equal(before.estimate.estimate.min, before.actual.length);
  assert.equal(before.estimate.estimate.max, before.actual.length);
  assert.equal(before.estimate.candidates?.exact, true);
  data.add(100, { title: `gre${'x'.repeat(300)}` });
  const during = analyse(data, prefix);
  assert.equal(during.actual.length, before.actual.length + 1, 'the long string matches');
  assert.deepEqual([during.estimate.estimate.min, during.estimate.estimate.max], [0, data.live.size], 'every point has a title');
  assert.equal(during.estimate.candidates, undefined, 'no candidates: the long string is not in the index');
  data.remove(100);
  const after = analyse(data, prefix);
  assert.equal(after.estimate.estimate.min, after.actual.length, 'exact again once the long string is gone');
  assert.equal(after.estimate.candidates?.exact, true);
});

test('datetime ranges give supersets at millisecond granularity', () => {
  const data = new Indexed();
  const instants = [
    '2024-05-01T12:00:00.000400Z',
    '2024-05-01T12:00:00.000600Z',
    '2024-05-01T12:00:00.0009Z',
    '2024-05-01T14:00:00.001+02:00',
    '2024-05-01T12:00:00.002Z',
    '2024-05-01',
    'not a date',
    '2024-05-02T00:00:00Z',
  ];
  for (const [slot, t] of instants.entries()) data.add(slot, { t });
  data.add(20, { t: ['2024-05-01T11:00:00Z', '2024-05-01T12:00:00.0005Z'] });
  data.add(21, { t: 20240501 });
  let loose = 0;
  const ranges: JsonObject[] = [
    { gt: '2024-05-01T12:00:00.0005Z' },
    { gte: '2024-05-01T12:00:00.0006Z', lt: '2024-05-01T12:00:00.002Z' },
    { lte: '2024-05-01T12:00:00.0004Z' },
    { gt: '2024-05-01T00:00:00Z', lte: '2024-05-01T23:59:59.999999999Z' },
    { gte: '2024-05-01T12:00:00Z', lt: '2024-05-01T12:00:00.001Z' },
  ];
  for (const bounds of ranges) {
    const { estimate, actual, visits } = analyse(data, { must: [{ key: 't', range: bounds }] });
    assert.equal(estimate.estimate.min, 0, JSON.stringify(bounds));
    assert.ok(estimate.candidates !== undefined, `${JSON.stringify(bounds)}: candidates`);
    assert.notEqual(estimate.candidates?.exact, true, 'millisecond keys are not exact');
    if (new Set(visits).size > actual.length) loose++;
  }
  assert.ok(loose > 0, 'sub-millisecond bounds make some candidate sets strictly larger than the matches');
});

test('estimates still bracket after removals (numbers removed from a merged run)', () => {
  const data = new Indexed();
  // 400 single-valued numbers: more than the delta holds, so they are merged into the sorted run.
  for (let slot = 0; slot < 400; slot++) data.add(slot, { n: slot % 100, k: slot % 2 === 0 ? 'even' : 'odd' });
  for (const slot of [3, 5, 103, 250, 7, 8, 9]) data.remove(slot);
  for (const json of [
    exact('n', 3),
    exact('n', 50),
    { must: [{ key: 'n', range: { gte: 0, lt: 10 } }] },
    { must: [{ key: 'n', range: { gt: 2, lte: 9 } }] },
    { must_not: [{ key: 'n', range: { lt: 10 } }] },
    { must: [{ key: 'k', match: { value: 'odd' } }], must_not: [{ key: 'n', match: { value: 5 } }] },
  ] as JsonObject[]) {
    analyse(data, json);
  }
});

test('contains of a scalar: candidates are a superset, and exact only when they are exactly the matches', () => {
  // contains holds for an array with an equal element, never for a bare number or bool.
  const data = new Indexed();
  data.add(0, { n: 1, b: true });
  data.add(1, { n: [1], b: [true] });
  data.add(2, { n: 3, b: false });
  data.add(3, { n: [2], b: [false] });
  for (const json of [
    { must: [{ key: 'n', type: 'contains', match: { value: 1 } }] },
    { must: [{ key: 'b', type: 'contains', match: { value: true } }] },
  ] as JsonObject[]) {
    const { actual } = analyse(data, json);
    assert.deepEqual(actual, [1], JSON.stringify(json));
  }
});

test('a dotted key walking under the empty top-level key is found by the index', () => {
  // "" is a valid key: ".a" (no top-level key of that name) walks payload[""].a.
  const data = new Indexed();
  data.add(0, { '.a': 1 });
  data.add(1, { '': { a: 1 } });
  data.add(2, { '': { a: 2 } });
  const { actual } = analyse(data, exact('.a', 1));
  assert.deepEqual(actual, [0, 1]);
});

test('a dotted key walking through nested arrays is found by the index', () => {
  // The walk continues into every array element, arrays of arrays included.
  const data = new Indexed();
  data.add(0, { c: { a: 1 } });
  data.add(1, { c: [[{ a: 2 }]] });
  data.add(2, { c: [{ a: [3] }, [{ a: 2 }, [{ a: 4 }]]] });
  assert.deepEqual(analyse(data, exact('c.a', 2)).actual, [1, 2]);
  assert.deepEqual(analyse(data, exact('c.a', 4)).actual, [2]);
  assert.deepEqual(analyse(data, { must: [{ key: 'c.a', range: { gte: 2 } }] }).actual, [1, 2]);
  assert.deepEqual(analyse(data, { must_not: [{ key: 'c.a', match: { except: [] } }] }).actual, []);
});

test('a key no point holds: exact from the indexes (0 matches, or every point for is_empty), not a midpoint', () => {
  const data = shop();
  const n = data.live.size;
  // Every condition kind, on a key no point has (top level and nested), judged as on an empty payload.
  const none: JsonObject[] = [
    exact('nope', 1),
    exact('nope', 'red'),
    exact('meta.nope', 'eu'),
    exact('a.b.c.d', true),
    { must: [{ key: 'nope', match: { any: ['a', 1] } }] },
    { must: [{ key: 'nope', match: { except: ['a'] } }] },
    { must: [{ key: 'nope', range: { gte: 0 } }] },
    { must: [{ key: 'nope', type: 'prefix', match: { value: 'x' } }] },
    { must: [{ key: 'nope', type: 'regex', match: { value: '.*' } }] },
    { must: [{ key: 'nope', type: 'contains', match: { value: 'x' } }] },
    { must: [{ is_null: { key: 'nope' } }] },
    { must: [{ key: 'nope', match: { value: null } }] },
    { must: [{ key: 'nope', values_count: { gte: 1 } }] },
    { must: [{ nested: { key: 'nope', filter: { must: [{ key: 'x', match: { value: 1 } }] } } }] },
    { must: [exact('color', 'red').must, { key: 'nope', match: { value: 1 } }].flat() },
  ] as JsonObject[];
  const all: JsonObject[] = [
    { must: [{ is_empty: { key: 'nope' } }] },
    { must: [{ key: 'nope', values_count: { lt: 1 } }] },
    { must_not: [{ key: 'nope', match: { value: 1 } }] },
  ] as JsonObject[];
  for (const [jsons, count] of [
    [none, 0],
    [all, n],
  ] as const) {
    for (const json of jsons) {
      const { estimate, actual } = analyse(data, json);
      const context = JSON.stringify(json);
      assert.equal(actual.length, count, `${context}: the reference agrees`);
      assert.deepEqual(estimate.estimate, { min: count, expected: count, max: count }, context);
      assert.equal(estimate.counted, true, `${context}: counted`);
      assert.ok(estimate.indexedKeys.has('nope') || !context.includes('"nope"'), `${context}: the index was consulted`);
    }
  }
  // No match: empty, exact candidates, so a search scores nothing.
  const { estimate } = analyse(data, exact('nope', 1));
  assert.equal(estimate.candidates?.count, 0);
  assert.equal(estimate.candidates?.exact, true);
});

test('a key no point holds any more (every holder deleted) is exact too', () => {
  const data = shop();
  data.add(100, { rare: 'x' });
  assert.deepEqual(analyse(data, exact('rare', 'x')).estimate.estimate, { min: 1, expected: 1, max: 1 });
  data.remove(100);
  for (const json of [exact('rare', 'x'), { must: [{ key: 'rare', type: 'regex', match: { value: 'x' } }] }] as JsonObject[]) {
    const { estimate } = analyse(data, json);
    assert.deepEqual([estimate.estimate, estimate.counted], [{ min: 0, expected: 0, max: 0 }, true], JSON.stringify(json));
  }
});

test('a key the indexes cannot vouch for stays unknown and not counted: indexing off, the path bound reached, too deep', () => {
  const data = shop();
  const n = data.live.size;
  const unknownOver = (indexed: Indexed, json: JsonObject, context: string): void => {
    const { estimate } = analyse(indexed, json);
    assert.deepEqual([estimate.estimate.min, estimate.estimate.max, estimate.counted], [0, indexed.live.size, false], `${context}: ${JSON.stringify(json)}`);
  };
  // Without payload indexes nothing is known of any key.
  const plain = new Indexed(false);
  for (const [slot, p] of data.live) plain.add(slot, p);
  unknownOver(plain, exact('nope', 1), 'indexing off');
  unknownOver(plain, { must: [{ is_empty: { key: 'nope' } }] }, 'indexing off');
  // Deeper than indexed paths go (4 parts), a point may hold a value no index saw.
  const deep = new Indexed();
  for (let slot = 0; slot < 10; slot++) deep.add(slot, { a: { b: { c: { d: { e: slot } } } } });
  assert.equal(analyse(deep, exact('a.b.c.d.e', 3)).actual.length, 1, 'the point is there');
  unknownOver(deep, exact('a.b.c.d.e', 3), 'five parts');
  unknownOver(deep, exact('a.b.c.d.x', 3), 'five parts');
  assert.deepEqual(analyse(deep, exact('a.b.c.x', 3)).estimate.estimate, { min: 0, expected: 0, max: 0 }, 'four parts are indexed');
  // Once a path was turned away by the 64-path bound, a missing index says nothing: that path is
  // held but has no index.
  const wide = new Indexed();
  for (let slot = 0; slot < n; slot++) wide.add(slot, Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`k${i}`, slot])));
  assert.equal(analyse(wide, exact('k69', 5)).actual.length, 1);
  unknownOver(wide, exact('k69', 5), 'path bound reached');
  unknownOver(wide, exact('nope', 5), 'path bound reached');
  assert.equal(analyse(wide, exact('k0', 5)).estimate.counted, true, 'an indexed key is still counted');
});
