/**
 * Writes to one collection are applied in arrival order, and a search sees a batch either wholly
 * or not at all (over a real socket, with writers and readers interleaved).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openTestApp } from '../helpers/app.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

test('writes issued back to back are applied in arrival order', async (t) => {
  const { call } = await openTestApp(t);
  await call('POST', '/collections', { name: 'o', vector_size: 2, distance: 'dot' });
  const writes: Array<Promise<unknown>> = [];
  for (let i = 0; i < 60; i++) {
    if (i % 3 === 2) writes.push(call('POST', '/collections/o/points/delete', { filter: { must: [{ key: 'n', range: { lt: i } }] } }));
    else writes.push(call('PUT', '/collections/o/points', { points: [{ id: 'x', vector: [i, 1], payload: { n: i } }] }));
  }
  const results = (await Promise.all(writes)) as Array<{ status: number; body: { result: { deleted?: number } } }>;
  assert.ok(results.every((r) => r.status === 200));
  // Each delete removes exactly the one point written just before it.
  assert.deepEqual(
    results.filter((_, i) => i % 3 === 2).map((r) => r.body.result.deleted),
    Array(20).fill(1),
  );
  const point = await call('GET', '/collections/o/points/x');
  assert.equal(point.status, 404);
});

test('a search sees each batch wholly or not at all', async (t) => {
  const server = await startServer(tempDbPath(t));
  t.after(() => server.stop('SIGKILL'));
  const { url } = server;
  await httpJson(url, 'POST', '/collections', { name: 'b', vector_size: 4, distance: 'euclid' });
  const BATCH = 400;
  let writing = true;
  const writer = (async () => {
    for (let b = 0; b < 25; b++) {
      const points = Array.from({ length: BATCH }, (_, i) => ({ id: `${b}-${i}`, vector: [b, i, 1, 0], payload: { batch: b } }));
      const r = await httpJson(url, 'PUT', '/collections/b/points', { points });
      assert.equal(r.status, 200);
    }
    writing = false;
  })();
  const seen: number[] = [];
  while (writing) {
    const b = Math.floor(Math.random() * 25);
    const r = await httpJson(url, 'POST', '/collections/b/points/search', {
      vector: [0, 0, 0, 0],
      limit: 1000,
      with_payload: false,
      filter: { must: [{ key: 'batch', match: { value: b } }] },
    });
    assert.equal(r.status, 200);
    assert.ok(r.body.result.length === 0 || r.body.result.length === BATCH, `batch ${b}: ${r.body.result.length} of ${BATCH}`);
    seen.push(r.body.result.length);
  }
  await writer;
  assert.ok(seen.length > 5, `only ${seen.length} searches ran during the writes`);
  assert.equal((await httpJson(url, 'GET', '/collections/b')).body.result.points_count, 25 * BATCH);
});
