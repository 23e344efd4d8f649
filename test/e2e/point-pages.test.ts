/**
 * kith's port over a listening server: scroll (pages in id order, a cursor that survives writes),
 * count, retrieve, and the payload operations (set with a nested key, overwrite, delete keys,
 * clear) by ids and by filter, on nasty ids and payloads of every JSON type; bad input is a 400
 * naming the field and changes nothing; the Qdrant port over the same collection agrees.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareIds } from '../../src/core/point-id.js';
import { testSeed, withSeedAsync } from '../helpers/data.js';
import { startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { drawPayload, idPool } from '../helpers/nasty-data.js';
import { http, startQdrant } from './qdrant-harness.js';

type Json = Record<string, unknown>;
interface Page {
  points: { id: string; version: number; payload?: Json; vector?: number[] }[];
  next_cursor: string | null;
}

/** Every page of a scroll, following next_cursor to the end. */
async function scrollAll(kithUrl: string, name: string, body: Json): Promise<Page['points']> {
  const out: Page['points'] = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 10_000, 'the scroll ends');
    const r = await http(kithUrl, 'POST', `/collections/${name}/points/scroll`, { ...body, ...(cursor === null ? {} : { cursor }) });
    assert.equal(r.status, 200, r.text);
    const page = r.body.result as Page;
    out.push(...page.points);
    cursor = page.next_cursor;
    if (cursor === null) return out;
  }
}

/** A value as it comes back over JSON (-0 becomes 0). */
const overJson = <T>(value: T): T => JSON.parse(JSON.stringify(value));

test('scroll, count and retrieve on nasty ids and payloads of every JSON type', async (t) => {
  await withSeedAsync(testSeed(20), async (rng) => {
    const { kithUrl } = await startQdrant(t);
    assert.equal((await http(kithUrl, 'POST', '/collections', { name: 'n', vector_size: 3, distance: 'euclid' })).status, 200);
    const pool = idPool(rng, 120, new Set(['numeric', 'plain', 'control', 'long-unicode', 'lookalike', 'uuid'] as const));
    const stored = new Map<string, { payload: Json; vector: number[] }>();
    const points = pool.map((p, i) => {
      const payload = { ...drawPayload(rng, new Set()), seq: i, even: i % 2 === 0 };
      const vector = [i, 0, rng.int(3)];
      stored.set(p.key, { payload: overJson(payload), vector });
      return { id: rng.pick(p.raws), vector, payload };
    });
    assert.equal((await http(kithUrl, 'PUT', '/collections/n/points', { points })).status, 200);
    const keys = [...stored.keys()].sort(compareIds);

    // Pages of 7 cover every point once, in id order, with payloads as stored.
    const all = await scrollAll(kithUrl, 'n', { limit: 7, with_vector: true });
    assert.deepEqual(
      all.map((p) => p.id),
      keys,
    );
    for (const p of all) {
      assert.deepEqual(p.payload, stored.get(p.id)?.payload, `payload of ${JSON.stringify(p.id)}`);
      assert.deepEqual(p.vector, stored.get(p.id)?.vector);
      assert.equal(typeof p.version, 'number');
    }
    // A filter, a payload selector, no vectors by default.
    const even = await scrollAll(kithUrl, 'n', { limit: 5, filter: { must: [{ key: 'even', match: { value: true } }] }, with_payload: ['seq'] });
    const evenKeys = keys.filter((k) => stored.get(k)?.payload.even === true);
    assert.deepEqual(
      even.map((p) => p.id),
      evenKeys,
    );
    assert.deepEqual(
      even.map((p) => [p.payload, p.vector]),
      evenKeys.map((k) => [{ seq: stored.get(k)?.payload.seq }, undefined]),
    );
    const count = async (body: Json) => (await http(kithUrl, 'POST', '/collections/n/points/count', body)).body.result.count;
    assert.equal(await count({}), keys.length);
    assert.equal(await count({ filter: { must: [{ key: 'even', match: { value: true } }] } }), evenKeys.length);
    assert.equal(await count({ filter: { must_not: [{ key: 'even', match: { value: true } }] } }), keys.length - evenKeys.length);

    // Retrieve: the listed points that exist, in the order listed, each once, by any spelling.
    const asked = [pool[5], pool[1], pool[5], pool[0]].map((p) => p?.raws.at(-1) as string | number);
    const r = await http(kithUrl, 'POST', '/collections/n/points/retrieve', { ids: [...asked, 'no such id'], with_payload: false, with_vector: true });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.result.map((p: Page['points'][number]) => [p.id, p.payload, p.vector]),
      [pool[5], pool[1], pool[0]].map((p) => [p?.key, undefined, stored.get(p?.key as string)?.vector]),
    );
  });
});

test('a cursor survives writes between pages: deleted, inserted and updated points', async (t) => {
  await withSeedAsync(testSeed(21), async (rng) => {
    const { kithUrl } = await startQdrant(t);
    await http(kithUrl, 'POST', '/collections', { name: 'c', vector_size: 2, distance: 'dot' });
    const initial = Array.from({ length: 60 }, (_, i) => `k${String(i * 10).padStart(4, '0')}`);
    await http(kithUrl, 'PUT', '/collections/c/points', { points: initial.map((id) => ({ id, vector: [1, 0], payload: { id } })) });
    const deleted = new Set<string>();
    const seen: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const r = await http(kithUrl, 'POST', '/collections/c/points/scroll', { limit: 4, ...(cursor === null ? {} : { cursor }) });
      assert.equal(r.status, 200, r.text);
      seen.push(...r.body.result.points.map((p: { id: string }) => p.id));
      cursor = r.body.result.next_cursor;
      if (cursor === null) break;
      // Between pages: the cursor's own point goes, others are added around it and one is rewritten.
      await http(kithUrl, 'POST', '/collections/c/points/delete', { points: [cursor] });
      deleted.add(cursor);
      const around = [`${cursor}a`, `k${String(rng.int(600)).padStart(4, '0')}x`];
      await http(kithUrl, 'PUT', '/collections/c/points', { points: around.map((id) => ({ id, vector: [0, 1] })) });
      await http(kithUrl, 'POST', '/collections/c/points/payload', {
        points: [cursor.replace(/.$/, '')].filter((id) => initial.includes(id)),
        payload: { touched: true },
      });
    }
    // Ids only grow along the scroll, none twice, and every point that was there throughout was seen.
    for (let i = 1; i < seen.length; i++) assert.ok(compareIds(seen[i - 1] as string, seen[i] as string) < 0, `${seen[i - 1]} before ${seen[i]}`);
    for (const id of initial) if (!deleted.has(id)) assert.ok(seen.includes(id), `${id} was seen`);
  });
});

test('payload set (nested key), overwrite, delete keys and clear, by ids and by filter: new versions, durable', async (t) => {
  const { kithUrl } = await startQdrant(t);
  await http(kithUrl, 'POST', '/collections', { name: 'p', vector_size: 2, distance: 'dot' });
  const points = [
    { id: 'a\u0000b', vector: [1, 2], payload: { g: 1, doc: { title: 't', tags: [{ n: 1 }, { n: 2 }] }, keep: [null, true, 1.5, 's', {}, []] } },
    { id: 7, vector: [3, 4], payload: { g: 1, x: -1e300 } },
    { id: '\u{1F600}', vector: [5, 6], payload: { g: 2 } },
  ];
  await http(kithUrl, 'PUT', '/collections/p/points', { points });
  const get = async (id: string) => (await http(kithUrl, 'POST', '/collections/p/points/retrieve', { ids: [id], with_vector: true })).body.result[0];
  const versionBefore = BigInt((await http(kithUrl, 'GET', `/collections/p/points/7`)).text.match(/"version":([0-9]+)/)?.[1] as string);

  const call = async (method: string, path: string, body: Json) => {
    const r = await http(kithUrl, method, `/collections/p/points/payload${path}`, body);
    assert.equal(r.status, 200, r.text);
    return r.body.result;
  };
  assert.deepEqual(await call('POST', '', { payload: { s: 'x' }, key: 'doc.tags[]', filter: { must: [{ key: 'g', match: { value: 1 } }] } }), {
    operation: 'completed',
    updated: 2,
  });
  assert.deepEqual(await call('POST', '', { payload: { n: 0, z: { deep: [1] } }, points: [7, '\u{1F600}'] }), { operation: 'completed', updated: 2 });
  assert.deepEqual(await call('POST', '/delete', { keys: ['doc.title', 'keep[]', 'z.deep'], points: ['a\u0000b', 7] }), { operation: 'completed', updated: 2 });
  assert.deepEqual(await call('PUT', '', { payload: { only: [1, 'two', false, null] }, points: ['\u{1F600}'] }), { operation: 'completed', updated: 1 });
  assert.deepEqual(await call('POST', '/clear', { filter: { must: [{ key: 'x', range: { lt: 0 } }] } }), { operation: 'completed', updated: 1 });
  assert.deepEqual(await call('POST', '/clear', { filter: { must: [{ key: 'nothing', match: { value: 1 } }] } }), { operation: 'completed', updated: 0 });

  const expected = {
    'a\u0000b': {
      payload: {
        g: 1,
        doc: {
          tags: [
            { n: 1, s: 'x' },
            { n: 2, s: 'x' },
          ],
        },
        keep: [],
      },
      vector: [1, 2],
    },
    '7': { payload: {}, vector: [3, 4] },
    '\u{1F600}': { payload: { only: [1, 'two', false, null] }, vector: [5, 6] },
  };
  for (const [id, want] of Object.entries(expected)) {
    const got = await get(id);
    assert.deepEqual({ payload: got.payload, vector: got.vector }, want, id);
  }
  // Every rewrite gave a newer version.
  const versionAfter = BigInt((await http(kithUrl, 'GET', `/collections/p/points/7`)).text.match(/"version":([0-9]+)/)?.[1] as string);
  assert.ok(versionAfter > versionBefore, `${versionAfter} > ${versionBefore}`);
});

test('an acknowledged payload change survives kill -9 of the server', async (t) => {
  const dbPath = tempDbPath(t);
  const first = await startServer(dbPath);
  t.after(() => first.stop('SIGKILL'));
  await http(first.url, 'POST', '/collections', { name: 'd', vector_size: 2, distance: 'dot' });
  await http(first.url, 'PUT', '/collections/d/points', { points: [{ id: 'x', vector: [1, 1], payload: { a: 1, b: { c: 2 } } }] });
  const set = await http(first.url, 'POST', '/collections/d/points/payload', { points: ['x'], payload: { c: 3 }, key: 'b' });
  assert.equal(set.status, 200, set.text);
  const deleted = await http(first.url, 'POST', '/collections/d/points/payload/delete', { filter: {}, keys: ['a'] });
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal(await first.stop('SIGKILL'), 'SIGKILL');
  const second = await startServer(dbPath);
  t.after(() => second.stop('SIGKILL'));
  const r = await http(second.url, 'POST', '/collections/d/points/retrieve', { ids: ['x'], with_vector: true });
  assert.deepEqual(r.body.result, [{ id: 'x', version: r.body.result[0].version, payload: { b: { c: 3 } }, vector: [1, 1] }]);
});

test('bad input is a 400 (or 404) naming the field, and nothing changes', async (t) => {
  const { kithUrl } = await startQdrant(t);
  await http(kithUrl, 'POST', '/collections', { name: 'b', vector_size: 2, distance: 'dot' });
  await http(kithUrl, 'PUT', '/collections/b/points', {
    points: [
      { id: 1, vector: [1, 0], payload: { a: 1 } },
      { id: 2, vector: [0, 1], payload: { a: 2 } },
    ],
  });
  const snapshot = async () =>
    (await http(kithUrl, 'POST', '/collections/b/points/scroll', { limit: 100, with_vector: true })).text.replace(/"time":[0-9.e-]+/, '');
  const before = await snapshot();
  const refused = async (method: string, path: string, body: unknown, status: number, code: string, message: RegExp) => {
    const r = await http(kithUrl, method, `/collections/b/points${path}`, body);
    assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`);
    assert.equal(r.body.status.code, code, r.text);
    assert.match(r.body.status.error, message);
  };
  await refused('POST', '/payload', { payload: { z: 1 }, points: [1], filter: {} }, 400, 'ERR_BAD_INPUT', /exactly one of `points` \(ids\) or `filter`/);
  await refused('POST', '/payload', { payload: { z: 1 } }, 400, 'ERR_BAD_INPUT', /exactly one/);
  await refused('POST', '/payload', { payload: { z: 1 }, points: [1, -3] }, 400, 'ERR_BAD_INPUT', /points\/1|points\[1\]/);
  await refused('POST', '/payload', { payload: [1], points: [1] }, 400, 'ERR_BAD_INPUT', /payload/);
  await refused('POST', '/payload', { payload: { z: 1 }, points: [1], key: 3 }, 400, 'ERR_BAD_INPUT', /key/);
  await refused('POST', '/payload', { payload: { z: 1 }, filter: { must: [{ key: 'a', match: {} }] } }, 400, 'ERR_BAD_INPUT', /filter\.must\[0\]/);
  await refused('POST', '/payload', { payload: { z: 1 }, points: [1, 'missing'] }, 404, 'ERR_POINT_NOT_FOUND', /"missing"/);
  await refused('PUT', '/payload', { payload: { z: 1 }, points: [1], extra: 1 }, 400, 'ERR_BAD_INPUT', /extra/);
  await refused('POST', '/payload/delete', { keys: 'a', points: [1] }, 400, 'ERR_BAD_INPUT', /keys/);
  await refused('POST', '/payload/clear', { points: 1 }, 400, 'ERR_BAD_INPUT', /points/);
  await refused('POST', '/scroll', { limit: 0 }, 400, 'ERR_BAD_INPUT', /limit/);
  await refused('POST', '/scroll', { cursor: -1 }, 400, 'ERR_BAD_INPUT', /cursor/);
  await refused('POST', '/scroll', { filter: { should: 'x' } }, 400, 'ERR_BAD_INPUT', /filter\.should/);
  await refused('POST', '/count', { filter: { must: [{ key: 'a', range: {} }] } }, 400, 'ERR_BAD_INPUT', /filter\.must\[0\]/);
  await refused('POST', '/retrieve', { ids: [1, {}] }, 400, 'ERR_BAD_INPUT', /ids/);
  await refused('POST', '/retrieve', { ids: new Array(100_001).fill(1) }, 400, 'ERR_OVER_LIMIT', /^ids: /);
  await refused('POST', '/retrieve', { ids: [1], with_vector: true, with_payload: 'yes' }, 400, 'ERR_BAD_INPUT', /with_payload/);
  const missing = await http(kithUrl, 'POST', '/collections/none/points/count', {});
  assert.equal(missing.status, 404);
  assert.equal(await snapshot(), before);
});

test('both ports agree on one collection: pages, counts and payload changes', async (t) => {
  const { kithUrl, url } = await startQdrant(t);
  await http(kithUrl, 'POST', '/collections', { name: 'both', vector_size: 2, distance: 'dot' });
  const ids = ['b', 'a', 'c-1', 'ü', 'Z', 'aa', 'b\u0001'];
  await http(kithUrl, 'PUT', '/collections/both/points', { points: ids.map((id, i) => ({ id, vector: [i, 1], payload: { i, odd: i % 2 === 1 } })) });
  const filter = { must: [{ key: 'odd', match: { value: true } }] };
  const viaKith = await scrollAll(kithUrl, 'both', { limit: 2, filter });
  const viaQdrant: { id: string; payload: Json }[] = [];
  let offset: string | null = null;
  do {
    const r = await http(url, 'POST', '/collections/both/points/scroll', { limit: 2, filter, ...(offset === null ? {} : { offset }) });
    viaQdrant.push(...r.body.result.points);
    offset = r.body.result.next_page_offset;
  } while (offset !== null);
  assert.deepEqual(
    viaKith.map((p) => [p.id, p.payload]),
    viaQdrant.map((p) => [p.id, p.payload]),
  );
  assert.equal(
    (await http(kithUrl, 'POST', '/collections/both/points/count', { filter })).body.result.count,
    (await http(url, 'POST', '/collections/both/points/count', { filter })).body.result.count,
  );
  // A change on one port is what the other shows, with the same meaning of a nested key.
  await http(kithUrl, 'POST', '/collections/both/points/payload', { points: ['a'], payload: { k: 1 }, key: 'n.m' });
  await http(url, 'POST', '/collections/both/points/payload', { points: ['b'], payload: { k: 1 }, key: 'n.m' });
  const [a, b] = (await http(kithUrl, 'POST', '/collections/both/points/retrieve', { ids: ['a', 'b'] })).body.result;
  assert.deepEqual(a.payload.n, { m: { k: 1 } });
  assert.deepEqual(b.payload.n, a.payload.n);
  await http(url, 'POST', '/collections/both/points/payload/delete', { points: ['a'], keys: ['n.m'] });
  await http(kithUrl, 'POST', '/collections/both/points/payload/delete', { points: ['b'], keys: ['n.m'] });
  const q = await http(url, 'POST', '/collections/both/points', { ids: ['a', 'b'] });
  assert.deepEqual(
    q.body.result.map((p: { payload: Json }) => p.payload.n),
    [{}, {}],
  );
});
