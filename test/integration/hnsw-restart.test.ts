/**
 * HNSW across restarts: the graph comes back from its snapshot (no rebuild) with identical
 * answers; a corrupted snapshot is detected and the graph rebuilt; changes after the snapshot
 * (inserts and deletes) are reconciled at load.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { open } from 'lmdb';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { randomVectors } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const DIM = 12;

async function fill(db: Database, rng: SeededRng, from: number, count: number): Promise<void> {
  const collection = db.collection('h');
  for (let start = from; start < from + count; start += 500) {
    const n = Math.min(500, from + count - start);
    await collection.upsert(randomVectors(rng, n, DIM).map((vector, i) => ({ id: start + i, vector, payload: { g: (start + i) % 7 } })));
  }
}

function answers(db: Database, queries: number[][]): string[][] {
  return queries.map((vector) =>
    db
      .collection('h')
      .search({ vector, limit: 10 })
      .map((h) => `${h.id}:${h.score}`),
  );
}

function recall(db: Database, queries: number[][]): number {
  let hit = 0;
  for (const vector of queries) {
    const exact = new Set(
      db
        .collection('h')
        .search({ vector, limit: 10, params: { exact: true } })
        .map((h) => h.id),
    );
    for (const h of db.collection('h').search({ vector, limit: 10 })) if (exact.has(h.id)) hit++;
  }
  return hit / (10 * queries.length);
}

for (const quantization of ['none', 'sq8'] as const) {
  test(`a clean restart restores the graph from its snapshot with identical answers (${quantization})`, async (t) => {
    const path = tempDbPath(t);
    const rng = new SeededRng(11);
    const warnings: string[] = [];
    let db = Database.open(path, { onWarning: (m) => warnings.push(m) });
    await db.createCollection({ name: 'h', vector_size: DIM, distance: 'cosine', hnsw: true, quantization });
    await fill(db, rng, 0, 3000);
    await db.collection('h').deleteIds(['5', '6', '7']);
    const queries = randomVectors(rng, 40, DIM);
    const before = answers(db, queries);
    await db.close();

    db = Database.open(path, { onWarning: (m) => warnings.push(m) });
    t.after(() => db.close());
    const report = db.loadReports.get('h');
    assert.deepEqual(
      { points: report?.points, fromSnapshot: report?.fromSnapshot, inserted: report?.inserted },
      { points: 2997, fromSnapshot: 2997, inserted: 0 },
    );
    assert.deepEqual(warnings, []);
    assert.deepEqual(answers(db, queries), before);
    assert.deepEqual(db.collection('h').checkIntegrity(), []);
    assert.ok(recall(db, queries) >= 0.9);
  });
}

test('changes after the snapshot are reconciled at load; deleted points never come back', async (t) => {
  const path = tempDbPath(t);
  const rng = new SeededRng(12);
  let db = Database.open(path);
  await db.createCollection({ name: 'h', vector_size: DIM, distance: 'euclid', hnsw: true });
  await fill(db, rng, 0, 2000);
  await db.close(); // snapshot covers 0..1999
  db = Database.open(path);
  await fill(db, rng, 2000, 500);
  const deleted = Array.from({ length: 300 }, (_, i) => String(i * 5));
  await db.collection('h').deleteIds(deleted);
  await db.collection('h').upsert([{ id: 1, vector: Array(DIM).fill(9) }]);
  // Leave without close(): the snapshot on file is the old one, as after a crash.
  const expectedCount = db.collection('h').pointsCount;
  const store = (db as unknown as { store: { close(): Promise<void> } }).store;
  await store.close();

  db = Database.open(path);
  t.after(() => db.close());
  const report = db.loadReports.get('h');
  assert.equal(report?.points, expectedCount);
  assert.equal(report?.inserted, 501, 'the 500 new points and the re-upserted one are inserted');
  assert.equal(db.collection('h').pointsCount, expectedCount);
  assert.deepEqual(db.collection('h').checkIntegrity(), []);
  const gone = new Set(deleted);
  const queries = randomVectors(rng, 30, DIM);
  for (const vector of queries) for (const h of db.collection('h').search({ vector, limit: 20 })) assert.ok(!gone.has(h.id), `deleted ${h.id} returned`);
  assert.equal(db.collection('h').search({ vector: Array(DIM).fill(9), limit: 1 })[0]?.id, '1');
  assert.ok(recall(db, queries) >= 0.9);
});

test('a corrupted snapshot is detected, reported and the graph rebuilt', async (t) => {
  const path = tempDbPath(t);
  const rng = new SeededRng(13);
  let db = Database.open(path);
  await db.createCollection({ name: 'h', vector_size: DIM, distance: 'dot', hnsw: true });
  await fill(db, rng, 0, 1500);
  const queries = randomVectors(rng, 20, DIM);
  const exactBefore = queries.map((vector) =>
    db
      .collection('h')
      .search({ vector, limit: 5, params: { exact: true } })
      .map((h) => h.id),
  );
  await db.close();

  const raw = open({ path, noSubdir: true });
  const snapshots = raw.openDB<Buffer, [number, number]>({ name: 'snapshots', encoding: 'binary' });
  const chunk = Buffer.from(snapshots.get([1, 0]) as Buffer);
  const middle = Math.floor(chunk.length / 2);
  chunk[middle] = (chunk[middle] as number) ^ 0xff;
  await snapshots.put([1, 0], chunk);
  await raw.close();

  const warnings: string[] = [];
  db = Database.open(path, { onWarning: (m) => warnings.push(m) });
  t.after(() => db.close());
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /snapshot not used \(checksum mismatch\)/);
  assert.equal(db.loadReports.get('h')?.inserted, 1500);
  assert.deepEqual(db.collection('h').checkIntegrity(), []);
  assert.deepEqual(
    queries.map((vector) =>
      db
        .collection('h')
        .search({ vector, limit: 5, params: { exact: true } })
        .map((h) => h.id),
    ),
    exactBefore,
  );
});

test('payload-only updates are saved in the next snapshot: the restart re-inserts nothing', async (t) => {
  const path = tempDbPath(t);
  const rng = new SeededRng(17);
  let db = Database.open(path);
  await db.createCollection({ name: 'h', vector_size: DIM, distance: 'cosine', hnsw: true });
  await fill(db, rng, 0, 1000);
  await db.close(); // snapshot of versions v1
  db = Database.open(path);
  const stored = [0, 1, 2].map((id) => db.collection('h').getPoint(id));
  // Same vectors, new payloads: new versions, same graph nodes.
  await db.collection('h').upsert(stored.map((p) => ({ id: p.id, vector: p.vector, payload: { g: 'changed' } })));
  await db.close();

  db = Database.open(path);
  t.after(() => db.close());
  const report = db.loadReports.get('h');
  assert.deepEqual(
    { points: report?.points, fromSnapshot: report?.fromSnapshot, inserted: report?.inserted },
    { points: 1000, fromSnapshot: 1000, inserted: 0 },
  );
  assert.equal(db.collection('h').getPoint('1').payload.g, 'changed');
});
