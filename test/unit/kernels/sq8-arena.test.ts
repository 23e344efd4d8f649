import assert from 'node:assert/strict';
import { test } from 'node:test';
import { searchableVector } from '../../../src/search/vector-input.js';
import { SeededRng } from '../../../src/core/rng.js';
import { normalizeInPlace } from '../../../src/core/vector-math.js';
import { Sq8Arena } from '../../../src/kernels/sq8-arena.js';
import { dequantizeSq8, quantizeSq8 } from '../../../src/quantization/sq8.js';
import { DISTANCES } from './harness.js';

function params(arena: Sq8Arena, slot: number): number[] {
  const p = arena.paramsOffsetOf(slot);
  return Array.from(arena.floats.subarray(p, p + 4));
}

function randomVector(rng: SeededRng, dim: number): Float32Array {
  return Float32Array.from({ length: dim }, () => rng.gaussian() * 3);
}

test('per-slot parameters: [min, step, |v′|², 1/|v′|] from the dequantized float32 vector', () => {
  const arena = new Sq8Arena(3, 'Euclid');
  arena.reserve(1);
  const q = { min: -1, max: 1, codes: Uint8Array.of(0, 255, 128) };
  arena.writeCodes(0, q);
  const v = dequantizeSq8(q);
  const normSq = (v[0] as number) ** 2 + (v[1] as number) ** 2 + (v[2] as number) ** 2;
  assert.deepEqual(params(arena, 0), [-1, Math.fround(2 / 255), Math.fround(normSq), Math.fround(1 / Math.sqrt(normSq))]);
  assert.deepEqual(Array.from(arena.bytes.subarray(arena.codesOffsetOf(0), arena.codesOffsetOf(0) + 3)), [0, 255, 128]);
});

test('a zero vector has zero parameters, reads as zeros and is not normalised into NaN', () => {
  for (const distance of DISTANCES) {
    const arena = new Sq8Arena(5, distance);
    arena.reserve(1);
    arena.writeCodes(0, quantizeSq8(new Float32Array(5)));
    assert.deepEqual(params(arena, 0), [0, 0, 0, 0], distance);
    assert.deepEqual(arena.read(0), new Float32Array(5), distance);
  }
});

test('read equals search/vector-input searchableVector, bit for bit, for every metric', () => {
  const rng = new SeededRng(5);
  for (const distance of DISTANCES) {
    for (const dim of [1, 7, 16, 33, 128]) {
      const arena = new Sq8Arena(dim, distance);
      arena.reserve(4);
      const stored = Array.from({ length: 4 }, () => {
        const v = randomVector(rng, dim);
        return quantizeSq8(distance === 'Cosine' ? normalizeInPlace(v) : v);
      });
      stored.forEach((q, slot) => {
        arena.writeCodes(slot, q);
      });
      stored.forEach((q, slot) => {
        assert.deepEqual(arena.read(slot), searchableVector({ encoding: 'sq8', ...q }, distance), `${distance} dim ${dim} slot ${slot}`);
      });
    }
  }
});

test('setQuery derives sum(q) and |q|² (float64 sums, rounded to float32)', () => {
  const arena = new Sq8Arena(4, 'Euclid');
  const q = Float32Array.of(0.1, -2, 3.5, 1e-3);
  arena.setQuery(q);
  const sum = 0.1 + -2 + 3.5 + 1e-3;
  let normSq = 0;
  for (const x of q) normSq += x * x;
  let sumF = 0;
  for (const x of q) sumF += x;
  assert.equal(arena.querySum, Math.fround(sumF));
  assert.ok(Math.abs(arena.querySum - sum) < 1e-6);
  assert.equal(arena.queryNormSq, Math.fround(normSq));
  assert.deepEqual(arena.floats.slice(0, 4), q);
});

test('setQueryFromSlot puts read(slot) in the query scratch, with its sum and norm', () => {
  const rng = new SeededRng(9);
  for (const distance of DISTANCES) {
    const arena = new Sq8Arena(21, distance);
    arena.reserve(3);
    for (let slot = 0; slot < 3; slot++) arena.writeCodes(slot, quantizeSq8(normalizeInPlace(randomVector(rng, 21))));
    arena.setQuery(randomVector(rng, 21));
    arena.setQueryFromSlot(2);
    const want = arena.read(2);
    assert.deepEqual(arena.floats.slice(0, 21), want, distance);
    let sum = 0;
    let normSq = 0;
    for (const x of want) {
      sum += x;
      normSq += x * x;
    }
    assert.deepEqual([arena.querySum, arena.queryNormSq], [Math.fround(sum), Math.fround(normSq)], distance);
  }
});

test('growth moves the params region after the codes, keeping every slot, and clears what it vacated', () => {
  const dim = 6;
  const arena = new Sq8Arena(dim, 'Dot');
  arena.reserve(1);
  const rng = new SeededRng(2);
  const capacity = arena.slotCapacity;
  const written = new Map<number, ReturnType<typeof quantizeSq8>>();
  for (const slot of [0, 1, capacity - 1]) {
    const q = quantizeSq8(randomVector(rng, dim));
    arena.writeCodes(slot, q);
    written.set(slot, q);
  }
  const before = new Map([...written.keys()].map((slot) => [slot, params(arena, slot)]));
  const oldParams = arena.paramsByteOffset;
  assert.equal(oldParams % 64, 0);
  assert.ok(oldParams >= arena.codesOffsetOf(capacity), 'params follow the codes');
  arena.reserve(capacity + 1);
  assert.ok(arena.paramsByteOffset > oldParams);
  assert.ok(arena.paramsByteOffset >= arena.codesOffsetOf(arena.slotCapacity));
  for (const [slot, q] of written) {
    assert.deepEqual(params(arena, slot), before.get(slot), `params of slot ${slot}`);
    assert.deepEqual(arena.read(slot), dequantizeSq8(q), `slot ${slot}`);
  }
  // The old params bytes now lie inside the codes of slots never written: they read as zero.
  const vacatedSlot = Math.ceil((oldParams - arena.vectorsByteOffset) / dim);
  assert.deepEqual(Array.from(arena.bytes.subarray(arena.codesOffsetOf(vacatedSlot), arena.codesOffsetOf(vacatedSlot + 4))), new Array(4 * dim).fill(0));
});

test('codes of the wrong length are refused', () => {
  const arena = new Sq8Arena(4, 'Dot');
  arena.reserve(1);
  assert.throws(() => arena.writeCodes(0, { min: 0, max: 1, codes: new Uint8Array(5) }), RangeError);
});
