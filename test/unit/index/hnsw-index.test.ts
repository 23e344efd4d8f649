/**
 * The HNSW index alone (no database): an arena, the kernels and a slot table, on the data users
 * really have — many copies of one vector, non-negative vectors under Dot, zero and tiny vectors,
 * one and two dimensions — through inserts, deletes and compaction. After each phase the graph
 * must be sound (checkIntegrity: bounds, exact in-degrees, a sound rooted tree, every live node
 * reachable from the anchor), and a search with ef at least the number of points must return
 * every live point.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SeededRng } from '../../../src/core/rng.js';
import { checkIntegrity } from '../../../src/index/hnsw/check-integrity.js';
import { testSeed, withSeed } from '../../helpers/data.js';
import { type Fixture, fixture, type Slots } from './hnsw-fixture.js';

/** The graph must be sound and complete as each operation leaves it: nothing mends it afterwards. */
function assertSoundAndComplete(f: Fixture, where: string): void {
  assert.deepEqual(
    checkIntegrity(f.index, (s) => f.slots.isLive(s)),
    [],
    `${where}: integrity`,
  );
  const live = f.slots.liveCount;
  const query = f.arena.read(firstLive(f.slots));
  const hits = f.index.search({ query, k: live, ef: live });
  assert.equal(hits.slots.length, live, `${where}: a search with ef = ${live} must return every live point`);
  for (const slot of hits.slots) assert.ok(f.slots.isLive(slot), `${where}: returned non-live slot ${slot}`);
}

function firstLive(slots: Slots): number {
  for (let s = 0; s < slots.slotCount; s++) if (slots.isLive(s)) return s;
  throw new Error('no live slot');
}

/** Inserts `vectors` in order, deletes a third at random, re-inserts some, compacts; checks after each phase. */
function exercise(f: Fixture, vectors: number[][], rng: SeededRng, name: string): void {
  vectors.forEach((v, slot) => {
    f.add(slot, v);
  });
  assertSoundAndComplete(f, `${name}: after ${vectors.length} inserts`);
  const removed: number[] = [];
  for (let slot = 0; slot < vectors.length; slot++) {
    if (rng.next() < 1 / 3) {
      f.remove(slot);
      removed.push(slot);
    }
  }
  assertSoundAndComplete(f, `${name}: after ${removed.length} deletes`);
  f.index.compact();
  assertSoundAndComplete(f, `${name}: after compaction`);
  // Freed slots come back with new vectors, as the point table reuses them.
  for (const slot of removed.slice(0, removed.length >> 1)) f.add(slot, vectors[rng.int(vectors.length)] as number[]);
  assertSoundAndComplete(f, `${name}: after re-inserts`);
}

for (const distance of ['Euclid', 'Cosine', 'Dot'] as const) {
  test(`HNSW keeps 1,000 copies of one vector among 800 others reachable (${distance})`, () => {
    withSeed(testSeed(11), (rng) => {
      const copy = Array.from({ length: 8 }, () => rng.gaussian());
      const vectors = Array.from({ length: 1800 }, (_, i) => (i % 9 < 5 ? copy : Array.from({ length: 8 }, () => rng.gaussian())));
      const f = fixture(distance, 8, 8);
      exercise(f, vectors, rng, `${distance} copies`);
      // Every copy is found at distance 0 (similarity of the copy itself) by a wide search at it.
      const copies = f.slots.liveCount;
      const hits = f.index.search({ query: f.arena.read(0), k: copies, ef: copies });
      const exact = hits.slots.filter((s) => f.arena.sameVector(s, 0)).length;
      let stored = 0;
      for (let s = 0; s < f.slots.slotCount; s++) if (f.slots.isLive(s) && f.arena.sameVector(s, 0)) stored++;
      assert.equal(exact, stored, 'every live copy is returned');
    });
  });
}

test('HNSW under Dot on non-negative vectors keeps every point reachable and links more than one neighbour', () => {
  withSeed(testSeed(12), (rng) => {
    const vectors = Array.from({ length: 2000 }, () => Array.from({ length: 16 }, () => rng.next()));
    const f = fixture('Dot', 16, 16);
    exercise(f, vectors, rng, 'dot non-negative');
    const g = f.index.graph;
    const degrees: number[] = [];
    for (let s = 0; s < g.capacity; s++) if (g.isLive(s)) degrees.push(g.neighbors(s, 0).length);
    degrees.sort((a, b) => a - b);
    assert.ok((degrees[degrees.length >> 1] as number) >= 8, `median layer-0 degree ${degrees[degrees.length >> 1]}`);
  });
});

for (const dim of [1, 2]) {
  test(`HNSW in ${dim} dimension(s) with small integer values (ties everywhere) stays complete`, () => {
    withSeed(testSeed(13 + dim), (rng) => {
      const vectors = Array.from({ length: 600 }, () => Array.from({ length: dim }, () => rng.int(7) - 3));
      for (const distance of ['Euclid', 'Dot', 'Cosine'] as const) exercise(fixture(distance, dim, 4, 16), vectors, rng, `${distance} dim ${dim}`);
    });
  });
}

test('HNSW with zero and tiny vectors (1e-30) stays complete under every metric', () => {
  withSeed(testSeed(16), (rng) => {
    const vectors = Array.from({ length: 500 }, (_, i) =>
      Array.from({ length: 4 }, () => (i % 3 === 0 ? 0 : i % 3 === 1 ? rng.gaussian() * 1e-30 : rng.gaussian())),
    );
    for (const distance of ['Euclid', 'Dot', 'Cosine'] as const) exercise(fixture(distance, 4, 6, 32), vectors, rng, `${distance} zero/tiny`);
  });
});

test('a graph with m = 2 (lists of 2 and 4) stays complete through churn', () => {
  withSeed(testSeed(17), (rng) => {
    const f = fixture('Euclid', 3, 2, 8);
    const vectors = Array.from({ length: 400 }, () => Array.from({ length: 3 }, () => rng.gaussian()));
    exercise(f, vectors, rng, 'm=2');
  });
});
