/**
 * Calibrated ef over HTTP: `parameters.target_recall` is checked, stored and echoed; the collection
 * info reports `calibration`; an HNSW collection past MIN_POINTS calibrates in the background and
 * its searches then report `ef_source: "calibrated"` in `explain`; the OpenAPI document has both.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_POINTS } from '../../src/search/ef-calibration.js';
import { SeededRng } from '../../src/core/rng.js';
import { openTestApp } from '../helpers/app.js';

test('target_recall: bounds are a 400 naming the field, and nothing is created', async (t) => {
  const { call } = await openTestApp(t);
  for (const bad of [0.3, 1, 1.5, '0.9', null]) {
    const r = await call('POST', '/collections', { name: 'x', vector_size: 2, distance: 'dot', hnsw: true, parameters: { target_recall: bad } });
    assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.raw}`);
    assert.match(r.body.status.error, /parameters\.target_recall/);
  }
  assert.equal((await call('GET', '/collections/x')).status, 404);
  const ok = await call('POST', '/collections', { name: 'x', vector_size: 2, distance: 'dot', hnsw: true, parameters: { target_recall: 0.9 } });
  assert.equal(ok.status, 200, ok.raw);
  assert.equal(ok.body.result.parameters.target_recall, 0.9);
  assert.equal(ok.body.result.calibration.state, 'uncalibrated');
  assert.equal(ok.body.result.calibration.target_recall, 0.9);
});

test('an HNSW collection calibrates in the background; info and explain say so, also after a restart', async (t) => {
  const app = await openTestApp(t);
  const rng = new SeededRng(0xca1);
  const dim = 8;
  const centres = Array.from({ length: 8 }, () => Array.from({ length: dim }, () => rng.gaussian() * 2));
  const vector = (): number[] => (rng.pick(centres) as number[]).map((x) => x + rng.gaussian());
  const created = await app.call('POST', '/collections', {
    name: 'c',
    vector_size: dim,
    distance: 'euclid',
    hnsw: true,
    parameters: { m: 4, ef_construction: 8, target_recall: 0.99 },
  });
  assert.equal(created.status, 200, created.raw);
  const points = Array.from({ length: MIN_POINTS }, (_, id) => ({ id, vector: vector() }));
  assert.equal((await app.call('PUT', '/collections/c/points', { points })).status, 200);

  const deadline = Date.now() + 10_000;
  let info = (await app.call('GET', '/collections/c')).body.result;
  while (info.calibration.state !== 'calibrated' || info.calibration.running) {
    assert.ok(Date.now() < deadline, JSON.stringify(info.calibration));
    await new Promise((resolve) => setTimeout(resolve, 20));
    info = (await app.call('GET', '/collections/c')).body.result;
  }
  const c = info.calibration;
  assert.equal(c.points_when_calibrated, MIN_POINTS);
  assert.equal(c.sample, 300);
  assert.equal(c.reached, true);
  assert.ok(c.ef > 64 && c.recall_lower_bound >= 0.99 && c.recall >= c.recall_lower_bound, JSON.stringify(c));
  assert.ok(Number.isInteger(c.duration_ms) && c.duration_ms >= 0);

  const q = vector();
  const search = await app.call('POST', '/collections/c/points/search', { vector: q, params: { explain: true } });
  assert.equal(search.status, 200, search.raw);
  assert.equal(search.body.explain.ef, c.ef);
  assert.equal(search.body.explain.ef_source, 'calibrated');
  const asked = await app.call('POST', '/collections/c/points/search', { vector: q, limit: 3, params: { explain: true, ef: 5 } });
  assert.deepEqual([asked.body.explain.ef, asked.body.explain.ef_source], [5, 'request']);

  const reopened = await app.reopen();
  const again = await reopened.call('POST', '/collections/c/points/search', { vector: q, params: { explain: true } });
  assert.deepEqual([again.body.explain.ef, again.body.explain.ef_source], [c.ef, 'calibrated']);
  assert.deepEqual((await reopened.call('GET', '/collections/c')).body.result.calibration, c);

  const spec = (await reopened.call('GET', '/openapi.json')).body;
  const text = JSON.stringify(spec);
  for (const word of ['target_recall', 'recall_lower_bound', 'points_when_calibrated', 'ef_source']) assert.ok(text.includes(word), word);
});
