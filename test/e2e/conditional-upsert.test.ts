/**
 * Conditional upserts (Qdrant's update_mode and update_filter) on both ports: Qdrant's
 * test_update_mode and test_conditional_update cases through its port, kith's `upserted` count of
 * the points written, and refusals naming the field.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient } from '../../src/api/client/kith-client.js';
import { http, startQdrant } from './qdrant-harness.js';

test("Qdrant's update_mode and update_filter cases", async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('c', { vectors: { size: 4, distance: 'Dot' } });
  await client.upsert('c', { wait: true, points: [1, 6].map((id) => ({ id, vector: [0.05, 0.61, 0.76, 0.74], payload: { city: 'Berlin' } })) });
  const put = (body: unknown) => http(url, 'PUT', '/collections/c/points?wait=true', body);
  const get = async (id: number) => (await http(url, 'GET', `/collections/c/points/${id}`)).body.result;
  // update_only: point 1 changes, 999 is not created.
  let r = await put({
    points: [
      { id: 1, vector: [9, 9, 9, 9], payload: { updated: true } },
      { id: 999, vector: [1, 1, 1, 1], payload: { new: true } },
    ],
    update_mode: 'update_only',
  });
  assert.equal(r.status, 200, r.text);
  assert.equal((await get(1)).payload.updated, true);
  assert.equal((await http(url, 'GET', '/collections/c/points/999')).status, 404);
  // insert_only: 999 is created, 1 is left as it is.
  r = await put({
    points: [
      { id: 1, vector: [5, 5, 5, 5], payload: { again: true } },
      { id: 999, vector: [1, 1, 1, 1], payload: { new: true } },
    ],
    update_mode: 'insert_only',
  });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual((await get(1)).payload, { updated: true });
  assert.deepEqual((await get(999)).payload, { new: true });
  // update_filter: point 6 (version 5) is rewritten only when its version is below the bound.
  await client.setPayload('c', { wait: true, points: [6], payload: { version: 5 } });
  const versioned = (version: number, below: number) =>
    put({
      points: [{ id: 6, vector: [1.1, 1.2, 1.3, 1.4], payload: { version, test: 'test_value' } }],
      update_filter: { must: { key: 'version', range: { lt: below } } },
    });
  assert.equal((await versioned(4, 4)).status, 200);
  assert.equal((await get(6)).payload.version, 5, 'not below 4: unchanged');
  assert.equal((await versioned(6, 6)).status, 200);
  assert.equal((await get(6)).payload.version, 6, 'below 6: rewritten');
  // A new point is written whatever the filter says.
  assert.equal(
    (await put({ points: [{ id: 7, vector: [1, 1, 1, 1], payload: {} }], update_filter: { must: { key: 'version', range: { lt: 0 } } } })).status,
    200,
  );
  assert.equal((await http(url, 'GET', '/collections/c/points/7')).status, 200);
  const bad = await put({ points: [{ id: 8, vector: [1, 1, 1, 1] }], update_mode: 'sometimes' });
  assert.equal(bad.status, 400);
  assert.match(bad.body.status.error, /update_mode/);
  assert.equal((await http(url, 'GET', '/collections/c/points/8')).status, 404, 'nothing written');
});

test("kith's port: update_mode and update_filter, `upserted` counting the points written", async (t) => {
  const { kithUrl } = await startQdrant(t);
  const kith = new KithClient(kithUrl);
  await kith.createCollection({ name: 'k', vector_size: 2, distance: 'dot' });
  await kith.upsert('k', [
    { id: 'a', vector: [1, 0], payload: { stage: 'draft' } },
    { id: 'b', vector: [0, 1], payload: { stage: 'final' } },
  ]);
  const points = [
    { id: 'a', vector: [2, 2], payload: { stage: 'edited' } },
    { id: 'b', vector: [3, 3], payload: { stage: 'edited' } },
    { id: 'c', vector: [4, 4], payload: { stage: 'new' } },
  ];
  const guarded = await kith.upsert('k', points, { update_filter: { must: [{ key: 'stage', match: { value: 'draft' } }] } });
  assert.equal(guarded.upserted, 2, 'a (a draft) and c (new); b is final');
  assert.deepEqual((await kith.getPoint('k', 'b')).payload, { stage: 'final' });
  assert.equal((await kith.upsert('k', points, { update_mode: 'insert_only' })).upserted, 0);
  assert.equal((await kith.upsert('k', [{ id: 'z', vector: [1, 1] }], { update_mode: 'update_only' })).upserted, 0);
  assert.equal((await http(kithUrl, 'GET', '/collections/k/points/z')).status, 404);
  const bad = await http(kithUrl, 'PUT', '/collections/k/points', { points, update_filter: { must: [{ key: 'stage', match: {} }] } });
  assert.equal(bad.status, 400);
  assert.match(bad.body.status.error, /update_filter/);
});

test('vector updates with update_filter on both ports: only matching points change, a missing id still refuses the whole request', async (t) => {
  const { client, url, kithUrl } = await startQdrant(t);
  await client.createCollection('v', { vectors: { size: 2, distance: 'Dot' } });
  await client.upsert('v', {
    wait: true,
    points: [
      { id: 1, vector: [1, 0], payload: { stage: 'draft' } },
      { id: 2, vector: [0, 1], payload: { stage: 'final' } },
      { id: 3, vector: [1, 1], payload: { stage: 'draft' } },
    ],
  });
  const vectorOf = async (id: number) => (await http(url, 'GET', `/collections/v/points/${id}`)).body.result.vector;
  const drafts = { must: [{ key: 'stage', match: { value: 'draft' } }] };
  // Qdrant's port (its JS client leaves update_filter out of updateVectors: sent as Python's client sends it): 1 is a draft, 2 keeps its vector.
  const put = await http(url, 'PUT', '/collections/v/points/vectors?wait=true', {
    points: [
      { id: 1, vector: [5, 5] },
      { id: 2, vector: [6, 6] },
    ],
    update_filter: drafts,
  });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(await vectorOf(1), [5, 5]);
  assert.deepEqual(await vectorOf(2), [0, 1], 'final: passed over');
  // In a batch too.
  const batch = await http(url, 'POST', '/collections/v/points/batch?wait=true', {
    operations: [
      {
        update_vectors: {
          points: [
            { id: 2, vector: [7, 7] },
            { id: 3, vector: [8, 8] },
          ],
          update_filter: drafts,
        },
      },
    ],
  });
  assert.equal(batch.status, 200, batch.text);
  assert.deepEqual(await vectorOf(2), [0, 1]);
  assert.deepEqual(await vectorOf(3), [8, 8]);
  // A missing id is a 404 whatever the filter, and nothing is written.
  const missing = await http(url, 'PUT', '/collections/v/points/vectors?wait=true', {
    points: [
      { id: 1, vector: [9, 9] },
      { id: 99, vector: [9, 9] },
    ],
    update_filter: drafts,
  });
  assert.equal(missing.status, 404, missing.text);
  assert.deepEqual(await vectorOf(1), [5, 5]);
  const bad = await http(url, 'PUT', '/collections/v/points/vectors', {
    points: [{ id: 1, vector: [9, 9] }],
    update_filter: { must: [{ key: 'stage', match: {} }] },
  });
  assert.equal(bad.status, 400, bad.text);
  assert.match(bad.body.status.error, /update_filter/);

  // kith's port: `updated` counts the points written.
  const kith = new KithClient(kithUrl);
  await kith.createCollection({ name: 'k', vector_size: 2, distance: 'dot' });
  await kith.upsert('k', [
    { id: 'a', vector: [1, 0], payload: { stage: 'draft' } },
    { id: 'b', vector: [0, 1], payload: { stage: 'final' } },
  ]);
  const updated = await kith.updateVectors(
    'k',
    [
      { id: 'a', vector: [2, 2] },
      { id: 'b', vector: [3, 3] },
    ],
    { update_filter: drafts },
  );
  assert.equal(updated.updated, 1);
  assert.deepEqual((await kith.getPoint('k', 'a')).vector, [2, 2]);
  assert.deepEqual((await kith.getPoint('k', 'b')).vector, [0, 1]);
  assert.equal((await kith.updateVectors('k', [{ id: 'b', vector: [3, 3] }], { update_filter: drafts })).updated, 0);
  const kithBad = await http(kithUrl, 'PUT', '/collections/k/points/vectors', {
    points: [{ id: 'a', vector: [1, 1] }],
    update_filter: { must: [{ key: 'stage', match: {} }] },
  });
  assert.equal(kithBad.status, 400);
  assert.match(kithBad.body.status.error, /update_filter/);
});
