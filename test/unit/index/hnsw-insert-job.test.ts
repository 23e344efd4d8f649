/**
 * HnswIndex.addMany with a helper index over the same memory and graph (the job's mechanics; real
 * threads are in test/integration/parallel-build.test.ts): levels, entry point and top level equal
 * the one-by-one build's, the graph is sound and complete on duplicates and Dot, the job's orphan
 * log is read back (or every node is looked at when it overflowed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkIntegrity } from '../../../src/index/hnsw/check-integrity.js';
import { newInsertJob, PARALLEL_INSERT_MIN, takeJobOrphans } from '../../../src/index/hnsw/insert-job.js';
import { testSeed, withSeed } from '../../helpers/data.js';
import { fixture, helperIndex } from './hnsw-fixture.js';

for (const distance of ['Euclid', 'Cosine', 'Dot'] as const) {
  test(`addMany with a helper: the serial build's levels and entry point, a sound and complete graph (${distance})`, () => {
    withSeed(testSeed(91), (rng) => {
      const copy = Array.from({ length: 6 }, () => rng.next());
      // Non-negative, unequal lengths, and one in four a copy of one vector.
      const vectors = Array.from({ length: 1200 }, (_, i) => (i % 4 === 0 ? copy : Array.from({ length: 6 }, () => rng.next() * (1 + (i % 5)))));
      const serial = fixture(distance, 6, 6, 32);
      for (const [slot, v] of vectors.entries()) serial.add(slot, v);
      const shared = fixture(distance, 6, 6, 32, 2);
      const helper = helperIndex(shared, distance, 1);
      for (let start = 0; start < vectors.length; start += 100) {
        shared.addMany(
          vectors.slice(start, start + 100).map((v, i) => [start + i, v] as const),
          helper,
        );
      }
      assert.ok(shared.index.inserts.shared > vectors.length / 2, `only ${shared.index.inserts.shared} inserts went through jobs`);
      const a = serial.index.graph;
      const b = shared.index.graph;
      for (let slot = 0; slot < vectors.length; slot++) assert.equal(b.levelOf(slot), a.levelOf(slot), `level of slot ${slot}`);
      assert.equal(b.entryPoint, a.entryPoint);
      assert.equal(b.maxLevel, a.maxLevel);
      assert.deepEqual(checkIntegrity(shared.index, (s) => shared.slots.isLive(s)), []);
      const hits = shared.index.search({ query: shared.arena.read(1), k: vectors.length, ef: vectors.length });
      assert.equal(hits.slots.length, vectors.length, 'a search with ef = n returns every point');
    });
  });
}

test(`addMany below ${PARALLEL_INSERT_MIN} slots, or without helpers, builds exactly the one-by-one graph`, () => {
  withSeed(testSeed(92), (rng) => {
    const vectors = Array.from({ length: 300 }, () => Array.from({ length: 4 }, () => rng.gaussian()));
    const serial = fixture('Euclid', 4, 4, 16);
    for (const [slot, v] of vectors.entries()) serial.add(slot, v);
    const small = fixture('Euclid', 4, 4, 16, 2);
    const helper = helperIndex(small, 'Euclid', 1);
    for (let start = 0; start < vectors.length; start += PARALLEL_INSERT_MIN - 1) {
      small.addMany(
        vectors.slice(start, start + PARALLEL_INSERT_MIN - 1).map((v, i) => [start + i, v] as const),
        helper,
      );
    }
    assert.equal(small.index.inserts.shared, 0);
    for (let slot = 0; slot < vectors.length; slot++) {
      for (let layer = 0; layer <= serial.index.graph.levelOf(slot); layer++) {
        assert.deepEqual(small.index.graph.neighbors(slot, layer), serial.index.graph.neighbors(slot, layer), `slot ${slot} layer ${layer}`);
      }
    }
  });
});

test('a job reads back its logged orphans, and looks at every node once the log overflowed', () => {
  const f = fixture('Euclid', 2, 2, 8);
  for (let slot = 0; slot < 40; slot++) f.add(slot, [slot, slot % 7]);
  const job = newInsertJob([1, 2, 3], f.index.graph.entryPoint, f.index.graph.maxLevel);
  job.orphanLog[0] = 2;
  job.orphanLog[1] = 17;
  job.orphanLog[2] = 23;
  assert.deepEqual(takeJobOrphans(job, f.index.graph), [17, 23]);
  // Orphan slot 5 by hand: every layer-0 list that links to it drops the link.
  const g = f.index.graph;
  for (let slot = 0; slot < 40; slot++) {
    const links = g.neighbors(slot, 0);
    if (links.includes(5)) {
      const kept = links.filter((s) => s !== 5);
      g.setLinks(slot, 0, kept, kept.length);
    }
  }
  g.takeOrphans();
  job.orphanLog[0] = job.orphanLog.length;
  const orphans = takeJobOrphans(job, g);
  assert.ok(orphans.includes(5), `orphans found by looking at every node: ${orphans.join(', ')}`);
  for (const slot of orphans) assert.equal(g.inDegreeOf(slot), 0, `slot ${slot} is no orphan`);
});
