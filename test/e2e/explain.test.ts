/**
 * `params.explain` over HTTP: the search response gains `explain` (beside `result`) saying how the
 * search was answered (docs/filters.md), with the documented fields and sensible values; without
 * it there is no `explain` key; a non-boolean is a 400; the OpenAPI document describes both.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { openTestApp, type TestApp } from '../helpers/app.js';
import { randomVectors } from '../helpers/data.js';

type Call = TestApp['call'];

const FIELDS = ['candidates', 'ef', 'ef_source', 'estimate', 'exact', 'fallback', 'indexed_keys', 'sample', 'scored', 'strategy'];
const N = 1500;
const DIM = 8;
const RARE = 25;

/** N points; `cat` is "rare" on exactly RARE of them, else "common"; `n` counts up. */
async function seed(call: Call, name: string, hnsw: boolean): Promise<number[][]> {
  const created = await call('POST', '/collections', { name, vector_size: DIM, distance: 'euclid', hnsw });
  assert.equal(created.status, 200, created.raw);
  const vectors = randomVectors(new SeededRng(0xe4), N, DIM);
  const points = vectors.map((vector, i) => ({ id: i, vector, payload: { cat: i % 60 === 0 && i / 60 < RARE ? 'rare' : 'common', n: i } }));
  const upserted = await call('PUT', `/collections/${name}/points`, { points });
  assert.equal(upserted.status, 200, upserted.raw);
  return vectors;
}

// biome-ignore lint/suspicious/noExplicitAny: HTTP bodies are inspected field by field
async function explained(call: Call, name: string, body: Record<string, unknown>): Promise<any> {
  const r = await call('POST', `/collections/${name}/points/search`, { ...body, params: { ...((body.params as object) ?? {}), explain: true } });
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(Object.keys(r.body).sort(), ['explain', 'result', 'status', 'time']);
  assert.ok(Array.isArray(r.body.result));
  const e = r.body.explain;
  assert.deepEqual(Object.keys(e).sort(), FIELDS, 'the documented fields, no others');
  assert.ok(['graph', 'flat-scan', 'candidates-exact', 'graph-filtered'].includes(e.strategy), e.strategy);
  assert.equal(typeof e.fallback, 'boolean');
  assert.equal(typeof e.exact, 'boolean');
  assert.ok(Number.isInteger(e.scored) && e.scored >= 0, `scored ${e.scored}`);
  assert.ok(Array.isArray(e.indexed_keys) && e.indexed_keys.every((k: unknown) => typeof k === 'string'));
  if (e.estimate !== null) assert.ok(e.estimate.min <= e.estimate.expected && e.estimate.expected <= e.estimate.max, JSON.stringify(e.estimate));
  return r.body;
}

test('unfiltered HNSW search: strategy graph, approximate, fewer distances than points, nothing estimated', async (t) => {
  const { call } = await openTestApp(t);
  const vectors = await seed(call, 'h', true);
  const body = await explained(call, 'h', { vector: vectors[7], limit: 5 });
  assert.equal(body.result.length, 5);
  assert.equal(body.result[0].id, '7');
  assert.deepEqual(body.explain, {
    ...body.explain,
    strategy: 'graph',
    fallback: false,
    estimate: null,
    candidates: null,
    sample: null,
    exact: false,
    indexed_keys: [],
  });
  assert.ok(body.explain.scored > 0 && body.explain.scored < N, `scored ${body.explain.scored} of ${N}`);
  // params.exact turns it into a full scan.
  const exact = await explained(call, 'h', { vector: vectors[7], limit: 5, params: { exact: true } });
  assert.equal(exact.explain.strategy, 'flat-scan');
  assert.equal(exact.explain.exact, true);
  assert.equal(exact.explain.scored, N);
  assert.equal(exact.result[0].id, '7');
});

test('a selective keyword filter: candidates-exact, exact, candidates and estimate equal to the matches', async (t) => {
  const { call } = await openTestApp(t);
  const vectors = await seed(call, 'h', true);
  const filter = { must: [{ key: 'cat', match: { value: 'rare' } }] };
  const body = await explained(call, 'h', { vector: vectors[0], limit: 10, filter });
  const e = body.explain;
  assert.equal(e.strategy, 'candidates-exact');
  assert.equal(e.exact, true);
  assert.equal(e.fallback, false);
  assert.equal(e.candidates, RARE);
  assert.deepEqual(e.estimate, { min: RARE, expected: RARE, max: RARE, counted: true });
  assert.equal(e.sample, null);
  assert.equal(e.scored, RARE, 'each candidate scored once');
  assert.deepEqual(e.indexed_keys, ['cat']);
  assert.equal(body.result.length, 10);
  assert.equal(body.result[0].id, '0');
  for (const hit of body.result) assert.equal(hit.payload.cat, 'rare');
  // The same search without explain gives the same result.
  const plain = await call('POST', '/collections/h/points/search', { vector: vectors[0], limit: 10, filter });
  assert.deepEqual(plain.body.result, body.result);
});

test('a broad filter on HNSW walks the graph; a range condition lists its key', async (t) => {
  const { call } = await openTestApp(t);
  const vectors = await seed(call, 'h', true);
  const body = await explained(call, 'h', {
    vector: vectors[3],
    limit: 10,
    filter: {
      must: [
        { key: 'cat', match: { value: 'common' } },
        { key: 'n', range: { gte: 0 } },
      ],
    },
  });
  const e = body.explain;
  assert.ok(e.estimate.min <= N - RARE && N - RARE <= e.estimate.max, JSON.stringify(e.estimate));
  assert.deepEqual([...e.indexed_keys].sort(), ['cat', 'n']);
  assert.equal(body.result.length, 10);
  for (const hit of body.result) assert.equal(hit.payload.cat, 'common');
  if (e.strategy === 'graph-filtered') assert.equal(e.exact, e.fallback, 'a filtered walk is exact only when it fell back');
  else assert.equal(e.exact, true);
  // At least 1475 points match, above sqrt(m · ef · n) = sqrt(16 · 64 · 1500) ≈ 1239: the walk pays.
  assert.equal(e.strategy, 'graph-filtered');
});

test('a Flat collection: always exact (flat-scan unfiltered, candidates-exact for a selective filter)', async (t) => {
  const { call } = await openTestApp(t);
  const vectors = await seed(call, 'f', false);
  const unfiltered = await explained(call, 'f', { vector: vectors[1], limit: 3 });
  assert.equal(unfiltered.explain.strategy, 'flat-scan');
  assert.equal(unfiltered.explain.exact, true);
  assert.equal(unfiltered.explain.estimate, null);
  assert.equal(unfiltered.explain.scored, N);
  const broad = await explained(call, 'f', { vector: vectors[1], limit: 3, filter: { must: [{ key: 'cat', match: { value: 'common' } }] } });
  assert.equal(broad.explain.strategy, 'flat-scan');
  assert.equal(broad.explain.exact, true);
  assert.deepEqual(broad.explain.estimate, { min: N - RARE, expected: N - RARE, max: N - RARE, counted: true });
  const rare = await explained(call, 'f', { vector: vectors[1], limit: 3, filter: { must: [{ key: 'cat', match: { value: 'rare' } }] } });
  assert.equal(rare.explain.strategy, 'candidates-exact');
  assert.equal(rare.explain.exact, true);
  assert.equal(rare.explain.candidates, RARE);
});

test('a key no point has: the payload indexes say 0 match (nothing scored); without them the estimate is [0, n], not counted', async (t) => {
  const { call } = await openTestApp(t);
  const vectors = await seed(call, 'h', true);
  const absent = { must: [{ key: 'colour', match: { value: 'red' } }] };
  const indexed = await explained(call, 'h', { vector: vectors[0], limit: 10, filter: absent });
  assert.deepEqual(indexed.result, []);
  assert.deepEqual(indexed.explain.estimate, { min: 0, expected: 0, max: 0, counted: true });
  assert.deepEqual([indexed.explain.strategy, indexed.explain.candidates, indexed.explain.scored], ['candidates-exact', 0, 0]);
  assert.deepEqual(indexed.explain.indexed_keys, ['colour']);
  const empty = await explained(call, 'h', { vector: vectors[0], limit: 3, filter: { must: [{ is_empty: { key: 'colour' } }] } });
  assert.deepEqual(empty.explain.estimate, { min: N, expected: N, max: N, counted: true });
  assert.equal(empty.result.length, 3);
  // The same points without payload indexes: nothing is known of the key.
  const created = await call('POST', '/collections', { name: 'plain', vector_size: DIM, distance: 'euclid', payload_index: false });
  assert.equal(created.status, 200, created.raw);
  const points = vectors.map((vector, i) => ({ id: i, vector, payload: { n: i } }));
  assert.equal((await call('PUT', '/collections/plain/points', { points })).status, 200);
  const plain = await explained(call, 'plain', { vector: vectors[0], limit: 10, filter: absent });
  assert.deepEqual(plain.result, []);
  assert.deepEqual(plain.explain.estimate, { min: 0, expected: N / 2, max: N, counted: false });
  assert.deepEqual(plain.explain.indexed_keys, []);
});

test('without params.explain (or with false) the response has no explain key', async (t) => {
  const { call } = await openTestApp(t);
  const vectors = await seed(call, 'h', true);
  for (const params of [undefined, {}, { explain: false }, { explain: null }, { exact: true }]) {
    const r = await call('POST', '/collections/h/points/search', { vector: vectors[0], limit: 2, ...(params === undefined ? {} : { params }) });
    assert.equal(r.status, 200, r.raw);
    assert.deepEqual(Object.keys(r.body).sort(), ['result', 'status', 'time'], JSON.stringify(params));
    assert.doesNotMatch(r.raw, /explain/);
  }
});

test('params.explain must be a boolean; the hidden embedded-only params are refused over HTTP', async (t) => {
  const { call } = await openTestApp(t);
  const vectors = await seed(call, 'h', true);
  for (const explain of ['true', 1, 0, [], {}]) {
    const r = await call('POST', '/collections/h/points/search', { vector: vectors[0], params: { explain } });
    assert.equal(r.status, 400, `explain ${JSON.stringify(explain)}: ${r.raw}`);
    assert.match(r.body.status.error, /explain/, r.raw);
  }
  for (const params of [{ strategy: 'flat-scan' }, { filter_walk: 'plain' }]) {
    const r = await call('POST', '/collections/h/points/search', { vector: vectors[0], params });
    assert.equal(r.status, 400, `${JSON.stringify(params)}: ${r.raw}`);
  }
  const missing = await call('POST', '/collections/nope/points/search', { vector: vectors[0], params: { explain: true } });
  assert.equal(missing.status, 404);
});

test('the OpenAPI document describes params.explain and the explain object', async (t) => {
  const { call } = await openTestApp(t);
  const doc = (await call('GET', '/openapi.json')).body;
  const op = doc.paths['/collections/{name}/points/search'].post;
  const params = op.requestBody.content['application/json'].schema.properties.params;
  const object = params.anyOf.find((s: { type?: string }) => s.type === 'object');
  const explain = object.properties.explain.anyOf.find((s: { type?: string }) => s.type === 'boolean');
  assert.ok(explain, 'params.explain is a boolean');
  assert.match(explain.description, /explain/i);
  const response = op.responses['200'].content['application/json'].schema;
  assert.ok(!response.required.includes('explain'), 'explain is optional in the response');
  const e = response.properties.explain;
  assert.deepEqual(Object.keys(e.properties).sort(), FIELDS);
  assert.deepEqual([...e.required].sort(), FIELDS);
  assert.deepEqual(e.properties.strategy.anyOf.map((s: { enum: string[] }) => s.enum[0]).sort(), [
    'candidates-exact',
    'flat-scan',
    'graph',
    'graph-filtered',
    'sparse-index',
  ]);
  for (const name of FIELDS) assert.equal(typeof e.properties[name].description, 'string', `${name} is described`);
});
