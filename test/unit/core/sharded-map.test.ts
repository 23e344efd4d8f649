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
