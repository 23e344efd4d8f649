/**
 * Qdrant's `lookup_from` on the Qdrant port: Qdrant's own cases (tests/openapi/
 * test_multicollection_reco.py, with the other collection's unnamed vector, since kith has no
 * named ones): a recommendation by ids of another collection equals the one by their vectors,
 * batches mixing lookups, the query API's nearest id, groups; the errors (an unknown collection
 * or id, another dimension, a named vector, prefetches).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QDRANT_BASIC_VECTORS } from '../helpers/qdrant-basic.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

test("Qdrant's lookup_from cases: ids of another collection stand for their vectors", async (t) => {
  const { url } = await startQdrant(t);
  const call = async (method: string, path: string, body?: Body, status = 200): Promise<Body> => {
    const r = await http(url, method, path, body);
    assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
    return r.body;
  };
  await call('PUT', '/collections/a', { vectors: { size: 4, distance: 'Dot' } });
  await call('PUT', '/collections/a/points?wait=true', { points: QDRANT_BASIC_VECTORS.map((vector, i) => ({ id: i + 1, vector, payload: { g: i % 2 } })) });
  await call('PUT', '/collections/b', { vectors: { size: 4, distance: 'Dot' } });
  await call('PUT', '/collections/b/points?wait=true', {
    points: [
      { id: 1, vector: [1, 0, 0, 0] },
      { id: ZERO_UUID, vector: [0, 1, 0, 0] },
      { id: 2, vector: [0, 0, 0, 2] },
    ],
  });
  const lookup = { collection: 'b' };
  const one = await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [1], with_payload: true, lookup_from: lookup });
  assert.equal(one.result.length, 3);
  assert.equal(one.result[0].id, 8, 'the vector with the largest first component');
  const batch = await call('POST', '/collections/a/points/recommend/batch', {
    searches: [
      { limit: 3, positive: [1], lookup_from: lookup },
      { limit: 3, positive: [ZERO_UUID], lookup_from: lookup },
      { limit: 3, positive: [1] },
    ],
  });
  assert.deepEqual(
    batch.result.map((r: Body[]) => r.length),
    [3, 3, 3],
  );
  assert.equal(batch.result[0][0].id, 8);
  assert.equal(batch.result[1][0].id, 7, 'the vector with the largest second component');
  assert.ok(!batch.result[2].some((h: Body) => h.id === 1), 'without lookup_from the example is left out');

  const byId = await call('POST', '/collections/a/points/recommend', { positive: [1], negative: [2], limit: 10, lookup_from: { collection: 'b', vector: '' } });
  const byVector = await call('POST', '/collections/a/points/recommend', { positive: [[1, 0, 0, 0]], negative: [[0, 0, 0, 2]], limit: 10 });
  assert.deepEqual(byId.result, byVector.result);
  assert.equal(byId.result.length, 8, "a lookup's ids are another collection's points: none is left out here");

  const nearest = await call('POST', '/collections/a/points/query', { query: 1, lookup_from: lookup, limit: 8 });
  const plain = await call('POST', '/collections/a/points/query', { query: [1, 0, 0, 0], limit: 8 });
  assert.deepEqual(nearest.result.points, plain.result.points);
  const recommended = await call('POST', '/collections/a/points/query', { query: { recommend: { positive: [ZERO_UUID] } }, lookup_from: lookup, limit: 2 });
  assert.equal(recommended.result.points[0].id, 7);
  const grouped = await call('POST', '/collections/a/points/recommend/groups', { positive: [1], lookup_from: lookup, group_by: 'g', group_size: 2, limit: 2 });
  assert.equal(grouped.result.groups.length, 2);
  assert.equal(grouped.result.groups[0].hits[0].id, 8);

  await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [1], lookup_from: { collection: 'unknown_collection' } }, 404);
  await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [1], lookup_from: { collection: 'b', vector: 'other' } }, 400);
  await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [99], lookup_from: lookup }, 404);
  await call('PUT', '/collections/c5', { vectors: { size: 5, distance: 'Dot' } });
  await call('PUT', '/collections/c5/points?wait=true', { points: [{ id: 1, vector: [1, 0, 0, 0, 0] }] });
  const wrongSize = await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [1], lookup_from: { collection: 'c5' } }, 400);
  assert.match(wrongSize.status.error, /5 dimensions/);
  await call('POST', '/collections/a/points/query', { prefetch: { query: [1, 0, 0, 0] }, query: 1, lookup_from: lookup }, 400);
});
