/**
 * The review's reproductions, through the embedded API on real files: filtered searches after
 * updates and deletes never touch a deleted point (they used to throw), a Dot collection of
 * non-negative vectors and a collection full of copies of one vector give every point to a wide
 * enough search (they used to lose a quarter of them).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import { testSeed, withSeed } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

test('filtered HNSW searches after re-upserts and deletes answer, with live matching points only', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await withSeed(testSeed(21), async (rng) => {
    await db.createCollection({ name: 'c', vector_size: 8, distance: 'euclid', hnsw: true });
    const c = db.collection('c');
    const vector = () => Array.from({ length: 8 }, () => rng.gaussian());
    const points = Array.from({ length: 4000 }, (_, i) => ({ id: i, vector: vector(), payload: { g: i % 20 } }));
    await c.upsert(points);
    await c.upsert(points.slice(0, 200).map((p) => ({ ...p, vector: vector() })));
    await c.deleteIds(Array.from({ length: 150 }, (_, i) => String(1000 + i * 7)));
    const deleted = new Set(Array.from({ length: 150 }, (_, i) => String(1000 + i * 7)));
    const filter = parseFilter({ must_not: [{ key: 'g', match: { any: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] } }] });
    for (const walk of ['two-hop', 'plain'] as const) {
      for (let q = 0; q < 30; q++) {
        const hits = c.search({ vector: vector(), limit: 10, filter, params: { filter_walk: walk, strategy: 'graph-filtered' } });
        assert.equal(hits.length, 10, `${walk}: result count`);
        for (const hit of hits) {
          assert.ok(!deleted.has(hit.id), `${walk}: deleted point ${hit.id} returned`);
          assert.ok((hit.payload?.g as number) >= 15, `${walk}: ${hit.id} does not match the filter`);
        }
      }
    }
  });
});

test('Dot on non-negative vectors: a search with limit 2000 and ef 4000 over 3000 points returns 2000', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await withSeed(testSeed(22), async (rng) => {
    await db.createCollection({ name: 'c', vector_size: 16, distance: 'dot', hnsw: true });
    const c = db.collection('c');
    await c.upsert(Array.from({ length: 3000 }, (_, i) => ({ id: i, vector: Array.from({ length: 16 }, () => rng.next()) })));
    const query = Array.from({ length: 16 }, () => rng.next());
    const hits = c.search({ vector: query, limit: 2000, params: { ef: 4000 } });
    const exact = c.search({ vector: query, limit: 2000, params: { exact: true } });
    assert.equal(hits.length, 2000);
    assert.deepEqual(
      hits.map((h) => h.id),
      exact.map((h) => h.id),
    );
    assert.deepEqual(c.checkIntegrity(), []);
  });
});

test('1,000 copies of one vector among 1,000 others, upserted in batches: a search at that vector finds all copies', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await withSeed(testSeed(23), async (rng) => {
    for (const distance of ['euclid', 'cosine'] as const) {
      await db.createCollection({ name: distance, vector_size: 8, distance, hnsw: true });
      const c = db.collection(distance);
      const copy = Array.from({ length: 8 }, () => rng.gaussian());
      const points = Array.from({ length: 2000 }, (_, i) => ({ id: i, vector: i % 2 === 0 ? copy : Array.from({ length: 8 }, () => rng.gaussian()) }));
      for (let i = points.length - 1; i > 0; i--) {
        const j = rng.int(i + 1);
        [points[i], points[j]] = [points[j] as (typeof points)[number], points[i] as (typeof points)[number]];
      }
      for (let i = 0; i < points.length; i += 100) await c.upsert(points.slice(i, i + 100));
      const hits = c.search({ vector: copy, limit: 1000, params: { ef: 2000 } });
      const copies = hits.filter((h) => Number(h.id) % 2 === 0);
      assert.equal(copies.length, 1000, `${distance}: copies found`);
      assert.deepEqual(c.checkIntegrity(), [], distance);
    }
  });
});
