/**
 * The largest legal writes, on both ports, never hold the service: while each request runs, this
 * process polls GET /healthz and every answer must come within 250 ms; afterwards the write must
 * be all there. The body limit is lowered to 24 MiB (-max-body-mb) to keep the test quick; each
 * body is just under it. Before writes were parsed and applied in slices, the 24 MiB upsert held
 * the service thread about half a second even on a quiet machine, the 200,000-point deletes and
 * payload rewrites for seconds (docs/architecture.md, "The write path").
 *
 * A busy machine delays /healthz by itself (on the shared 2-core test machines, by up to ~300 ms
 * even for an idle service), so a second service, idle, started the same way, is polled at the
 * same moments as a control: the bound is 250 ms plus the longest wait the control saw then.
 * Before the fix the writes held the service for seconds while the control answered at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { httpJson, qdrantUrlOf, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const MAX_BODY_MB = 24;
const LIMIT_BYTES = MAX_BODY_MB * 1048576;
const HEALTH_MS = 250;
/** Points of the "large collection" the deletes and payload updates work on. */
const LARGE = 200_000;

/** Polls GET /healthz every 10 ms until `stop` resolves; resolves with the longest wait. */
async function longestHealthWait(base: string, stop: Promise<unknown>): Promise<number> {
  let done = false;
  void stop.finally(() => {
    done = true;
  });
  let longestMs = 0;
  while (!done) {
    const started = performance.now();
    const response = await fetch(`${base}/healthz`);
    await response.arrayBuffer();
    longestMs = Math.max(longestMs, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return longestMs;
}

/** The longest /healthz wait of `busy` and of `control` while `run` runs, and its result. */
async function whilePolling<T>(busy: string, control: string, run: () => Promise<T>): Promise<{ busyMs: number; controlMs: number; result: T }> {
  const running = run();
  const [busyMs, controlMs] = await Promise.all([longestHealthWait(busy, running), longestHealthWait(control, running)]);
  return { busyMs, controlMs, result: await running };
}

/** A JSON body built by appending items to `head` … `tail` while it stays under the limit. */
function bodyUnderLimit(head: string, tail: string, item: (i: number) => string): { body: Buffer; count: number } {
  const parts: string[] = [];
  let bytes = Buffer.byteLength(head) + Buffer.byteLength(tail);
  for (let i = 0; ; i++) {
    const text = item(i);
    const more = Buffer.byteLength(text) + 1;
    if (bytes + more > LIMIT_BYTES - 1024) break;
    parts.push(text);
    bytes += more;
  }
  const body = Buffer.from(head + parts.join(',') + tail);
  assert.ok(body.length > LIMIT_BYTES * 0.99 && body.length < LIMIT_BYTES, `a body of ${body.length} bytes`);
  return { body, count: parts.length };
}

async function send(base: string, method: string, path: string, body: Buffer | string): Promise<{ status: number; raw: string }> {
  const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, raw: await response.text() };
}

test(`the largest writes on both ports (${MAX_BODY_MB} MiB bodies) keep /healthz answering within ${HEALTH_MS} ms`, async (t) => {
  const seed = testSeed(190_024);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const server = await startServer(tempDbPath(t), ['-qdrant-port', '0', '-max-body-mb', String(MAX_BODY_MB), '-threads', '2']);
  t.after(() => server.stop());
  const control = await startServer(tempDbPath(t), ['-qdrant-port', '0', '-max-body-mb', String(MAX_BODY_MB), '-threads', '2']);
  t.after(() => control.stop());
  const kith = server.url;
  const qdrant = await qdrantUrlOf(server);

  /** Runs one write under polling; asserts a 200 and the bound. */
  const write = async (label: string, base: string, method: string, path: string, body: Buffer | string): Promise<string> => {
    const { busyMs, controlMs, result } = await whilePolling(kith, control.url, () => send(base, method, path, body));
    t.diagnostic(`${label}: ${result.status}; longest /healthz wait ${busyMs.toFixed(0)} ms (the idle control's: ${controlMs.toFixed(0)} ms)`);
    assert.equal(result.status, 200, `${label}: ${result.raw.slice(0, 300)}`);
    const bound = HEALTH_MS + controlMs;
    assert.ok(
      busyMs < bound,
      `seed ${seed}: ${label}: /healthz waited ${busyMs.toFixed(0)} ms (bound ${bound.toFixed(0)} ms: ${HEALTH_MS} + the control's ${controlMs.toFixed(0)})`,
    );
    return result.raw;
  };
  const count = async (name: string): Promise<number> => (await httpJson(kith, 'GET', `/collections/${name}`)).body.result.points_count;
  const number = (): string => (rng.next() * 2 - 1).toFixed(6);

  /** 128-d points with small payloads, just under the limit; their vectors by id. */
  const upsertBody = (): { body: Buffer; count: number; vectors: string[] } => {
    const vectors: string[] = [];
    const { body, count: n } = bodyUnderLimit('{"points":[', ']}', (i) => {
      const vector = `[${Array.from({ length: 128 }, number).join(',')}]`;
      vectors.push(vector);
      return `{"id":${i},"vector":${vector},"payload":{"k":${i % 10},"s":"x${i}"}}`;
    });
    return { body, count: n, vectors };
  };
  /** Checks points by GET on the kith port, and that a search at a point's vector finds it. */
  const checkPoints = async (name: string, n: number, vectors: readonly string[]): Promise<void> => {
    assert.equal(await count(name), n);
    for (const i of [0, n >> 1, n - 1]) {
      const point = await httpJson(kith, 'GET', `/collections/${name}/points/${i}`);
      assert.deepEqual(point.body.result.vector, (JSON.parse(vectors[i] as string) as number[]).map(Math.fround), `${name}: point ${i}`);
      assert.deepEqual(point.body.result.payload, { k: i % 10, s: `x${i}` });
      const hits = await httpJson(kith, 'POST', `/collections/${name}/points/search`, { vector: point.body.result.vector, limit: 1, params: { exact: true } });
      assert.equal(hits.body.result[0].id, String(i), `${name}: search at point ${i}`);
    }
  };
  // Graph collections link cheaply (m 4, ef_construction 8): linking is applied in steps already.
  const graph = { m: 4, ef_construction: 8 };

  await t.test('kith port: a Flat upsert of 128-d points', async () => {
    await httpJson(kith, 'POST', '/collections', { name: 'flat', vector_size: 128, distance: 'euclid' });
    const { body, count: n, vectors } = upsertBody();
    await write(`upsert of ${n} points`, kith, 'PUT', '/collections/flat/points', body);
    await checkPoints('flat', n, vectors);
  });

  await t.test('kith port: an HNSW upsert of 128-d points', async () => {
    await httpJson(kith, 'POST', '/collections', { name: 'graph', vector_size: 128, distance: 'euclid', hnsw: true, parameters: graph });
    const { body, count: n, vectors } = upsertBody();
    await write(`upsert of ${n} points`, kith, 'PUT', '/collections/graph/points', body);
    await checkPoints('graph', n, vectors);
  });

  await t.test('Qdrant port: an upsert (HNSW) of 128-d points', async () => {
    const created = await httpJson(qdrant, 'PUT', '/collections/q', {
      vectors: { size: 128, distance: 'Euclid' },
      hnsw_config: { m: graph.m, ef_construct: graph.ef_construction },
    });
    assert.equal(created.status, 200, created.raw);
    const { body, count: n, vectors } = upsertBody();
    await write(`upsert of ${n} points`, qdrant, 'PUT', '/collections/q/points?wait=true', body);
    await checkPoints('q', n, vectors);
  });

  // A large collection, then the writes that select or name many of its points.
  const qcount = async (filter: unknown): Promise<number> =>
    (await httpJson(qdrant, 'POST', '/collections/large/points/count', { filter, exact: true })).body.result.count;

  await t.test(`kith port: an upsert of ${LARGE} small points`, async () => {
    await httpJson(kith, 'POST', '/collections', { name: 'large', vector_size: 4, distance: 'cosine' });
    const points = Array.from({ length: LARGE }, (_, i) => `{"id":${i},"vector":[${Array.from({ length: 4 }, number).join(',')}],"payload":{"k":${i % 10}}}`);
    await write(`upsert of ${LARGE} points`, kith, 'PUT', '/collections/large/points', Buffer.from(`{"points":[${points.join(',')}]}`));
    assert.equal(await count('large'), LARGE);
  });

  await t.test('kith port: a delete by filter', async () => {
    await write(
      'delete by filter (k = 3)',
      kith,
      'POST',
      '/collections/large/points/delete',
      JSON.stringify({ filter: { must: [{ key: 'k', match: { value: 3 } }] } }),
    );
    assert.equal(await count('large'), LARGE * 0.9);
    assert.equal((await httpJson(kith, 'GET', '/collections/large/points/3')).status, 404);
  });

  await t.test('Qdrant port: a payload update by filter', async () => {
    const filter = { must: [{ key: 'k', match: { any: [0, 1, 2, 4, 5] } }] };
    await write(
      'set payload by filter (half the points)',
      qdrant,
      'POST',
      '/collections/large/points/payload?wait=true',
      JSON.stringify({ payload: { z: 1 }, filter }),
    );
    assert.equal(await qcount({ must: [{ key: 'z', match: { value: 1 } }] }), LARGE / 2);
  });

  await t.test('Qdrant port: every payload overwritten', async () => {
    await write('overwrite every payload', qdrant, 'PUT', '/collections/large/points/payload?wait=true', JSON.stringify({ payload: { z: 2 }, filter: {} }));
    assert.equal(await qcount({ must: [{ key: 'z', match: { value: 2 } }] }), LARGE * 0.9);
    assert.deepEqual((await httpJson(kith, 'GET', '/collections/large/points/5')).body.result.payload, { z: 2 });
  });

  const ids = bodyUnderLimit('{"points":[', ']}', (i) => String(i));
  await t.test(`kith port: a delete of ${ids.count} ids`, async () => {
    await write(`delete of ${ids.count} ids`, kith, 'POST', '/collections/large/points/delete', ids.body);
    assert.equal(await count('large'), 0);
  });

  await t.test(`Qdrant port: a delete of ${ids.count} ids`, async () => {
    await write(`delete of ${ids.count} ids`, qdrant, 'POST', '/collections/flat/points/delete?wait=true', ids.body);
    assert.equal(await count('flat'), 0);
  });
});
