/**
 * MMR in the engine (segment/mmr.ts): the picks equal a plain greedy brute force over the same
 * candidates, on the service thread and on the search threads alike, on nasty data (duplicates,
 * zero vectors, non-negative vectors under Dot, tiny dimensions), after re-upserts and deletes and
 * a restart; hits keep their score against the query, and MMR's scoring is counted in `explain`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Collection } from '../../src/collection/collection.js';
import type { ScoredPoint } from '../../src/search/collection-search.js';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const N = 300;

/** Integer vectors in 0..2 with repeats and zeros: exact in float32, many ties. */
function vectors(rng: SeededRng, dim: number): number[][] {
  const base = Array.from({ length: 40 }, () => Array.from({ length: dim }, () => rng.int(3)));
  return Array.from({ length: N }, (_, i) => (i % 17 === 0 ? new Array(dim).fill(0) : (rng.pick(base) as number[])));
}

function similarity(distance: 'Cosine' | 'Euclid' | 'Dot', a: readonly number[], b: readonly number[]): number {
  if (distance === 'Euclid') return -Math.sqrt(a.reduce((s, x, i) => s + (x - (b[i] as number)) ** 2, 0));
  return a.reduce((s, x, i) => s + x * (b[i] as number), 0);
}

/** The greedy pick over the candidates (best first), by the stored vectors (as the engine scores them). */
function greedy(c: Collection, candidates: readonly ScoredPoint[], distance: 'Cosine' | 'Euclid' | 'Dot', diversity: number, count: number): string[] {
  const stored = new Map(candidates.map((h) => [h.id, c.getPoint(h.id).vector]));
  const relevance = new Map(candidates.map((h) => [h.id, distance === 'Euclid' ? -h.score : h.score]));
  const picked: string[] = [];
  const free = candidates.map((h) => h.id);
  while (picked.length < count && free.length > 0) {
    let best = 0;
    let bestValue = Number.NEGATIVE_INFINITY;
    free.forEach((id, i) => {
      const penalty = picked.length === 0 ? 0 : Math.max(...picked.map((p) => similarity(distance, stored.get(p) as number[], stored.get(id) as number[])));
      const value = (1 - diversity) * (relevance.get(id) as number) - diversity * penalty;
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    });
    picked.push(free.splice(best, 1)[0] as string);
  }
  return picked;
}

for (const [distance, quantization] of [
  ['Dot', 'none'],
  ['Euclid', 'none'],
  ['Cosine', 'none'],
] as const) {
  test(`MMR picks equal a greedy brute force, on the service thread and on search threads (${distance})`, async (t) => {
    const seed = testSeed(4242);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const dim = rng.pick([1, 2, 3, 5]);
    const path = tempDbPath(t);
    let here = Database.open(path);
    await here.createCollection({ name: 'c', vector_size: dim, distance, hnsw: true, quantization, parameters: { m: 4, ef_construction: 16 } });
    const data = vectors(rng, dim);
    await here.collection('c').upsert(data.map((vector, i) => ({ id: i % 5 === 0 ? i : `p${i}`, vector, payload: { i } })));
    // Re-upserts and deletes before searching: slots are reused and tombstoned.
    await here
      .collection('c')
      .upsert(data.slice(0, 60).map((vector, i) => ({ id: `p${i + 1}`, vector: vector.map((x) => 2 - x), payload: { i, again: true } })));
    await here.collection('c').deleteIds(Array.from({ length: 30 }, (_, i) => `p${3 * i + 2}`));
    await here.close();
    here = Database.open(path);
    const threaded = Database.open(tempDbPath(t), { threads: 2 });
    t.after(async () => {
      await here.close();
      await threaded.close();
    });
    // The same points in a second database served by threads: the answers must agree.
    const all = here.collection('c').search({ vector: new Array(dim).fill(1), limit: 1000, params: { exact: true }, with_vector: true });
    await threaded.createCollection({ name: 'c', vector_size: dim, distance, hnsw: false, quantization });
    await threaded.collection('c').upsert(all.map((h) => ({ id: h.id, vector: h.vector as number[], payload: h.payload ?? {} })));
    for (let q = 0; q < 12; q++) {
      const query = Array.from({ length: dim }, () => rng.int(3) - (distance === 'Dot' ? 0 : 1));
      const diversity = rng.pick([0, 0.3, 0.7, 1]);
      const candidates = 5 + rng.int(40);
      const limit = 1 + rng.int(8);
      const offset = rng.int(3);
      const what = `query ${JSON.stringify(query)} diversity ${diversity} candidates ${candidates} limit ${limit} offset ${offset} (seed ${seed})`;
      const pool = here.collection('c').search({ vector: query, limit: Math.max(candidates, offset + limit), params: { exact: true } });
      const expected = greedy(here.collection('c'), pool, distance, diversity, offset + limit).slice(offset);
      const request = { vector: query, limit, offset, mmr: { diversity, candidates }, params: { exact: true, explain: true } };
      const onService = here.collection('c').searchExplained(request);
      assert.deepEqual(
        onService.points.map((h) => h.id),
        expected,
        `service thread: ${what}`,
      );
      assert.ok(onService.explain.scored > pool.length || offset + limit <= 1 || pool.length <= 1, `MMR's pairwise scoring is counted: ${what}`);
      for (const h of onService.points) {
        const plain = pool.find((p) => p.id === h.id);
        assert.equal(h.score, plain?.score, `scores stay scores against the query: ${what}`);
      }
      const sent = threaded.collection('c').threadWorkCounts().all;
      const [onThreads] = await threaded.collection('c').searchBatch([request]);
      assert.deepEqual(
        onThreads?.points.map((h) => h.id),
        expected,
        `search threads: ${what}`,
      );
      assert.equal(threaded.collection('c').threadWorkCounts().all - sent, 2, `the candidates and the MMR picks both ran on a thread: ${what}`);
    }
  });
}
