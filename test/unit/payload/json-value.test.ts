import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithError } from '../../../src/core/errors.js';
import { checkJsonValue, forbiddenKeyReason, jsonEqual, MAX_JSON_DEPTH, someValueAt } from '../../../src/payload/json-value.js';

const j = (text: string): unknown => JSON.parse(text);

/** Asserts `checkJsonValue(value, root)` is a 400 whose message starts with exactly `path: `. */
function rejects(value: unknown, root: string, path: string, detail?: RegExp): void {
  assert.throws(
    () => checkJsonValue(value, root),
    (e: unknown) => {
      assert.ok(e instanceof KithError, `expected a KithError, got ${String(e)}`);
      assert.equal(e.code, 'ERR_BAD_INPUT');
      assert.equal(e.statusCode, 400);
      assert.ok(e.message.startsWith(`${path}: `), `message ${JSON.stringify(e.message.slice(0, 300))} should start with "${path}: "`);
      if (detail !== undefined) assert.match(e.message, detail);
      return true;
    },
  );
}

/** Every value someValueAt offers to the test, in order, when the test never succeeds. */
function valuesAt(payload: Record<string, unknown>, key: string): unknown[] {
  const seen: unknown[] = [];
  const found = someValueAt(payload, key, key.split('.'), (v) => {
    seen.push(v);
    return false;
  });
  assert.equal(found, false);
  return seen;
}

/** `depth` nested arrays around `inner`, built without recursion. */
function nestedArrays(depth: number, inner: unknown = 1): unknown {
  let value: unknown = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

test('jsonEqual: scalars, with numbers compared numerically and no coercion', () => {
  assert.equal(jsonEqual(j('1.0'), j('1')), true);
  assert.equal(jsonEqual(j('1e2'), 100), true);
  assert.equal(jsonEqual(j('-0.0'), 0), true);
  assert.equal(jsonEqual(1, 1.0000001), false);
  assert.equal(jsonEqual('1', 1), false);
  assert.equal(jsonEqual(true, 1), false);
  assert.equal(jsonEqual(false, 0), false);
  assert.equal(jsonEqual(null, 0), false);
  assert.equal(jsonEqual(null, null), true);
  assert.equal(jsonEqual('', ''), true);
  assert.equal(jsonEqual('a', 'A'), false);
  assert.equal(jsonEqual(null, {}), false);
  assert.equal(jsonEqual({}, null), false);
});

test('jsonEqual: arrays by position, objects by key set regardless of order', () => {
  assert.equal(jsonEqual([1, [2, { a: 3 }]], j('[1.0, [2, {"a": 3.0}]]')), true);
  assert.equal(jsonEqual([1, 2], [2, 1]), false);
  assert.equal(jsonEqual([1, 2], [1, 2, 3]), false);
  assert.equal(jsonEqual([], []), true);
  assert.equal(jsonEqual([], {}), false);
  assert.equal(jsonEqual({}, []), false);
  assert.equal(jsonEqual({ a: 1, b: { c: [1], d: null } }, j('{"b": {"d": null, "c": [1]}, "a": 1}')), true);
  assert.equal(jsonEqual({ a: 1 }, { a: 1, b: 2 }), false);
  assert.equal(jsonEqual({ a: 1, b: 2 }, { a: 1 }), false);
  assert.equal(jsonEqual({ a: 1, b: 2 }, { a: 1, c: 2 }), false);
  assert.equal(jsonEqual({ a: null }, { b: null }), false);
  assert.equal(jsonEqual({ a: [1] }, { a: 1 }), false);
  assert.equal(jsonEqual({ 0: 'x' }, ['x']), false);
  assert.equal(jsonEqual(['x'], { 0: 'x' }), false);
});

test('jsonEqual ignores the prototype chain', () => {
  assert.equal(jsonEqual({}, { toString: 1 }), false);
  assert.equal(jsonEqual({ toString: 1 }, {}), false);
  assert.equal(jsonEqual({ constructor: 1 }, { valueOf: 1 }), false);
  assert.equal(jsonEqual(j('{"__proto__": 1}'), j('{"__proto__": 1}')), true);
  assert.equal(jsonEqual(j('{"__proto__": 1}'), {}), false);
  assert.equal(jsonEqual(Object.assign(Object.create(null) as object, { a: 1 }), { a: 1 }), true);
});

test('someValueAt: a top-level key, then the dot walk', () => {
  assert.deepEqual(valuesAt({ a: 1 }, 'a'), [1]);
  assert.deepEqual(valuesAt({ a: { b: { c: 3 } } }, 'a.b.c'), [3]);
  assert.deepEqual(valuesAt({ a: { b: { c: 3 } } }, 'a.b'), [{ c: 3 }]);
  assert.deepEqual(valuesAt({ a: null }, 'a'), [null]);
  assert.deepEqual(valuesAt({ a: [1, 2] }, 'a'), [[1, 2]]);
  assert.deepEqual(valuesAt({ a: { b: [1, 2] } }, 'a.b'), [[1, 2]]);
});

test('someValueAt: a top-level key containing a dot wins over the walk', () => {
  assert.deepEqual(valuesAt({ 'a.b': 'top', a: { b: 'nested' } }, 'a.b'), ['top']);
  assert.deepEqual(valuesAt({ 'a.b': null, a: { b: 'nested' } }, 'a.b'), [null]);
  assert.deepEqual(valuesAt({ a: { b: 'nested' } }, 'a.b'), ['nested']);
  // Only the top level is looked up whole; deeper keys are never joined back.
  assert.deepEqual(valuesAt({ a: { 'b.c': 1 } }, 'a.b.c'), []);
  assert.deepEqual(valuesAt({ 'a.b': { c: 2 } }, 'a.b.c'), []);
});

test('someValueAt: arrays met during the walk are walked element by element', () => {
  const payload = { a: [{ b: 1 }, { b: [2, 3] }, 'x', null, [{ b: 4 }], { c: 5 }] };
  assert.deepEqual(valuesAt(payload, 'a.b'), [1, [2, 3], 4]);
  assert.deepEqual(valuesAt({ a: { b: [{ c: 1 }, { c: 2 }] } }, 'a.b.c'), [1, 2]);
  assert.deepEqual(valuesAt({ a: [] }, 'a.b'), []);
});

test('someValueAt: missing keys and non-objects on the way give nothing', () => {
  assert.deepEqual(valuesAt({}, 'a'), []);
  assert.deepEqual(valuesAt({ a: 1 }, 'b'), []);
  assert.deepEqual(valuesAt({ a: 1 }, 'a.b'), []);
  assert.deepEqual(valuesAt({ a: 'str' }, 'a.length'), []);
  assert.deepEqual(valuesAt({ a: [1, 2] }, 'a.length'), []);
  assert.deepEqual(valuesAt({ a: [1, 2] }, 'a.0'), []);
  assert.deepEqual(valuesAt({ a: { b: null } }, 'a.b.c'), []);
});

test('someValueAt: prototype members never resolve', () => {
  for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'a.constructor', 'a.__proto__', 'a.b.toString']) {
    assert.deepEqual(valuesAt({ a: { b: {} } }, key), [], key);
  }
  assert.deepEqual(valuesAt({ constructor: 'own' }, 'constructor'), ['own']);
  assert.deepEqual(valuesAt({ a: { toString: 'own' } }, 'a.toString'), ['own']);
  assert.deepEqual(valuesAt(j('{"__proto__": {"x": 1}}') as Record<string, unknown>, '__proto__.x'), [1]);
});

test('someValueAt stops at the first value that passes', () => {
  let calls = 0;
  const found = someValueAt({ a: [{ b: 1 }, { b: 2 }, { b: 3 }] }, 'a.b', ['a', 'b'], (v) => {
    calls++;
    return v === 2;
  });
  assert.equal(found, true);
  assert.equal(calls, 2);
});

test('checkJsonValue accepts ordinary JSON, including a "constructor" string', () => {
  const ok = [
    null,
    true,
    0,
    -1.5e300,
    'text',
    [],
    {},
    { a: [1, { b: null }], 'odd key': 'x' },
    j('{"constructor": "x"}'),
    j('{"constructor": {"name": "x"}}'),
    j('{"prototype": {"a": 1}}'),
    j('{"a": {"constructor": ["prototype"]}}'),
  ];
  for (const value of ok) assert.doesNotThrow(() => checkJsonValue(value, 'payload'), JSON.stringify(value));
});

test('checkJsonValue names non-finite numbers by path', () => {
  rejects(Number.NaN, 'payload', 'payload', /finite/);
  rejects(Number.POSITIVE_INFINITY, 'v', 'v', /finite/);
  rejects([1, 2, Number.NEGATIVE_INFINITY], 'payload', 'payload[2]', /finite/);
  rejects({ a: { b: [0, { c: j('1e400') }] } }, 'payload', 'payload.a.b[1].c', /finite/);
  rejects({ 'odd key': Number.NaN }, 'points[3].payload', 'points[3].payload["odd key"]');
  rejects({ ok: 1, list: [[Number.NaN]] }, 'p', 'p.list[0][0]');
});

test('checkJsonValue rejects __proto__ keys and constructor.prototype with their path', () => {
  rejects(j('{"__proto__": {}}'), 'payload', 'payload.__proto__', /__proto__/);
  rejects(j('{"__proto__": 1}'), 'payload', 'payload.__proto__');
  rejects(j('{"a": [{"b": {"__proto__": null}}]}'), 'payload', 'payload.a[0].b.__proto__', /prototype poisoning/);
  rejects(j('{"constructor": {"prototype": {"polluted": true}}}'), 'payload', 'payload.constructor', /constructor/);
  rejects(j('{"x": {"constructor": {"prototype": 1}}}'), 'payload', 'payload.x.constructor', /prototype/);
  rejects(j('[{"constructor": {"prototype": null}}]'), 'v', 'v[0].constructor');
  // Nothing leaked onto Object.prototype while checking.
  assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
});

test(`checkJsonValue accepts nesting up to ${MAX_JSON_DEPTH} levels and rejects deeper`, () => {
  assert.equal(MAX_JSON_DEPTH, 64);
  assert.doesNotThrow(() => checkJsonValue(nestedArrays(64), 'v'));
  assert.doesNotThrow(() => checkJsonValue(nestedArrays(64, 'scalar'), 'v'));
  rejects(nestedArrays(65), 'v', `v${'[0]'.repeat(64)}`, /nesting/);
  rejects(nestedArrays(65, 'scalar'), 'v', `v${'[0]'.repeat(64)}`);
  let objects: unknown = {};
  for (let i = 1; i < 64; i++) objects = { k: objects };
  assert.doesNotThrow(() => checkJsonValue(objects, 'p'));
  rejects({ k: objects }, 'p', `p${'.k'.repeat(64)}`, /nesting/);
  rejects({ k: [objects] }, 'p', `p.k[0]${'.k'.repeat(62)}`, /nesting/);
});

test('checkJsonValue rejects 100000 levels of nesting with a 400, not a stack overflow', () => {
  rejects(nestedArrays(100_000), 'payload', `payload${'[0]'.repeat(64)}`, /nesting/);
  let objects: unknown = { leaf: 1 };
  for (let i = 0; i < 100_000; i++) objects = i % 2 === 0 ? { k: objects } : [objects];
  assert.throws(
    () => checkJsonValue(objects, 'p'),
    (e: unknown) => e instanceof KithError && e.code === 'ERR_BAD_INPUT' && /nesting/.test(e.message),
  );
});

test('forbiddenKeyReason', () => {
  assert.match(forbiddenKeyReason('__proto__', 1) ?? '', /__proto__/);
  assert.match(forbiddenKeyReason('__proto__', {}) ?? '', /prototype poisoning/);
  assert.match(forbiddenKeyReason('constructor', { prototype: 1 }) ?? '', /constructor/);
  assert.match(forbiddenKeyReason('constructor', { prototype: null, other: 2 }) ?? '', /prototype/);
  assert.equal(forbiddenKeyReason('constructor', 'x'), undefined);
  assert.equal(forbiddenKeyReason('constructor', { name: 'x' }), undefined);
  assert.equal(forbiddenKeyReason('constructor', ['prototype']), undefined);
  assert.equal(forbiddenKeyReason('constructor', null), undefined);
  assert.equal(forbiddenKeyReason('prototype', { a: 1 }), undefined);
  assert.equal(forbiddenKeyReason('__proto', 1), undefined);
  assert.equal(forbiddenKeyReason('toString', 1), undefined);
  assert.equal(forbiddenKeyReason('', 1), undefined);
});
