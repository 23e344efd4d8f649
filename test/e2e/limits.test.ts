/**
 * Request limits over HTTP (docs/params.md, "Request limits"): at each bound a request is
 * accepted, just beyond it is a 400 naming the field, and a refused request changes nothing.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { openTestApp, type TestApp } from '../helpers/app.js';

async function collection(t: TestContext, vectorSize = 2): Promise<TestApp> {
  const app = await openTestApp(t);
  assert.equal((await app.call('POST', '/collections', { name: 'c', vector_size: vectorSize, distance: 'dot' })).status, 200);
  const points = Array.from({ length: 20 }, (_, i) => ({ id: i, vector: new Array(vectorSize).fill(i), payload: { s: `v${i}`, n: i } }));
  assert.equal((await app.call('PUT', '/collections/c/points', { points })).status, 200);
  return app;
}

function assertBadInput(r: { status: number; body: { status: { error: string } }; raw: string }, message: RegExp): void {
  assert.equal(r.status, 400, r.raw.slice(0, 300));
  assert.match(r.body.status.error, message);
}

test("the issue's 21 KB regex request is a 400 naming the field, answered well within a second", async (t) => {
  const { call } = await openTestApp(t);
  const filter = { must: Array.from({ length: 20 }, () => ({ key: 'k', type: 'regex', match: { value: 'a{1000}'.repeat(146) } })) };
  const body = { vector: [0, 0], filter };
  assert.ok(JSON.stringify(body).length > 21000);
  const started = performance.now();
  const r = await call('POST', '/collections/nope/points/search', body);
  assertBadInput(r, /^filter\.must\[0\]\.match\.value: the pattern expands to about \d+ instructions .*the limit is 1000$/);
  // It took 8–11 s before the bound (measured numbers: docs/params.md). A generous bound, not a benchmark.
  assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
  const del = await call('POST', '/collections/nope/points/delete', { filter });
  assertBadInput(del, /^filter\.must\[0\]\.match\.value: /);
});

test('filter bounds over HTTP: conditions, list values, compiled regex size', async (t) => {
  const { call } = await collection(t);
  const search = (filter: unknown) => call('POST', '/collections/c/points/search', { vector: [1, 1], limit: 100, filter });
  const cond = { key: 'n', range: { gte: 0 } };
  const ok = await search({ must: Array.from({ length: 256 }, () => cond) });
  assert.equal(ok.status, 200, ok.raw);
  assert.equal(ok.body.result.length, 20);
  assertBadInput(await search({ must: Array.from({ length: 257 }, () => cond) }), /^filter\.must: .*256/);
  const values = Array.from({ length: 1024 }, (_, i) => `v${i}`);
  const any = await search({ must: [{ key: 's', match: { any: values } }] });
  assert.equal(any.body.result.length, 20);
  assertBadInput(await search({ must: [{ key: 's', match: { any: [...values, 'x'] } }] }), /^filter\.must\[0\]\.match\.any: 1025 values; the limit is 1024/);
  const regex = (value: string) => ({ must: [{ key: 's', type: 'regex', match: { value } }] });
  assert.equal((await search(regex(`v${'\\d?'.repeat(100)}`))).status, 200);
  assertBadInput(await search(regex('(\\pL|\\pN){400}')), /^filter\.must\[0\]\.match\.value: the compiled pattern has \d+ instructions; the limit is 1000/);
  assertBadInput(await search(regex('x{1001}')), /^filter\.must\[0\]\.match\.value: the repetition count 1001/);
});

test('with_payload lists at most 1000 keys of at most 1024 characters', async (t) => {
  const { call } = await collection(t);
  const keys = Array.from({ length: 1000 }, (_, i) => (i === 0 ? 's' : `k${i}`));
  const ok = await call('POST', '/collections/c/points/search', { vector: [1, 1], with_payload: keys });
  assert.equal(ok.status, 200, ok.raw);
  assert.deepEqual(Object.keys(ok.body.result[0].payload), ['s']);
  assertBadInput(await call('POST', '/collections/c/points/search', { vector: [1, 1], with_payload: [...keys, 'n'] }), /^with_payload: .*1000/);
  assertBadInput(await call('POST', '/collections/c/points/search', { vector: [1, 1], with_payload: ['k'.repeat(1025)] }), /^with_payload\[0\]: .*1024/);
});

test('with with_vector, limit × vector_size is at most 524288', async (t) => {
  const { call } = await collection(t, 512);
  const query = new Array(512).fill(1);
  const ok = await call('POST', '/collections/c/points/search', { vector: query, limit: 1024, with_vector: true });
  assert.equal(ok.status, 200, ok.raw.slice(0, 300));
  assert.equal(ok.body.result.length, 20);
  const over = await call('POST', '/collections/c/points/search', { vector: query, limit: 1025, with_vector: true });
  assert.equal(over.status, 400, over.raw);
  assert.equal(over.body.status.code, 'ERR_OVER_LIMIT');
  assert.match(
    over.body.status.error,
    /^with_vector: the request asks for 524,800 returned vector components \(returned points × vector_size\); the limit is 524,288/,
  );
  // Without vectors the same limit is fine.
  assert.equal((await call('POST', '/collections/c/points/search', { vector: query, limit: 1025 })).status, 200);
});

test("one cost model for a request: the issue's 4,096 × limit 10,000 batch is refused before any search runs, naming the search that crossed the bound", async (t) => {
  const { call } = await collection(t, 2);
  const searches = Array.from({ length: 4096 }, () => ({ vector: [1, 1], limit: 10000 }));
  const r = await call('POST', '/collections/c/points/search/batch', { searches });
  assert.equal(r.status, 400, r.raw.slice(0, 300));
  assert.equal(r.body.status.code, 'ERR_OVER_LIMIT');
  assert.match(
    r.body.status.error,
    /^searches\[13\]\.limit: the request asks for 140,000 hits \(offset \+ limit, over all its searches\); the limit is 131,072/,
  );
  // Payload paths × hits, filter terms: each per request, summed over the batch.
  const paths = Array.from({ length: 1000 }, (_, i) => `k${i}`);
  const pathChecks = await call('POST', '/collections/c/points/search/batch', {
    searches: [
      { vector: [1, 1], limit: 1000, with_payload: paths },
      { vector: [1, 1], limit: 49, with_payload: paths },
    ],
  });
  assert.equal(pathChecks.status, 400, pathChecks.raw.slice(0, 300));
  assert.match(pathChecks.body.status.error, /^searches\[1\]\.with_payload: the request asks for 1,049,000 payload path checks/);
  const filter = { must: Array.from({ length: 256 }, () => ({ key: 's', match: { value: 'x' } })) };
  const terms = await call('POST', '/collections/c/points/search/batch', { searches: Array.from({ length: 65 }, () => ({ vector: [1, 1], filter })) });
  assert.equal(terms.status, 400, terms.raw.slice(0, 300));
  assert.match(terms.body.status.error, /^searches\[64\]\.filter: the request asks for 16,640 filter terms/);
  // Within the bounds, the same shapes are answered.
  const fine = await call('POST', '/collections/c/points/search/batch', { searches: Array.from({ length: 64 }, () => ({ vector: [1, 1], filter })) });
  assert.equal(fine.status, 200, fine.raw.slice(0, 300));
});
