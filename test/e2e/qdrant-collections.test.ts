/**
 * Qdrant port, service and collections, driven by the official client: version and probes,
 * create / exists / info / list / drop, configuration mapping and echo, payload indexes, errors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { http, startQdrant } from './qdrant-harness.js';

test('GET / reports a Qdrant version the official client accepts; probes answer 200', async (t) => {
  const h = await startQdrant(t);
  const root = await http(h.url, 'GET', '/');
  assert.equal(root.status, 200);
  assert.equal(root.body.version, '1.18.0');
  assert.equal(typeof root.body.title, 'string');
  assert.equal(root.body.status, undefined, 'GET / is bare, not enveloped');
  assert.deepEqual(h.warnings, [], 'the client printed no compatibility warning');
  // Qdrant's own texts.
  for (const [probe, text] of [
    ['/healthz', 'healthz check passed'],
    ['/livez', 'healthz check passed'],
    ['/readyz', 'all shards are ready'],
  ]) {
    const r = await http(h.url, 'GET', probe as string);
    assert.equal(r.status, 200, probe);
    assert.equal(r.text, text, probe);
  }
});

test('create / exists / info / list / drop through the client', async (t) => {
  const { client, kithUrl } = await startQdrant(t);
  assert.equal(await client.collectionExists('docs').then((r) => r.exists), false);
  assert.equal(
    await client.createCollection('docs', {
      vectors: { size: 4, distance: 'Cosine', on_disk: true },
      hnsw_config: { m: 8, ef_construct: 64, full_scan_threshold: 5000 },
      quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } },
      optimizers_config: { indexing_threshold: 20000 },
      on_disk_payload: false,
      replication_factor: 2,
    }),
    true,
  );
  assert.equal((await client.collectionExists('docs')).exists, true);
  const info = await client.getCollection('docs');
  assert.equal(info.status, 'green');
  assert.equal(info.points_count, 0);
  assert.deepEqual(info.config.params.vectors, { size: 4, distance: 'Cosine', on_disk: true });
  assert.equal(info.config.params.on_disk_payload, false);
  assert.equal(info.config.params.replication_factor, 2);
  assert.equal(info.config.hnsw_config.m, 8);
  assert.equal(info.config.hnsw_config.ef_construct, 64);
  assert.equal(info.config.hnsw_config.full_scan_threshold, 5000);
  assert.equal(info.config.optimizer_config.indexing_threshold, 20000);
  assert.deepEqual(info.config.quantization_config, { scalar: { type: 'int8', quantile: 0.99, always_ram: true } });
  // The kith port sees kith's meaning of the same configuration.
  const kith = await http(kithUrl, 'GET', '/collections/docs');
  assert.equal(kith.status, 200);
  assert.equal(kith.body.result.hnsw, true);
  assert.deepEqual([kith.body.result.parameters.m, kith.body.result.parameters.ef_construction], [8, 64]);
  assert.equal(kith.body.result.quantization, 'sq8');
  assert.equal(kith.body.result.distance, 'Cosine');

  assert.deepEqual((await client.getCollections()).collections, [{ name: 'docs' }]);
  assert.equal(await client.deleteCollection('docs'), true);
  assert.equal(await client.deleteCollection('docs'), false, 'dropping a missing collection is 200 false');
  assert.deepEqual((await client.getCollections()).collections, []);
});

test('configuration mapping: no hnsw_config is HNSW with Qdrant defaults, m 0 is flat, bounds and unsupported kinds refused', async (t) => {
  const { client, url, kithUrl } = await startQdrant(t);
  await client.createCollection('plain', { vectors: { size: 2, distance: 'Dot' } });
  const plain = (await http(kithUrl, 'GET', '/collections/plain')).body.result;
  assert.deepEqual([plain.hnsw, plain.parameters.m, plain.parameters.ef_construction, plain.quantization], [true, 16, 100, 'none']);
  assert.equal((await client.getCollection('plain')).config.quantization_config, null);
  await client.createCollection('flat', { vectors: { size: 2, distance: 'Euclid' }, hnsw_config: { m: 0 } });
  assert.equal((await http(kithUrl, 'GET', '/collections/flat')).body.result.hnsw, false);
  assert.equal((await client.getCollection('flat')).config.hnsw_config.m, 0);
  for (const [body, status, pattern] of [
    [{ vectors: { size: 2, distance: 'Cosine' }, hnsw_config: { m: 101 } }, 422, /hnsw_config\.m: must be between 0 and 100/],
    [{ vectors: { size: 2, distance: 'Cosine' }, hnsw_config: { ef_construct: 1001 } }, 422, /hnsw_config\.ef_construct/],
    [{ vectors: { size: 0, distance: 'Cosine' } }, 422, /vectors\.size/],
    [{ vectors: { size: 2, distance: 'Cosinus' } }, 400, /vectors\.distance: unknown variant/],
    [{ vectors: { size: 2, distance: 'Manhattan' } }, 400, /Manhattan distance is not supported/],
    [
      { vectors: { a: { size: 2, distance: 'Cosine' }, c: { size: 2, distance: 'Dot', multivector_config: { comparator: 'sum' } } } },
      400,
      /vectors\.c\.multivector_config\.comparator: unknown variant/,
    ],
    [{ vectors: { size: 2, distance: 'Cosine' }, sparse_vectors: { s: { modifier: 'bm25' } } }, 400, /sparse_vectors\.s\.modifier: unknown variant/],
    [{ vectors: { text: { size: 2, distance: 'Cosine' } }, sparse_vectors: { text: {} } }, 400, /sparse_vectors\.text: the dense vector is named "text"/],
    [{ vectors: { size: 2, distance: 'Cosine', multivector_config: { comparator: 'sum' } } }, 400, /vectors\.multivector_config\.comparator: unknown variant/],
    [{ vectors: { size: 2, distance: 'Cosine' }, quantization_config: { binary: { always_ram: true } } }, 400, /binary quantization/],
  ] as const) {
    const r = await http(url, 'PUT', '/collections/bad', body);
    assert.equal(r.status, status, JSON.stringify(body));
    assert.match(r.body.status.error, pattern);
  }
  assert.deepEqual((await client.getCollections()).collections.map((c) => c.name).sort(), ['flat', 'plain'], 'no refused create left a collection');
  // Qdrant's `vectors` defaults to none: a collection without dense vectors (qdrant-no-dense-vector.test.ts).
  assert.equal((await http(url, 'PUT', '/collections/none', {})).status, 200);
  assert.deepEqual((await client.getCollection('none')).config.params.vectors, {});
});

test('payload indexes are accepted, listed in payload_schema with their point counts, and dropped', async (t) => {
  const { client } = await startQdrant(t);
  await client.createCollection('ix', { vectors: { size: 2, distance: 'Dot' } });
  await client.upsert('ix', {
    points: [
      { id: 1, vector: [1, 0], payload: { city: 'Oslo', n: 1 } },
      { id: 2, vector: [0, 1], payload: { city: 'Rome' } },
      { id: 3, vector: [1, 1], payload: {} },
      { id: 4, vector: [1, 2], payload: { city: null, shop: { tags: [] } } },
      { id: 5, vector: [2, 1], payload: { shop: { tags: ['a'] }, list: [{ name: 'x' }, { other: 1 }] } },
      { id: 6, vector: [2, 2], payload: { shop: { tags: 'b' }, list: [{ name: null }] } },
    ],
  });
  assert.equal((await client.createPayloadIndex('ix', { field_name: 'city', field_schema: 'keyword', wait: true })).status, 'completed');
  await client.createPayloadIndex('ix', { field_name: 'n', field_schema: { type: 'integer', range: true, lookup: false } });
  const schema = (await client.getCollection('ix')).payload_schema;
  assert.deepEqual(schema.city, { data_type: 'keyword', points: 2 });
  assert.deepEqual(schema.n, { data_type: 'integer', params: { type: 'integer', range: true, lookup: false }, points: 1 });
  // Nested paths count the points holding a value there (not null, not []), as Qdrant's index holds them.
  await client.createPayloadIndex('ix', { field_name: 'shop.tags', field_schema: 'keyword' });
  await client.createPayloadIndex('ix', { field_name: 'list[].name', field_schema: 'keyword' });
  const nested = (await client.getCollection('ix')).payload_schema;
  assert.equal(nested['shop.tags']?.points, 2);
  assert.equal(nested['list[].name']?.points, 1);
  await client.deletePayloadIndex('ix', 'shop.tags');
  await client.deletePayloadIndex('ix', 'list[].name');
  await assert.rejects(client.createPayloadIndex('ix', { field_name: 'm', field_schema: { type: 'integer', lookup: false, range: false } }), {
    status: 422,
  });
  await client.deletePayloadIndex('ix', 'city');
  assert.deepEqual(Object.keys((await client.getCollection('ix')).payload_schema), ['n']);
  await assert.rejects(client.createPayloadIndex('ix', { field_name: 'x', field_schema: 'colour' as never }), { status: 400 });
});

test("Qdrant's validation of paths and query parameters: a name over 255 characters and timeout 0 are 422s in its words", async (t) => {
  const { url } = await startQdrant(t);
  const long = 'extremelylongname'.repeat(20);
  for (const [method, path] of [
    ['GET', `/collections/${long}/points/1`],
    ['PUT', `/collections/${long}`],
    ['GET', `/collections/${long}`],
  ] as const) {
    const r = await http(url, method, path, method === 'PUT' ? { vectors: { size: 4, distance: 'Dot' } } : undefined);
    assert.equal(r.status, 422, `${method} ${path.slice(0, 40)}: ${r.text}`);
    assert.match(r.body.status.error, /^Validation error in path parameters: .*collection_name/);
  }
  const zero = await http(url, 'PUT', '/collections/t?timeout=0', { vectors: { size: 4, distance: 'Dot' } });
  assert.equal(zero.status, 422);
  assert.ok(zero.body.status.error.includes('timeout: value 0 invalid'), zero.body.status.error);
  assert.equal((await http(url, 'GET', '/collections/t/exists')).body.result.exists, false, 'nothing was created');
  const words = await http(url, 'PUT', '/collections/t?timeout=soon', { vectors: { size: 4, distance: 'Dot' } });
  assert.equal(words.status, 400);
  const fine = await http(url, 'PUT', '/collections/t?timeout=30', { vectors: { size: 4, distance: 'Dot' } });
  assert.equal(fine.status, 200, fine.text);
});
