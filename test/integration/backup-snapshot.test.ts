/**
 * A backup carries graph snapshots as recent as the backup: `Database.backup` (what POST /backup
 * and `kith backup` run) saves each graph that changed since its last snapshot before it copies,
 * so the copy takes every point written before the backup from its snapshot instead of inserting
 * it again; a write racing the copy is inserted at the open, and nothing else is.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { randomVectors, testSeed } from '../helpers/data.js';
import { tempDbPath, tempDir } from '../helpers/temp-dir.js';

const DIM = 8;

test('the copy takes its graphs from snapshots written for the backup, for every kind of change before it', async (t) => {
  const seed = testSeed(7);
  const rng = new SeededRng(seed);
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({ name: 'g', vector_size: DIM, distance: 'cosine', hnsw: true });
  await db.createCollection({ name: 'dot', vector_size: DIM, distance: 'dot', hnsw: true, quantization: 'sq8' });
  await db.createCollection({ name: 'flat', vector_size: DIM, distance: 'euclid' });
  for (const name of ['g', 'dot', 'flat']) {
    const c = db.collection(name);
    // Far fewer changes than a periodic snapshot waits for: without the backup's, there is none.
    await c.upsert(randomVectors(rng, 1200, DIM).map((vector, i) => ({ id: i, vector, payload: { i } })));
    await c.upsert(randomVectors(rng, 100, DIM).map((vector, i) => ({ id: i * 3, vector })));
    await c.deleteIds(Array.from({ length: 50 }, (_, i) => i * 7));
  }
  const expected = db.list().map((info) => [info.name, info.points_count]);

  // A write queued after the backup started races its copy: the copy may hold it, its snapshot does
  // not (it was taken after the writes queued before the backup), so it is inserted at the open.
  const copyPath = join(tempDir(t), 'copy.db');
  const backup = db.backup(copyPath);
  const racing = db.collection('g').upsert(randomVectors(rng, 30, DIM).map((vector, i) => ({ id: `late-${i}`, vector })));
  await Promise.all([backup, racing]);

  const copy = Database.open(copyPath);
  t.after(() => copy.close());
  for (const [name, points] of expected) {
    const report = copy.loadReports.get(name as string);
    assert.ok(report !== undefined, name as string);
    const late = name === 'g' ? report.points - (points as number) : 0;
    assert.ok(late === 0 || late === 30, `${name}: ${late} racing points in the copy`);
    if (name === 'flat') {
      assert.deepEqual([report.points, report.fromSnapshot], [points, 0], `seed ${seed}: ${name}`);
      continue;
    }
    assert.equal(report.snapshotRejected, undefined, `seed ${seed}: ${name}`);
    assert.deepEqual(
      [report.fromSnapshot, report.inserted],
      [points, late],
      `seed ${seed}: ${name}: ${JSON.stringify(report, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
    );
    assert.deepEqual(copy.collection(name as string).checkIntegrity(), []);
  }
});
