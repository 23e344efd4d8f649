/**
 * The sq8 kernels, WASM and reference, on cases with exact answers: min = −2 and max = 253 give
 * step = 1, so the dequantized vector is code − 2, an integer vector; with an integer query every
 * term of min·sum(q) + step·dot(q, code) and of the Euclid expansion is an exact float32 integer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../../src/core/rng.js';
import { createSq8Kernel } from '../../../src/kernels/distance-kernel.js';
import { Sq8Arena } from '../../../src/kernels/sq8-arena.js';
import { DISTANCES, scoreIds, scoreRange, sq8Kernels } from './harness.js';

const DIMS = [1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 24, 25, 28, 31, 32, 33, 64, 100];

function intCodes(rng: SeededRng, dim: number): Uint8Array {
  return Uint8Array.from({ length: dim }, () => rng.int(12));
}

function exact(distance: string, q: readonly number[], codes: Uint8Array): number {
  let dot = 0;
  let l2 = 0;
  let normSq = 0;
  for (let i = 0; i < q.length; i++) {
    const v = (codes[i] as number) - 2;
    dot += (q[i] as number) * v;
    l2 += ((q[i] as number) - v) ** 2;
    normSq += v * v;
  }
  if (distance === 'Euclid') return -l2;
  if (distance === 'Dot') return dot;
  return Math.fround(dot * Math.fround(normSq === 0 ? 0 : 1 / Math.sqrt(normSq)));
}

for (const distance of DISTANCES) {
  test(`sq8 ${distance}: exact scores for every tail of the 16/8/4-wide code loops`, () => {
    const rng = new SeededRng(13);
    for (const dim of DIMS) {
      const arena = new Sq8Arena(dim, distance);
      arena.reserve(5);
      const codes = Array.from({ length: 5 }, () => intCodes(rng, dim));
      codes.forEach((c, slot) => {
        arena.writeCodes(slot, { min: -2, max: 253, codes: c });
      });
      const query = Array.from({ length: dim }, () => rng.int(9) - 4);
      arena.setQuery(Float32Array.from(query));
      const slots = [4, 4, 0, 2, 1, 3, 0];
      const want = slots.map((s) => exact(distance, query, codes[s] as Uint8Array));
      for (const [name, kernel] of sq8Kernels(arena, distance)) {
        assert.deepEqual(scoreIds(arena, kernel, slots), want, `${name} dim ${dim} ids`);
        assert.deepEqual(
          scoreRange(arena, kernel, 2, 3),
          [2, 3, 4].map((s) => exact(distance, query, codes[s] as Uint8Array)),
          `${name} dim ${dim} range`,
        );
      }
    }
  });
}

test('sq8 long lists (scored in chunks of 64 by WASM): every position gets its own slot’s score', () => {
  const rng = new SeededRng(29);
  const dim = 19;
  for (const distance of DISTANCES) {
    const arena = new Sq8Arena(dim, distance);
    arena.reserve(300);
    const codes = Array.from({ length: 300 }, () => intCodes(rng, dim));
    codes.forEach((c, slot) => {
      arena.writeCodes(slot, { min: -2, max: 253, codes: c });
    });
    const query = Array.from({ length: dim }, () => rng.int(9) - 4);
    arena.setQuery(Float32Array.from(query));
    for (const length of [63, 64, 65, 200, 4096]) {
      const slots = Array.from({ length }, () => rng.int(300));
      const want = slots.map((s) => exact(distance, query, codes[s] as Uint8Array));
      for (const [name, kernel] of sq8Kernels(arena, distance)) assert.deepEqual(scoreIds(arena, kernel, slots), want, `${distance} ${name} ${length}`);
    }
    for (const [name, kernel] of sq8Kernels(arena, distance)) {
      assert.deepEqual(
        scoreRange(arena, kernel, 0, 300),
        codes.map((c) => exact(distance, query, c)),
        `${distance} ${name} range`,
      );
    }
  }
});

test('sq8 in a memory of 16 MiB or more (where WASM first touches codes and params) scores are the same', () => {
  const rng = new SeededRng(37);
  const dim = 45;
  for (const distance of DISTANCES) {
    const arena = new Sq8Arena(dim, distance);
    arena.reserve(Math.ceil((17 * 2 ** 20) / (dim + 16)));
    assert.ok(arena.wasmMemory.buffer.byteLength >= 16 * 2 ** 20);
    const last = arena.slotCapacity - 1;
    const slots = [...Array.from({ length: 300 }, () => rng.int(last)), last, 0, last];
    const codes = new Map<number, Uint8Array>();
    for (const s of slots) {
      const c = codes.get(s) ?? intCodes(rng, dim);
      codes.set(s, c);
      arena.writeCodes(s, { min: -2, max: 253, codes: c });
    }
    const query = Array.from({ length: dim }, () => rng.int(9) - 4);
    arena.setQuery(Float32Array.from(query));
    const want = slots.map((s) => exact(distance, query, codes.get(s) as Uint8Array));
    for (const [name, kernel] of sq8Kernels(arena, distance)) assert.deepEqual(scoreIds(arena, kernel, slots), want, `${distance} ${name}`);
  }
});

test('sq8 zero vector: 0 under Dot and Cosine (no NaN from 1/|v′|), −|q|² under Euclid', () => {
  const dim = 11;
  const query = Float32Array.from({ length: dim }, (_, i) => i - 5);
  const normSq = query.reduce((s, x) => s + x * x, 0);
  for (const distance of DISTANCES) {
    const arena = new Sq8Arena(dim, distance);
    arena.reserve(1);
    arena.writeCodes(0, { min: 0, max: 0, codes: new Uint8Array(dim) });
    arena.setQuery(query);
    const want = distance === 'Euclid' ? -normSq : 0;
    for (const [name, kernel] of sq8Kernels(arena, distance)) assert.deepEqual(scoreIds(arena, kernel, [0]), [want], `${distance} ${name}`);
  }
});

// |q|² + |v′|² − 2·dot(q, v′) cancels when q = v′: the result is rounding noise of the size
// 2^-24·(|q|² + |v′|²), which must never come out positive.
test('sq8 Euclid never reports a positive similarity when the query is the stored vector', () => {
  const rng = new SeededRng(17);
  const dim = 300;
  const arena = new Sq8Arena(dim, 'Euclid');
  arena.reserve(20);
  for (let slot = 0; slot < 20; slot++) {
    const codes = Uint8Array.from({ length: dim }, () => rng.int(256));
    arena.writeCodes(slot, { min: Math.fround(-rng.next() * 50), max: Math.fround(rng.next() * 50), codes });
  }
  for (let slot = 0; slot < 20; slot++) {
    arena.setQueryFromSlot(slot);
    for (const [name, kernel] of sq8Kernels(arena, 'Euclid')) {
      const [self] = scoreIds(arena, kernel, [slot]);
      const noise = 1e-6 * 2 * arena.queryNormSq;
      assert.ok((self as number) <= 0 && (self as number) >= -noise, `${name} slot ${slot}: ${self} (noise bound ${noise})`);
    }
  }
});

test('sq8 scoring follows the params region when the memory grows', () => {
  const arena = new Sq8Arena(20, 'Dot');
  arena.reserve(1);
  const kernels = sq8Kernels(arena, 'Dot');
  const rng = new SeededRng(19);
  const codes = intCodes(rng, 20);
  arena.writeCodes(0, { min: -2, max: 253, codes });
  const query = Array.from({ length: 20 }, () => rng.int(9) - 4);
  arena.setQuery(Float32Array.from(query));
  for (const [name, kernel] of kernels) assert.deepEqual(scoreIds(arena, kernel, [0]), [exact('Dot', query, codes)], name);
  const far = arena.slotCapacity * 2;
  arena.reserve(far + 1);
  const farCodes = intCodes(rng, 20);
  arena.writeCodes(far, { min: -2, max: 253, codes: farCodes });
  for (const [name, kernel] of kernels) {
    assert.deepEqual(scoreIds(arena, kernel, [far, 0]), [exact('Dot', query, farCodes), exact('Dot', query, codes)], name);
  }
});

test('createSq8Kernel refuses a distance other than the arena’s', () => {
  assert.throws(() => createSq8Kernel(new Sq8Arena(4, 'Cosine'), 'Dot'), RangeError);
});
