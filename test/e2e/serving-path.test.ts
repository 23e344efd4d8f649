import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SeededRng } from '../../src/core/rng.js';
import { openTestApp, type TestApp } from '../helpers/app.js';
import { testSeed, withSeed } from '../helpers/data.js';

/**
 * The search routes write their hits as JSON text themselves (api/search-json.ts) unless a search
 * asks for `explain`, which still goes through the route's response schema. The schema path is
 * the oracle: the same search with and without `params.explain` must give the same `result`,
 * byte for byte in the versions (bigints above 2^53, which JSON.parse would round).
 */

const DIM = 5;

/** JSON values that stress the writer: quotes, backslashes, control and non-BMP characters, nesting, -0, big and tiny numbers. */
function randomJson(rng: SeededRng, depth: number): unknown {
  const kind = rng.int(depth > 2 ? 5 : 7);
  const strings = ['plain', 'quote " and \\ backslash', 'tab\tnew\nline', 'é ü 雪 🎉', '\u0001\u001f', '', '</script>'];
  switch (kind) {
    case 0:
      return strings[rng.int(strings.length)];
    case 1:
      return [0, -0, 1e21, 1.5e-7, -123456789.125, Number.MAX_SAFE_INTEGER, 0.1][rng.int(7)];
    case 2:
      return rng.int(2) === 0;
    case 3:
      return null;
    case 4:
      return rng.int(1000);
    case 5:
      return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = rng.int(4); i > 0; i--) out[strings[rng.int(strings.length)] ?? 'k'] = randomJson(rng, depth + 1);
      return out;
    }
  }
}

async function seeded(t: Parameters<typeof openTestApp>[0], rng: SeededRng): Promise<TestApp> {
  const api = await openTestApp(t);
  assert.equal((await api.call('POST', '/collections', { name: 'c', vector_size: DIM, distance: 'cosine', hnsw: rng.int(2) === 0 })).status, 200);
  const ids: unknown[] = [0, 7, 'seven', 'quote"id', 'ünï 🎉', 'back\\slash', Number.MAX_SAFE_INTEGER];
  const points = Array.from({ length: 40 }, (_, i) => ({
    id: ids[i] ?? `p${i}`,
    vector: Array.from({ length: DIM }, () => rng.next() * 2 - 1),
    payload: { v: randomJson(rng, 0), n: i },
  }));
  assert.equal((await api.call('PUT', '/collections/c/points', { points })).status, 200);
  return api;
}

function versionsOf(raw: string): string[] {
  return [...raw.matchAll(/"version":(\d+)/g)].map((m) => m[1] as string);
}

function randomSearch(rng: SeededRng): Record<string, unknown> {
  const body: Record<string, unknown> = { vector: Array.from({ length: DIM }, () => rng.next() * 2 - 1), limit: 1 + rng.int(15) };
  if (rng.int(3) === 0) body.with_vector = true;
  const payload = rng.int(4);
  if (payload === 1) body.with_payload = false;
  if (payload === 2) body.with_payload = ['n', 'absent'];
  if (rng.int(4) === 0) body.offset = rng.int(5);
  if (rng.int(4) === 0) body.score_threshold = rng.next() - 0.5;
  if (rng.int(4) === 0) body.filter = { must: [{ key: 'n', range: { gte: rng.int(30) } }] };
  return body;
}

test('search: the written result equals the schema-serialised one (with explain), versions digit for digit', async (t) => {
  const seed = testSeed(1010);
  await withSeed(seed, async (rng) => {
    const api = await seeded(t, rng);
    for (let q = 0; q < 60; q++) {
      const body = randomSearch(rng);
      const lean = await api.call('POST', '/collections/c/points/search', body);
      const viaSchema = await api.call('POST', '/collections/c/points/search', { ...body, params: { explain: true } });
      assert.equal(lean.status, 200, lean.raw);
      assert.equal(lean.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(lean.body.status, 'ok');
      assert.equal(typeof lean.body.time, 'number');
      assert.deepEqual(Object.keys(lean.body), ['status', 'result', 'time']);
      assert.deepEqual(lean.body.result, viaSchema.body.result, `query ${q}: ${JSON.stringify(body)}`);
      assert.deepEqual(versionsOf(lean.raw), versionsOf(viaSchema.raw));
      assert.ok(
        versionsOf(lean.raw).every((v) => BigInt(v) > 2n ** 53n),
        'versions are nanosecond clocks, beyond 2^53',
      );
    }
  });
});

test('search/batch: the written lists equal the schema-serialised ones', async (t) => {
  const seed = testSeed(2020);
  await withSeed(seed, async (rng) => {
    const api = await seeded(t, rng);
    const searches = Array.from({ length: 25 }, () => randomSearch(rng));
    const lean = await api.call('POST', '/collections/c/points/search/batch', { searches });
    // One search asking for explain sends the whole response through the schema.
    const viaSchema = await api.call('POST', '/collections/c/points/search/batch', {
      searches: [...searches, { vector: [1, 0, 0, 0, 0], params: { explain: true } }],
    });
    assert.equal(lean.status, 200, lean.raw);
    assert.equal(lean.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(Object.keys(lean.body), ['status', 'result', 'time']);
    assert.deepEqual(lean.body.result, viaSchema.body.result.slice(0, searches.length));
    assert.equal(lean.body.result.length, searches.length);
  });
});

test('search: an empty collection answers [] and bad input still gets the 400 naming the field', async (t) => {
  const api = await openTestApp(t);
  await api.call('POST', '/collections', { name: 'e', vector_size: 3, distance: 'dot' });
  const empty = await api.call('POST', '/collections/e/points/search', { vector: [1, 2, 3] });
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body.result, []);
  const bad = await api.call('POST', '/collections/e/points/search', { vector: [1, 'x', 3] });
  assert.equal(bad.status, 400);
  assert.match(bad.body.status.error, /^vector\[1\]: /);
  const badFilter = await api.call('POST', '/collections/e/points/search', { vector: [1, 2, 3], filter: { must: [{ key: 'a', match: {} }] } });
  assert.equal(badFilter.status, 400);
  assert.match(badFilter.body.status.error, /^filter\.must\[0\]/);
  const nullFilter = await api.call('POST', '/collections/e/points/search', { vector: [1, 2, 3], filter: null });
  assert.equal(nullFilter.status, 200);
});

test('hooks: a trailing slash is a 404, a refused request is counted and timed in /metrics', async (t) => {
  const api = await openTestApp(t);
  const slash = await api.call('GET', '/collections/?x=1');
  assert.equal(slash.status, 404);
  assert.match(slash.body.status.error, /no path ends with a slash/);
  await api.call('POST', '/collections', { name: 'm', vector_size: 2, distance: 'dot' });
  for (let i = 0; i < 3; i++) assert.equal((await api.call('POST', '/collections/m/points/search', { vector: [1, 1] })).status, 200);
  assert.equal((await api.call('POST', '/collections/m/points/search', { vector: [1] })).status, 400);
  const metrics = (await api.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = (status: number): string | undefined =>
    metrics
      .split('\n')
      .find(
        (l) => l.startsWith('kith_http_requests_total{') && l.includes('route="/collections/:name/points/search"') && l.includes(`status_code="${status}"`),
      );
  assert.match(line(200) ?? '', / 3$/);
  assert.match(line(400) ?? '', / 1$/);
  const count = metrics
    .split('\n')
    .find(
      (l) =>
        l.startsWith('kith_http_request_duration_seconds_count{') && l.includes('route="/collections/:name/points/search"') && l.includes('status_code="200"'),
    );
  assert.match(count ?? '', / 3$/);
});
