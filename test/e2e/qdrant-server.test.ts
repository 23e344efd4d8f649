/**
 * The real service process with -qdrant-port: both listeners over one database give the same
 * points (ids, payloads, scores), writes through the Qdrant port survive a restart, and SIGTERM
 * closes both listeners and exits 0.
 */
import { shortestFloat32 } from '../../src/core/float32-text.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QdrantClient } from '@qdrant/js-client-rest';
import { SeededRng } from '../../src/core/rng.js';
import { randomVectors } from '../helpers/data.js';
import { httpJson, qdrantUrlOf, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const UUID = '6f1c2a9e-3b7d-4c58-9e0a-1d2b3c4d5e6f';

test('one collection seen through both ports: same ids, payloads and scores; durable across a restart', async (t) => {
  const dbPath = tempDbPath(t);
  let server = await startServer(dbPath, ['-qdrant-port', '0']);
  t.after(() => server.stop('SIGKILL'));
  let url = await qdrantUrlOf(server);
  assert.notEqual(url, server.url);
  let client = new QdrantClient({ url, checkCompatibility: false });
  await client.createCollection('both', { vectors: { size: 4, distance: 'Cosine' } });
  const vectors = randomVectors(new SeededRng(77), 40, 4);
  await client.upsert('both', {
    points: vectors.map((vector, i) => ({ id: i === 39 ? UUID : i, vector, payload: { i, tag: i % 4 === 0 ? 'x' : 'y' } })),
  });
  await client.setPayload('both', { payload: { marked: true }, points: [3, UUID] });
  const query = [0.3, -0.2, 0.9, 0.1];
  const viaQdrant = await client.search('both', { vector: query, limit: 40, with_payload: true, params: { exact: true } });
  const viaKith = await httpJson(server.url, 'POST', '/collections/both/points/search', { vector: query, limit: 40, params: { exact: true } });
  assert.equal(viaKith.status, 200);
  assert.equal(viaQdrant.length, 40);
  assert.deepEqual(
    viaQdrant.map((h) => [String(h.id), h.payload, h.score]),
    // The Qdrant port writes a score as its shortest float32 decimal; kith's as the double.
    viaKith.body.result.map((h: { id: string; payload: unknown; score: number }) => [h.id, h.payload, shortestFloat32(h.score)]),
  );
  // A point written through the kith port with an integer-looking id is an integer on the Qdrant port.
  await httpJson(server.url, 'PUT', '/collections/both/points', { points: [{ id: '100', vector: [1, 0, 0, 0], payload: { from: 'kith' } }] });
  assert.deepEqual(
    (await client.retrieve('both', { ids: [100] })).map((r) => [r.id, r.payload]),
    [[100, { from: 'kith' }]],
  );

  assert.equal(await server.stop('SIGTERM'), 0, 'SIGTERM closes both listeners and exits 0');
  server = await startServer(dbPath, ['-qdrant-port', '0']);
  url = await qdrantUrlOf(server);
  client = new QdrantClient({ url, checkCompatibility: false });
  assert.equal((await client.count('both')).count, 41);
  assert.deepEqual(
    (await client.retrieve('both', { ids: [UUID, 3] })).map((r) => [r.id, r.payload?.marked, r.payload?.i]),
    [
      [UUID, true, 39],
      [3, true, 3],
    ],
  );
});

test('without -qdrant-port there is no second listener', async (t) => {
  const server = await startServer(tempDbPath(t));
  t.after(() => server.stop('SIGKILL'));
  assert.equal((await httpJson(server.url, 'GET', '/healthz')).status, 200);
  assert.doesNotMatch(server.output(), /Qdrant API listening/);
});
