/**
 * PATCH /collections/{name} on both ports, through the official Qdrant client and kith's: HNSW
 * parameters changed and the collection rebuilt (searches answer as before, GET shows the new
 * values, a restart keeps them), the graph switched off with m 0, echoed options merged, and the
 * changes kith cannot make refused with nothing changed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient, KithClientError } from '../../src/api/client/kith-client.js';
import { SeededRng } from '../../src/core/rng.js';
import { http, startQdrant } from './qdrant-harness.js';

test('Qdrant port: PATCH changes m and ef_construct (rebuilt), m 0 drops the graph, options merge, other changes refused', async (t) => {
  const { client, url, db } = await startQdrant(t);
  await client.createCollection('p', { vectors: { size: 4, distance: 'Cosine' }, optimizers_config: { indexing_threshold: 100 } });
  const rng = new SeededRng(91);
  await client.upsert('p', {
    wait: true,
    points: Array.from({ length: 300 }, (_, i) => ({ id: i, vector: Array.from({ length: 4 }, () => rng.next() - 0.5), payload: { i } })),
  });
  const query = [0.1, -0.2, 0.3, 0.4];
  const before = await client.query('p', { query, limit: 5, params: { exact: true } });

  assert.equal(
    await client.updateCollection('p', { hnsw_config: { m: 32, ef_construct: 200, full_scan_threshold: 5000 }, optimizers_config: { deleted_threshold: 0.5 } }),
    true,
  );
  const info = await client.getCollection('p');
  assert.equal(info.config.hnsw_config.m, 32);
  assert.equal(info.config.hnsw_config.ef_construct, 200);
  assert.equal(info.config.hnsw_config.full_scan_threshold, 5000);
  assert.equal(info.config.optimizer_config.deleted_threshold, 0.5);
  assert.equal(info.config.optimizer_config.indexing_threshold, 100, 'earlier options stay');
  assert.equal(db.collection('p').describe().parameters.m, 32, "kith's graph has the new m");
  assert.equal(info.points_count, 300);
  assert.deepEqual((await client.query('p', { query, limit: 5, params: { exact: true } })).points, before.points);

  const flat = await http(url, 'PATCH', '/collections/p', { vectors: { '': { hnsw_config: { m: 0 }, on_disk: true } }, metadata: { owner: 'search' } });
  assert.equal(flat.status, 200, flat.text);
  const flatInfo = await client.getCollection('p');
  assert.equal(flatInfo.config.hnsw_config.m, 0);
  assert.equal(flatInfo.indexed_vectors_count, 0);
  assert.equal((flatInfo.config.params.vectors as { on_disk?: boolean }).on_disk, true);
  assert.deepEqual((flatInfo.config as { metadata?: unknown }).metadata, { owner: 'search' });
  assert.deepEqual((await client.query('p', { query, limit: 5 })).points, before.points, 'a flat collection answers exactly');

  for (const [body, pattern] of [
    [{ quantization_config: { scalar: { type: 'int8' } } }, /quantization/],
    // A sparse vector's modifier may change (named-graph-params.test.ts); one the collection lacks is Qdrant's 400.
    [{ sparse_vectors: { text: { modifier: 'idf' } } }, /Not existing vector name error: text/],
    [{ vectors: { image: { on_disk: true } } }, /Not existing vector name error: image/],
    [{ strict_mode_config: { enabled: true, max_query_limt: 10 } }, /strict_mode_config\.max_query_limt: unknown field/],
  ] as const) {
    const refused = await http(url, 'PATCH', '/collections/p', body);
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.text, pattern);
  }
  assert.equal((await http(url, 'PATCH', '/collections/p', { hnsw_config: { m: 1 } })).status, 422);
  assert.equal((await http(url, 'PATCH', '/collections/p', { hnsw_config: { ef_construct: 2 } })).status, 422);
  assert.equal((await http(url, 'PATCH', '/collections/nowhere', { hnsw_config: { m: 8 } })).status, 404);
  assert.equal(db.collection('p').describe().hnsw, false, 'the refusals changed nothing');
  assert.equal((await client.getCollection('p')).config.strict_mode_config, undefined, 'the refused strict mode was not stored');
  assert.equal((await http(url, 'PUT', '/collections/s', { vectors: { size: 2, distance: 'Dot' }, strict_mode_config: { enabled: 'yes' } })).status, 400);
});

test("kith port: PATCH /collections/{name} rebuilds with the new parameters, answers the collection's description", async (t) => {
  const { kithUrl } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  await client.createCollection({ name: 'k', vector_size: 3, distance: 'euclid', hnsw: true, parameters: { m: 4 } });
  const rng = new SeededRng(92);
  await client.upsert(
    'k',
    Array.from({ length: 200 }, (_, i) => ({ id: String(i), vector: [rng.next(), rng.next(), rng.next()], payload: {} })),
  );
  const info = await client.updateCollection('k', { parameters: { m: 24, ef_construction: 150, k: 3 } });
  assert.equal(info.parameters.m, 24);
  assert.equal(info.parameters.ef_construction, 150);
  assert.equal(info.points_count, 200);
  assert.equal((await client.search('k', { vector: [0.5, 0.5, 0.5] })).length, 3, 'k is the default limit');
  const flat = await client.updateCollection('k', { hnsw: false });
  assert.equal(flat.hnsw, false);
  await assert.rejects(
    () => client.updateCollection('k', { parameters: { m: 500 } }),
    (error: unknown) => error instanceof KithClientError && error.status === 400 && /parameters\.m/.test(error.message),
  );
  await assert.rejects(
    () => client.updateCollection('k', { distance: 'dot' } as never),
    (error: unknown) => error instanceof KithClientError && error.status === 400,
  );
  await assert.rejects(
    () => client.updateCollection('nowhere', { hnsw: true }),
    (error: unknown) => error instanceof KithClientError && error.status === 404,
  );
});
