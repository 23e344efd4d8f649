/**
 * Write, close, reopen the same file: the same answers and versions; a dropped collection stays
 * dropped and its keys leave the file; sq8 answers are identical across the restart.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LmdbStore } from '../../src/storage/lmdb-store.js';
import { openTestApp } from '../helpers/app.js';
import { randomVectors, withSeed } from '../helpers/data.js';

const QUERIES = 20;

for (const [distance, quantization] of [
  ['cosine', 'none'],
  ['euclid', 'none'],
  ['dot', 'none'],
  ['cosine', 'sq8'],
  ['euclid', 'sq8'],
] as const) {
  test(`restart gives identical answers and versions (${distance}, ${quantization})`, async (t) => {
    await withSeed(7, async (rng) => {
      let a = await openTestApp(t);
      await a.call('POST', '/collections', { name: 'c', vector_size: 16, distance, quantization });
      const vectors = randomVectors(rng, 600, 16);
      for (let start = 0; start < vectors.length; start += 200) {
        const points = vectors.slice(start, start + 200).map((vector, i) => ({
          id: start + i,
          vector,
          payload: { group: (start + i) % 5, name: `p${start + i}` },
        }));
        assert.equal((await a.call('PUT', '/collections/c/points', { points })).status, 200);
      }
      await a.call('POST', '/collections/c/points/delete', { points: [0, 1, 2, 3] });
      const queries = randomVectors(rng, QUERIES, 16);
      const ask = async (app: typeof a) =>
        Promise.all(
          queries.map(async (vector, i) => {
            const r = await app.call('POST', '/collections/c/points/search', {
              vector,
              limit: 7,
              with_vector: true,
              filter: i % 2 === 0 ? { must: [{ key: 'group', match: { value: i % 5 } }] } : undefined,
            });
            assert.equal(r.status, 200);
            return r.raw.replace(/"time":[0-9.e-]+/, '');
          }),
        );
      const before = await ask(a);
      const info = (await a.call('GET', '/collections/c')).body.result;
      a = await a.reopen();
      assert.deepEqual(await ask(a), before);
      assert.deepEqual((await a.call('GET', '/collections/c')).body.result, info);
      assert.equal(info.points_count, 596);
    });
  });
}

test('versions keep increasing across a restart', async (t) => {
  let a = await openTestApp(t);
  await a.call('POST', '/collections', { name: 'v', vector_size: 2, distance: 'dot' });
  await a.call('PUT', '/collections/v/points', { points: [{ id: 'a', vector: [1, 0] }] });
  const versionOf = async (app: typeof a, id: string): Promise<bigint> => {
    const r = await app.call('GET', `/collections/v/points/${id}`);
    const m = /"version":(\d+)/.exec(r.raw);
    assert.ok(m, r.raw);
    return BigInt(m[1] as string);
  };
  const first = await versionOf(a, 'a');
  // The point with the highest version is deleted; the next version must still exceed it.
  await a.call('PUT', '/collections/v/points', { points: [{ id: 'b', vector: [0, 1] }] });
  const second = await versionOf(a, 'b');
  await a.call('POST', '/collections/v/points/delete', { points: ['b'] });
  a = await a.reopen();
  assert.equal(await versionOf(a, 'a'), first);
  await a.call('PUT', '/collections/v/points', { points: [{ id: 'c', vector: [1, 1] }] });
  const third = await versionOf(a, 'c');
  assert.ok(second > first && third > second, `${first} < ${second} < ${third}`);
});

test('a dropped collection stays dropped and its keys leave the file', async (t) => {
  let a = await openTestApp(t);
  await a.call('POST', '/collections', { name: 'keep', vector_size: 2, distance: 'dot' });
  await a.call('POST', '/collections', { name: 'drop', vector_size: 2, distance: 'dot' });
  const points = Array.from({ length: 50 }, (_, i) => ({ id: i, vector: [i, 1] }));
  await a.call('PUT', '/collections/keep/points', { points });
  await a.call('PUT', '/collections/drop/points', { points });
  assert.equal((await a.call('DELETE', '/collections/drop')).status, 200);
  const dbPath = a.dbPath;
  await a.close();

  const store = LmdbStore.open(dbPath);
  const stored = store.loadCollections();
  assert.deepEqual(
    stored.map((c) => c.name),
    ['keep'],
  );
  const keepUid = (stored[0] as { uid: number }).uid;
  const counts = [1, 2, 3, 4].map((uid) => [...store.scanPoints(uid)].length);
  await store.close();
  assert.deepEqual(
    counts,
    [1, 2, 3, 4].map((uid) => (uid === keepUid ? 50 : 0)),
  );

  a = await a.reopen();
  assert.equal((await a.call('GET', '/collections/drop')).status, 404);
  assert.equal((await a.call('GET', '/collections/keep')).body.result.points_count, 50);
});

test('a file that is not a kith database is refused at open', async (t) => {
  const a = await openTestApp(t);
  const dbPath = a.dbPath;
  await a.close();
  const { open } = await import('lmdb');
  const foreign = open({ path: dbPath, noSubdir: true });
  const meta = foreign.openDB({ name: 'meta' });
  await meta.put('format', { magic: 'other', version: 1 });
  await foreign.close();
  assert.throws(() => LmdbStore.open(dbPath), { code: 'ERR_STORAGE_CORRUPTED' });
});
