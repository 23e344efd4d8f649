/**
 * What the Qdrant port keeps beyond kith's configuration — the create request's other options and
 * the fields declared with PUT …/index — is stored with the collection: it is the same after a
 * restart, and gone with the collection when it is dropped.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QdrantClient } from '@qdrant/js-client-rest';
import { buildQdrantApp } from '../../src/api/qdrant/app.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath } from '../helpers/temp-dir.js';

async function serve(dbPath: string): Promise<{ client: QdrantClient; close: () => Promise<void> }> {
  const db = Database.open(dbPath);
  const app = await buildQdrantApp({ db });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    client: new QdrantClient({ url, checkCompatibility: false }),
    close: async () => {
      await app.close();
      await db.close();
    },
  };
}

test('echoed create options and declared payload indexes survive a restart and leave with the collection', async (t) => {
  const dbPath = tempDbPath(t);
  let server = await serve(dbPath);
  t.after(() => server.close());
  await server.client.createCollection('docs', {
    vectors: { size: 3, distance: 'Dot', on_disk: true },
    optimizers_config: { indexing_threshold: 12345 },
    replication_factor: 2,
  });
  await server.client.createPayloadIndex('docs', { field_name: 'lang', field_schema: 'keyword' });
  await server.client.createPayloadIndex('docs', { field_name: 'year', field_schema: 'integer' });
  await server.client.deletePayloadIndex('docs', 'year');
  await server.client.upsert('docs', { wait: true, points: [{ id: 1, vector: [1, 0, 0], payload: { lang: 'en' } }] });
  const before = await server.client.getCollection('docs');
  await server.close();

  server = await serve(dbPath);
  const after = await server.client.getCollection('docs');
  assert.deepEqual(after.config, before.config);
  assert.deepEqual(after.payload_schema, before.payload_schema);
  assert.deepEqual(Object.keys(after.payload_schema ?? {}), ['lang']);
  assert.equal(after.config.params.replication_factor, 2);
  assert.equal(after.config.optimizer_config.indexing_threshold, 12345);

  assert.equal(await server.client.deleteCollection('docs'), true);
  await server.client.createCollection('docs', { vectors: { size: 3, distance: 'Dot' } });
  const fresh = await server.client.getCollection('docs');
  assert.deepEqual(fresh.payload_schema, {});
  assert.notEqual(fresh.config.params.replication_factor, 2, 'the dropped collection took its options along');
});
