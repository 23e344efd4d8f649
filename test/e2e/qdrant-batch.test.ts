/**
 * POST …/points/batch on the Qdrant port: Qdrant's test_batch_update sequence (dense vectors),
 * every operation kind in one batch against a model, shapes checked before any operation runs,
 * and an operation the engine refuses stopping the batch there, named.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { http, startQdrant } from './qdrant-harness.js';

test("Qdrant's batch update: upserts, deletes and vector updates apply in order", async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('b', { vectors: { size: 4, distance: 'Dot' } });
  const batch = (operations: unknown[]) => http(url, 'POST', '/collections/b/points/batch?wait=true', { operations });
  const first = await batch([
    { upsert: { points: [{ id: 7, vector: [1, 2, 3, 4], payload: {} }] } },
    { upsert: { points: [{ id: 8, vector: [1, 2, 3, 4], payload: {} }] } },
    { delete: { points: [8] } },
    { upsert: { points: [{ id: 7, vector: [2, 1, 3, 4], payload: {} }] } },
    { delete: { points: [10] } },
  ]);
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.result.length, 5);
  assert.ok(first.body.result.every((r: { status: string }) => r.status === 'completed'));
  assert.deepEqual(
    (await client.retrieve('b', { ids: [7, 8], with_vector: true })).map((p) => [p.id, p.vector]),
    [[7, [2, 1, 3, 4]]],
  );
  const vectors = await batch([
    { update_vectors: { points: [{ id: 7, vector: [1, 2, 3, 4] }] } },
    { update_vectors: { points: [{ id: 7, vector: [9, 2, 4, 2] }] } },
  ]);
  assert.equal(vectors.status, 200, vectors.text);
  assert.deepEqual((await client.retrieve('b', { ids: [7], with_vector: true }))[0]?.vector, [9, 2, 4, 2]);
});

test('every operation kind in one batch equals the same requests one by one', async (t) => {
  const { client, url } = await startQdrant(t);
  for (const name of ['one', 'each']) await client.createCollection(name, { vectors: { size: 2, distance: 'Cosine' } });
  const steps: Array<[string, string, string, unknown]> = [
    ['upsert', 'PUT', '/points', { points: [1, 2, 3, 4, 5].map((id) => ({ id, vector: [1, id], payload: { n: id, tag: id % 2 === 0 ? 'even' : 'odd' } })) }],
    [
      'upsert',
      'PUT',
      '/points',
      {
        batch: {
          ids: [6, 7],
          vectors: {
            '': [
              [2, 1],
              [3, 1],
            ],
          },
          payloads: [{ n: 6 }, { n: 7 }],
        },
      },
    ],
    ['set_payload', 'POST', '/points/payload', { payload: { seen: true }, filter: { must: [{ key: 'tag', match: { value: 'odd' } }] } }],
    ['set_payload', 'POST', '/points/payload', { payload: { deep: 1 }, key: 'nested', points: [2] }],
    ['overwrite_payload', 'PUT', '/points/payload', { payload: { only: 'this' }, points: [3] }],
    ['delete_payload', 'POST', '/points/payload/delete', { keys: ['tag'], points: [4, 5] }],
    ['clear_payload', 'POST', '/points/payload/clear', { points: [6] }],
    ['update_vectors', 'PUT', '/points/vectors', { points: [{ id: 1, vector: [0, 1] }] }],
    ['delete', 'POST', '/points/delete', { filter: { must: [{ key: 'n', range: { gte: 7 } }] } }],
    ['delete', 'POST', '/points/delete', { points: [2] }],
  ];
  const batched = await http(url, 'POST', '/collections/one/points/batch', { operations: steps.map(([kind, , , body]) => ({ [kind]: body })) });
  assert.equal(batched.status, 200, batched.text);
  assert.equal(batched.body.result.length, steps.length);
  for (const [, method, path, body] of steps) assert.equal((await http(url, method, `/collections/each${path}`, body)).status, 200, path);
  const all = async (name: string) => (await client.scroll(name, { limit: 100, with_payload: true, with_vector: true })).points;
  assert.deepEqual(await all('one'), await all('each'));
  assert.equal((await all('one')).length, 5);
});

test('a bad operation is named and nothing runs; an operation the engine refuses stops the batch there', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('e', { vectors: { size: 2, distance: 'Dot' } });
  const batch = (operations: unknown) => http(url, 'POST', '/collections/e/points/batch', { operations });
  const shape = await batch([{ upsert: { points: [{ id: 1, vector: [1, 1] }] } }, { set_payload: { payload: 7, points: [1] } }]);
  assert.equal(shape.status, 400, shape.text);
  assert.match(shape.body.status.error, /operations\[1\]\.set_payload: payload: expected an object/);
  assert.equal((await client.count('e')).count, 0, 'the upsert before it did not run');
  for (const [operations, pattern] of [
    [[{ frobnicate: {} }], /operations\[0\]\.frobnicate: unknown operation/],
    [[{ upsert: {}, delete: {} }], /operations\[0\]: expected exactly one operation/],
    [[{ delete_vectors: { points: [1], vector: [''] } }], /operations\[0\]\.delete_vectors: .*not supported/],
    [{}, /operations: expected an array/],
  ] as const) {
    const r = await batch(operations);
    assert.equal(r.status, 400, r.text);
    assert.match(r.body.status.error, pattern);
  }
  // A missing point for update_vectors: the upsert before it stays, the delete after it does not run.
  const stopped = await batch([
    { upsert: { points: [{ id: 1, vector: [1, 1] }] } },
    { update_vectors: { points: [{ id: 99, vector: [1, 0] }] } },
    { delete: { points: [1] } },
  ]);
  assert.equal(stopped.status, 404, stopped.text);
  assert.match(stopped.body.status.error, /operations\[1\]\.update_vectors: .*99/);
  assert.equal((await client.count('e')).count, 1);
  const tooMany = await batch(Array.from({ length: 1001 }, () => ({ delete: { points: [1] } })));
  assert.equal(tooMany.status, 422);
});
