/** ShardedMap behaves as a Map of strings (get, has, set, delete, size) under random operations on nasty keys. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ShardedMap } from '../../../src/core/sharded-map.js';
import { testSeed, withSeed } from '../../helpers/data.js';

test('ShardedMap agrees with a Map under random sets and deletes', () => {
  withSeed(testSeed(8801), (rng) => {
    const keys = ['', 'a', '0', '7', '__proto__', 'constructor', 'é', '\u{1F600}', '\ud800', 'x'.repeat(1024)];
    for (let i = 0; i < 3000; i++) keys.push(rng.int(2) === 0 ? String(rng.int(100_000)) : `doc-${rng.int(5000).toString(16)}`);
    const sharded = new ShardedMap<number>();
    const reference = new Map<string, number>();
    for (let step = 0; step < 20_000; step++) {
      const key = keys[rng.int(keys.length)] as string;
      if (rng.int(3) === 0) assert.equal(sharded.delete(key), reference.delete(key));
      else {
        sharded.set(key, step);
        reference.set(key, step);
      }
      assert.equal(sharded.size, reference.size);
    }
    for (const key of keys) {
      assert.equal(sharded.has(key), reference.has(key), key);
      assert.equal(sharded.get(key), reference.get(key), key);
    }
  });
});

test('ShardedMap agrees with a Map while it grows through many doublings and shrinks back, with colliding homes', () => {
  withSeed(testSeed(8802), (rng) => {
    const sharded = new ShardedMap<string>();
    const reference = new Map<string, string>();
    // Keys that differ in one code unit (the ids users have: counters, prefixes, UUID-like).
    const keyOf = (n: number): string =>
      n % 3 === 0 ? String(n) : n % 3 === 1 ? `p-${n.toString(36)}` : `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
    for (let round = 0; round < 3; round++) {
      const range = 40_000 * (round + 1);
      for (let step = 0; step < 120_000; step++) {
        const key = keyOf(rng.int(range));
        const op = rng.int(10);
        if (op < 6) {
          sharded.set(key, `${round}:${step}`);
          reference.set(key, `${round}:${step}`);
        } else if (op < 9) assert.equal(sharded.delete(key), reference.delete(key), key);
        else assert.equal(sharded.get(key), reference.get(key), key);
      }
      assert.equal(sharded.size, reference.size);
      for (const [key, value] of reference) assert.equal(sharded.get(key), value, key);
      // Empty it through deletes in random order: every backward shift must keep the rest findable.
      const keys = [...reference.keys()];
      for (let i = keys.length - 1; i > 0; i--) {
        const j = rng.int(i + 1);
        [keys[i], keys[j]] = [keys[j] as string, keys[i] as string];
      }
      for (const [i, key] of keys.entries()) {
        assert.equal(sharded.delete(key), true, key);
        reference.delete(key);
        if (i % 997 === 0) for (const [k, v] of reference) assert.equal(sharded.get(k), v, k);
      }
      assert.equal(sharded.size, 0);
      for (let n = 0; n < range; n += 101) assert.equal(sharded.has(keyOf(n)), false);
    }
  });
});
