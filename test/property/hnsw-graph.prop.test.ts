/**
 * HNSW under random seeded sequences of inserts, updates (re-upserts) and deletes, with small m
 * so lists overflow and get pruned often: after every operation the graph has no self or
 * duplicate links, respects degree bounds, reaches every live point from the anchor, never
 * returns a deleted point, and returns results sorted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { testSeed, withSeed } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

for (const [distance, m] of [
  ['euclid', 4],
  ['cosine', 6],
  ['dot', 8],
] as const) {
  test(`graph invariants hold through random insert/update/delete (${distance}, m=${m}, seed ${testSeed(m * 31)})`, async (t) => {
    const db = Database.open(tempDbPath(t));
    t.after(() => db.close());
    await withSeed(testSeed(m * 31), async (rng) => {
      await db.createCollection({ name: 'g', vector_size: 6, distance, hnsw: true, parameters: { m, ef_construction: 32 } });
      const collection = db.collection('g');
      const live = new Map<string, number[]>();
      const vector = () => Array.from({ length: 6 }, () => Math.round(rng.gaussian() * 100) / 100);
      for (let step = 0; step < 60; step++) {
        const action = rng.next();
        if (action < 0.55 || live.size < 20) {
          const points = Array.from({ length: 1 + rng.int(40) }, () => ({ id: `p${rng.int(400)}`, vector: vector() }));
          await collection.upsert(points);
          for (const p of points) live.set(p.id, p.vector);
        } else if (action < 0.85) {
          const ids = [...live.keys()].filter(() => rng.next() < 0.2);
          const { deleted } = await collection.deleteIds(ids);
          assert.equal(deleted, ids.length, `step ${step}`);
          for (const id of ids) live.delete(id);
        } else {
          // Payload-only update of some points (same vector) and vector updates of others.
          const ids = [...live.keys()].filter(() => rng.next() < 0.1);
          const points = ids.map((id, i) => ({ id, vector: i % 2 === 0 ? (live.get(id) as number[]) : vector(), payload: { step } }));
          await collection.upsert(points);
          for (const p of points) live.set(p.id, p.vector);
        }
        assert.deepEqual(collection.checkIntegrity(), [], `step ${step}`);
        assert.equal(collection.pointsCount, live.size, `step ${step}`);
        const hits = collection.search({ vector: vector(), limit: 15, with_vector: true });
        assert.equal(hits.length, Math.min(15, live.size), `step ${step}: result count`);
        for (const hit of hits) {
          assert.ok(live.has(hit.id), `step ${step}: deleted point ${hit.id} returned`);
          const expected = live.get(hit.id) as number[];
          if (distance !== 'cosine') assert.deepEqual(hit.vector, expected.map(Math.fround), `step ${step}: stale vector for ${hit.id}`);
        }
        const scores = hits.map((h) => h.score);
        const sorted = [...scores].sort((a, b) => (distance === 'euclid' ? a - b : b - a));
        assert.deepEqual(scores, sorted, `step ${step}: results not sorted`);
      }
    });
  });
}
