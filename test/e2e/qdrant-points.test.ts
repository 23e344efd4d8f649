/**
 * Qdrant port, points: upsert (points and batch forms, integer and UUID ids), retrieve, get by id,
 * scroll pages in Qdrant's id order, count, delete by ids and by filter, payload operations, and
 * the client's errors for a wrong dimension, a missing collection and a bad id.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { http, startQdrant } from './qdrant-harness.js';

const U1 = '2c9a3d0e-5f7b-4e61-9a1d-0b8c7e6f5a41';
const U2 = 'f0e1d2c3-b4a5-4968-8776-655443322110';

test('upsert with integer and UUID ids; retrieve and get return them as Qdrant spells them', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('p', { vectors: { size: 3, distance: 'Dot' } });
  const result = await client.upsert('p', {
    wait: true,
    points: [
      { id: 7, vector: [1, 0, 0], payload: { tag: 'a', n: 1 } },
      { id: U1.toUpperCase(), vector: [0, 1, 0], payload: { tag: 'b', n: 2 } },
    ],
  });
  assert.equal(result.status, 'completed');
  assert.equal(typeof result.operation_id, 'number');
  // The batch form, a UUID in its 32-digit and braced spellings.
  await client.upsert('p', {
    batch: {
      ids: [U2.replaceAll('-', ''), 3],
      vectors: [
        [0, 0, 1],
        [1, 1, 0],
      ],
      payloads: [{ tag: 'c' }, { tag: 'a' }],
    },
  });
  const got = await client.retrieve('p', { ids: [3, `{${U1}}`, 7, 999], with_vector: true });
  assert.deepEqual(
    got.map((r) => [r.id, r.payload?.tag, r.vector]),
    [
      [3, 'a', [1, 1, 0]],
      [U1, 'b', [0, 1, 0]],
      [7, 'a', [1, 0, 0]],
    ],
  );
  const noPayload = await client.retrieve('p', { ids: [7], with_payload: false });
  assert.equal(noPayload[0]?.payload ?? undefined, undefined);
  const one = await http(url, 'GET', `/collections/p/points/${U2}`);
  assert.equal(one.status, 200);
  assert.deepEqual([one.body.status, one.body.result.id, one.body.result.payload, one.body.result.vector], ['ok', U2, { tag: 'c' }, [0, 0, 1]]);
  assert.equal(typeof one.body.time, 'number');
  const seven = await http(url, 'GET', '/collections/p/points/7');
  assert.equal(seven.body.result.id, 7, 'integer ids are JSON numbers');
  assert.equal((await http(url, 'GET', '/collections/p/points/8')).status, 404);
  assert.equal((await client.getCollection('p')).points_count, 4);
});

test('client errors: wrong dimension, missing collection, bad id, conflicting create', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('e', { vectors: { size: 3, distance: 'Cosine' } });
  await assert.rejects(client.upsert('e', { points: [{ id: 1, vector: [1, 2] }] }), { status: 400 });
  await assert.rejects(client.search('nope', { vector: [1, 2, 3] }), { status: 404 });
  await assert.rejects(client.getCollection('nope'), { status: 404 });
  await assert.rejects(client.upsert('e', { points: [{ id: -1, vector: [1, 2, 3] }] }), { status: 400 });
  for (const id of [2 ** 53, 1.5, '', 'x'.repeat(1025), '\ud800']) {
    await assert.rejects(client.upsert('e', { points: [{ id, vector: [1, 2, 3] }] }), { status: 400 }, String(id).slice(0, 20));
  }
  await client.upsert('e', { points: [{ id: `URN:UUID:${U2.toUpperCase()}`, vector: [1, 2, 3] }] });
  assert.deepEqual(
    (await client.scroll('e')).points.map((p) => p.id),
    [U2],
    'the urn: spelling is stored canonically',
  );
  await client.delete('e', { points: [U2] });
  // A string that is not a UUID is a kith id, as kith's port writes them: shown as it is, and usable as shown.
  await client.upsert('e', { points: [{ id: 'not-a-uuid', vector: [1, 2, 3] }] });
  assert.deepEqual(
    (await client.scroll('e')).points.map((p) => p.id),
    ['not-a-uuid'],
  );
  await client.delete('e', { points: ['not-a-uuid'] });
  assert.deepEqual((await client.scroll('e')).points, []);
  await assert.rejects(client.createCollection('e', { vectors: { size: 3, distance: 'Cosine' } }), { status: 409 });
  const bad = await http(url, 'PUT', '/collections/e/points', { points: [{ id: -3, vector: [1, 2, 3] }] });
  assert.equal(bad.status, 400);
  assert.match(bad.body.status.error, /points\[0\]\.id: value -3 is not a valid point ID/);
  const missing = await http(url, 'POST', '/collections/nope/points/scroll', {});
  assert.equal(missing.status, 404);
  assert.match(missing.body.status.error, /^Not found: Collection `nope` doesn't exist!$/);
  const named = await http(url, 'PUT', '/collections/e/points', { points: [{ id: 1, vector: { text: [1, 2, 3] } }] });
  assert.equal(named.status, 400);
  assert.match(named.body.status.error, /Not existing vector name error: /);
  const multi = await http(url, 'PUT', '/collections/e/points', { points: [{ id: 1, vector: [[1, 2, 3]] }] });
  assert.match(multi.body.status.error, /multi-vectors is not supported/);
  const sparse = await http(url, 'PUT', '/collections/e/points', { points: [{ id: 1, vector: { indices: [1], values: [2] } }] });
  assert.match(sparse.body.status.error, /points\[0\]\.vector: a sparse vector must be named/);
  assert.equal((await client.count('e')).count, 0, 'nothing was written by the refused requests');
});

test('scroll pages follow Qdrant id order (integers numerically, then UUIDs); count filters exactly', async (t) => {
  const { client } = await startQdrant(t);
  await client.createCollection('s', { vectors: { size: 2, distance: 'Euclid' } });
  const ids: (number | string)[] = [100, 2, U2, 10, U1, 1, 33];
  await client.upsert('s', { points: ids.map((id, i) => ({ id, vector: [i, 1], payload: { even: i % 2 === 0, i } })) });
  const seen: (number | string)[] = [];
  let offset: number | string | null | undefined;
  let pages = 0;
  do {
    const page = await client.scroll('s', { limit: 3, ...(offset === undefined ? {} : { offset }), with_payload: true });
    seen.push(...page.points.map((p) => p.id));
    offset = page.next_page_offset as number | string | null;
    pages += 1;
  } while (offset !== null && offset !== undefined && pages < 10);
  assert.deepEqual(seen, [1, 2, 10, 33, 100, U1, U2]);
  assert.equal(pages, 3);
  const filtered = await client.scroll('s', { filter: { must: [{ key: 'even', match: { value: true } }] }, limit: 100 });
  assert.deepEqual(
    filtered.points.map((p) => p.id),
    ids.filter((_, i) => i % 2 === 0).sort((a, b) => (typeof a === typeof b ? (a < b ? -1 : 1) : typeof a === 'number' ? -1 : 1)),
  );
  assert.equal((await client.count('s', { exact: true })).count, 7);
  assert.equal((await client.count('s', { filter: { must: [{ has_id: [U1.toUpperCase().replaceAll('-', ''), 2, 3] }] } })).count, 2);
  assert.equal((await client.count('s', { filter: { must: [{ key: 'i', range: { gte: 2, lt: 5 } }] } })).count, 3);
});

test('delete by ids and by filter', async (t) => {
  const { client } = await startQdrant(t);
  await client.createCollection('d', { vectors: { size: 2, distance: 'Dot' } });
  await client.upsert('d', { points: [1, 2, 3, 4, 5].map((id) => ({ id, vector: [id, 1], payload: { g: id % 2 } })) });
  assert.equal((await client.delete('d', { points: [1, 999] })).status, 'completed');
  assert.equal((await client.delete('d', { filter: { must: [{ key: 'g', match: { value: 0 } }] } })).status, 'completed');
  const left = await client.scroll('d', { limit: 10 });
  assert.deepEqual(
    left.points.map((p) => p.id),
    [3, 5],
  );
});

test('payload set / overwrite / delete / clear are all-or-nothing and keep the vector', async (t) => {
  const { client, db } = await startQdrant(t);
  await client.createCollection('pl', { vectors: { size: 2, distance: 'Euclid' } });
  await client.upsert('pl', {
    points: [
      { id: 1, vector: [1, 2], payload: { a: 1, b: { c: 2, d: 3 }, t: 'x' } },
      { id: 2, vector: [3, 4], payload: { a: 2, t: 'y' } },
      { id: U1, vector: [5, 6], payload: { a: 3, t: 'x' } },
    ],
  });
  await client.setPayload('pl', { payload: { s: true, a: 10 }, points: [1, U1] });
  await client.deletePayload('pl', { keys: ['b.c', 't'], filter: { must: [{ key: 't', match: { value: 'x' } }] } });
  await client.overwritePayload('pl', { payload: { only: 'this' }, points: [2] });
  const after = await client.retrieve('pl', { ids: [1, 2, U1], with_vector: true });
  assert.deepEqual(
    after.map((r) => [r.id, r.payload, r.vector]),
    [
      [1, { a: 10, b: { d: 3 }, s: true }, [1, 2]],
      [2, { only: 'this' }, [3, 4]],
      [U1, { a: 10, s: true }, [5, 6]],
    ],
  );
  // A missing id fails the whole call and changes nothing.
  await assert.rejects(client.setPayload('pl', { payload: { z: 1 }, points: [1, 404] }), { status: 404 });
  assert.deepEqual((await client.retrieve('pl', { ids: [1] }))[0]?.payload, { a: 10, b: { d: 3 }, s: true });
  await client.clearPayload('pl', { points: [1] });
  assert.deepEqual((await client.retrieve('pl', { ids: [1] }))[0]?.payload, {});
  // Searches see the new payloads, and the vector (hence the score) is unchanged.
  const hits = await client.search('pl', { vector: [5, 6], limit: 1, with_payload: true });
  assert.deepEqual([hits[0]?.id, hits[0]?.score, hits[0]?.payload], [U1, 0, { a: 10, s: true }]);
  // The kith API over the same database sees the same stored point.
  assert.deepEqual(db.collection('pl').getPoint(U1).payload, { a: 10, s: true });
});

test('set_payload at a nested key merges there, as Qdrant does; a bad key changes nothing', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('nk', { vectors: { size: 2, distance: 'Dot' } });
  await client.upsert('nk', { points: [{ id: 9, vector: [0, 0], payload: { k: { sub: 'x', list: [{ a: 1 }, { b: 2 }] }, t: 1 } }] });
  await client.setPayload('nk', { payload: { sub: 'y' }, key: 'k', points: [9] });
  await client.setPayload('nk', { payload: { c: 3 }, key: 'k.list[]', filter: { must: [{ key: 't', match: { value: 1 } }] } });
  await client.setPayload('nk', { payload: { d: null }, key: 'k.new', points: [9] });
  const expected = {
    k: {
      sub: 'y',
      list: [
        { a: 1, c: 3 },
        { b: 2, c: 3 },
      ],
      new: { d: null },
    },
    t: 1,
  };
  assert.deepEqual((await client.retrieve('nk', { ids: [9] }))[0]?.payload, expected);
  const bad = await fetch(`${url}/collections/nk/points/payload`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ payload: { z: 1 }, key: 5, points: [9] }),
  });
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { status: { error: string } }).status.error, /key/);
  assert.deepEqual((await client.retrieve('nk', { ids: [9] }))[0]?.payload, expected);
});
