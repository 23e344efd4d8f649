import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LmdbStore } from '../../src/storage/lmdb-store.js';
import { openTestApp, openTestAppAt } from '../helpers/app.js';

const DEFAULT_PARAMETERS = { m: 16, ef_construction: 200, ef_search: 64, k: 10, target_recall: 0.95 };
/** What a collection with nothing to calibrate reports. */
const UNCALIBRATED = { running: false, recall: null, recall_lower_bound: null, reached: null, sample: null, points_when_calibrated: null, duration_ms: null };

test('POST /collections creates, echoes canonical config, and 409s on a repeat', async (t) => {
  const { call } = await openTestApp(t);
  const created = await call('POST', '/collections', { name: 'docs', vector_size: 4, distance: 'EUCLIDEAN' });
  assert.equal(created.status, 200);
  assert.match(String(created.headers['content-type']), /^application\/json/);
  assert.equal(created.body.status, 'ok');
  assert.equal(typeof created.body.time, 'number');
  assert.ok(created.body.time > 0 && created.body.time < 5, `time ${created.body.time}`);
  assert.deepEqual(created.body.result, {
    name: 'docs',
    vector_size: 4,
    distance: 'Euclid',
    hnsw: false,
    parameters: DEFAULT_PARAMETERS,
    quantization: 'none',
    payload_index: true,
    points_count: 0,
    calibration: { ...UNCALIBRATED, state: 'flat', ef: 64, target_recall: 0.95 },
    operation: 'completed',
  });
  const again = await call('POST', '/collections', { name: 'docs', vector_size: 4, distance: 'dot' });
  assert.equal(again.status, 409);
  assert.match(again.body.status.error, /already exists/);
});

test('distance spellings are case-insensitive with aliases', async (t) => {
  const { call } = await openTestApp(t);
  const cases: Array<[string, string]> = [
    ['cosine', 'Cosine'],
    ['CoSiNe', 'Cosine'],
    ['euclid', 'Euclid'],
    ['L2', 'Euclid'],
    ['Dot', 'Dot'],
  ];
  for (const [i, [given, canonical]] of cases.entries()) {
    const r = await call('POST', '/collections', { name: `c${i}`, vector_size: 2, distance: given });
    assert.equal(r.status, 200, given);
    assert.equal(r.body.result.distance, canonical);
  }
});

test('create validates before the 409 and names the field', async (t) => {
  const { call } = await openTestApp(t);
  assert.equal((await call('POST', '/collections', { name: 'x', vector_size: 2, distance: 'dot' })).status, 200);
  const cases: Array<[unknown, RegExp]> = [
    [{ name: 'x', vector_size: 0, distance: 'dot' }, /^vector_size: /],
    [{ name: 'x', vector_size: -3, distance: 'dot' }, /^vector_size: /],
    [{ name: 'x', vector_size: 65537, distance: 'dot' }, /^vector_size: /],
    [{ name: 'x', vector_size: 2.5, distance: 'dot' }, /^vector_size: /],
    [{ name: 'x', vector_size: '2', distance: 'dot' }, /^vector_size: /],
    [{ name: 'x', vector_size: 2, distance: 'manhattan' }, /^distance: unsupported/],
    [{ name: 'x', vector_size: 2 }, /^distance: required/],
    [{ name: 'bad/name', vector_size: 2, distance: 'dot' }, /^name: /],
    [{ name: '..', vector_size: 2, distance: 'dot' }, /^name: /],
    [{ name: 'a'.repeat(256), vector_size: 2, distance: 'dot' }, /^name: /],
    [{ name: 'x', vector_size: 2, distance: 'dot', parameters: { m: 1 } }, /^parameters\.m: /],
    [{ name: 'x', vector_size: 2, distance: 'dot', parameters: { ef_search: 0 } }, /^parameters\.ef_search: /],
    [{ name: 'x', vector_size: 2, distance: 'dot', parameters: { mm: 3 } }, /^parameters\.mm: unknown field/],
    [{ name: 'x', vector_size: 2, distance: 'dot', quantization: 'pq' }, /^quantization/],
    [{ name: 'x', vector_size: 2, distance: 'dot', extra: 1 }, /^extra: unknown field/],
  ];
  for (const [body, message] of cases) {
    const r = await call('POST', '/collections', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.status.error, message, JSON.stringify(body));
  }
  const list = await call('GET', '/collections');
  assert.deepEqual(
    list.body.result.map((c: { name: string }) => c.name),
    ['x'],
  );
});

test('parameters, hnsw and quantization are stored and echoed', async (t) => {
  const { call } = await openTestApp(t);
  const r = await call('POST', '/collections', {
    name: 'h',
    vector_size: 8,
    distance: 'cosine',
    hnsw: true,
    parameters: { m: 8, ef_construction: 64, ef_search: 32, k: 5 },
    quantization: { type: 'sq8' },
    payload_index: false,
  });
  assert.equal(r.status, 200);
  const got = await call('GET', '/collections/h');
  assert.deepEqual(got.body.result, {
    name: 'h',
    vector_size: 8,
    distance: 'Cosine',
    hnsw: true,
    parameters: { m: 8, ef_construction: 64, ef_search: 32, k: 5, target_recall: 0.95 },
    quantization: 'sq8',
    payload_index: false,
    points_count: 0,
    calibration: { ...UNCALIBRATED, state: 'fixed', ef: 32, target_recall: 0.95 },
  });
});

test('GET /collections lists sorted by name with counts; [] when empty', async (t) => {
  const { call } = await openTestApp(t);
  const empty = await call('GET', '/collections');
  assert.deepEqual(empty.body.result, []);
  for (const name of ['zeta', 'alpha', 'Mid']) await call('POST', '/collections', { name, vector_size: 2, distance: 'dot' });
  await call('PUT', '/collections/alpha/points', { points: [{ id: 1, vector: [1, 2] }] });
  const list = await call('GET', '/collections');
  assert.deepEqual(
    list.body.result.map((c: { name: string; points_count: number }) => [c.name, c.points_count]),
    [
      ['Mid', 0],
      ['alpha', 1],
      ['zeta', 0],
    ],
  );
});

test('DELETE /collections/{name} drops it; then 404 everywhere', async (t) => {
  const { call } = await openTestApp(t);
  await call('POST', '/collections', { name: 'gone', vector_size: 2, distance: 'dot' });
  await call('PUT', '/collections/gone/points', { points: [{ id: 1, vector: [1, 2] }] });
  const dropped = await call('DELETE', '/collections/gone');
  assert.equal(dropped.status, 200);
  assert.deepEqual(dropped.body.result, { collection: 'gone', operation: 'completed' });
  for (const [method, url, body] of [
    ['GET', '/collections/gone', undefined],
    ['DELETE', '/collections/gone', undefined],
    ['PUT', '/collections/gone/points', { points: [] }],
    ['POST', '/collections/gone/points/search', { vector: [1, 2] }],
    ['POST', '/collections/gone/points/delete', { points: [1] }],
  ] as const) {
    const r = await call(method, url, body);
    assert.equal(r.status, 404, `${method} ${url}`);
    assert.match(r.body.status.error, /does not exist/);
  }
  const recreated = await call('POST', '/collections', { name: 'gone', vector_size: 3, distance: 'dot' });
  assert.equal(recreated.status, 200);
  assert.equal(recreated.body.result.points_count, 0);
});

test('HNSW build parameters are bounded at create (m ≤ 100, ef_construction ≤ 1000); a collection stored with more still loads', async (t) => {
  const app = await openTestApp(t);
  const base = { vector_size: 4, distance: 'euclid', hnsw: true };
  for (const [parameters, field] of [
    [{ m: 101 }, 'parameters.m'],
    [{ ef_construction: 1001 }, 'parameters.ef_construction'],
  ] as const) {
    const r = await app.call('POST', '/collections', { name: 'big', ...base, parameters });
    assert.equal(r.status, 400, r.raw);
    assert.match(r.body.status.error, new RegExp(`^${field.replace('.', '\\.')}: `));
  }
  assert.equal((await app.call('GET', '/collections')).body.result.length, 0, 'nothing was created');
  const atBounds = await app.call('POST', '/collections', { name: 'edge', ...base, parameters: { m: 100, ef_construction: 1000 } });
  assert.equal(atBounds.status, 200, atBounds.raw);
  // m × ef_construction × vector_size is bounded too (the work of one insert): at the bound, and one past it.
  const work = await app.call('POST', '/collections', {
    name: 'wide',
    ...base,
    vector_size: 2 ** 28 / (64 * 512),
    parameters: { m: 64, ef_construction: 512 },
  });
  assert.equal(work.status, 200, work.raw);
  const over = await app.call('POST', '/collections', {
    name: 'wider',
    ...base,
    vector_size: 2 ** 28 / (64 * 512) + 1,
    parameters: { m: 64, ef_construction: 512 },
  });
  assert.equal(over.status, 400, over.raw);
  assert.match(over.body.status.error, /^parameters: m × ef_construction × vector_size is 268468224 \(64 × 512 × 8193\); the limit is 268435456/);
  const flat = await app.call('POST', '/collections', {
    name: 'wider',
    ...base,
    hnsw: false,
    vector_size: 65536,
    parameters: { m: 100, ef_construction: 1000 },
  });
  assert.equal(flat.status, 200, `a Flat collection inserts no graph node: ${flat.raw}`);
  // A collection an earlier version created with m 128 and ef_construction 4096, written as it stored it.
  const { dbPath } = app;
  await app.close();
  const store = LmdbStore.open(dbPath);
  await store.createCollection('old', {
    name: 'old',
    vector_size: 4,
    distance: 'Euclid',
    hnsw: true,
    parameters: { m: 128, ef_construction: 4096, ef_search: 64, k: 10 },
    quantization: 'none',
    payload_index: true,
  });
  await store.close();
  const reopened = await openTestAppAt(t, dbPath);
  const old = await reopened.call('GET', '/collections/old');
  assert.equal(old.status, 200, old.raw);
  assert.deepEqual(old.body.result.parameters, { m: 128, ef_construction: 4096, ef_search: 64, k: 10, target_recall: 0.95 });
  // Stored before target_recall existed, with the then default ef_search: calibrated like a new one.
  assert.deepEqual(old.body.result.calibration, { ...UNCALIBRATED, state: 'uncalibrated', ef: 64, target_recall: 0.95 });
  const upsert = await reopened.call('PUT', '/collections/old/points', { points: [{ id: 1, vector: [1, 2, 3, 4] }] });
  assert.equal(upsert.status, 200, upsert.raw);
});
