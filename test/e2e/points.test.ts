import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CallResult, openTestApp, type TestApp } from '../helpers/app.js';

type Call = TestApp['call'];

/** Every `"version":<digits>` in a raw response text, as exact BigInts (JSON.parse would round them). */
function rawVersions(raw: string): bigint[] {
  return [...raw.matchAll(/"version":(-?[0-9][0-9.eE+-]*)/g)].map((m) => {
    const text = m[1] as string;
    assert.match(text, /^[0-9]{19}$/, `version ${text} is not a 19-digit integer`);
    return BigInt(text);
  });
}

/** The one version in a GET /points/{id} response. */
function versionOf(r: CallResult): bigint {
  assert.equal(r.status, 200, r.raw);
  const versions = rawVersions(r.raw);
  assert.equal(versions.length, 1);
  return versions[0] as bigint;
}

/** A GET /points/{id} result without its version, for whole-value comparison. */
function withoutVersion(r: CallResult): unknown {
  assert.equal(r.status, 200, r.raw);
  const { version: _version, ...rest } = r.body.result;
  return rest;
}

async function createCollection(call: Call, name = 'p', vectorSize = 3, distance = 'dot'): Promise<void> {
  const r = await call('POST', '/collections', { name, vector_size: vectorSize, distance });
  assert.equal(r.status, 200, r.raw);
}

async function count(call: Call, name = 'p'): Promise<number> {
  const r = await call('GET', `/collections/${name}`);
  assert.equal(r.status, 200, r.raw);
  return r.body.result.points_count;
}

async function searchIds(call: Call, vector: number[], name = 'p'): Promise<string[]> {
  const r = await call('POST', `/collections/${name}/points/search`, { vector, limit: 10000 });
  assert.equal(r.status, 200, r.raw);
  return r.body.result.map((p: { id: string }) => p.id).sort();
}

/** `{"a":{"a":…1}}`, `depth` objects deep. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

function point(id: string): string {
  return `/collections/p/points/${encodeURIComponent(id)}`;
}

test('upsert answers {operation, upserted} and GET returns id, version, payload, vector', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  const r = await call('PUT', '/collections/p/points', {
    points: [
      { id: 'a', vector: [1, 2, 3], payload: { color: 'red', n: 1, tags: ['x', 'y'], nested: { ok: true } } },
      { id: 'b', vector: [-1, 0.5, 0] },
    ],
  });
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  assert.equal(r.body.status, 'ok');
  assert.deepEqual(r.body.result, { operation: 'completed', upserted: 2 });
  assert.equal(await count(call), 2);

  const a = await call('GET', point('a'));
  assert.deepEqual(Object.keys(a.body.result).sort(), ['id', 'payload', 'vector', 'version']);
  assert.deepEqual(withoutVersion(a), { id: 'a', payload: { color: 'red', n: 1, tags: ['x', 'y'], nested: { ok: true } }, vector: [1, 2, 3] });
  assert.deepEqual(withoutVersion(await call('GET', point('b'))), { id: 'b', payload: {}, vector: [-1, 0.5, 0] });
});

test('GET of an unknown point or collection is a 404 in the error envelope', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  await call('PUT', '/collections/p/points', { points: [{ id: 'a', vector: [1, 2, 3] }] });
  for (const url of [point('nope'), point('A'), '/collections/other/points/a']) {
    const r = await call('GET', url);
    assert.equal(r.status, 404, url);
    assert.deepEqual(Object.keys(r.body).sort(), ['status', 'time'], url);
    assert.equal(typeof r.body.status.error, 'string');
    assert.match(r.body.status.error, /does not exist/, url);
  }
});

test('numeric id 7 and string id "7" are the same point', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  await call('PUT', '/collections/p/points', { points: [{ id: 7, vector: [1, 1, 1], payload: { v: 1 } }] });
  await call('PUT', '/collections/p/points', { points: [{ id: '7', vector: [2, 2, 2], payload: { v: 2 } }] });
  assert.equal(await count(call), 1);
  assert.deepEqual(withoutVersion(await call('GET', point('7'))), { id: '7', payload: { v: 2 }, vector: [2, 2, 2] });
  const search = await call('POST', '/collections/p/points/search', { vector: [1, 0, 0] });
  assert.deepEqual(
    search.body.result.map((p: { id: unknown }) => p.id),
    ['7'],
  );
  const deleted = await call('POST', '/collections/p/points/delete', { points: [7] });
  assert.deepEqual(deleted.body.result, { operation: 'completed', deleted: 1 });
  assert.equal(await count(call), 0);
});

test('a repeated id in one batch: the last wins; a missing payload is {}; a client version is ignored', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  const r = await call('PUT', '/collections/p/points', {
    points: [
      { id: 'x', vector: [1, 0, 0], payload: { first: true }, version: 5 },
      { id: 'y', vector: [0, 0, 1], version: 1 },
      { id: 'x', vector: [0, 1, 0] },
    ],
  });
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(r.body.result, { operation: 'completed', upserted: 2 });
  assert.equal(await count(call), 2);
  assert.deepEqual(withoutVersion(await call('GET', point('x'))), { id: 'x', payload: {}, vector: [0, 1, 0] });
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  for (const id of ['x', 'y']) {
    const version = versionOf(await call('GET', point(id)));
    assert.notEqual(version, 5n);
    assert.notEqual(version, 1n);
    // A wall-clock timestamp in nanoseconds.
    assert.ok(version > nowNs - 60_000_000_000n && version < nowNs + 60_000_000_000n, `version ${version} is not near now`);
  }
});

test('versions: one per batch, strictly increasing across batches, exact 19-digit integers', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  await call('PUT', '/collections/p/points', {
    points: [
      { id: 'a', vector: [1, 0, 0] },
      { id: 'b', vector: [0, 1, 0] },
      { id: 'c', vector: [0, 0, 1] },
    ],
  });
  const first = await Promise.all(['a', 'b', 'c'].map(async (id) => versionOf(await call('GET', point(id)))));
  assert.equal(new Set(first).size, 1, 'every point of a batch shares one version');
  const v1 = first[0] as bigint;

  // Search results carry the same exact versions.
  const search = await call('POST', '/collections/p/points/search', { vector: [1, 1, 1] });
  assert.deepEqual(rawVersions(search.raw), [v1, v1, v1]);

  let last = v1;
  for (let i = 0; i < 5; i++) {
    await call('PUT', '/collections/p/points', { points: [{ id: `d${i}`, vector: [i, i, i] }] });
    const v = versionOf(await call('GET', point(`d${i}`)));
    assert.ok(v > last, `batch ${i}: ${v} is not greater than ${last}`);
    last = v;
  }

  // Re-upserting a point replaces vector, payload and version; the others keep theirs.
  await call('PUT', '/collections/p/points', { points: [{ id: 'a', vector: [5, 5, 5], payload: { again: 1 } }] });
  const a = await call('GET', point('a'));
  assert.deepEqual(withoutVersion(a), { id: 'a', payload: { again: 1 }, vector: [5, 5, 5] });
  assert.ok(versionOf(a) > last);
  assert.equal(versionOf(await call('GET', point('b'))), v1);
  assert.equal(await count(call), 8);
});

test('the whole batch is validated first: a bad point at index 3 writes nothing', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  await call('PUT', '/collections/p/points', { points: [{ id: 'seed', vector: [1, 1, 1], payload: { keep: true } }] });
  const good = (i: number) => ({ id: `n${i}`, vector: [i, i, i], payload: { i } });
  const badPoints: Array<[unknown, RegExp]> = [
    [{ id: 'n3', vector: [1, 2] }, /^points\[3\]\.vector: expected 3 numbers, got 2$/],
    [{ id: 'n3', vector: [1, 2, 'x'] }, /^points\[3\]\.vector\[2\]: /],
    [{ id: '', vector: [1, 2, 3] }, /^points\[3\]\.id: /],
    [{ id: 'n3', vector: [1, 2, 3], payload: [1] }, /^points\[3\]\.payload: /],
    [{ id: 'n3', vector: [1, 2, 1e39] }, /^points\[3\]\.vector\[2\]: /],
    [{ id: 'n3', vector: [1, 2, 3], extra: 1 }, /^points\[3\]\.extra: /],
    [{ id: 'seed', vector: [1, 2, 3], payload: nested(70) }, /^points\[3\]\.payload\.a\.a/],
  ];
  for (const [bad, message] of badPoints) {
    const body = { points: [good(0), good(1), good(2), bad, good(4), { id: 'seed', vector: [9, 9, 9] }] };
    const r = await call('PUT', '/collections/p/points', body);
    assert.equal(r.status, 400, JSON.stringify(bad));
    assert.match(r.body.status.error, message);
    assert.equal(await count(call), 1);
    for (const i of [0, 1, 2, 3, 4]) assert.equal((await call('GET', point(`n${i}`))).status, 404);
    assert.deepEqual(withoutVersion(await call('GET', point('seed'))), { id: 'seed', payload: { keep: true }, vector: [1, 1, 1] });
  }
});

test('point ids: empty, over 1024 UTF-8 bytes, negative, fractional, unsafe or non-scalar are 400 with the path', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  const invalid: unknown[] = ['', 'x'.repeat(1025), 'é'.repeat(513), -1, 1.5, 2 ** 53, -0.5, {}, { id: 1 }, [], ['a'], null, true];
  for (const id of invalid) {
    const r = await call('PUT', '/collections/p/points', {
      points: [
        { id: 'ok', vector: [1, 2, 3] },
        { id, vector: [1, 2, 3] },
      ],
    });
    assert.equal(r.status, 400, JSON.stringify(id));
    assert.match(r.body.status.error, /^points\[1\]\.id: /, JSON.stringify(id));
  }
  assert.equal(await count(call), 0);

  // The limits themselves are accepted.
  const valid = ['x'.repeat(1024), 'é'.repeat(512), 0, Number.MAX_SAFE_INTEGER, 'with space/and/slash', '日本'];
  const r = await call('PUT', '/collections/p/points', { points: valid.map((id) => ({ id, vector: [1, 2, 3] })) });
  assert.equal(r.status, 200, r.raw);
  assert.equal(await count(call), valid.length);
  for (const id of valid) {
    const got = await call('GET', point(String(id)));
    assert.equal(got.status, 200, String(id));
    assert.equal(got.body.result.id, String(id));
  }
});

test('vectors: wrong length, non-numbers and values not finite as float32 are 400 naming the element', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  const cases: Array<[unknown, RegExp]> = [
    [[1, 2], /^points\[0\]\.vector: expected 3 numbers, got 2$/],
    [[1, 2, 3, 4], /^points\[0\]\.vector: expected 3 numbers, got 4$/],
    [[], /^points\[0\]\.vector: expected 3 numbers, got 0$/],
    [[1, '2', 3], /^points\[0\]\.vector\[1\]: /],
    [[1, null, 3], /^points\[0\]\.vector\[1\]: /],
    [[1, [2], 3], /^points\[0\]\.vector\[1\]: /],
    [[1, 2, 1e39], /^points\[0\]\.vector\[2\]: /],
    [[-1e39, 2, 3], /^points\[0\]\.vector\[0\]: /],
    ['1,2,3', /^points\[0\]\.vector: /],
    [{ 0: 1, 1: 2, 2: 3 }, /^points\[0\]\.vector: /],
  ];
  for (const [vector, message] of cases) {
    const r = await call('PUT', '/collections/p/points', { points: [{ id: 'v', vector }] });
    assert.equal(r.status, 400, JSON.stringify(vector));
    assert.match(r.body.status.error, message, JSON.stringify(vector));
  }
  // 1e400 only exists as JSON text: JSON.parse makes it Infinity.
  for (const text of ['[1,1e400,3]', '[1,2,-1e400]']) {
    const r = await call('PUT', '/collections/p/points', `{"points":[{"id":"v","vector":${text}}]}`);
    assert.equal(r.status, 400, text);
    assert.match(r.body.status.error, /^points\[0\]\.vector\[[12]\]: /, text);
  }
  const missing = await call('PUT', '/collections/p/points', { points: [{ id: 'v' }] });
  assert.equal(missing.status, 400);
  assert.match(missing.body.status.error, /^points\[0\]\.vector: /);
  assert.equal(await count(call), 0);
});

test('payload must be a JSON object', async (t) => {
  const { call } = await openTestApp(t);
  await createCollection(call);
  for (const payload of [[1, 2], 'text', 5, true]) {
    const r = await call('PUT', '/collections/p/points', { points: [{ id: 'q', vector: [1, 2, 3], payload }] });
    assert.equal(r.status, 400, JSON.stringify(payload));
    assert.match(r.body.status.error, /^points\[0\]\.payload: /);
  }
  const nonFinite = await call('PUT', '/collections/p/points', '{"points":[{"id":"q","vector":[1,2,3],"payload":{"big":1e400}}]}');
  assert.equal(nonFinite.status, 400);
  assert.match(nonFinite.body.status.error, /^points\[0\]\.payload\.big: /);
  const notArray = await call('PUT', '/collections/p/points', { points: { id: 'q', vector: [1, 2, 3] } });
  assert.equal(notArray.status, 400);
  assert.match(notArray.body.status.error, /^points: /);
  assert.equal(await count(call), 0);
});

test('upsert into a missing collection is a 404; an empty batch upserts 0', async (t) => {
  const { call } = await openTestApp(t);
  const missing = await call('PUT', '/collections/nope/points', { points: [{ id: 'a', vector: [1, 2, 3] }] });
  assert.equal(missing.status, 404);
  assert.match(missing.body.status.error, /does not exist/);
  await createCollection(call);
  const empty = await call('PUT', '/collections/p/points', { points: [] });
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body.result, { operation: 'completed', upserted: 0 });
  assert.equal(await count(call), 0);
});

async function seedFour(call: Call): Promise<void> {
  await createCollection(call);
  const r = await call('PUT', '/collections/p/points', {
    points: [
      { id: 'a', vector: [1, 0, 0], payload: { g: 1, name: 'alpha' } },
      { id: 'b', vector: [0, 1, 0], payload: { g: 1, name: 'beta' } },
      { id: 'c', vector: [0, 0, 1], payload: { g: 2, name: 'gamma' } },
      { id: 'd', vector: [1, 1, 1], payload: { g: 3 } },
    ],
  });
  assert.equal(r.status, 200, r.raw);
}

test('delete by ids counts only points that existed; they leave search and counts', async (t) => {
  const { call } = await openTestApp(t);
  await seedFour(call);
  const r = await call('POST', '/collections/p/points/delete', { points: ['a', 'zz', 'b', 'a', 123] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.result, { operation: 'completed', deleted: 2 });
  assert.equal(await count(call), 2);
  assert.equal((await call('GET', point('a'))).status, 404);
  assert.equal((await call('GET', point('b'))).status, 404);
  assert.deepEqual(await searchIds(call, [1, 1, 0]), ['c', 'd']);
  const again = await call('POST', '/collections/p/points/delete', { points: ['a', 'b'] });
  assert.deepEqual(again.body.result, { operation: 'completed', deleted: 0 });
  const none = await call('POST', '/collections/p/points/delete', { points: [] });
  assert.deepEqual(none.body.result, { operation: 'completed', deleted: 0 });
  const list = await call('GET', '/collections');
  assert.deepEqual(
    list.body.result.map((c: { name: string; points_count: number }) => [c.name, c.points_count]),
    [['p', 2]],
  );
});

test('delete by filter removes exactly the matching points', async (t) => {
  const { call } = await openTestApp(t);
  await seedFour(call);
  const r = await call('POST', '/collections/p/points/delete', { filter: { must: [{ key: 'g', match: { value: 1 } }] } });
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(r.body.result, { operation: 'completed', deleted: 2 });
  assert.deepEqual(await searchIds(call, [1, 0, 0]), ['c', 'd']);
  const filtered = await call('POST', '/collections/p/points/search', { vector: [1, 0, 0], filter: { must: [{ key: 'g', match: { value: 1 } }] } });
  assert.deepEqual(filtered.body.result, []);
  // must_not on a missing key holds, so "no name" points are the matches here.
  const byMissing = await call('POST', '/collections/p/points/delete', {
    filter: { must_not: [{ key: 'name', type: 'prefix', match: { value: '' } }] },
  });
  assert.deepEqual(byMissing.body.result, { operation: 'completed', deleted: 1 });
  assert.deepEqual(await searchIds(call, [1, 0, 0]), ['c']);
  const noMatch = await call('POST', '/collections/p/points/delete', { filter: { must: [{ key: 'g', match: { value: 99 } }] } });
  assert.deepEqual(noMatch.body.result, { operation: 'completed', deleted: 0 });
  assert.equal(await count(call), 1);
});

test('{"filter":{}} deletes every point', async (t) => {
  const { call } = await openTestApp(t);
  await seedFour(call);
  const r = await call('POST', '/collections/p/points/delete', { filter: {} });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.result, { operation: 'completed', deleted: 4 });
  assert.equal(await count(call), 0);
  const search = await call('POST', '/collections/p/points/search', { vector: [1, 1, 1] });
  assert.deepEqual(search.body.result, []);
  for (const id of ['a', 'b', 'c', 'd']) assert.equal((await call('GET', point(id))).status, 404);
});

test('delete needs exactly one of points or filter; bad ids and filters are 400; nothing is deleted', async (t) => {
  const { call } = await openTestApp(t);
  await seedFour(call);
  const cases: Array<[unknown, RegExp]> = [
    [{}, /^body: /],
    [{ points: null, filter: null }, /^body: /],
    [{ points: ['a'], filter: {} }, /^body: /],
    [{ points: [], filter: { must: [] } }, /^body: /],
    [{ points: ['a', -1] }, /^points\[1\]: /],
    [{ points: ['a', ''] }, /^points\[1\]: /],
    [{ points: 'a' }, /^points: /],
    [{ filter: { must: [{ key: 'g', type: 'fuzzy', match: { value: 1 } }] } }, /^filter\.must\[0\]\.type: /],
    // A single condition object is accepted as a one-element list (Qdrant does too); this one lacks its match.
    [{ filter: { must: { key: 'g' } } }, /^filter\.must\.match: /],
    [{ ids: ['a'] }, /^ids: /],
  ];
  for (const [body, message] of cases) {
    const r = await call('POST', '/collections/p/points/delete', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.status.error, message, JSON.stringify(body));
  }
  assert.equal(await count(call), 4);
  assert.deepEqual(await searchIds(call, [1, 0, 0]), ['a', 'b', 'c', 'd']);
  const missing = await call('POST', '/collections/nope/points/delete', { points: ['a'] });
  assert.equal(missing.status, 404);
});
