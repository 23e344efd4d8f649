/**
 * A file written in storage format 1 (points under lmdb-js ordered-binary `[uid, id]` keys) opens
 * in this build: its points move to format-2 keys in one transaction, with their ids recovered
 * exactly (also those format 1 itself read back wrong), keys of dropped collections are discarded,
 * and the file says format 2. A format-1 key that does not decode stops the open and changes
 * nothing. The format-1 file is written here with lmdb directly, as format 1 wrote it.
 *
 * A format-2 file whose ids spell UUIDs in other forms than the canonical one opens with those ids
 * canonical (format 3): one UUID is one point, the newest spelling's record kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type DatabaseOptions, open } from 'lmdb';
import { Database } from '../../src/db/database.js';
import { LmdbStore, STORAGE_FORMAT_VERSION } from '../../src/storage/lmdb-store.js';
import { encodePointKey } from '../../src/storage/point-key.js';
import { encodePointRecord } from '../../src/storage/point-record.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { format1Reading, trickyIds } from '../unit/storage/tricky-ids.js';

const DIM = 3;
const VERSION = 1_700_000_000_000_000_000n;

/** The stored configs of a flat and an HNSW collection, as this build writes them. */
async function storedConfigs(t: Parameters<typeof tempDbPath>[0]): Promise<{ flat: unknown; graph: unknown }> {
  const path = tempDbPath(t);
  const db = Database.open(path);
  await db.createCollection({ name: 'docs', vector_size: DIM, distance: 'cosine' });
  await db.createCollection({ name: 'graph', vector_size: DIM, distance: 'euclid', hnsw: true });
  await db.close();
  const store = LmdbStore.open(path);
  const byName = new Map(store.loadCollections().map((c) => [c.name, c.config]));
  await store.close();
  return { flat: byName.get('docs'), graph: byName.get('graph') };
}

function record(i: number): Buffer {
  return encodePointRecord({
    version: VERSION + BigInt(i),
    vector: { encoding: 'f32', values: new Float32Array([1 + (i % 7), 1 + (i % 11), 1]) },
    payloadJson: JSON.stringify({ n: i }),
  });
}

interface Format1Options {
  ids: readonly string[];
  /** Raw extra keys for the `points` sub-database (a format-1 key no writer made). */
  rawPointKeys?: readonly Buffer[];
}

/** Writes a format-1 file: uid 1 "docs" (flat), uid 3 "graph" (HNSW, no snapshot), keys of dropped uid 2. */
async function writeFormat1(path: string, configs: { flat: unknown; graph: unknown }, options: Format1Options): Promise<void> {
  const root = open({ path, noSubdir: true, overlappingSync: false, cache: false });
  const meta = root.openDB<unknown, string>({ name: 'meta' });
  const collections = root.openDB<unknown, string>({ name: 'collections' });
  const lastVersions = root.openDB<string, number>({ name: 'last_versions', encoding: 'string' });
  const points = root.openDB<Buffer, [number, string]>({ name: 'points', encoding: 'binary' });
  await root.transaction(() => {
    meta.putSync('format', { magic: 'kith', version: 1 });
    meta.putSync('next_uid', 4);
    collections.putSync('docs', { uid: 1, config: configs.flat });
    collections.putSync('graph', { uid: 3, config: configs.graph });
    lastVersions.putSync(1, String(VERSION + BigInt(options.ids.length)));
    lastVersions.putSync(3, String(VERSION + BigInt(options.ids.length)));
    options.ids.forEach((id, i) => {
      points.putSync([1, id], record(i));
      points.putSync([3, id], record(i));
    });
    points.putSync([2, 'left behind by a format-1 drop'], record(0));
  });
  if (options.rawPointKeys !== undefined) {
    const raw = root.openDB<Buffer, Buffer>({ name: 'points', encoding: 'binary', keyEncoding: 'binary' });
    await root.transaction(() => {
      for (const key of options.rawPointKeys ?? []) raw.putSync(key, record(0));
    });
  }
  await root.close();
}

/** What lmdb sees in the file: the format entry and the number of keys in each points sub-database. */
async function inspect(path: string): Promise<{ format: unknown; format1Points: number; format2Points: number }> {
  const root = open({ path, noSubdir: true, overlappingSync: false, cache: false });
  const format = root.openDB<unknown, string>({ name: 'meta' }).get('format');
  const count = (name: string): number => {
    // create: false (not in lmdb's option types) opens nothing when the sub-database does not exist.
    const options = { name, create: false, keyEncoding: 'binary', encoding: 'binary' } as unknown as DatabaseOptions & { name: string };
    const db = root.openDB(options);
    return db === null || db === undefined ? 0 : db.getKeysCount();
  };
  const result = { format, format1Points: count('points'), format2Points: count('point_records') };
  await root.close();
  return result;
}

test('a format-1 file migrates on open: exact ids, dropped collections discarded, the current format afterwards', async (t) => {
  const configs = await storedConfigs(t);
  const path = tempDbPath(t);
  const ids = trickyIds();
  await writeFormat1(path, configs, { ids });

  let db = Database.open(path);
  t.after(() => db.close());
  for (const name of ['docs', 'graph']) {
    const c = db.collection(name);
    assert.equal(c.pointsCount, ids.length, name);
    ids.forEach((id, i) => {
      // Two tricky ids shared their format-1 key with a short id, which the key migrates as.
      const p = c.getPoint(format1Reading(id));
      assert.equal(p.payload.n, i, `${name} ${JSON.stringify(id)}`);
      assert.equal(p.version, VERSION + BigInt(i));
      if (format1Reading(id) !== id) assert.throws(() => c.getPoint(id), { code: 'ERR_POINT_NOT_FOUND' });
    });
  }
  // The migrated file takes writes, and versions continue after format 1's last one.
  await db.collection('docs').deleteIds([ids[0] as string]);
  await db.collection('docs').upsert([{ id: 'new', vector: [1, 2, 3] }]);
  assert.ok(db.collection('docs').getPoint('new').version > VERSION + BigInt(ids.length));
  await db.close();

  assert.deepEqual(await inspect(path), {
    format: { magic: 'kith', version: STORAGE_FORMAT_VERSION },
    format1Points: 0,
    format2Points: 2 * ids.length,
  });

  db = Database.open(path);
  assert.equal(db.collection('docs').pointsCount, ids.length);
  assert.throws(() => db.collection('docs').getPoint(ids[0]), { code: 'ERR_POINT_NOT_FOUND' });
  assert.equal(db.collection('graph').getPoint(ids[1]).payload.n, 1);
  assert.deepEqual(db.collection('graph').checkIntegrity(), []);
});

test('a format-1 key that does not decode stops the open and leaves the file as it was', async (t) => {
  const configs = await storedConfigs(t);
  const path = tempDbPath(t);
  const ids = ['a', 'b', 'x'.repeat(80)];
  // uid 1 as ordered-binary, the separator, then a lone 0x01: no format-1 writer makes that.
  const bogus = Buffer.from('13ff000000000000000001', 'hex');
  await writeFormat1(path, configs, { ids, rawPointKeys: [bogus] });
  const before = await inspect(path);
  assert.equal(before.format1Points, 2 * ids.length + 2);

  assert.throws(
    () => Database.open(path),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, 'ERR_STORAGE_CORRUPTED');
      assert.match(e.message, /13ff000000000000000001/);
      return true;
    },
  );
  // The refused open gives its lock back once LMDB has closed the file.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(await inspect(path), before);
  assert.deepEqual(before.format, { magic: 'kith', version: 1 });
});

test('a format-2 file migrates on open: UUID spellings become canonical, the newest spelling of a UUID stays, other ids untouched', async (t) => {
  const path = tempDbPath(t);
  let db = Database.open(path);
  await db.createCollection({ name: 'docs', vector_size: DIM, distance: 'cosine' });
  await db.createCollection({ name: 'graph', vector_size: DIM, distance: 'euclid', hnsw: true });
  // Enough points for a graph snapshot to be written at close.
  const filler = Array.from({ length: 40 }, (_, i) => ({ id: `f${i}`, vector: [1 + i, 2, 3], payload: { n: -1 } }));
  await db.collection('docs').upsert(filler);
  await db.collection('graph').upsert(filler);
  await db.close();

  const canonical = '2c9a3d0e-5f7b-4e61-9a1d-0b8c7e6f5a41';
  const other = 'f0e1d2c3-b4a5-4968-8776-655443322110';
  // As an earlier build stored them: kith's port kept any string as given.
  const stored: { id: string; i: number }[] = [
    { id: canonical.toUpperCase(), i: 1 },
    { id: `{${canonical}}`, i: 5 },
    { id: canonical.replaceAll('-', ''), i: 3 },
    { id: `urn:uuid:${other.toUpperCase()}`, i: 2 },
    { id: 'not-a-uuid', i: 4 },
    { id: `${canonical}0`, i: 6 },
  ];
  const root = open({ path, noSubdir: true, overlappingSync: false, cache: false });
  const collections = root.openDB<{ uid: number }, string>({ name: 'collections' });
  const uids = ['docs', 'graph'].map((name) => (collections.get(name) as { uid: number }).uid);
  const points = root.openDB<Buffer, Buffer>({ name: 'point_records', encoding: 'binary', keyEncoding: 'binary' });
  const snapshots = root.openDB<Buffer, [number, number]>({ name: 'snapshots', encoding: 'binary' });
  const graphUid = uids[1] as number;
  assert.ok(snapshots.getKeysCount({ start: [graphUid], end: [graphUid + 1] }) > 0, 'the graph has a snapshot before the migration');
  await root.transaction(() => {
    root.openDB<unknown, string>({ name: 'meta' }).putSync('format', { magic: 'kith', version: 2 });
    for (const uid of uids) for (const { id, i } of stored) points.putSync(encodePointKey(uid, id), record(i));
  });
  await root.close();

  db = Database.open(path);
  t.after(() => db.close());
  for (const name of ['docs', 'graph']) {
    const c = db.collection(name);
    assert.equal(c.pointsCount, filler.length + 4, `${name}: three spellings of one UUID are one point`);
    assert.equal(c.getPoint(canonical).payload.n, 5, `${name}: the newest spelling's record stays`);
    assert.equal(c.getPoint(canonical.toUpperCase()).id, canonical, 'any spelling names it');
    assert.equal(c.getPoint(other).payload.n, 2);
    assert.equal(c.getPoint('not-a-uuid').payload.n, 4);
    assert.equal(c.getPoint(`${canonical}0`).payload.n, 6, 'a 37-character id is no UUID');
    assert.deepEqual(c.checkIntegrity(), []);
  }
  const hits = db.collection('graph').search({ vector: [1, 2, 3], limit: 100, params: { exact: true } });
  assert.deepEqual(
    hits
      .map((h) => h.id)
      .filter((id) => !/^f\d+$/.test(id))
      .sort(),
    [canonical, `${canonical}0`, 'not-a-uuid', other].sort(),
  );
  // Deleting by any spelling deletes the one point, also after a restart.
  await db.collection('docs').deleteIds([`{${canonical}}`]);
  await db.close();
  db = Database.open(path);
  assert.throws(() => db.collection('docs').getPoint(canonical), { code: 'ERR_POINT_NOT_FOUND' });
  assert.equal(db.collection('docs').pointsCount, filler.length + 3);
  const after = await inspect(path);
  assert.deepEqual(after.format, { magic: 'kith', version: STORAGE_FORMAT_VERSION });
});
