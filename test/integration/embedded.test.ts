/**
 * The embeddable entry point (src/lib.ts): open a file in-process and create, upsert, search,
 * delete and drop without HTTP; errors arrive as KithError with a code.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database, KithError, parseFilter } from '../../src/lib.js';
import { randomVectors } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

test('the embedded API does everything the REST API does, durably', async (t) => {
  const path = tempDbPath(t);
  let db = Database.open(path);
  const info = await db.createCollection({ name: 'docs', vector_size: 3, distance: 'cosine', hnsw: true });
  assert.equal(info.hnsw, true);
  const docs = db.collection('docs');
  assert.deepEqual(
    await docs.upsert([
      { id: 1, vector: [1, 0, 0], payload: { lang: 'en' } },
      { id: 'b', vector: [0, 1, 0], payload: { lang: 'de' } },
      { id: 'c', vector: [0.9, 0.1, 0], payload: { lang: 'de' } },
    ]),
    { upserted: 3 },
  );
  const hits = docs.search({ vector: [1, 0, 0], limit: 2, filter: parseFilter({ must: [{ key: 'lang', match: { value: 'de' } }] }) });
  assert.deepEqual(
    hits.map((h) => h.id),
    ['c', 'b'],
  );
  assert.equal(typeof hits[0]?.version, 'bigint');
  assert.deepEqual(await docs.deleteIds(['b', 'zz']), { deleted: 1 });
  assert.deepEqual(await docs.deleteByFilter(parseFilter({ must: [{ key: 'lang', match: { value: 'de' } }] }) ?? { must: [], mustNot: [], should: [] }), {
    deleted: 1,
  });
  await db.close();

  db = Database.open(path);
  t.after(() => db.close());
  assert.deepEqual(
    db.list().map((c) => [c.name, c.points_count]),
    [['docs', 1]],
  );
  assert.equal(db.collection('docs').getPoint(1).payload.lang, 'en');
  await assert.rejects(db.collection('docs').upsert([{ id: 2, vector: [1, 2] }]), (e: unknown) => {
    assert.ok(e instanceof KithError);
    assert.equal(e.code, 'ERR_BAD_INPUT');
    assert.match(e.message, /^points\[0\]\.vector: expected 3 numbers, got 2/);
    return true;
  });
  assert.throws(() => db.collection('nope'), { code: 'ERR_COLLECTION_NOT_FOUND' });
  await assert.rejects(db.createCollection({ name: 'docs', vector_size: 3, distance: 'dot' }), { code: 'ERR_COLLECTION_EXISTS' });
  await db.dropCollection('docs');
  assert.deepEqual(db.list(), []);
});

test('re-upserting the same ids of a Flat collection reuses their slots: vector memory does not grow', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({ name: 'f', vector_size: 64, distance: 'dot' });
  const collection = db.collection('f');
  const points = randomVectors(new SeededRng(3), 1000, 64).map((vector, id) => ({ id, vector }));
  await collection.upsert(points);
  const before = collection.memoryStats().vectorBytesAllocated;
  for (let round = 0; round < 20; round++) await collection.upsert(points);
  assert.equal(collection.memoryStats().vectorBytesAllocated, before);
  assert.equal(collection.memoryStats().points, 1000);
});

test('the embedded API keeps its own copy of a payload: changing the caller object later changes nothing', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'dot' });
  const c = db.collection('c');
  const payload: Record<string, unknown> = { tags: ['a'], n: -0, nested: { x: 1 } };
  await c.upsert([{ id: 'p', vector: [1, 0], payload }]);
  (payload.tags as string[]).push('b');
  (payload.nested as { x: number }).x = 2;
  payload.extra = true;
  const stored = c.getPoint('p').payload;
  assert.deepEqual(stored, { tags: ['a'], n: 0, nested: { x: 1 } });
  assert.ok(Object.is(stored.n, 0), '-0 is stored as 0, as the record (JSON) holds it');
  const hit = c.search({ vector: [1, 0], limit: 1, filter: parseFilter({ must: [{ key: 'tags', match: { value: 'b' } }] }) });
  assert.deepEqual(hit, []);
});

test('the embedded API scrolls, counts, retrieves and changes payloads with the ports’ meaning, durably', async (t) => {
  const path = tempDbPath(t);
  let db = Database.open(path);
  await db.createCollection({ name: 'ops', vector_size: 2, distance: 'dot' });
  const ops = db.collection('ops');
  await ops.upsert([
    { id: 10, vector: [1, 0], payload: { g: 1, meta: { a: 1 } } },
    { id: 2, vector: [0, 1], payload: { g: 2 } },
    { id: 'z', vector: [1, 1], payload: { g: 1 } },
  ]);
  const page = await ops.scroll({ limit: 2, with_payload: false });
  assert.deepEqual([page.points.map((p) => p.id), page.next], [['2', '10'], 'z']);
  assert.equal(await ops.count({ must: [{ key: 'g', match: { value: 1 } }] }), 2);
  assert.deepEqual(await ops.changePayloads({ filter: { must: [{ key: 'g', match: { value: 1 } }] } }, { op: 'set', payload: { seen: true }, key: 'meta' }), {
    updated: 2,
  });
  assert.deepEqual(await ops.changePayloads({ points: [2] }, { op: 'delete', keys: ['g'] }), { updated: 1 });
  await assert.rejects(
    ops.changePayloads({ points: [2, 'missing'] }, { op: 'clear' }),
    (e: unknown) => e instanceof KithError && e.code === 'ERR_POINT_NOT_FOUND',
  );
  await assert.rejects(
    ops.changePayloads({ points: [2] }, { op: 'set', payload: { n: 1 }, key: 5 as never }),
    (e: unknown) => e instanceof KithError && /^key: /.test(e.message),
  );
  await db.close();
  db = Database.open(path);
  const after = await db.collection('ops').retrieve(['z', 10, 2]);
  assert.deepEqual(
    after.map((p) => [p.id, p.payload]),
    [
      ['z', { g: 1, meta: { seen: true } }],
      ['10', { g: 1, meta: { a: 1, seen: true } }],
      ['2', {}],
    ],
  );
  await db.close();
});
