/**
 * One opener per database file, in-process: a second `Database.open` (or `LmdbStore.open`) of a
 * file already open, by the same path or another name for it, is ERR_DATABASE_LOCKED naming the
 * file; after a graceful close the file opens again at once with everything written. The same
 * refusal across processes is test/e2e/file-lock.test.ts.
 */
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { open } from 'lmdb';
import { Database } from '../../src/db/database.js';
import { LmdbStore } from '../../src/storage/lmdb-store.js';
import { tempDir } from '../helpers/temp-dir.js';

function refused(path: string) {
  return (e: Error & { code?: string }): boolean => {
    assert.equal(e.code, 'ERR_DATABASE_LOCKED');
    assert.ok(e.message.includes(path), e.message);
    assert.match(e.message, /already open in this process/);
    return true;
  };
}

test('a second open of an open file is refused in-process; after close it opens again with the data', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'kith.db');
  const link = join(dir, 'other-name.db');
  let db = Database.open(path);
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'dot' });
  await db.collection('c').upsert([{ id: 'p', vector: [1, 2] }]);
  symlinkSync(path, link);

  assert.throws(() => Database.open(path), refused(path));
  assert.throws(() => LmdbStore.open(path), refused(path));
  assert.throws(() => Database.open(link), refused(link));
  // The refusals changed nothing for the holder.
  await db.collection('c').upsert([{ id: 'q', vector: [3, 4] }]);
  assert.equal(db.collection('c').pointsCount, 2);

  await db.close();
  db = Database.open(path);
  assert.equal(db.collection('c').pointsCount, 2);
  assert.deepEqual(db.collection('c').getPoint('q').vector, [3, 4]);
  await db.close();

  // Under the other name too, once closed.
  db = Database.open(link);
  assert.equal(db.collection('c').pointsCount, 2);
});

test('a file in a folder that does not exist yet opens, the folder created', async (t) => {
  const path = join(tempDir(t), 'not', 'yet', 'kith.db');
  const db = Database.open(path);
  t.after(() => db.close());
  assert.throws(() => Database.open(path), refused(path));
});

test('an open that fails after taking the lock gives it back', async (t) => {
  const path = join(tempDir(t), 'kith.db');
  const foreign = open({ path, noSubdir: true });
  const meta = foreign.openDB<unknown, string>({ name: 'meta' });
  await meta.put('format', { magic: 'other', version: 1 });
  await foreign.close();
  assert.throws(() => Database.open(path), { code: 'ERR_STORAGE_CORRUPTED' });

  // The lock goes once LMDB has closed the file, which the failed open started.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const fixed = open({ path, noSubdir: true });
  await fixed.openDB<unknown, string>({ name: 'meta' }).remove('format');
  await fixed.close();
  const db = Database.open(path);
  t.after(() => db.close());
  assert.deepEqual(db.list(), []);
});
