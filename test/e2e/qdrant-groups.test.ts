/**
 * Grouped searches on the Qdrant port (search/groups, recommend/groups, query/groups), through the
 * official client and raw HTTP: Qdrant's own cases (tests/openapi/test_group.py: chunked documents,
 * array values, heterogeneous values, lookups, a key no point has), then random collections of
 * nasty data grouped by the engine and by a model that groups one exact search of every point.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { http, startQdrant } from './qdrant-harness.js';

type Id = number | string;
type Hit = { id: Id; score: number; payload?: Record<string, unknown> | null; vector?: unknown };
type Group = { id: Id; hits: Hit[]; lookup?: { id: Id; payload?: Record<string, unknown> | null; vector?: unknown } };
// biome-ignore lint/suspicious/noExplicitAny: request bodies are built field by field
type Body = any;

async function setUp(url: string): Promise<void> {
  const put = async (collection: string, points: Body[]): Promise<void> => {
    const r = await http(url, 'PUT', `/collections/${collection}/points?wait=true`, { points });
    assert.equal(r.status, 200, r.text);
  };
  for (const name of ['g', 'g_lookup']) {
    const r = await http(url, 'PUT', `/collections/${name}`, { vectors: { size: 4, distance: 'Dot' } });
    assert.equal(r.status, 200, r.text);
  }
  const chunks: Body[] = [];
  for (let doc = 0; doc < 50; doc++)
    for (let chunk = 0; chunk < 5; chunk++) chunks.push({ id: doc * 5 + chunk, vector: [1, 0, 0, 0], payload: { docId: doc } });
  await put('g', chunks);
  const multi: Body[] = [];
  for (let doc = 0; doc < 3; doc++)
    for (let chunk = 0; chunk < 5; chunk++)
      multi.push({ id: 5000 + doc * 5 + chunk, vector: [0, 1, 0, 0], payload: { multiId: [`valid_${doc}`, `valid_too_${doc}`] } });
  await put('g', multi);
  const odd = ['string', 123, [1, 2, 3], ['a', 'b', 'c'], 2.42, [['a', 'b', 'c']], { object: 'string' }, [], null];
  await put(
    'g',
    odd.map((value, i) => ({ id: 6000 + i, vector: [0, 0, 1, 0], payload: { heterogenousId: value } })),
  );
  await put('g', [
    ...Array.from({ length: 100 }, (_, i) => ({ id: 9000 + i, vector: [0, 0, 1, 1], payload: { mkey: ['a'] } })),
    ...Array.from({ length: 10 }, (_, i) => ({ id: 9100 + i, vector: [0, 0, 1, 0], payload: { mkey: ['a', 'b'] } })),
  ]);
  await put(
    'g_lookup',
    Array.from({ length: 100 }, (_, i) => ({ id: i, vector: [1, 0, 0, 0], payload: { body: `doc body ${i}` } })),
  );
}

test("Qdrant's group cases: chunked documents, recommendations, vectors, array and heterogeneous values, lookups", async (t) => {
  const { client, url } = await startQdrant(t);
  await setUp(url);
  const groups = async (path: string, body: Body): Promise<Group[]> => {
    const r = await http(url, 'POST', `/collections/g/points/${path}`, body);
    assert.equal(r.status, 200, r.text);
    return r.body.result.groups;
  };

  const byDoc = await client.searchPointGroups('g', { vector: [1, 0, 0, 0], limit: 10, with_payload: true, group_by: 'docId', group_size: 3 });
  assert.equal(byDoc.groups.length, 10);
  for (const g of byDoc.groups) {
    assert.equal(g.hits.length, 3);
    for (const h of g.hits) assert.equal((h.payload as { docId: number }).docId, g.id);
  }
  // Every score ties: kith orders ties by id (as text, kith's id order for hits), so a group
  // ranks by the least of its ids as text.
  const docsInTieOrder = Array.from({ length: 50 }, (_, doc) => doc).sort((a, b) => {
    const least = (doc: number): string => [0, 1, 2, 3, 4].map((c) => String(doc * 5 + c)).sort()[0] as string;
    return least(a) < least(b) ? -1 : 1;
  });
  assert.deepEqual(
    byDoc.groups.map((g) => g.id),
    docsInTieOrder.slice(0, 10),
  );

  const recommended = await client.recommendPointGroups('g', {
    positive: [5, 10, 15],
    negative: [6, 11, 16],
    limit: 10,
    with_payload: true,
    group_by: 'docId',
    group_size: 3,
  });
  assert.equal(recommended.groups.length, 10);
  for (const g of recommended.groups) {
    assert.equal(g.hits.length, 3);
    for (const h of g.hits) assert.equal((h.payload as { docId: number }).docId, g.id);
  }

  const withVectors = await groups('search/groups', {
    vector: [1, 0, 0, 0],
    limit: 5,
    with_payload: true,
    with_vector: true,
    group_by: 'docId',
    group_size: 3,
  });
  assert.equal(withVectors.length, 5);
  for (const g of withVectors) for (const h of g.hits) assert.deepEqual(h.vector, [1, 0, 0, 0]);

  assert.deepEqual(await groups('search/groups', { vector: [1, 0, 0, 0], limit: 10, group_by: 'inexistentDocId', group_size: 3 }), []);

  for (const key of ['multiId', 'multiId[]']) {
    const found = await groups('search/groups', { vector: [0, 1, 0, 0], limit: 6, with_payload: true, group_by: key, group_size: 3 });
    const ids = found.map((g) => g.id);
    assert.equal(found.length, 6, key);
    for (let i = 0; i < 3; i++) assert.ok(ids.includes(`valid_${i}`) && ids.includes(`valid_too_${i}`), `${key}: ${ids}`);
  }

  const mixed = await groups('search/groups', { vector: [0, 0, 1, 0], limit: 10, with_payload: true, group_by: 'heterogenousId', group_size: 3 });
  assert.deepEqual(new Set(mixed.map((g) => g.id)), new Set(['c', 3, 1, 123, 2, 'string', 'b', 'a']));

  // A point in two groups: `b` is found although `a`'s hundred points score higher.
  const two = await groups('search/groups', { vector: [0, 0, 1, 1], limit: 2, with_payload: true, group_by: 'mkey', group_size: 2 });
  assert.deepEqual(
    two.map((g) => g.id),
    ['a', 'b'],
  );

  for (const with_lookup of ['g_lookup', { collection: 'g_lookup' }, { collection: 'g_lookup', with_payload: true, with_vectors: false }]) {
    for (const [path, body] of [
      ['search/groups', { vector: [1, 0, 0, 0] }],
      ['recommend/groups', { positive: [5, 10, 15], negative: [6, 11, 16] }],
      ['query/groups', { query: [1, 0, 0, 0] }],
    ] as const) {
      const found = await groups(path, { ...body, limit: 10, with_payload: true, group_by: 'docId', group_size: 3, with_lookup });
      assert.equal(found.length, 10, `${path} ${JSON.stringify(with_lookup)}`);
      for (const g of found) {
        assert.equal(g.hits.length, 3);
        assert.equal(g.lookup?.id, g.id);
        assert.equal(g.lookup?.payload?.body, `doc body ${g.id}`);
        assert.equal(g.lookup?.vector, undefined);
      }
    }
  }
  const lookupVectors = await groups('query/groups', {
    query: [1, 0, 0, 0],
    group_by: 'docId',
    with_lookup: { collection: 'g_lookup', with_payload: false, with_vectors: true },
  });
  assert.equal(lookupVectors.length, 10, 'query/groups: limit 10 by default');
  for (const g of lookupVectors) {
    assert.equal(g.hits.length, 3, 'query/groups: group_size 3 by default');
    assert.deepEqual(g.lookup?.vector, [1, 0, 0, 0]);
    assert.equal(g.lookup?.payload, undefined);
  }
  const viaClient = await client.queryGroups('g', { query: [1, 0, 0, 0], group_by: 'docId', group_size: 2, limit: 4, with_lookup: 'g_lookup' });
  assert.deepEqual(
    viaClient.groups.map((g) => [g.id, g.hits.length, g.lookup?.id]),
    docsInTieOrder.slice(0, 4).map((doc) => [doc, 2, doc]),
  );
});

test('group requests are checked before any search: sizes, keys, lookups, prefetches', async (t) => {
  const { url } = await startQdrant(t);
  await setUp(url);
  const status = async (path: string, body: Body): Promise<[number, string]> => {
    const r = await http(url, 'POST', `/collections/g/points/${path}`, body);
    return [r.status, r.text];
  };
  const base = { vector: [1, 0, 0, 0], group_by: 'docId', group_size: 3, limit: 10 };
  assert.equal((await status('search/groups', { ...base, group_size: 0 }))[0], 422);
  assert.equal((await status('search/groups', { ...base, limit: 0 }))[0], 422);
  assert.match((await status('search/groups', { ...base, limit: undefined }))[1], /limit: required/);
  assert.match((await status('search/groups', { ...base, group_by: '' }))[1], /group_by/);
  const [tooMany, tooManyText] = await status('search/groups', { ...base, limit: 100, group_size: 100 });
  assert.equal(tooMany, 422, tooManyText);
  assert.match(tooManyText, /8192/);
  assert.equal((await status('search/groups', { ...base, with_lookup: 'nowhere' }))[0], 404);
  assert.equal((await status('query/groups', { prefetch: { query: [1, 0, 0, 0] }, query: { fusion: 'rrf' }, group_by: 'docId' }))[0], 400);
  assert.equal((await status('query/groups', { group_by: 'docId' }))[0], 400);
  assert.equal((await status('recommend/groups', { ...base, vector: undefined, positive: [99999] }))[0], 404);
});

/** The model: one exact search of every point, grouped in its order (score, then id). */
function modelGroups(hits: Hit[], key: string, groups: number, size: number): { id: Id; hits: Id[] }[] {
  const found = new Map<string, { id: Id; hits: Id[] }>();
  for (const hit of hits) {
    const raw = hit.payload?.[key];
    const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
    if (values.length === 0 || values.some((v) => !(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))))) continue;
    for (const value of new Set(values.map((v) => (typeof v === 'number' ? `n${v}` : `s${v}`)))) {
      const id: Id = value.startsWith('n') ? Number(value.slice(1)) : value.slice(1);
      const group = found.get(value) ?? { id, hits: [] };
      found.set(value, group);
      if (group.hits.length < size) group.hits.push(hit.id);
    }
  }
  return [...found.values()].slice(0, groups);
}

test('grouped searches equal a model grouping one exact search of every point (random nasty data, three distances)', async (t) => {
  const { url } = await startQdrant(t);
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const rng = new SeededRng(seed);
    const distance = (['Cosine', 'Euclid', 'Dot'] as const)[seed % 3] as string;
    const dim = 1 + rng.int(4);
    const name = `m${seed}`;
    const made = await http(url, 'PUT', `/collections/${name}`, { vectors: { size: dim, distance }, hnsw_config: { m: 0 } });
    assert.equal(made.status, 200, made.text);
    const values: unknown[] = ['x', 'y', 'z', 0, 1, 2, '1', -3, 1.5, true, null, [], ['x', 'y'], [1, 'x'], [[1]], { o: 1 }];
    const count = 30 + rng.int(120);
    const shared = Array.from({ length: dim }, () => rng.int(3));
    const points = Array.from({ length: count }, (_, i) => {
      // Duplicated vectors (ties), zero vectors, and runs of one group close together in score.
      const kind = rng.int(4);
      const vector = kind === 0 ? shared : kind === 1 ? Array.from({ length: dim }, () => 0) : Array.from({ length: dim }, () => rng.int(5) - 1);
      const payload: Record<string, unknown> = rng.int(8) === 0 ? {} : { k: values[rng.int(values.length)] };
      return { id: rng.int(3) === 0 ? `p-${i}` : i, vector, payload };
    });
    const put = await http(url, 'PUT', `/collections/${name}/points?wait=true`, { points });
    assert.equal(put.status, 200, put.text);
    for (let round = 0; round < 8; round++) {
      const query = Array.from({ length: dim }, () => rng.int(5) - 2);
      const groups = 1 + rng.int(6);
      const size = 1 + rng.int(4);
      const filter = rng.int(3) === 0 ? { must_not: [{ key: 'k', match: { value: 'y' } }] } : undefined;
      const all = await http(url, 'POST', `/collections/${name}/points/search`, {
        vector: query,
        limit: count,
        filter,
        with_payload: true,
        params: { exact: true },
      });
      assert.equal(all.status, 200, all.text);
      const want = modelGroups(all.body.result, 'k', groups, size);
      const got = await http(url, 'POST', `/collections/${name}/points/search/groups`, {
        vector: query,
        group_by: 'k',
        group_size: size,
        limit: groups,
        filter,
        params: { exact: true },
      });
      assert.equal(got.status, 200, got.text);
      const shown = (got.body.result.groups as Group[]).map((g) => ({ id: g.id, hits: g.hits.map((h) => h.id) }));
      assert.deepEqual(shown, want, `seed ${seed} round ${round} (${distance}, dim ${dim}, ${groups} × ${size})`);
    }
  }
});
