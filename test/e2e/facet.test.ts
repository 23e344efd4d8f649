/**
 * Facets on both ports: Qdrant's test_facets cases through the official client's port, then random
 * payloads (arrays with repeats, nested keys, mixed kinds, floats and nulls that are not counted)
 * with random filters and limits compared with a model counting over every point.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient } from '../../src/api/client/kith-client.js';
import { SeededRng } from '../../src/core/rng.js';
import { http, startQdrant } from './qdrant-harness.js';

const CITIES = ['Berlin', 'London', 'Moscow', 'Berlin', 'London', 'Moscow', 'Berlin'];

test("Qdrant's facet cases: keyword, integer, uuid and bool keys, by count then value", async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('f', { vectors: { size: 2, distance: 'Dot' } });
  const rows: Array<Record<string, unknown>> = [
    { integer: 3, uuid: 'a64a8051-3ee7-4881-8bc6-691d25c70d54', boolean: true },
    { integer: 3, uuid: 'a64a8051-3ee7-4881-8bc6-691d25c70d54', boolean: true },
    { integer: 3, uuid: '7cb46fb3-e348-4762-93ad-7fb983d2b85e', boolean: false },
    { integer: 0, uuid: '2b016c50-282c-4d80-b784-cefead291180', boolean: true },
    { integer: 3, uuid: 'a64a8051-3ee7-4881-8bc6-691d25c70d54', boolean: true },
    { integer: 1, uuid: 'a64a8051-3ee7-4881-8bc6-691d25c70d54', boolean: false },
    { integer: 2, uuid: '7cb46fb3-e348-4762-93ad-7fb983d2b85e', boolean: false },
    { integer: 0, uuid: 'a64a8051-3ee7-4881-8bc6-691d25c70d54', boolean: true },
  ];
  await client.upsert('f', {
    wait: true,
    points: [
      ...CITIES.map((city, i) => ({ id: i + 1, vector: [1, 0], payload: { city } })),
      ...rows.map((payload, i) => ({ id: 100 + i, vector: [0, 1], payload })),
    ],
  });
  const facet = async (body: unknown) => {
    const r = await http(url, 'POST', '/collections/f/facet', body);
    assert.equal(r.status, 200, r.text);
    return r.body.result;
  };
  assert.deepEqual(await facet({ key: 'city' }), {
    hits: [
      { value: 'Berlin', count: 3 },
      { value: 'London', count: 2 },
      { value: 'Moscow', count: 2 },
    ],
  });
  assert.deepEqual(await facet({ key: 'integer' }), {
    hits: [
      { value: 3, count: 4 },
      { value: 0, count: 2 },
      { value: 1, count: 1 },
      { value: 2, count: 1 },
    ],
  });
  assert.deepEqual(await facet({ key: 'uuid' }), {
    hits: [
      { value: 'a64a8051-3ee7-4881-8bc6-691d25c70d54', count: 5 },
      { value: '7cb46fb3-e348-4762-93ad-7fb983d2b85e', count: 2 },
      { value: '2b016c50-282c-4d80-b784-cefead291180', count: 1 },
    ],
  });
  assert.deepEqual(await facet({ key: 'boolean', exact: true }), {
    hits: [
      { value: true, count: 5 },
      { value: false, count: 3 },
    ],
  });
  assert.deepEqual(await facet({ key: 'city', limit: 1, filter: { must: [{ key: 'city', match: { any: ['London', 'Moscow'] } }] } }), {
    hits: [{ value: 'London', count: 2 }],
  });
  const bad = await http(url, 'POST', '/collections/f/facet', { key: 'city', limit: 0 });
  assert.equal(bad.status, 422, bad.text);
  const noKey = await http(url, 'POST', '/collections/f/facet', {});
  assert.equal(noKey.status, 400, noKey.text);
  assert.match(noKey.body.status.error, /key/);
});

test('random payloads, filters and limits: facets on both ports equal a model counting every point', async (t) => {
  const seed = 4242;
  const { url, kithUrl } = await startQdrant(t);
  const kith = new KithClient(kithUrl);
  await kith.createCollection({ name: 'r', vector_size: 2, distance: 'dot' });
  const rng = new SeededRng(seed);
  const values: unknown[] = ['a', 'b', 'B', '', 'ä', 0, 1, -2, 3, 1.5, true, false, null, { x: 1 }];
  const draw = (): unknown => {
    const roll = rng.int(10);
    if (roll < 6) return values[rng.int(values.length)];
    if (roll < 9) return Array.from({ length: rng.int(5) }, () => values[rng.int(values.length)]);
    return undefined;
  };
  const payloads = Array.from({ length: 300 }, (_, i) => {
    const payload: Record<string, unknown> = { g: i % 4 };
    const tag = draw();
    if (tag !== undefined) payload.tag = tag;
    if (rng.next() < 0.5) payload.nested = [{ tag: draw() }, { tag: draw() }];
    return payload;
  });
  await kith.upsert(
    'r',
    payloads.map((payload, i) => ({ id: i, vector: [1, 0], payload: JSON.parse(JSON.stringify(payload)) })),
  );
  const model = (key: 'tag' | 'nested.tag', g: number | undefined, limit: number) => {
    const counts = new Map<string, { value: unknown; count: number }>();
    for (const payload of payloads) {
      if (g !== undefined && payload.g !== g) continue;
      const found = key === 'tag' ? [payload.tag] : ((payload.nested as Array<{ tag: unknown }> | undefined) ?? []).map((n) => n.tag);
      const seen = new Set<string>();
      for (const v of found.flatMap((x) => (Array.isArray(x) ? x : [x]))) {
        if (!(typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v)))) continue;
        const id = `${typeof v}:${String(v)}`;
        if (seen.has(id)) continue;
        seen.add(id);
        counts.set(id, { value: v, count: (counts.get(id)?.count ?? 0) + 1 });
      }
    }
    const rank = (v: unknown) => (typeof v === 'boolean' ? 0 : typeof v === 'number' ? 1 : 2);
    return [...counts.values()]
      .sort(
        (a, b) =>
          b.count - a.count ||
          rank(a.value) - rank(b.value) ||
          ((a.value as number) < (b.value as number) ? -1 : (a.value as number) > (b.value as number) ? 1 : 0),
      )
      .slice(0, limit);
  };
  for (let round = 0; round < 30; round++) {
    const key = rng.next() < 0.5 ? 'tag' : 'nested.tag';
    const g = rng.next() < 0.5 ? rng.int(4) : undefined;
    const limit = 1 + rng.int(12);
    const filter = g === undefined ? undefined : { must: [{ key: 'g', match: { value: g } }] };
    const want = model(key, g, limit);
    const where = `seed ${seed}, round ${round}: ${key}, g ${g}, limit ${limit}`;
    assert.deepEqual(await kith.facet('r', { key, limit, ...(filter === undefined ? {} : { filter }) }), want, `${where} (kith)`);
    const q = await http(url, 'POST', '/collections/r/facet', { key, limit, filter });
    assert.deepEqual(q.body.result.hits, want, `${where} (qdrant)`);
  }
});
