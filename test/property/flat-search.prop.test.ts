/**
 * The Flat index equals brute force: for random collections and queries, all three metrics,
 * results are the top-k of a full sort by (score, id). Integer vectors make scores exact in
 * float32, so ties are frequent and must break by id.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { integerVectors, testSeed, withSeed } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

type Metric = 'dot' | 'euclid' | 'cosine';

function bruteForce(metric: Metric, query: number[], points: Array<{ id: string; vector: number[] }>, k: number) {
  const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  const scored = points.map((p) => {
    let score: number;
    if (metric === 'dot') score = p.vector.reduce((s, x, i) => s + x * (query[i] as number), 0);
    else if (metric === 'euclid') score = Math.sqrt(p.vector.reduce((s, x, i) => s + (x - (query[i] as number)) ** 2, 0));
    else {
      const nq = norm(query);
      const np = norm(p.vector);
      score = nq === 0 || np === 0 ? 0 : p.vector.reduce((s, x, i) => s + x * (query[i] as number), 0) / (nq * np);
    }
    return { id: p.id, score };
  });
  const asc = metric === 'euclid';
  scored.sort((a, b) => (a.score !== b.score ? (asc ? a.score - b.score : b.score - a.score) : a.id < b.id ? -1 : 1));
  return scored.slice(0, k);
}

for (const metric of ['dot', 'euclid', 'cosine'] as const) {
  test(`flat search equals brute force (${metric})`, async (t) => {
    const seed = testSeed(metric.length * 1000 + 17);
    const db = Database.open(tempDbPath(t));
    t.after(() => db.close());
    await withSeed(seed, async (rng) => {
      for (let round = 0; round < 6; round++) {
        const dim = 1 + rng.int(9);
        const n = 1 + rng.int(300);
        const name = `c${round}`;
        await db.createCollection({ name, vector_size: dim, distance: metric });
        const collection = db.collection(name);
        const vectors = integerVectors(rng, n, dim, 2);
        const points = vectors.map((vector, i) => ({ id: `p${rng.int(1_000_000)}-${i}`, vector }));
        await collection.upsert(points.map((p) => ({ id: p.id, vector: p.vector, payload: { i: Number(p.id.split('-')[1]) } })));
        for (let q = 0; q < 20; q++) {
          const query = integerVectors(rng, 1, dim, 2)[0] as number[];
          const k = 1 + rng.int(15);
          const got = collection.search({ vector: query, limit: k }).map((h) => ({ id: h.id, score: h.score }));
          const want = bruteForce(metric, query, points, k);
          assert.equal(got.length, want.length, `round ${round} query ${q}: length`);
          for (let i = 0; i < want.length; i++) {
            const w = want[i] as { id: string; score: number };
            const g = got[i] as { id: string; score: number };
            // Cosine normalises in float32, so near-equal scores may legitimately swap.
            if (metric === 'cosine') {
              assert.ok(Math.abs(g.score - w.score) < 1e-5, `round ${round} query ${q} rank ${i}: ${g.score} vs ${w.score}`);
            } else {
              assert.deepEqual(g, w, `round ${round} query ${q} rank ${i}`);
            }
          }
        }
      }
    });
  });
}
