/**
 * The f32 kernels, WASM and reference, on small integer vectors: every product and sum is an
 * integer below 2^24, so float32 arithmetic is exact in any order and scores must equal the
 * integer results exactly. Dimensions cover every tail of the 16- and 4-wide loops.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../../src/core/rng.js';
import { SCRATCH_BATCH, VectorArena } from '../../../src/kernels/vector-arena.js';
import { DISTANCES, f32Kernels, poisonScores, readScores, scoreIds, scoreRange } from './harness.js';

const TAIL_DIMS = [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 31, 32, 33, 47, 64, 65];

function exact(distance: string, q: readonly number[], v: readonly number[]): number {
  let dot = 0;
  let l2 = 0;
  for (let i = 0; i < q.length; i++) {
    dot += (q[i] as number) * (v[i] as number);
    l2 += ((q[i] as number) - (v[i] as number)) ** 2;
  }
  return distance === 'Euclid' ? -l2 : dot;
}

function intVector(rng: SeededRng, dim: number): number[] {
  return Array.from({ length: dim }, () => rng.int(21) - 10);
}

for (const distance of DISTANCES) {
  test(`${distance}: exact scores on integer vectors for every tail length, by ids and by range`, () => {
    const rng = new SeededRng(7);
    for (const dim of TAIL_DIMS) {
      const arena = new VectorArena(dim);
      arena.reserve(6);
      const vectors = Array.from({ length: 6 }, () => intVector(rng, dim));
      vectors.forEach((v, slot) => {
        arena.write(slot, Float32Array.from(v));
      });
      const query = intVector(rng, dim);
      arena.setQuery(Float32Array.from(query));
      const slots = [5, 0, 3, 3, 1, 5, 2, 4];
      const want = slots.map((s) => exact(distance, query, vectors[s] as number[]));
      for (const [name, kernel] of f32Kernels(arena, distance)) {
        assert.deepEqual(scoreIds(arena, kernel, slots), want, `${name} dim ${dim} ids`);
        assert.deepEqual(
          scoreRange(arena, kernel, 1, 4),
          [1, 2, 3, 4].map((s) => exact(distance, query, vectors[s] as number[])),
          `${name} dim ${dim} range`,
        );
      }
    }
  });
}

test('long lists (the WASM kernels score ids in chunks of 64): every position gets its own slot’s score', () => {
  const rng = new SeededRng(23);
  const dim = 13;
  const arena = new VectorArena(dim);
  arena.reserve(300);
  const vectors = Array.from({ length: 300 }, () => intVector(rng, dim));
  vectors.forEach((v, slot) => {
    arena.write(slot, Float32Array.from(v));
  });
  const query = intVector(rng, dim);
  arena.setQuery(Float32Array.from(query));
  for (const length of [63, 64, 65, 128, 1000, SCRATCH_BATCH]) {
    const slots = Array.from({ length }, () => rng.int(300));
    for (const distance of ['Dot', 'Euclid'] as const) {
      const want = slots.map((s) => exact(distance, query, vectors[s] as number[]));
      for (const [name, kernel] of f32Kernels(arena, distance)) assert.deepEqual(scoreIds(arena, kernel, slots), want, `${name} ${distance} ${length}`);
    }
  }
  for (const [name, kernel] of f32Kernels(arena, 'Dot')) {
    assert.deepEqual(
      scoreRange(arena, kernel, 7, 293),
      vectors.slice(7).map((v) => exact('Dot', query, v)),
      `${name} range`,
    );
  }
});

test('in a memory of 16 MiB or more (where WASM first touches the listed slots) scores are the same', () => {
  const rng = new SeededRng(31);
  // 64-byte slots after a 64-byte aligned scratch: the last slot ends exactly at the memory's
  // end, so touching one byte past a slot would trap.
  const dim = 16;
  const arena = new VectorArena(dim);
  arena.reserve(Math.ceil((17 * 2 ** 20) / (dim * 4)));
  const last = arena.slotCapacity - 1;
  assert.equal(arena.offsetOf(last + 1) * 4, arena.wasmMemory.buffer.byteLength);
  const slots = [...Array.from({ length: 500 }, () => rng.int(last)), last, 0, last];
  const vectors = new Map<number, number[]>();
  for (const s of slots) {
    const v = vectors.get(s) ?? intVector(rng, dim);
    vectors.set(s, v);
    arena.write(s, Float32Array.from(v));
  }
  const query = intVector(rng, dim);
  arena.setQuery(Float32Array.from(query));
  for (const distance of ['Dot', 'Euclid'] as const) {
    const want = slots.map((s) => exact(distance, query, vectors.get(s) as number[]));
    for (const [name, kernel] of f32Kernels(arena, distance)) assert.deepEqual(scoreIds(arena, kernel, slots), want, `${name} ${distance}`);
  }
});

test('zero vectors: dot 0, Euclid minus the other vector’s squared norm', () => {
  const arena = new VectorArena(19);
  arena.reserve(2);
  const v = Float32Array.from({ length: 19 }, (_, i) => i - 9);
  const normSq = v.reduce((s, x) => s + x * x, 0);
  arena.write(1, v);
  arena.setQuery(new Float32Array(19));
  for (const [name, kernel] of f32Kernels(arena, 'Dot')) assert.deepEqual(scoreIds(arena, kernel, [0, 1]), [0, 0], name);
  for (const [name, kernel] of f32Kernels(arena, 'Euclid')) assert.deepEqual(scoreIds(arena, kernel, [0, 1]), [-0, -normSq], name);
  arena.setQuery(v);
  for (const [name, kernel] of f32Kernels(arena, 'Euclid')) assert.deepEqual(scoreIds(arena, kernel, [0, 1]), [-normSq, -0], name);
});

test('a call writes exactly `count` scores; an empty list writes none', () => {
  const arena = new VectorArena(6);
  arena.reserve(3);
  arena.write(0, Float32Array.of(1, 1, 1, 1, 1, 1));
  arena.setQuery(Float32Array.of(1, 2, 3, 4, 5, 6));
  for (const [name, kernel] of f32Kernels(arena, 'Dot')) {
    poisonScores(arena, 4);
    assert.deepEqual(scoreIds(arena, kernel, [0, 0]), [21, 21], name);
    assert.deepEqual(readScores(arena, 4).slice(2), [12345.5, 12345.5], `${name}: past count untouched`);
    poisonScores(arena, 2);
    kernel.scoreIds(0);
    kernel.scoreRange(0, 0);
    assert.deepEqual(readScores(arena, 2), [12345.5, 12345.5], `${name}: empty lists`);
  }
});

test('a batch larger than the scratch is refused before anything is written', () => {
  const arena = new VectorArena(4);
  arena.reserve(SCRATCH_BATCH + 1);
  for (const [name, kernel] of f32Kernels(arena, 'Dot')) {
    assert.throws(() => kernel.scoreRange(0, SCRATCH_BATCH + 1), RangeError, name);
    assert.throws(() => kernel.scoreIds(SCRATCH_BATCH + 1), RangeError, name);
    assert.throws(() => kernel.scoreIds(-1), RangeError, name);
  }
});

test('after growth the same kernels see the grown memory: old and new slots, large slot numbers', () => {
  const dim = 10;
  const arena = new VectorArena(dim);
  arena.reserve(2);
  const kernels = f32Kernels(arena, 'Euclid');
  const rng = new SeededRng(11);
  const first = intVector(rng, dim);
  arena.write(0, Float32Array.from(first));
  const query = intVector(rng, dim);
  arena.setQuery(Float32Array.from(query));
  for (const [name, kernel] of kernels) assert.deepEqual(scoreIds(arena, kernel, [0]), [exact('Euclid', query, first)], name);
  const far = arena.slotCapacity * 3;
  arena.reserve(far + 1);
  const last = intVector(rng, dim);
  arena.write(far, Float32Array.from(last));
  for (const [name, kernel] of kernels) {
    assert.deepEqual(scoreIds(arena, kernel, [far, 0]), [exact('Euclid', query, last), exact('Euclid', query, first)], name);
    assert.deepEqual(scoreRange(arena, kernel, far, 1), [exact('Euclid', query, last)], name);
  }
});

test('setQueryFromSlot: a stored vector scores as the query (Euclid 0 to itself)', () => {
  const arena = new VectorArena(9);
  arena.reserve(3);
  const rng = new SeededRng(3);
  const vectors = [intVector(rng, 9), intVector(rng, 9), intVector(rng, 9)];
  vectors.forEach((v, slot) => {
    arena.write(slot, Float32Array.from(v));
  });
  arena.setQueryFromSlot(1);
  for (const [name, kernel] of f32Kernels(arena, 'Euclid')) {
    assert.deepEqual(
      scoreIds(arena, kernel, [0, 1, 2]),
      [0, 1, 2].map((s) => exact('Euclid', vectors[1] as number[], vectors[s] as number[])),
      name,
    );
  }
});
