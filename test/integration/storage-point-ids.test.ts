/**
 * Every id the contract accepts is stored under its own key and read back exactly: ids with each
 * control character U+0000–U+001F at several places, 64+ and 1024-byte ids, astral text, ids that
 * are prefixes of one another. Upsert → restart → get/search/delete → restart: the same ids, the
 * deleted ones stay gone; dropping a collection leaves none of its keys in the file.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { LmdbStore } from '../../src/storage/lmdb-store.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { trickyIds } from '../unit/storage/tricky-ids.js';

const DIM = 4;

function vectorOf(i: number): number[] {
  return [i % 101, Math.floor(i / 101), 1, 0];
}

test('tricky ids survive restarts exactly, deletes stick, and a drop leaves no key behind', async (t) => {
  const path = tempDbPath(t);
  const ids = trickyIds();
  const index = new Map(ids.map((id, i) => [id, i]));
  let db = Database.open(path);
  t.after(() => db.close());
  await db.createCollection({ name: 'flat', vector_size: DIM, distance: 'euclid' });
  await db.createCollection({ name: 'graph', vector_size: DIM, distance: 'euclid', hnsw: true });
  for (const name of ['flat', 'graph']) {
    const points = ids.map((id, i) => ({ id, vector: vectorOf(i), payload: { n: i } }));
    for (let at = 0; at < points.length; at += 100) await db.collection(name).upsert(points.slice(at, at + 100));
    assert.equal(db.collection(name).pointsCount, ids.length);
  }
  await db.close();

  const expectAll = (present: readonly string[], gone: readonly string[]): void => {
    for (const name of ['flat', 'graph']) {
      const c = db.collection(name);
      assert.equal(c.pointsCount, present.length, name);
      for (const id of present) {
        const p = c.getPoint(id);
        assert.equal(p.id, id);
        assert.equal(p.payload.n, index.get(id), `${name} ${JSON.stringify(id)}`);
        assert.deepEqual(p.vector, vectorOf(index.get(id) as number));
      }
      for (const id of gone) assert.throws(() => c.getPoint(id), { code: 'ERR_POINT_NOT_FOUND' }, `${name} ${JSON.stringify(id)}`);
    }
    // The exact index returns every stored id, each once, with its own vector nearest to itself.
    const all = db.collection('flat').search({ vector: [0, 0, 0, 0], limit: 10_000 });
    assert.deepEqual(all.map((h) => h.id).sort(), [...present].sort());
    for (const id of present.slice(0, 40)) {
      const [hit] = db.collection('flat').search({ vector: vectorOf(index.get(id) as number), limit: 1 });
      assert.equal(hit?.id, id);
    }
  };

  db = Database.open(path);
  expectAll(ids, []);
  const gone = ids.filter((_, i) => i % 2 === 1);
  const kept = ids.filter((_, i) => i % 2 === 0);
  for (const name of ['flat', 'graph']) {
    assert.deepEqual(await db.collection(name).deleteIds(gone), { deleted: gone.length });
  }
  expectAll(kept, gone);
  await db.close();

  db = Database.open(path);
  expectAll(kept, gone);
  const graphUid = db.collection('graph').uid;
  const flatUid = db.collection('flat').uid;
  await db.dropCollection('graph');
  await db.close();

  const store = LmdbStore.open(path);
  try {
    assert.deepEqual(
      store.loadCollections().map((c) => c.name),
      ['flat'],
    );
    assert.equal(store.countPoints(graphUid), 0);
    assert.equal([...store.scanPoints(graphUid)].length, 0);
    assert.equal(store.readSnapshot(graphUid), undefined);
    assert.equal(store.countPoints(flatUid), kept.length);
    assert.deepEqual([...store.scanPoints(flatUid)].map((p) => p.id).sort(), [...kept].sort());
  } finally {
    await store.close();
  }
});
