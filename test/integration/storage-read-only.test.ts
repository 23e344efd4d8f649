/**
 * Opening a database file read-only (`Database.open(path, { readOnly: true })`, what the command
 * line's reading commands do) and opening files that are not kith's:
 *
 * - read-only reads every collection, writes nothing (not even the graph snapshot a writer would
 *   refresh at close: the file's bytes are the same), leaves nothing beside the file, holds the
 *   file against other openers, and refuses writes with ERR_STORAGE, memory unchanged;
 * - read-only refuses what it could only read by writing: an empty file, a format-1 file;
 * - any open refuses another program's LMDB file before LMDB maps it, leaving it as it was and
 *   nothing beside it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { open } from 'lmdb';
import { Database } from '../../src/db/database.js';
import { LmdbStore } from '../../src/storage/lmdb-store.js';
import { encodePointRecord } from '../../src/storage/point-record.js';
import { tempDir } from '../helpers/temp-dir.js';

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

function refused(code: string, pattern: RegExp) {
  return (e: Error & { code?: string }): boolean => {
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  };
}

test('read-only: reads everything, writes nothing (not a stale snapshot either), leaves nothing beside the file, refuses writes', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'kith.db');
  const db = Database.open(path);
  await db.createCollection({ name: 'g', vector_size: 3, distance: 'euclid', hnsw: true });
  await db.collection('g').upsert(Array.from({ length: 300 }, (_, i) => ({ id: i, vector: [i, i % 7, 1] })));
  await db.close();
  // Records the snapshot does not cover: a writer's close would save a fresh one.
  const store = LmdbStore.open(path);
  const uid = (store.loadCollections()[0] as { uid: number }).uid;
  const late = Array.from({ length: 30 }, (_, i) => ({
    id: `late-${i}`,
    record: encodePointRecord({ version: 10n ** 18n + BigInt(i), vector: { encoding: 'f32', values: new Float32Array([i, 0, 2]) }, payloadJson: '{}' }),
  }));
  await store.writePoints(uid, late, [], 10n ** 18n + 30n);
  await store.close();
  rmSync(`${path}-lock`);
  const before = sha(path);

  const reader = Database.open(path, { readOnly: true });
  try {
    assert.equal(reader.collection('g').pointsCount, 330);
    assert.deepEqual(readdirSync(dir), ['kith.db'], 'a read-only open leaves nothing beside the file');
    assert.throws(() => Database.open(path), refused('ERR_DATABASE_LOCKED', /already open in this process/));
    await assert.rejects(reader.collection('g').upsert([{ id: 'x', vector: [1, 2, 3] }]), refused('ERR_STORAGE', /is open read-only; nothing was written/));
    await assert.rejects(reader.createCollection({ name: 'h', vector_size: 2, distance: 'dot' }), refused('ERR_STORAGE', /open read-only/));
    assert.equal(reader.collection('g').pointsCount, 330);
  } finally {
    await reader.close();
  }
  assert.equal(sha(path), before, 'the read-only open changed the file');
  assert.deepEqual(readdirSync(dir), ['kith.db']);

  // A writer's open then refreshes the snapshot as usual, and LMDB's lock file appears.
  const writer = Database.open(path);
  assert.equal(writer.collection('g').pointsCount, 330);
  await writer.close();
  assert.notEqual(sha(path), before);
  assert.deepEqual(readdirSync(dir).sort(), ['kith.db', 'kith.db-lock']);
});

test('read-only refuses an empty file and a format-1 file, which only a writer can make readable; a missing file is an error', async (t) => {
  const dir = tempDir(t);
  const empty = join(dir, 'empty.db');
  writeFileSync(empty, '');
  assert.throws(
    () => Database.open(empty, { readOnly: true }),
    refused('ERR_STORAGE_CORRUPTED', /empty\.db: not a kith database: an empty file \(0 bytes\); a read-only command does not make it one/),
  );
  assert.equal(readFileSync(empty).length, 0);
  assert.throws(() => Database.open(join(dir, 'absent.db'), { readOnly: true }), refused('ERR_STORAGE', /cannot open database file .*absent\.db/));

  const old = join(dir, 'old.db');
  const root = open({ path: old, noSubdir: true, overlappingSync: false });
  await root.openDB<unknown, string>({ name: 'meta' }).put('format', { magic: 'kith', version: 1 });
  await root.openDB<unknown, string>({ name: 'collections' }).put('docs', { uid: 1, config: {} });
  await root.openDB<Buffer, Buffer>({ name: 'points', encoding: 'binary', keyEncoding: 'binary' }).put(Buffer.from('k'), Buffer.from('v'));
  await root.close();
  rmSync(`${old}-lock`);
  const before = sha(old);
  assert.throws(
    () => Database.open(old, { readOnly: true }),
    refused('ERR_STORAGE_CORRUPTED', /has storage format 1, which a read-only command does not migrate/),
  );
  assert.equal(sha(old), before);
  assert.deepEqual(readdirSync(dir).sort(), ['empty.db', 'old.db']);
});

test("another program's LMDB file is refused before LMDB opens it, by a writer too: unchanged, nothing beside it", async (t) => {
  const dir = tempDir(t);
  const plain = join(dir, 'plain.db');
  let root = open({ path: plain, noSubdir: true });
  await root.put('greeting', 'hello');
  await root.close();
  const named = join(dir, 'named.db');
  root = open({ path: named, noSubdir: true });
  await root.openDB<string, string>({ name: 'users' }).put('ada', 'lovelace');
  await root.close();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('-lock'))) rmSync(join(dir, file));
  const hashes = [sha(plain), sha(named)];

  for (const readOnly of [false, true]) {
    assert.throws(
      () => Database.open(plain, { readOnly }),
      refused('ERR_STORAGE_CORRUPTED', /plain\.db: not a kith database: an LMDB file with 1 value\(s\) in its main database/),
    );
    assert.throws(
      () => Database.open(named, { readOnly }),
      refused('ERR_STORAGE_CORRUPTED', /named\.db: not a kith database: an LMDB file with sub-database\(s\) "users" and no "meta"/),
    );
  }
  assert.deepEqual([sha(plain), sha(named)], hashes);
  assert.deepEqual(readdirSync(dir).sort(), ['named.db', 'plain.db']);
  // A refused open gives the file lock back at once.
  assert.throws(() => Database.open(plain), refused('ERR_STORAGE_CORRUPTED', /not a kith database/));
});
