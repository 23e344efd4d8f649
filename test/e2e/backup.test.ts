/**
 * POST /backup on the real service process while another client upserts batches: the streamed
 * file opens with Database.open, holds every batch acknowledged before the backup request was
 * sent, each batch whole or absent (never half), the graph passes checkIntegrity, and no temp
 * file is left beside the database. Database.backup refuses to overwrite a file.
 */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { BatchWriter, pointsPerBatch } from '../helpers/batch-writer.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDbPath, tempDir } from '../helpers/temp-dir.js';

const DIM = 8;
const BATCH = 250;

test('POST /backup under write load streams a database with every batch acknowledged before it, whole', async (t) => {
  const seed = testSeed(2024);
  const dbPath = tempDbPath(t);
  const server = await startServer(dbPath);
  t.after(() => server.stop());
  const created = await httpJson(server.url, 'POST', '/collections', { name: 'c', vector_size: DIM, distance: 'l2', hnsw: true });
  assert.equal(created.status, 200, created.raw);

  // The writer: one batch at a time, each acknowledged (durable) before the next is sent.
  const writer = new BatchWriter(server.url, 'c', seed, BATCH, DIM);
  const acked = writer.acked;
  await writer.waitFor(8);

  const ackedBefore = [...acked];
  const response = await fetch(`${server.url}/backup`, { method: 'POST' });
  const bytes = Buffer.from(await response.arrayBuffer());
  const ackedWhenDone = acked.length;
  // Keep writing a little after the copy, then stop.
  await writer.waitFor(ackedWhenDone + 2);
  await writer.stop();
  assert.equal(writer.error, undefined, `seed ${seed}: ${String(writer.error)}`);

  assert.equal(response.status, 200, bytes.toString('utf8', 0, 500));
  assert.equal(response.headers.get('content-type'), 'application/octet-stream');
  assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="kith-backup-[0-9TZ-]+\.db"$/);
  assert.equal(Number(response.headers.get('content-length')), bytes.length);
  assert.ok(ackedBefore.length >= 8, `${ackedBefore.length} batches acknowledged before the backup`);
  // The temp copy is gone: only the database and LMDB's lock file are beside it.
  assert.deepEqual(readdirSync(dirname(dbPath)).sort(), [basename(dbPath), `${basename(dbPath)}-lock`].sort());

  const copyPath = join(tempDir(t), 'copy.db');
  writeFileSync(copyPath, bytes);
  const copy = Database.open(copyPath);
  t.after(() => copy.close());
  const c = copy.collection('c');
  // Which batches the copy holds, and how many points of each: every batch is whole or absent.
  const perBatch = pointsPerBatch(c);
  for (const [batch, count] of perBatch) assert.equal(count, BATCH, `seed ${seed}: batch ${batch} has ${count} of ${BATCH} points`);
  for (const batch of ackedBefore) {
    assert.equal(perBatch.get(batch), BATCH, `seed ${seed}: batch ${batch} was acknowledged before the backup request`);
    const expected = writer.points(batch);
    for (const i of [0, BATCH >> 1, BATCH - 1]) {
      const point = c.getPoint(`b${batch}-${i}`);
      assert.deepEqual(point.vector, (expected[i] as { vector: number[] }).vector.map(Math.fround), `seed ${seed}: b${batch}-${i}`);
      assert.deepEqual(point.payload, { batch });
    }
  }
  // Batches are sent one after another, so the copy holds a prefix of them.
  const held = [...perBatch.keys()].sort((a, b) => a - b);
  assert.deepEqual(
    held,
    held.map((_, i) => i),
    `seed ${seed}: batches held ${held.join(',')}`,
  );
  assert.equal(c.pointsCount, held.length * BATCH);
  assert.deepEqual(c.checkIntegrity(), [], `seed ${seed}: graph integrity`);

  // The service still serves after the backup.
  const info = await httpJson(server.url, 'GET', '/collections/c');
  assert.equal(info.status, 200);
  assert.equal(info.body.result.points_count, acked.length * BATCH);
});

test('Database.backup writes a copy that opens, and refuses to overwrite an existing file', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'dot' });
  await db.collection('c').upsert([{ id: 1, vector: [1, 2], payload: { a: 'x' } }]);
  const dir = tempDir(t);
  const target = join(dir, 'b.db');
  await db.backup(target);
  await assert.rejects(db.backup(target), { code: 'ERR_BAD_INPUT' });
  const copy = Database.open(target);
  t.after(() => copy.close());
  const original = db.collection('c').getPoint(1);
  assert.deepEqual(original.payload, { a: 'x' });
  assert.deepEqual(copy.collection('c').getPoint(1), original);
});
