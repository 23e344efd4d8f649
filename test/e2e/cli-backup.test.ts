/**
 * `kith backup` end to end: from a file (--db) and from a real server process (--url) while another
 * client upserts. The copy passes `kith check`, opens with the library, holds every batch
 * acknowledged before the backup started, each batch whole. A failed backup exits non-zero and
 * leaves neither DEST nor DEST.partial.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { kith, ok } from '../helpers/kith-cli.js';
import { BatchWriter, pointsPerBatch } from '../helpers/batch-writer.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const DIM = 8;
const BATCH = 200;

test('kith backup --url under write load: the copy passes kith check and holds every batch acknowledged before it, whole', async (t) => {
  const seed = testSeed(41);
  const dir = tempDir(t);
  const server = await startServer(join(dir, 'live.db'));
  t.after(() => server.stop());
  const created = await httpJson(server.url, 'POST', '/collections', { name: 'c', vector_size: DIM, distance: 'l2', hnsw: true });
  assert.equal(created.status, 200, created.raw);

  const writer = new BatchWriter(server.url, 'c', seed, BATCH, DIM);
  const acked = writer.acked;
  await writer.waitFor(10);

  const dest = join(dir, 'copy.db');
  const ackedBefore = [...acked];
  const run = await kith(['backup', dest, '--url', server.url]);
  const ackedAfter = acked.length;
  await writer.stop();
  assert.equal(writer.error, undefined, `seed ${seed}: ${String(writer.error)}`);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /backed up http:\/\/127\.0\.0\.1:\d+ to .*copy\.db: [\d.]+ MiB in [\d.]+ s/);
  assert.ok(ackedAfter > ackedBefore.length, 'no batch was written while the backup ran: it was not under load');
  assert.ok(!existsSync(`${dest}.partial`));

  const check = await kith(['check', dest]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /collection "c" \(uid 1, 8-d Euclid, hnsw\): \d+ point record\(s\).*graph invariants checked/);
  assert.match(check.stdout, /^sound:/m);

  const copy = Database.open(dest);
  t.after(() => copy.close());
  const c = copy.collection('c');
  const perBatch = pointsPerBatch(c);
  for (const [batch, count] of perBatch) assert.equal(count, BATCH, `seed ${seed}: batch ${batch} has ${count} of ${BATCH} points`);
  for (const batch of ackedBefore) {
    assert.equal(perBatch.get(batch), BATCH, `seed ${seed}: batch ${batch} was acknowledged before the backup started`);
    const expected = writer.points(batch)[BATCH - 1] as { vector: number[] };
    assert.deepEqual(c.getPoint(`b${batch}-${BATCH - 1}`).vector, expected.vector.map(Math.fround));
  }
  assert.deepEqual(c.checkIntegrity(), []);

  // kith check reads the live file too, while the server holds it (read-only, no file lock).
  const live = await kith(['check', join(dir, 'live.db')]);
  assert.equal(live.code, 0, live.stdout + live.stderr);
  assert.match(live.stdout, new RegExp(`collection "c" \\(uid 1, 8-d Euclid, hnsw\\): ${acked.length * BATCH} point record`));
  assert.equal((await httpJson(server.url, 'GET', '/collections/c')).status, 200);
});

test('kith backup --db copies a file; an existing DEST, an unreachable server or a refused key fail and leave nothing', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const source = join(dir, 'points.jsonl');
  const lines = Array.from({ length: 700 }, (_, i) => JSON.stringify({ id: i, vector: [i, 1, 2], payload: { i } }));
  writeFileSync(source, lines.join('\n'));
  await ok(['import', source, '--collection', 'c', '--dim', '3', '--distance', 'euclid', '--hnsw', '--db', db, '--quiet']);

  const dest = join(dir, 'copy.db');
  await ok(['backup', dest, '--db', db]);
  assert.equal(await ok(['export', 'c', '--db', dest]), await ok(['export', 'c', '--db', db]));
  assert.equal((await kith(['check', dest])).code, 0);

  const exists = await kith(['backup', dest, '--db', db]);
  assert.equal(exists.code, 2);
  assert.match(exists.stderr, /copy\.db already exists; a backup is written to a new file/);

  const before = readdirSync(dir).sort();
  const unreachable = await kith(['backup', join(dir, 'nowhere.db'), '--url', 'http://127.0.0.1:1']);
  assert.equal(unreachable.code, 1);
  assert.match(unreachable.stderr, /cannot reach http:\/\/127\.0\.0\.1:1: /);
  assert.deepEqual(readdirSync(dir).sort(), before, 'a failed backup left a file');

  const server = await startServer(join(dir, 'keyed.db'), ['-api-key', 'sesame']);
  t.after(() => server.stop());
  const afterStart = readdirSync(dir).sort();
  const refused = await kith(['backup', join(dir, 'refused.db'), '--url', server.url, '--api-key', 'wrong']);
  assert.equal(refused.code, 1);
  // The server's message and code, not its JSON.
  assert.match(refused.stderr, /^kith: POST http:\/\/127\.0\.0\.1:\d+\/backup: HTTP 401: [^{}]*API key[^{}]* \[ERR_UNAUTHORIZED\]\n$/i);
  assert.deepEqual(readdirSync(dir).sort(), afterStart, 'a refused backup left a file');
  await ok(['backup', join(dir, 'keyed-copy.db'), '--url', server.url, '--api-key', 'sesame']);
  assert.equal((await kith(['check', join(dir, 'keyed-copy.db')])).code, 0);
});
