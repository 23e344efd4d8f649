/**
 * Slot bitsets (core/slot-bits.ts): membership, iteration and conversion agree with a Set model,
 * including word boundaries (slots 31, 32, 63) and reads past the end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SeededRng } from '../../../src/core/rng.js';
import { bitsOf, bitsToArray, bitsWords, forEachBit, hasBit, setBit } from '../../../src/core/slot-bits.js';
import { testSeed, withSeed } from '../../helpers/data.js';

test('word boundaries: bits 0, 31, 32 and 63 land in the right words; past the end reads absent', () => {
  assert.equal(bitsWords(0), 0);
  assert.equal(bitsWords(32), 1);
  assert.equal(bitsWords(33), 2);
  const bits = bitsOf([0, 31, 32, 63], 64);
  assert.equal(bits.length, 2);
  assert.deepEqual(Array.from(bitsToArray(bits)), [0, 31, 32, 63]);
  for (const slot of [1, 30, 33, 62]) assert.equal(hasBit(bits, slot), false, `slot ${slot}`);
  for (const slot of [0, 31, 32, 63]) assert.equal(hasBit(bits, slot), true, `slot ${slot}`);
  assert.equal(hasBit(bits, 64), false, 'past the last word');
  assert.equal(hasBit(bits, 1_000_000), false, 'far past the end');
});

test('random member sets agree with a Set model (has, forEachBit ascending, bitsToArray)', () => {
  const seed = testSeed(0xb175);
  withSeed(seed, (rng: SeededRng) => {
    for (let round = 0; round < 50; round++) {
      const universe = 1 + rng.int(500);
      const model = new Set<number>();
      const bits = new Uint32Array(bitsWords(universe));
      for (let i = 0, adds = rng.int(universe); i < adds; i++) {
        const slot = rng.int(universe);
        model.add(slot);
        setBit(bits, slot);
      }
      const sorted = [...model].sort((a, b) => a - b);
      assert.deepEqual(Array.from(bitsToArray(bits)), sorted, `round ${round}: bitsToArray`);
      const visited: number[] = [];
      forEachBit(bits, (slot) => visited.push(slot));
      assert.deepEqual(visited, sorted, `round ${round}: forEachBit`);
      for (let slot = 0; slot < universe; slot++) assert.equal(hasBit(bits, slot), model.has(slot), `round ${round}: hasBit(${slot})`);
    }
  });
});
