/**
 * A write batch is all or nothing at the LmdbStore level. lmdb-js runs the write callbacks of one
 * event-loop turn in one LMDB transaction; here one batch fails inside that transaction after some
 * of its puts succeeded (lmdb rejects a value), while independent batches are issued in the same
 * turn. The failed batch leaves nothing in the file, before and after reopening; the others are
 * there whole.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LmdbStore, type PointWrite } from '../../src/storage/lmdb-store.js';
import { encodePointRecord } from '../../src/storage/point-record.js';
import { tempDbPath } from '../helpers/temp-dir.js';

function record(n: number): Buffer {
  return encodePointRecord({ version: BigInt(n), vector: { encoding: 'f32', values: new Float32Array([n, 1]) }, payloadJson: `{"n":${n}}` });
}

function put(id: string, n: number): PointWrite {
  return { id, record: record(n) };
}

function contents(store: LmdbStore, uid: number): Array<[string, string]> {
  return [...store.scanPoints(uid)].map((p) => [p.id, p.record.toString('hex')]);
}

function lastVersions(store: LmdbStore): Record<string, bigint> {
  return Object.fromEntries(store.loadCollections().map((c) => [c.name, c.lastVersion]));
}

test('a batch that fails mid-transaction writes nothing; batches of the same turn are applied whole', async (t) => {
  const path = tempDbPath(t);
  let store = LmdbStore.open(path);
  t.after(() => store.close());
  const a = await store.createCollection('a', { any: 'config' });
  const b = await store.createCollection('b', { any: 'config' });
  await store.writePoints(a, [put('keep', 1)], [], 1n);

  // lmdb refuses a value that is not bytes: the third put throws inside the transaction.
  const notBytes = { id: 'bad', record: { not: 'bytes' } as unknown as Buffer };
  const failing = store.writePoints(a, [put('a1', 2), put('a2', 3), notBytes], ['keep'], 9n);
  const sameCollection = store.writePoints(a, [put('c1', 4)], [], 4n);
  const otherCollection = store.writePoints(b, [put('b1', 5), put('b2', 6)], [], 6n);
  const [f, s, o] = await Promise.allSettled([failing, sameCollection, otherCollection]);
  assert.equal(f.status, 'rejected');
  assert.equal((f as PromiseRejectedResult).reason.code, 'ERR_STORAGE');
  assert.equal(s.status, 'fulfilled');
  assert.equal(o.status, 'fulfilled');

  const expectedA: Array<[string, string]> = [
    ['c1', record(4).toString('hex')],
    ['keep', record(1).toString('hex')],
  ];
  const expectedB: Array<[string, string]> = [
    ['b1', record(5).toString('hex')],
    ['b2', record(6).toString('hex')],
  ];
  assert.deepEqual(contents(store, a), expectedA);
  assert.deepEqual(contents(store, b), expectedB);
  assert.deepEqual(lastVersions(store), { a: 4n, b: 6n });

  await store.close();
  store = LmdbStore.open(path);
  assert.deepEqual(contents(store, a), expectedA);
  assert.deepEqual(contents(store, b), expectedB);
  assert.deepEqual(lastVersions(store), { a: 4n, b: 6n });

  // The store keeps working after the failure.
  await store.writePoints(a, [put('a1', 7)], ['keep'], 7n);
  assert.deepEqual(
    contents(store, a).map(([id]) => id),
    ['a1', 'c1'],
  );
});

test('an id that cannot be a key is refused before the transaction, and nothing of its batch is written', async (t) => {
  const path = tempDbPath(t);
  const store = LmdbStore.open(path);
  t.after(() => store.close());
  const a = await store.createCollection('a', {});
  await assert.rejects(store.writePoints(a, [put('ok', 1), put('x'.repeat(1025), 2)], [], 2n), { code: 'ERR_INTERNAL' });
  await assert.rejects(store.writePoints(a, [put('ok', 1)], ['lone\ud800'], 2n), { code: 'ERR_INTERNAL' });
  assert.equal(store.countPoints(a), 0);
  assert.deepEqual(lastVersions(store), { a: 0n });
});
