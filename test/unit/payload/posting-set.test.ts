/**
 * PostingSet: the slots holding one payload value. Membership and size follow add/delete; the
 * sorted array and the bitset are snapshots, cached until the set changes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SeededRng } from '../../../src/core/rng.js';
import { bitsOf, bitsToArray } from '../../../src/core/slot-bits.js';
import { PostingSet } from '../../../src/payload/posting-set.js';
import { testSeed, withSeed } from '../../helpers/data.js';

test('add, delete, has and size follow a Set; repeated adds and deletes of absent slots change nothing', () => {
  const set = new PostingSet();
  assert.equal(set.size, 0);
  assert.equal(set.has(0), false);
  set.add(5);
  set.add(5);
  set.add(0);
  assert.equal(set.size, 2);
  assert.ok(set.has(5) && set.has(0));
  assert.equal(set.has(1), false);
  set.delete(7);
  assert.equal(set.size, 2);
  set.delete(5);
  assert.equal(set.has(5), false);
  assert.equal(set.size, 1);
  set.delete(0);
  assert.equal(set.size, 0);
  assert.deepEqual(Array.from(set.toArray()), []);
});

test('toArray is ascending by number (not by text), an Int32Array', () => {
  const set = new PostingSet();
  for (const s of [100, 2, 10, 1_000_000, 0, 33, 9]) set.add(s);
  const array = set.toArray();
  assert.ok(array instanceof Int32Array);
  assert.deepEqual(Array.from(array), [0, 2, 9, 10, 33, 100, 1_000_000]);
});

test('toArray is cached until a change: the same array while unchanged, a new one after add/delete', () => {
  const set = new PostingSet();
  set.add(3);
  set.add(1);
  const first = set.toArray();
  assert.equal(set.toArray(), first, 'same instance on a second read');
  set.add(3); // already a member: no change
  set.delete(42); // not a member: no change
  assert.equal(set.toArray(), first, 'no-op add/delete keep the snapshot');
  set.add(2);
  const second = set.toArray();
  assert.notEqual(second, first);
  assert.deepEqual(Array.from(second), [1, 2, 3]);
  assert.deepEqual(Array.from(first), [1, 3], 'an old snapshot is not modified');
  set.delete(1);
  const third = set.toArray();
  assert.notEqual(third, second);
  assert.deepEqual(Array.from(third), [2, 3]);
  assert.equal(set.toArray(), third);
});

test('toBits holds exactly the members, up to the largest; a dense set keeps it until a change', () => {
  const set = new PostingSet();
  assert.equal(set.toBits().length, 0, 'empty set: no words');
  for (const s of [4, 0, 9]) set.add(s);
  const bits = set.toBits();
  assert.ok(bits instanceof Uint32Array);
  assert.deepEqual(Array.from(bitsToArray(bits)), [0, 4, 9]);
  assert.equal(set.span, 10);
  assert.equal(set.toBits(), bits, 'same instance while unchanged (3 members in a span of 10 is dense)');
  set.add(4);
  assert.equal(set.toBits(), bits, 'a no-op add keeps the bitset');
  set.delete(9);
  const after = set.toBits();
  assert.notEqual(after, bits);
  assert.deepEqual(Array.from(bitsToArray(after)), [0, 4]);
  set.add(70);
  assert.deepEqual(Array.from(bitsToArray(set.toBits())), [0, 4, 70]);
});

test('a sparse set builds its bitset per call instead of keeping it', () => {
  const set = new PostingSet();
  set.add(1);
  set.add(10_000);
  const first = set.toBits();
  assert.deepEqual(Array.from(bitsToArray(first)), [1, 10_000]);
  assert.notEqual(set.toBits(), first, '2 members in a span of 10,001: not kept');
});

test('orInto adds the members to an existing bitset, sparse or dense', () => {
  for (const members of [
    [3, 40, 41],
    [5, 9_000],
  ]) {
    const set = new PostingSet();
    for (const s of members) set.add(s);
    const out = bitsOf([0, 40, 100], 10_000);
    set.orInto(out);
    assert.deepEqual(
      Array.from(bitsToArray(out)),
      [...new Set([0, 40, 100, ...members])].sort((a, b) => a - b),
    );
  }
});

test('random add/delete sequences agree with a Set model (array, bits, has, size)', () => {
  const seed = testSeed(0x9057);
  withSeed(seed, (rng: SeededRng) => {
    for (let round = 0; round < 20; round++) {
      const set = new PostingSet();
      const model = new Set<number>();
      const universe = 1 + rng.int(300);
      for (let op = 0; op < 400; op++) {
        const slot = rng.int(universe);
        if (rng.next() < 0.6) {
          set.add(slot);
          model.add(slot);
        } else {
          set.delete(slot);
          model.delete(slot);
        }
        if (op % 17 === 0 || op === 399) {
          const sorted = [...model].sort((a, b) => a - b);
          assert.equal(set.size, model.size, `round ${round} op ${op}: size`);
          assert.deepEqual(Array.from(set.toArray()), sorted, `round ${round} op ${op}: toArray`);
          assert.deepEqual(Array.from(bitsToArray(set.toBits())), sorted, `round ${round} op ${op}: toBits`);
          const probe = rng.int(universe + 5);
          assert.equal(set.has(probe), model.has(probe), `round ${round} op ${op}: has(${probe})`);
        }
      }
    }
  });
});
