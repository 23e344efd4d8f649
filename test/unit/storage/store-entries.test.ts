/**
 * The `meta`, `collections` and `last_versions` entries as stored: a new file says format 3;
 * collection configs and last versions (beyond 2^53) read back exactly after reopening; uids are
 * never reused, also after a drop and a restart.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { open } from 'lmdb';
import { LmdbStore, STORAGE_FORMAT_VERSION } from '../../../src/storage/lmdb-store.js';
import { tempDbPath } from '../../helpers/temp-dir.js';

test('a new file is written as storage format 3', async (t) => {
  const path = tempDbPath(t);
  await LmdbStore.open(path).close();
  assert.equal(STORAGE_FORMAT_VERSION, 3);
  const root = open({ path, noSubdir: true });
  const format = root.openDB<unknown, string>({ name: 'meta' }).get('format');
  await root.close();
  assert.deepEqual(format, { magic: 'kith', version: 3 });
});

test('a newer format than this build reads is refused, naming both', async (t) => {
  const path = tempDbPath(t);
  await LmdbStore.open(path).close();
  const root = open({ path, noSubdir: true });
  await root.openDB<unknown, string>({ name: 'meta' }).put('format', { magic: 'kith', version: 4 });
  await root.close();
  assert.throws(
    () => LmdbStore.open(path),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, 'ERR_STORAGE_CORRUPTED');
      assert.match(e.message, /storage format 4; this build reads 1 to 3/);
      return true;
    },
  );
});

test('configs and last versions round-trip; uids are never reused', async (t) => {
  const path = tempDbPath(t);
  let store = LmdbStore.open(path);
  t.after(() => store.close());
  const config = {
    name: 'a',
    vector_size: 1536,
    distance: 'cosine',
    hnsw: true,
    parameters: { m: 16, ef_construction: 200, ef_search: 64, k: 10 },
    quantization: 'sq8',
    nested: { list: [1, 2.5, 'x', null, false], empty: {} },
  };
  const a = await store.createCollection('a', config);
  const b = await store.createCollection('b', { name: 'b' });
  const big = 2n ** 63n - 12345n;
  await store.writePoints(a, [], [], big);
  await store.dropCollection(b, 'b');
  await store.close();

  store = LmdbStore.open(path);
  assert.deepEqual(store.loadCollections(), [{ uid: a, name: 'a', config, lastVersion: big }]);
  const c = await store.createCollection('b', { name: 'b' });
  assert.ok(c > b && b > a, `${a} < ${b} < ${c}`);
  assert.deepEqual(
    store.loadCollections().map((s) => [s.name, s.uid, s.lastVersion]),
    [
      ['a', a, big],
      ['b', c, 0n],
    ],
  );
});
