/**
 * New vectors for existing points on both ports (PUT …/points/vectors): payloads kept, versions
 * advanced, searches answer from the new vectors, a missing id refuses the whole request; the
 * unnamed vector spelled `{"": […]}` (Python LangChain's upsert) in every place Qdrant takes it.
 */
import { shortestFloat32 } from '../../src/core/float32-text.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient, KithClientError } from '../../src/api/client/kith-client.js';
import { http, startQdrant } from './qdrant-harness.js';

test('Qdrant port: updateVectors replaces vectors and keeps payloads; a missing id changes nothing; deleting a vector is refused', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('v', { vectors: { size: 3, distance: 'Dot' } });
  await client.upsert('v', {
    wait: true,
    points: [
      { id: 1, vector: [1, 0, 0], payload: { tag: 'a' } },
      { id: 2, vector: [0, 1, 0], payload: { tag: 'b', n: [1, null] } },
    ],
  });
  const before = await client.retrieve('v', { ids: [1, 2], with_vector: true, with_payload: true });
  const result = await client.updateVectors('v', {
    wait: true,
    points: [
      { id: 1, vector: [0, 0, 1] },
      { id: 2, vector: { '': [0, 0, 2] } },
    ],
  });
  assert.equal(result.status, 'completed');
  const after = await client.retrieve('v', { ids: [1, 2], with_vector: true, with_payload: true });
  assert.deepEqual(
    after.map((p) => [p.id, p.vector, p.payload]),
    [
      [1, [0, 0, 1], { tag: 'a' }],
      [2, [0, 0, 2], { tag: 'b', n: [1, null] }],
    ],
  );
  assert.deepEqual(
    (await client.search('v', { vector: [0, 0, 1], limit: 2 })).map((h) => [h.id, h.score]),
    [
      [2, 2],
      [1, 1],
    ],
  );
  // One id that does not exist: 404, and neither point changed.
  const missing = await http(url, 'PUT', '/collections/v/points/vectors?wait=true', {
    points: [
      { id: 1, vector: [9, 9, 9] },
      { id: 3, vector: [1, 1, 1] },
    ],
  });
  assert.equal(missing.status, 404, missing.text);
  assert.match(missing.body.status.error, /point "3" does not exist/);
  assert.deepEqual(
    (await client.retrieve('v', { ids: [1], with_vector: true })).map((p) => p.vector),
    [[0, 0, 1]],
  );
  // A wrong dimension or shape names the field; a vector name the collection lacks is Qdrant's 400.
  const wrongDim = await http(url, 'PUT', '/collections/v/points/vectors', { points: [{ id: 1, vector: [1, 2] }] });
  assert.equal(wrongDim.status, 400, wrongDim.text);
  assert.match(wrongDim.body.status.error, /points\[0\]\.vector/);
  const named = await http(url, 'PUT', '/collections/v/points/vectors', { points: [{ id: 1, vector: { image: [1, 2, 3] } }] });
  assert.equal(named.status, 400, named.text);
  assert.match(named.body.status.error, /Not existing vector name error: /);
  const deleting = await http(url, 'POST', '/collections/v/points/vectors/delete', { points: [1], vector: [''] });
  assert.equal(deleting.status, 400, deleting.text);
  assert.match(deleting.body.status.error, /vector\[0\]: removing the main dense vector/);
  assert.deepEqual(before.length, 2);
});

test('Qdrant port: the unnamed vector as {"": […]} in upsert points, upsert batch, search and query', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('u', { vectors: { size: 2, distance: 'Cosine' } });
  // As Python LangChain's QdrantVectorStore sends it.
  const points = await http(url, 'PUT', '/collections/u/points?wait=true', {
    points: [
      { id: 1, vector: { '': [1, 0] }, payload: { page_content: 'one' } },
      { id: 2, vector: { '': [0, 1] }, payload: { page_content: 'two' } },
    ],
  });
  assert.equal(points.status, 200, points.text);
  const batch = await http(url, 'PUT', '/collections/u/points?wait=true', {
    batch: { ids: [3], vectors: { '': [[1, 1]] }, payloads: [{ page_content: 'three' }] },
  });
  assert.equal(batch.status, 200, batch.text);
  assert.deepEqual(
    (await client.retrieve('u', { ids: [1, 2, 3], with_vector: true })).map((p) => [p.id, p.vector]),
    [
      [1, [1, 0]],
      [2, [0, 1]],
      // Normalised, and written as its shortest float32 decimal, as Qdrant writes it.
      [3, [Math.SQRT1_2, Math.SQRT1_2].map(shortestFloat32)],
    ],
  );
  const search = await http(url, 'POST', '/collections/u/points/search', { vector: { name: '', vector: [1, 0] }, limit: 1 });
  assert.equal(search.body.result[0].id, 1, search.text);
  const query = await client.query('u', { query: [0, 1], using: '', limit: 1 });
  assert.equal(query.points[0]?.id, 2);
  const empty = await http(url, 'PUT', '/collections/u/points', { points: [{ id: 4, vector: {} }] });
  assert.equal(empty.status, 400, empty.text);
  assert.match(empty.body.status.error, /points\[0\]\.vector: every point needs its dense vector/);
  const badBatch = await http(url, 'PUT', '/collections/u/points', { batch: { ids: [5, 6], vectors: { '': [[1, 0]] } } });
  assert.equal(badBatch.status, 400, badBatch.text);
  assert.match(badBatch.body.status.error, /batch\.vectors\[""\]: 1 vectors for 2 ids/);
});

test("kith's port: PUT …/points/vectors through kith's client; 404 naming the missing point, nothing changed", async (t) => {
  const { kithUrl } = await startQdrant(t);
  const kith = new KithClient(kithUrl);
  await kith.createCollection({ name: 'k', vector_size: 2, distance: 'euclid' });
  await kith.upsert('k', [
    { id: 'a', vector: [0, 0], payload: { keep: true } },
    { id: 'b', vector: [5, 5] },
  ]);
  const versionBefore = (await kith.getPoint('k', 'a')).version;
  const updated = await kith.updateVectors('k', [
    { id: 'a', vector: [9, 9] },
    { id: 'a', vector: [4, 4] },
  ]);
  assert.deepEqual(updated, { operation: 'completed', updated: 1 });
  const a = await kith.getPoint('k', 'a');
  assert.deepEqual([a.vector, a.payload], [[4, 4], { keep: true }], 'the last vector of a repeated id; the payload kept');
  assert.ok(BigInt(a.version) > BigInt(versionBefore), 'a new version');
  assert.deepEqual(
    (await kith.search('k', { vector: [4, 4], limit: 1 })).map((h) => h.id),
    ['a'],
  );
  await assert.rejects(
    kith.updateVectors('k', [
      { id: 'b', vector: [1, 1] },
      { id: 'zz', vector: [1, 1] },
    ]),
    (error: unknown) => error instanceof KithClientError && error.status === 404 && error.code === 'ERR_POINT_NOT_FOUND' && /"zz"/.test(error.message),
  );
  assert.deepEqual((await kith.getPoint('k', 'b')).vector, [5, 5]);
  const extra = await http(kithUrl, 'PUT', '/collections/k/points/vectors', { points: [{ id: 'a', vector: [1, 1], payload: {} }] });
  assert.equal(extra.status, 400, extra.text);
  assert.match(extra.body.status.error, /points\[0\]\.payload/);
});
