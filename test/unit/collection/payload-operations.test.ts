import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkSelection, payloadUpdate } from '../../../src/collection/payload-operations.js';
import { REQUEST_BUDGET, RequestCost } from '../../../src/search/request-cost.js';

const stored = () => ({ a: 1, key6: { subkey: 'x', arraykey: [{ a1: { a1k: 'x' } }, { a2: { a2k: 'x' } }], subkey2: { subkey3: 'x' } }, 'd.e': 5 });

/** What the assertions read of an updated payload. */
type Shape = { a: unknown; new: unknown; 'd.e': unknown; key6: { subkey: unknown; subkey2: unknown; arraykey: unknown } };

test('set merges top-level keys, at the root or at a nested key path', () => {
  assert.deepEqual(payloadUpdate({ op: 'set', payload: { a: 2, b: [null] } })({ a: 1, c: true }), { a: 2, b: [null], c: true });
  const before = stored();
  const at = (key: string, payload: Record<string, unknown>) => payloadUpdate({ op: 'set', payload, key })(before) as Shape;
  assert.deepEqual(at('key6', { subkey: 'y' }).key6.subkey, 'y');
  assert.deepEqual(at('key6.subkey2', { subkey3: 'y', n: -0 }).key6.subkey2, { subkey3: 'y', n: -0 });
  assert.deepEqual(at('key6.arraykey[0].a1', { a1k: 'y' }).key6.arraykey, [{ a1: { a1k: 'y' } }, { a2: { a2k: 'x' } }]);
  // `[]` reaches every element; on the element without `a2`, the member is created.
  assert.deepEqual(at('key6.arraykey[].a2', { a2k: 'y' }).key6.arraykey, [{ a1: { a1k: 'x' }, a2: { a2k: 'y' } }, { a2: { a2k: 'y' } }]);
  // A missing member, or one that is not an object, becomes an object; an index past the end sets nothing.
  assert.deepEqual(at('new.deep', { k: 1 }).new, { deep: { k: 1 } });
  assert.deepEqual(at('a', { k: 1 }).a, { k: 1 });
  assert.deepEqual(at('key6.arraykey[5].z', { k: 1 }).key6.arraykey, before.key6.arraykey);
  // A key that is literally a top-level key names it (as selectors and filters read it).
  assert.deepEqual(at('d.e', { k: 1 })['d.e'], { k: 1 });
  // Idempotent, and the stored payload is never changed in place.
  const once = payloadUpdate({ op: 'set', payload: { key: 'x' }, key: 'key' })({});
  assert.deepEqual(payloadUpdate({ op: 'set', payload: { key: 'x' }, key: 'key' })(once), { key: { key: 'x' } });
  assert.deepEqual(before, stored());
});

test('overwrite, delete keys (nested paths) and clear', () => {
  assert.deepEqual(payloadUpdate({ op: 'overwrite', payload: { only: 'this' } })(stored()), { only: 'this' });
  assert.deepEqual(payloadUpdate({ op: 'delete', keys: ['key6.arraykey[].a1', 'key6.subkey', 'a', 'missing'] })(stored()), {
    key6: { arraykey: [{}, { a2: { a2k: 'x' } }], subkey2: { subkey3: 'x' } },
    'd.e': 5,
  });
  assert.deepEqual(payloadUpdate({ op: 'clear' })(stored()), {});
});

test('bad operations are refused naming the field', () => {
  const refused = (operation: unknown, message: RegExp) =>
    assert.throws(
      () => payloadUpdate(operation as never),
      (e: Error & { code?: string }) => e.code === 'ERR_BAD_INPUT' && message.test(e.message),
    );
  refused({ op: 'set', payload: [1] }, /^payload: expected an object/);
  refused({ op: 'overwrite', payload: null }, /^payload: expected an object/);
  refused({ op: 'set', payload: { n: Number.NaN } }, /^payload\.n: /);
  refused({ op: 'set', payload: {}, key: 7 }, /^key: expected a payload path/);
  refused({ op: 'set', payload: {}, key: 'k'.repeat(1025) }, /^key: 1025 characters/);
  refused({ op: 'delete', keys: 'a' }, /^keys: expected a list of payload paths/);
  refused({ op: 'delete', keys: new Array(1001).fill('a') }, /^keys: 1001 paths; the limit is 1000/);
  refused({ op: 'delete', keys: ['a', 3] }, /^keys\[1\]/);
  refused({ op: 'rename' }, /^op: expected/);
});

test('a selection is exactly one of points and filter, its cost bounded before any work', async () => {
  assert.deepEqual(await checkSelection({ points: [7, '7', 'é\u0000'] }), ['7', '7', 'é\u0000']);
  assert.deepEqual(await checkSelection({ filter: {} }), { must: [], mustNot: [], should: [] });
  await assert.rejects(checkSelection({} as never), /give exactly one of `points` \(ids\) or `filter`/);
  await assert.rejects(checkSelection({ points: [1], filter: {} } as never), /give exactly one/);
  await assert.rejects(checkSelection({ points: [1, -1] }), /^KithError: points\[1\]: /);
  await assert.rejects(checkSelection({ filter: { must: [{ key: 'a', match: {} }] } }), /filter\.must\[0\]/);
  const over = new Array(REQUEST_BUDGET.ids + 1).fill(1);
  await assert.rejects(checkSelection({ points: over }), (e: Error & { code?: string }) => e.code === 'ERR_OVER_LIMIT' && /^points: /.test(e.message));
  const cost = new RequestCost();
  await checkSelection({ filter: { must: [{ key: 'a', match: { any: [1, 2, 3] } }] } }, cost);
  assert.ok(cost.total('filterTerms') > 0);
});
