import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileFilter } from '../../../src/payload/filter-compile.js';
import { parseFilter } from '../../../src/payload/filter-parse.js';

type Payload = Record<string, unknown>;

/** Does the filter (request JSON) match the payload? */
function matches(filter: unknown, payload: Payload): boolean {
  const parsed = parseFilter(filter);
  assert.ok(parsed !== undefined);
  return compileFilter(parsed)(payload, 'id');
}

/** Does a single condition hold? Also checks that `must_not` of it is the complement. */
function holds(condition: unknown, payload: Payload): boolean {
  const inMust = matches({ must: [condition] }, payload);
  assert.equal(matches({ must_not: [condition] }, payload), !inMust, 'must_not must be the complement of must');
  assert.equal(matches({ should: [condition] }, payload), inMust, 'a single should must equal must');
  return inMust;
}

const exact = (key: string, value: unknown): unknown => ({ key, match: { value } });
const range = (key: string, r: Record<string, unknown>): unknown => ({ key, range: r });
const typed = (type: string, key: string, value: unknown): unknown => ({ key, type, match: { value } });
/** Parses JSON text, so numbers like `1.0` and keys like `__proto__` arrive exactly as from a request. */
const j = (text: string): Payload => JSON.parse(text) as Payload;

test('exact: scalars, 1 equals 1.0, null, and no type coercion', () => {
  assert.equal(holds(exact('n', 1), j('{"n": 1.0}')), true);
  assert.equal(matches(j('{"must":[{"key":"n","match":{"value":1.0}}]}'), j('{"n": 1}')), true);
  assert.equal(holds(exact('n', 1), { n: 1.5 }), false);
  assert.equal(holds(exact('n', 0), j('{"n": -0.0}')), true);
  assert.equal(holds(exact('n', 1), { n: '1' }), false);
  assert.equal(holds(exact('n', true), { n: 1 }), false);
  assert.equal(holds(exact('s', 'abc'), { s: 'abc' }), true);
  assert.equal(holds(exact('s', 'abc'), { s: 'ABC' }), false);
  assert.equal(holds(exact('z', null), { z: null }), true);
  assert.equal(holds(exact('z', null), { z: 0 }), false);
  assert.equal(holds(exact('z', null), {}), false);
  assert.equal(holds(exact('b', false), { b: false }), true);
});

test('exact: objects and arrays compare as JSON, object key order ignored', () => {
  assert.equal(holds(exact('o', { a: 1, b: [1, { c: 2 }] }), j('{"o": {"b": [1.0, {"c": 2}], "a": 1}}')), true);
  assert.equal(holds(exact('o', { a: 1 }), { o: { a: 1, b: 2 } }), false);
  assert.equal(holds(exact('o', { a: 1, b: 2 }), { o: { a: 1 } }), false);
  assert.equal(holds(exact('o', {}), { o: {} }), true);
  assert.equal(holds(exact('o', {}), { o: [] }), false);
  assert.equal(holds(exact('o', [1, 2]), { o: [2, 1] }), false);
  assert.equal(holds(exact('o', { a: null }), { o: {} }), false);
});

test('exact against an array payload: whole array or any element', () => {
  assert.equal(holds(exact('t', 'red'), { t: ['blue', 'red'] }), true);
  assert.equal(holds(exact('t', 'red'), { t: ['blue'] }), false);
  assert.equal(holds(exact('t', ['blue', 'red']), { t: ['blue', 'red'] }), true);
  assert.equal(holds(exact('t', [1]), { t: [[1], [2]] }), true);
  assert.equal(holds(exact('t', { k: 1 }), { t: [{ k: 1 }, 3] }), true);
  assert.equal(holds(exact('t', 1), { t: [[1]] }), false);
  assert.equal(holds(exact('t', []), { t: [] }), true);
  assert.equal(holds(exact('t', 1), { t: [] }), false);
});

test('match.any: value in the list, array payloads by element', () => {
  const any = (values: unknown[]): unknown => ({ key: 'c', match: { any: values } });
  assert.equal(holds(any(['red', 'green']), { c: 'green' }), true);
  assert.equal(holds(any(['red', 'green']), { c: 'blue' }), false);
  assert.equal(holds(any([1, 2]), j('{"c": 2.0}')), true);
  assert.equal(holds(any([1, 2]), { c: '1' }), false);
  assert.equal(holds(any([null]), { c: null }), true);
  assert.equal(holds(any([{ x: 1, y: 2 }, 'a']), { c: { y: 2, x: 1 } }), true);
  assert.equal(holds(any([{ x: 1 }, 'a']), { c: 'a' }), true);
  assert.equal(holds(any(['red']), { c: ['blue', 'red'] }), true);
  assert.equal(holds(any(['red']), { c: ['blue'] }), false);
  assert.equal(holds(any([]), { c: 'red' }), false);
  assert.equal(holds(any(['red']), {}), false);
});

test('match.except: value not in the list; arrays by element; a missing key is false', () => {
  const except = (values: unknown[]): unknown => ({ key: 'c', match: { except: values } });
  assert.equal(holds(except(['red', 'green']), { c: 'blue' }), true);
  assert.equal(holds(except(['red', 'green']), { c: 'red' }), false);
  assert.equal(holds(except([1]), j('{"c": 1.0}')), false);
  assert.equal(holds(except([1]), { c: '1' }), true);
  assert.equal(holds(except([]), { c: 'anything' }), true);
  assert.equal(holds(except([null]), { c: null }), false);
  assert.equal(holds(except([{ a: 1, b: 2 }]), { c: { b: 2, a: 1 } }), false);
  // Some element not in the list.
  assert.equal(holds(except(['red']), { c: ['red', 'blue'] }), true);
  assert.equal(holds(except(['red', 'blue']), { c: ['red', 'blue'] }), false);
  assert.equal(holds(except(['red']), { c: [] }), false);
  // A missing key makes the condition false, so must_not of it holds.
  assert.equal(holds(except(['red']), {}), false);
  assert.equal(holds(except(['red']), { d: 'blue' }), false);
});

test('range on numbers: each bound alone and in combination', () => {
  const cases: Array<[Record<string, unknown>, number, boolean]> = [
    [{ gt: 5 }, 5, false],
    [{ gt: 5 }, 5.000001, true],
    [{ gte: 5 }, 5, true],
    [{ gte: 5 }, 4.999, false],
    [{ lt: 5 }, 5, false],
    [{ lt: 5 }, -1e300, true],
    [{ lte: 5 }, 5, true],
    [{ lte: 5 }, 6, false],
    [{ gt: 1, lt: 3 }, 2, true],
    [{ gt: 1, lt: 3 }, 3, false],
    [{ gt: 1, lt: 3 }, 1, false],
    [{ gte: 1, lte: 3 }, 1, true],
    [{ gte: 1, lte: 3 }, 3, true],
    [{ gte: 1, lte: 3 }, 3.5, false],
    [{ gt: 3, lt: 1 }, 2, false],
    [{ gte: 2, lte: 2 }, 2, true],
    [{ gt: -1, gte: 0, lt: 10, lte: 9 }, 0, true],
    [{ gt: -1, gte: 0, lt: 10, lte: 9 }, 9.5, false],
    [{ gt: -1, gte: 0, lt: 10, lte: 9 }, -0.5, false],
    [{ gt: 0 }, -0, false],
    [{ gte: 0 }, -0, true],
  ];
  for (const [r, v, expected] of cases) assert.equal(holds(range('n', r), { n: v }), expected, `${JSON.stringify(r)} on ${v}`);
});

test('numeric range never matches booleans, strings, null, objects or a missing key', () => {
  for (const v of [true, false, '5', '', null, { n: 5 }, 'NaN']) {
    assert.equal(holds(range('n', { gte: 0, lte: 10 }), { n: v }), false, JSON.stringify(v));
    assert.equal(holds(range('n', { lt: 1e308 }), { n: v }), false, JSON.stringify(v));
  }
  assert.equal(holds(range('n', { gt: 0 }), {}), false);
  // A numeric range ignores datetime strings; a datetime range ignores numbers.
  assert.equal(holds(range('n', { gt: 0 }), { n: '2024-01-01T00:00:00Z' }), false);
  assert.equal(holds(range('n', { gt: '1970-01-01T00:00:00Z' }), { n: 1e12 }), false);
});

test('range against an array payload holds when an element is in range', () => {
  assert.equal(holds(range('n', { gt: 5 }), { n: [1, 7] }), true);
  assert.equal(holds(range('n', { gt: 5 }), { n: [1, 2] }), false);
  assert.equal(holds(range('n', { gt: 5, lt: 6 }), { n: [1, 7] }), false);
  assert.equal(holds(range('n', { gt: 5 }), { n: ['9', true] }), false);
  assert.equal(holds(range('n', { gt: 5 }), { n: [] }), false);
});

test('range on RFC 3339 datetimes: offsets, fractions to the nanosecond', () => {
  const at = (r: Record<string, unknown>, v: string): boolean => holds(range('t', r), { t: v });
  // The same instant in different offsets.
  assert.equal(at({ gte: '2024-05-01T12:00:00Z', lte: '2024-05-01T12:00:00Z' }, '2024-05-01T14:00:00+02:00'), true);
  assert.equal(at({ gt: '2024-05-01T12:00:00Z' }, '2024-05-01T07:00:00-05:00'), false);
  assert.equal(at({ gt: '2024-05-01T12:00:00Z' }, '2024-05-01T07:00:00.000000001-05:00'), true);
  assert.equal(at({ lt: '2024-05-01T12:00:00+00:00' }, '2024-05-01T11:59:59.999999999Z'), true);
  assert.equal(at({ lt: '2024-05-01T12:00:00Z' }, '2024-05-01T12:00:00.000000000Z'), false);
  assert.equal(at({ lte: '2024-05-01T12:00:00.123456789Z' }, '2024-05-01T12:00:00.12345679Z'), false);
  assert.equal(at({ lte: '2024-05-01T12:00:00.123456789Z' }, '2024-05-01T12:00:00.123456789Z'), true);
  assert.equal(at({ gt: '2024-05-01T12:00:00.000000001Z' }, '2024-05-01T12:00:00.000000002Z'), true);
  assert.equal(at({ gt: '2024-05-01T12:00:00.000000002Z' }, '2024-05-01T12:00:00.000000001Z'), false);
  // Across a day boundary through the offset.
  assert.equal(at({ gte: '2024-05-02T00:00:00Z' }, '2024-05-01T23:30:00-01:00'), true);
  assert.equal(at({ gte: '2024-05-02T00:00:00Z' }, '2024-05-02T00:30:00+01:00'), false);
  // Bounds written with offsets, payload in Z; lowercase and date-only forms.
  assert.equal(at({ gt: '2024-01-01T01:00:00+01:00', lt: '2024-01-01T00:00:01Z' }, '2024-01-01t00:00:00.5z'), true);
  assert.equal(at({ gte: '2024-01-01', lt: '2024-01-02' }, '2024-01-01T23:59:59.999999999Z'), true);
  // Payload strings that are not datetimes, and non-strings, never match.
  for (const v of ['soon', '2024-02-30T00:00:00Z', '2024-05-01T25:00:00Z', '', '2024-05-01T12:00Z']) {
    assert.equal(at({ gt: '1900-01-01T00:00:00Z' }, v), false, v);
  }
  assert.equal(holds(range('t', { gt: '1900-01-01T00:00:00Z' }), { t: true }), false);
  assert.equal(holds(range('t', { gt: '1900-01-01T00:00:00Z' }), { t: ['x', '2000-01-01T00:00:00Z'] }), true);
});

test('prefix: case-sensitive start of a string; arrays by element', () => {
  assert.equal(holds(typed('prefix', 's', 'ab'), { s: 'abc' }), true);
  assert.equal(holds(typed('prefix', 's', 'ab'), { s: 'ab' }), true);
  assert.equal(holds(typed('prefix', 's', 'AB'), { s: 'abc' }), false);
  assert.equal(holds(typed('prefix', 's', 'bc'), { s: 'abc' }), false);
  assert.equal(holds(typed('prefix', 's', ''), { s: '' }), true);
  assert.equal(holds(typed('prefix', 's', ''), { s: 1 }), false);
  assert.equal(holds(typed('prefix', 's', '1'), { s: 12 }), false);
  assert.equal(holds(typed('prefix', 's', 'ab'), { s: ['x', 'abz'] }), true);
  assert.equal(holds(typed('prefix', 's', 'ab'), { s: ['x', 'zab'] }), false);
});

test('contains: array element equality, or substring of a string', () => {
  assert.equal(holds(typed('contains', 'c', 'b'), { c: ['a', 'b'] }), true);
  assert.equal(holds(typed('contains', 'c', 'b'), { c: ['abc'] }), false);
  assert.equal(holds(typed('contains', 'c', 2), j('{"c": [1, 2.0]}')), true);
  assert.equal(holds(typed('contains', 'c', { k: 1, l: 2 }), { c: [{ l: 2, k: 1 }] }), true);
  assert.equal(holds(typed('contains', 'c', [1]), { c: [[1], 2] }), true);
  assert.equal(holds(typed('contains', 'c', 'ell'), { c: 'hello' }), true);
  assert.equal(holds(typed('contains', 'c', 'Ell'), { c: 'hello' }), false);
  assert.equal(holds(typed('contains', 'c', ''), { c: 'hello' }), true);
  assert.equal(holds(typed('contains', 'c', 1), { c: 'a1b' }), false);
  assert.equal(holds(typed('contains', 'c', 1), { c: 1 }), false);
  assert.equal(holds(typed('contains', 'c', 'a'), { c: { a: 1 } }), false);
  assert.equal(holds(typed('contains', 'c', 'a'), {}), false);
});

test('regex: unanchored find with RE2 syntax; only strings', () => {
  const re = (pattern: string, v: unknown): boolean => holds(typed('regex', 's', pattern), { s: v });
  assert.equal(re('b', 'abc'), true);
  assert.equal(re('^b', 'abc'), false);
  assert.equal(re('^a.c$', 'abc'), true);
  assert.equal(re('c$', 'abcd'), false);
  assert.equal(re('B', 'abc'), false);
  assert.equal(re('(?i)B', 'abc'), true);
  assert.equal(re('\\d{3}', 'id-0042'), true);
  assert.equal(re('\\pL+\\d', '---é7'), true);
  assert.equal(re('[[:alpha:]]', '123'), false);
  assert.equal(re('(a+)+$', `${'a'.repeat(5000)}!`), false);
  assert.equal(re('a', 1), false);
  assert.equal(re('.*', null), false);
  assert.equal(re('x', ['aaa', 'yxy']), true);
  assert.equal(re('x', ['aaa']), false);
  assert.equal(re('', ''), true);
});

test('dot paths walk nested objects; a top-level dotted key wins over the walk', () => {
  assert.equal(holds(exact('a.b.c', 1), { a: { b: { c: 1 } } }), true);
  assert.equal(holds(exact('a.b.c', 1), { a: { b: { c: 2 } } }), false);
  assert.equal(holds(exact('a.b', 1), { a: { b: { c: 1 } } }), false);
  assert.equal(holds(exact('a.b', { c: 1 }), { a: { b: { c: 1 } } }), true);
  assert.equal(holds(exact('a.b', 1), { 'a.b': 1 }), true);
  assert.equal(holds(exact('a.b', 1), { 'a.b': 2, a: { b: 1 } }), false);
  assert.equal(holds(exact('a.b', 2), { 'a.b': 2, a: { b: 1 } }), true);
  assert.equal(holds(exact('a.b', 2), { 'a.b': [5], a: { b: 2 } }), false);
  assert.equal(holds(exact('a.b.c', 1), { a: { 'b.c': 1 } }), false);
  assert.equal(holds(exact('a.b', 1), { a: 5 }), false);
  assert.equal(holds(exact('a.b', 1), { a: 'b' }), false);
  assert.equal(holds(exact('a', { b: 1 }), { a: { b: 1 } }), true);
});

test('arrays met during the walk: the condition holds for any element', () => {
  const p = { items: [{ n: 1, tag: 'x' }, { n: 7, tag: ['y', 'z'] }, 'junk', null] };
  assert.equal(holds(exact('items.n', 7), p), true);
  assert.equal(holds(exact('items.n', 3), p), false);
  assert.equal(holds(range('items.n', { gt: 5 }), p), true);
  assert.equal(holds(range('items.n', { gt: 7 }), p), false);
  assert.equal(holds(exact('items.tag', 'z'), p), true);
  assert.equal(holds(typed('prefix', 'items.tag', 'y'), p), true);
  // 'x' is a string reached through the array: substring; ['y', 'z'] is an array payload: elements.
  assert.equal(holds(typed('contains', 'items.tag', 'x'), p), true);
  assert.equal(holds(typed('contains', 'items.tag', 'z'), p), true);
  assert.equal(holds(typed('contains', 'items.tag', 'q'), p), false);
  assert.equal(holds({ key: 'items.n', match: { except: [1] } }, p), true);
  assert.equal(holds({ key: 'items.n', match: { except: [1, 7] } }, p), false);
  assert.equal(holds(exact('a.b.c', 'deep'), { a: [{ b: [{ c: 'no' }, { c: 'deep' }] }] }), true);
  assert.equal(holds(exact('a.b', 'deep'), { a: [[{ b: 'deep' }]] }), true);
  assert.equal(holds(exact('a.b', 'deep'), { a: [] }), false);
});

test('missing keys make every condition type false, so must_not holds', () => {
  const conditions = [
    exact('gone', null),
    { key: 'gone', match: { any: [null, 1] } },
    { key: 'gone', match: { except: [1] } },
    range('gone', { gt: -1e308 }),
    typed('prefix', 'gone', ''),
    typed('contains', 'gone', ''),
    typed('regex', 'gone', ''),
    exact('x.gone', null),
    typed('regex', 'x.y.z', '.*'),
  ];
  for (const c of conditions) {
    assert.equal(holds(c, { x: { y: 1 } }), false, JSON.stringify(c));
    assert.equal(matches({ must_not: [c] }, { x: { y: 1 } }), true, JSON.stringify(c));
  }
});

test('constructor, toString, __proto__ never resolve to Object.prototype members', () => {
  for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'a.constructor', 'a.__proto__', 'a.toString']) {
    for (const c of [typed('regex', key, ''), { key, match: { except: [] } }, typed('contains', key, 'function'), exact(key, {})]) {
      assert.equal(holds(c, { a: { b: 1 }, n: [1] }), false, `${key}: ${JSON.stringify(c)}`);
      assert.equal(holds(c, {}), false, key);
    }
  }
  // Real own keys of those names do resolve.
  assert.equal(holds(exact('constructor', 'x'), { constructor: 'x' }), true);
  assert.equal(holds(exact('toString', 1), { toString: 1 }), true);
  assert.equal(holds(exact('a.constructor', 'y'), { a: { constructor: 'y' } }), true);
  assert.equal(holds(exact('__proto__', 1), j('{"__proto__": 1}')), true);
  const nullProto = Object.assign(Object.create(null) as Payload, { k: 1 });
  assert.equal(holds(exact('k', 1), nullProto), true);
  assert.equal(holds(exact('toString', 1), nullProto), false);
});

test('must / must_not / should combinations', () => {
  const p = { color: 'red', n: 5, tags: ['a', 'b'] };
  const red = exact('color', 'red');
  const blue = exact('color', 'blue');
  const big = range('n', { gt: 3 });
  assert.equal(matches({ must: [red, big] }, p), true);
  assert.equal(matches({ must: [red, blue] }, p), false);
  assert.equal(matches({ must_not: [blue] }, p), true);
  assert.equal(matches({ must_not: [blue, big] }, p), false);
  assert.equal(matches({ should: [blue, big] }, p), true);
  assert.equal(matches({ should: [blue] }, p), false);
  assert.equal(matches({ must: [red], must_not: [blue], should: [blue, exact('tags', 'b')] }, p), true);
  assert.equal(matches({ must: [red], should: [blue] }, p), false);
  assert.equal(matches({ must: [blue], should: [red] }, p), false);
  assert.equal(matches({ must_not: [red], should: [red] }, p), false);
  // Empty lists are no constraint.
  assert.equal(matches({}, p), true);
  assert.equal(matches({}, {}), true);
  assert.equal(matches({ should: [] }, p), true);
  assert.equal(matches({ must: [], must_not: [], should: [] }, {}), true);
});

test('nested filters as conditions', () => {
  const p = { color: 'red', n: 5 };
  const red = exact('color', 'red');
  const blue = exact('color', 'blue');
  const small = range('n', { lt: 3 });
  // (red OR blue) AND NOT (blue OR small)
  assert.equal(matches({ must: [{ should: [red, blue] }], must_not: [{ should: [blue, small] }] }, p), true);
  assert.equal(matches({ must: [{ should: [blue, small] }] }, p), false);
  assert.equal(matches({ must_not: [{ must: [red, small] }] }, p), true);
  assert.equal(matches({ must_not: [{ must: [red] }] }, p), false);
  assert.equal(matches({ should: [{ must: [blue] }, { must_not: [small] }] }, p), true);
  // An empty nested filter matches everything, so must_not of it excludes everything.
  assert.equal(matches({ must: [{}] }, p), true);
  assert.equal(matches({ must_not: [{}] }, p), false);
  assert.equal(matches({ should: [{ should: [] }] }, {}), true);
  let deep: unknown = { must: [red] };
  for (let i = 0; i < 30; i++) deep = i % 2 === 0 ? { should: [deep] } : { must: [deep] };
  assert.equal(matches(deep, p), true);
  assert.equal(matches(deep, { color: 'blue' }), false);
});
