/**
 * HnswIndex.addMany with a helper index over the same memory and graph (the job's mechanics; real
 * threads are in test/integration/parallel-build.test.ts): levels, entry point and top level equal
 * the one-by-one build's, the graph is sound and complete on duplicates and Dot, and nodes the job
 * leaves unrooted are rooted by the owner afterwards.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkIntegrity } from '../../../src/index/hnsw/check-integrity.js';
import { type InsertHelpers, PARALLEL_INSERT_MIN } from '../../../src/index/hnsw/insert-job.js';
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
      assert.deepEqual(
        checkIntegrity(shared.index, (s) => shared.slots.isLive(s)),
        [],
      );
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

test('nodes a job leaves unrooted are rooted by the owner when the job ends', () => {
  withSeed(testSeed(93), (rng) => {
    const f = fixture('Euclid', 3, 4, 16, 2);
    for (let slot = 0; slot < 200; slot++) f.add(slot, [rng.gaussian(), rng.gaussian(), rng.gaussian()]);
    const helper = helperIndex(f, 'Euclid', 1);
    const g = f.index.graph;
    const cut: number[] = [];
    // The helper links the whole job, then every link to a few of its childless nodes is taken
    // away, as if the helpers' pruning had dropped them: only the owner's rooting can bring them back.
    const cutting: InsertHelpers = {
      join(job) {
        helper.join(job);
        for (const slot of job.slots) {
          if (cut.length === 5) break;
          if (g.neighbors(slot, 0).some((child) => g.tree.isPinned(slot, child))) continue;
          g.tree.release(slot);
          for (let node = 0; node < g.capacity; node++) {
            const links = g.neighbors(node, 0);
            if (!g.has(node) || !links.includes(slot)) continue;
            const kept = links.filter((s) => s !== slot);
            g.setLinks(node, 0, kept, kept.length);
          }
          cut.push(slot);
        }
      },
    };
    const entries = Array.from({ length: 100 }, (_, i) => [200 + i, [rng.gaussian(), rng.gaussian(), rng.gaussian()]] as const);
    f.addMany(entries, cutting);
    assert.equal(cut.length, 5, 'the job had childless nodes to cut');
    for (const slot of cut) assert.ok(g.tree.isRooted(slot), `slot ${slot} was rooted again`);
    assert.deepEqual(
      checkIntegrity(f.index, (s) => f.slots.isLive(s)),
      [],
    );
    const hits = f.index.search({ query: f.arena.read(cut[0] as number), k: 300, ef: 300 });
    assert.equal(hits.slots.length, 300, 'a search with ef = n returns every point');
  });
});
