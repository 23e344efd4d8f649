/**
 * Over HTTP, the review's first failure: filtered searches of an HNSW collection after re-upserts
 * with new vectors and after deletes answered 500 (the filtered walk asked the filter about
 * deleted nodes). Every planner path must now answer 200 with live, matching points only, and
 * exactly the matching points when a wide search asks for all of them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openTestApp } from '../helpers/app.js';
import { testSeed, withSeed } from '../helpers/data.js';

test('filtered HNSW searches after re-upserts and deletes answer 200 with live matching points (HTTP)', async (t) => {
  const { call } = await openTestApp(t);
  await withSeed(testSeed(31), async (rng) => {
    const vector = () => Array.from({ length: 8 }, () => rng.gaussian());
    const created = await call('POST', '/collections', { name: 'h', vector_size: 8, distance: 'euclid', hnsw: true });
    assert.equal(created.status, 200, created.raw);
    const points = Array.from({ length: 4000 }, (_, i) => ({ id: i, vector: vector(), payload: { g: i % 20 } }));
    assert.equal((await call('PUT', '/collections/h/points', { points })).status, 200);
    const moved = points.slice(0, 200).map((p) => ({ ...p, vector: vector() }));
    assert.equal((await call('PUT', '/collections/h/points', { points: moved })).status, 200);
    const deleted = Array.from({ length: 150 }, (_, i) => 1000 + i * 7);
    const gone = await call('POST', '/collections/h/points/delete', { points: deleted });
    assert.equal(gone.body.result.deleted, 150, gone.raw);
    const dead = new Set(deleted.map(String));
    const live = new Set(points.map((p) => String(p.id)).filter((id) => !dead.has(id)));
    const filter = { must_not: [{ key: 'g', match: { any: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] } }] };
    for (let q = 0; q < 40; q++) {
      const r = await call('POST', '/collections/h/points/search', { vector: vector(), limit: 10, filter, params: { explain: true } });
      assert.equal(r.status, 200, r.raw);
      assert.equal(r.body.result.length, 10, r.raw);
      for (const hit of r.body.result) {
        assert.ok(live.has(hit.id), `deleted or unknown point ${hit.id} returned`);
        assert.ok(hit.payload.g >= 15, `${hit.id} does not match the filter`);
      }
    }
    // Every matching live point, found by a search asking for all of them.
    const matching = [...live].filter((id) => Number(id) % 20 >= 15);
    const all = await call('POST', '/collections/h/points/search', { vector: vector(), limit: 2000, filter, params: { ef: 4000 } });
    assert.equal(all.status, 200, all.raw);
    assert.deepEqual(all.body.result.map((h: { id: string }) => h.id).sort(), matching.sort());
  });
});
