/**
 * Every live point stays findable after every single graph operation, with no later check to
 * mend what the operation broke: after each batch of inserts (alone and shared with a helper),
 * each delete and each compaction, a search with ef at least the number of live points returns
 * every live point, from any query, and the graph is sound (checkIntegrity). The data is the kind
 * that cuts graphs apart: groups of exact copies (more copies than m and than ef_construction)
 * among random points, in one and two dimensions too, under every metric, with m from 2 up to the
 * default. Before the rooted tree (index/hnsw/graph-mender.ts) this failed: pruning a full list cut off
 * groups of nodes that only linked to each other, and only a periodic whole-graph check found them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Distance } from '../../../src/core/distance.js';
import type { SeededRng } from '../../../src/core/rng.js';
import { checkIntegrity } from '../../../src/index/hnsw/check-integrity.js';
import { testSeed, withSeed } from '../../helpers/data.js';
import { type Fixture, fixture, helperIndex } from './hnsw-fixture.js';

function randomVector(rng: SeededRng, dim: number, distance: Distance): number[] {
  // Non-negative under Dot: the data whose graph the heuristic prunes hardest.
  return Array.from({ length: dim }, () => (distance === 'Dot' ? rng.next() : rng.gaussian()));
}

/** Every live point comes back from a search with ef = live points, at each query; and the graph is sound. */
function assertAllFindable(f: Fixture, queries: readonly number[][], where: string): void {
  const live = f.slots.liveCount;
  for (const query of queries) {
    const hits = f.index.search({ query: Float32Array.from(query), k: live, ef: live });
    assert.equal(hits.slots.length, live, `${where}: a search with ef = ${live} at [${query.map((x) => x.toFixed(2))}] returns ${hits.slots.length}`);
  }
  assert.deepEqual(
    checkIntegrity(f.index, (s) => f.slots.isLive(s)),
    [],
    `${where}: integrity`,
  );
}

interface Case {
  readonly distance: Distance;
  readonly dim: number;
  readonly m: number;
  readonly efConstruction: number;
  readonly shared: boolean;
}

const cases: Case[] = [];
for (const distance of ['Euclid', 'Cosine', 'Dot'] as const) {
  for (const dim of [1, 2, 8]) {
    cases.push({ distance, dim, m: 2, efConstruction: 4, shared: false });
    cases.push({ distance, dim, m: 4, efConstruction: 16, shared: true });
  }
  cases.push({ distance, dim: 8, m: 16, efConstruction: 200, shared: false });
}

for (const c of cases) {
  const seed = testSeed(7000 + c.dim * 100 + c.m);
  test(`every live point stays findable after each insert batch, delete and compaction (${c.distance}, dim ${c.dim}, m ${c.m}, ${c.shared ? 'shared inserts' : 'alone'}, seed ${seed})`, () => {
    withSeed(seed, (rng) => {
      const f = fixture(c.distance, c.dim, c.m, c.efConstruction, c.shared ? 2 : 1);
      const helper = c.shared ? helperIndex(f, c.distance, 1) : undefined;
      // Three groups of copies; the first holds more copies than ef_construction and than 2m.
      const groups = [randomVector(rng, c.dim, c.distance), randomVector(rng, c.dim, c.distance), randomVector(rng, c.dim, c.distance)];
      const queries = [...groups, randomVector(rng, c.dim, c.distance)];
      const live: number[] = [];
      let next = 0;
      for (let batch = 0; batch < 14; batch++) {
        const size = [1, 3, 30, 120, 300][rng.int(5)] as number;
        const entries = Array.from({ length: size }, () => {
          const r = rng.next();
          const vector = r < 0.35 ? (groups[0] as number[]) : r < 0.5 ? (groups[1 + rng.int(2)] as number[]) : randomVector(rng, c.dim, c.distance);
          return [next++, vector] as const;
        });
        f.addMany(entries, helper);
        for (const [slot] of entries) live.push(slot);
        assertAllFindable(f, queries, `batch ${batch} (${size} inserts)`);
        if (rng.next() < 0.5) {
          // Deletes favour the copies: the nodes that hold the groups together.
          for (let i = 0, n = rng.int(Math.ceil(live.length / 5)); i < n && live.length > 1; i++) {
            const at = rng.int(live.length);
            const slot = live[at] as number;
            live[at] = live[live.length - 1] as number;
            live.pop();
            f.remove(slot);
            if (i % 10 === 0) assertAllFindable(f, queries, `batch ${batch}, delete ${i}`);
          }
          assertAllFindable(f, queries, `batch ${batch} after deletes`);
          if (f.index.needsCompaction()) {
            f.index.compact();
            assertAllFindable(f, queries, `batch ${batch} after compaction`);
          }
        }
      }
    });
  });
}
