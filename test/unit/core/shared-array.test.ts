import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grownArray, sharedArray } from '../../../src/core/shared-array.js';

test('a shared array grows in place: same buffer, contents kept, new elements zero, old views see the same memory', () => {
  const a = sharedArray(Int32Array, 4);
  a.set([1, 2, 3, 4]);
  const b = grownArray(Int32Array, a, 1000);
  assert.equal(b.buffer, a.buffer, 'grown in place');
  assert.equal(b.length, 1000);
  assert.deepEqual(Array.from(b.subarray(0, 6)), [1, 2, 3, 4, 0, 0]);
  b[2] = 42;
  assert.equal(a[2], 42, 'the old view is the same memory');
  assert.equal(a.length, 4, 'the old view keeps its length');
  const bytes = sharedArray(Uint8Array, 3);
  bytes[1] = 7;
  const moreBytes = grownArray(Uint8Array, bytes, 50);
  assert.equal(moreBytes.buffer, bytes.buffer);
  assert.equal(moreBytes[1], 7);
  const doubles = sharedArray(Float64Array, 3);
  doubles[2] = 0.5;
  const moreDoubles = grownArray(Float64Array, doubles, 50);
  assert.equal(moreDoubles.buffer, doubles.buffer);
  assert.equal(moreDoubles[2], 0.5);
});

test('an array that is not a growable shared one is copied into one', () => {
  const plain = new Int32Array([5, 6]);
  const grown = grownArray(Int32Array, plain, 10);
  assert.ok((grown.buffer as unknown as SharedArrayBuffer).growable, 'a growable SharedArrayBuffer');
  assert.deepEqual(Array.from(grown.subarray(0, 3)), [5, 6, 0]);
});
