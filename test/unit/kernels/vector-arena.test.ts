import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKernel } from '../../../src/kernels/distance-kernel.js';
import { SCRATCH_BATCH, VectorArena } from '../../../src/kernels/vector-arena.js';

test('layout: query, ids and scores scratch at the front, cache-line aligned, then slots', () => {
  const arena = new VectorArena(3);
  assert.deepEqual(
    {
      query: arena.queryByteOffset,
      ids: arena.idsByteOffset,
      scores: arena.scoresByteOffset,
      vectors: arena.vectorsByteOffset,
      stride: arena.strideBytes,
      offsetOf2: arena.offsetOf(2),
    },
    { query: 0, ids: 64, scores: 64 + SCRATCH_BATCH * 4, vectors: 64 + SCRATCH_BATCH * 8, stride: 12, offsetOf2: (64 + SCRATCH_BATCH * 8) / 4 + 6 },
  );
  // A query of 17 floats (68 bytes) pushes the lists to the next 64-byte line.
  assert.equal(new VectorArena(17).idsByteOffset, 128);
});

test('the memory is created on first use, not by the constructor', () => {
  const arena = new VectorArena(8);
  assert.equal(arena.slotCapacity, 0);
  assert.equal(arena.floats.length, 0);
  arena.reserve(10);
  assert.ok(arena.slotCapacity >= 1024, `capacity ${arena.slotCapacity}`);
  assert.equal(arena.wasmMemory.buffer.byteLength % 65536, 0);
});

test('write/read round trip; read returns a copy', () => {
  const arena = new VectorArena(4);
  arena.reserve(3);
  arena.write(0, Float32Array.of(1, 2, 3, 4));
  arena.write(2, Float32Array.of(-1, 0.5, 0, 9));
  const v = arena.read(2);
  assert.deepEqual(v, Float32Array.of(-1, 0.5, 0, 9));
  v[0] = 100;
  assert.deepEqual(arena.read(2), Float32Array.of(-1, 0.5, 0, 9));
  assert.deepEqual(arena.read(0), Float32Array.of(1, 2, 3, 4));
});

test('growth keeps the Memory object and the data, renews the views, and tells listeners', () => {
  const arena = new VectorArena(5);
  arena.reserve(1);
  const memory = arena.wasmMemory;
  const oldView = arena.floats;
  arena.write(7, Float32Array.of(1, 2, 3, 4, 5));
  let grown = 0;
  arena.onGrow(() => grown++);
  const before = arena.slotCapacity;
  arena.reserve(before + 1);
  assert.equal(grown, 1);
  assert.ok(arena.slotCapacity >= Math.ceil(before * 1.5), `${arena.slotCapacity} after ${before}`);
  assert.equal(arena.wasmMemory, memory);
  // A shared memory's old buffer is never detached: it keeps covering the old length.
  assert.ok(memory.buffer instanceof SharedArrayBuffer, 'the memory is shared');
  assert.ok(oldView.length < arena.floats.length, 'the old view covers only the memory before growth');
  assert.deepEqual(arena.read(7), Float32Array.of(1, 2, 3, 4, 5));
  arena.reserve(arena.slotCapacity);
  assert.equal(grown, 1, 'no growth when the capacity suffices');
});

test('setQuery writes the query scratch; setQueryFromSlot copies a stored vector there', () => {
  const arena = new VectorArena(3);
  arena.reserve(4);
  arena.write(3, Float32Array.of(7, -8, 9));
  arena.setQuery(Float32Array.of(1, 2, 3));
  assert.deepEqual(arena.floats.slice(0, 3), Float32Array.of(1, 2, 3));
  arena.setQueryFromSlot(3);
  assert.deepEqual(arena.floats.slice(0, 3), Float32Array.of(7, -8, 9));
  assert.deepEqual(arena.read(3), Float32Array.of(7, -8, 9), 'the slot itself is unchanged');
});

test('beyond one 4 GiB memory: ERR_CAPACITY, and nothing is allocated', () => {
  const arena = new VectorArena(1024);
  assert.equal(arena.maxSlots, Math.floor((2 ** 32 - arena.vectorsByteOffset) / 4096));
  assert.throws(() => arena.reserve(arena.maxSlots + 1), { code: 'ERR_CAPACITY' });
  assert.equal(arena.slotCapacity, 0);
});

test('a view over another arena’s memory reads its vectors, follows its growth, and scores in its own scratch area', () => {
  const owner = new VectorArena(3, { scratchAreas: 3, scratchIndex: 0 });
  owner.reserve(2);
  owner.write(0, Float32Array.of(1, 0, 0));
  owner.write(1, Float32Array.of(0, 2, 0));
  const view = new VectorArena(3, { scratchAreas: 3, scratchIndex: 2, memory: owner.wasmMemory });
  view.refreshViews(0);
  assert.equal(view.vectorsByteOffset, owner.vectorsByteOffset);
  assert.notEqual(view.queryByteOffset, owner.queryByteOffset);
  assert.deepEqual(view.read(1), Float32Array.of(0, 2, 0));

  const ownerKernel = createKernel(owner, 'Dot');
  const viewKernel = createKernel(view, 'Dot');
  owner.setQuery(Float32Array.of(1, 1, 1));
  view.setQuery(Float32Array.of(0, 3, 0));
  ownerKernel.scoreRange(0, 2);
  viewKernel.scoreRange(0, 2);
  const scores = (arena: VectorArena): number[] => Array.from(arena.floats.subarray(arena.scoresByteOffset >> 2, (arena.scoresByteOffset >> 2) + 2));
  assert.deepEqual(scores(owner), [1, 2], 'the view’s query did not overwrite the owner’s');
  assert.deepEqual(scores(view), [0, 6]);

  const far = owner.slotCapacity + 10;
  owner.reserve(far + 1);
  owner.write(far, Float32Array.of(4, 5, 6));
  view.reserve(far + 1);
  assert.deepEqual(view.read(far), Float32Array.of(4, 5, 6), 'the view re-reads the grown buffer');
  assert.throws(() => view.reserve(view.slotCapacity + 1), RangeError, 'a view never grows the memory');
});
