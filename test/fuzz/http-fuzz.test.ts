/**
 * Hostile-input fuzz over HTTP: seeded valid requests for every endpoint, mutated (see
 * http-requests.ts), sent to a real app over a real database file. After every request:
 * - no 5xx;
 * - every error is the envelope `{"status":{"error":"…"},"time":…}` as application/json with a
 *   non-empty message, and never an echo of a huge request (the body stays under 4 KB);
 * - a refused (4xx) request changed nothing: a digest of the database (collections with their
 *   points_count, and every point of each, vectors and payloads included) is the same;
 * - the service still answers GET /healthz, quickly.
 * KITH_FUZZ_RUNS sets the number of requests (`npm run fuzz -- http` runs 50,000); the fixed seed
 * (KITH_SEED replays one) runs first, then a random one, printed in the test name.
 */
import assert from 'node:assert/strict';
import { assertKithErrorBody } from '../helpers/error-envelope.js';
import { rawHttp } from '../helpers/raw-http.js';
import { type TestContext, test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { openTestApp, type TestApp } from '../helpers/app.js';
import { testSeed } from '../helpers/data.js';
import { startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { type FuzzRequest, fuzzRequest, type KnownCollection } from './http-requests.js';

const RUNS = Number(process.env.KITH_FUZZ_RUNS ?? 2400);
const FIXED_SEED = testSeed(20240801);
const RANDOM_SEED = Math.floor(Math.random() * 2 ** 31);

interface Answer {
  status: number;
  contentType: string;
  raw: string;
}

type Send = (request: FuzzRequest) => Promise<Answer>;

function describe(request: FuzzRequest, seed: number, i: number): string {
  const body =
    request.body === undefined ? '' : Buffer.isBuffer(request.body) ? `<bytes ${request.body.toString('hex').slice(0, 200)}>` : request.body.slice(0, 300);
  return `[seed ${seed}, request ${i}] ${request.method} ${request.url.slice(0, 200)} (${request.contentType ?? 'no type'}) ${body}`;
}

/** The checks every answer must pass, whatever the request. */
function checkAnswer(request: FuzzRequest, answer: Answer, what: string): void {
  assert.ok(answer.status < 500, `${what}\n→ ${answer.status} ${answer.raw.slice(0, 500)}`);
  if (request.method === 'HEAD') return;
  assert.match(answer.contentType, /^application\/json/, `${what}\n→ content-type ${answer.contentType}: ${answer.raw.slice(0, 300)}`);
  const body = JSON.parse(answer.raw) as { status: unknown; time: unknown; result?: unknown };
  if (answer.status >= 400) {
    assertKithErrorBody(body, answer.status, `${what}\n→ ${answer.raw.slice(0, 300)}`);
    assert.ok(answer.raw.length < 4096, `${what}\n→ an error body of ${answer.raw.length} characters`);
  } else {
    assert.equal(body.status, 'ok', what);
  }
}

/** Collections with their sizes, and every point of each (exact search, by id), without times. */
async function digest(send: Send): Promise<{ text: string; known: KnownCollection[] }> {
  const list = await send({ method: 'GET', url: '/collections' });
  assert.equal(list.status, 200, list.raw);
  const collections = (JSON.parse(list.raw) as { result: Array<{ name: string; vector_size: number; points_count: number }> }).result;
  const parts = [JSON.stringify(collections)];
  for (const c of collections) {
    const all = await send({
      method: 'POST',
      url: `/collections/${c.name}/points/search`,
      contentType: 'application/json',
      body: JSON.stringify({ vector: new Array(c.vector_size).fill(0.5), limit: 1000, with_vector: true, params: { exact: true } }),
    });
    assert.equal(all.status, 200, `digest search of ${c.name}: ${all.raw.slice(0, 300)}`);
    parts.push(all.raw.replace(/"time":[^,}]*/, ''));
  }
  return { text: parts.join('\n'), known: collections.map((c) => ({ name: c.name, dim: c.vector_size })) };
}

async function seedCollections(send: Send): Promise<void> {
  const rng = new SeededRng(7);
  const configs = [
    { name: 'fz_flat', vector_size: 4, distance: 'cosine' },
    { name: 'fz_hnsw', vector_size: 3, distance: 'euclid', hnsw: true, parameters: { m: 4, ef_construction: 16 } },
    { name: 'fz_sq8', vector_size: 5, distance: 'dot', quantization: 'sq8', hnsw: true },
  ];
  for (const config of configs) {
    const created = await send({ method: 'POST', url: '/collections', contentType: 'application/json', body: JSON.stringify(config) });
    assert.equal(created.status, 200, created.raw);
    const points = Array.from({ length: 40 }, (_, i) => ({
      id: i % 2 === 0 ? i : `p${i}`,
      vector: Array.from({ length: config.vector_size }, () => rng.next() * 2 - 1),
      payload: {
        cat: ['red', 'green', 'blue'][i % 3],
        n: i,
        tags: ['red', String(i % 4)],
        title: `doc ${i}`,
        nested: { a: i % 5 },
        when: `2024-0${1 + (i % 9)}-10T00:00:00Z`,
      },
    }));
    const upserted = await send({
      method: 'PUT',
      url: `/collections/${config.name}/points`,
      contentType: 'application/json',
      body: JSON.stringify({ points }),
    });
    assert.equal(upserted.status, 200, upserted.raw);
  }
}

/** Sends `runs` requests from `seed`, checking each; returns how many got each status. */
async function fuzz(send: Send, seed: number, runs: number): Promise<Map<number, number>> {
  const rng = new SeededRng(seed);
  const statuses = new Map<number, number>();
  let state = await digest(send);
  for (let i = 0; i < runs; i++) {
    const request = fuzzRequest(rng, state.known);
    const what = describe(request, seed, i);
    const answer = await send(request);
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    checkAnswer(request, answer, what);
    if (answer.status >= 400) {
      const after = await digest(send);
      assert.equal(after.text, state.text, `${what}\n→ ${answer.status} ${answer.raw.slice(0, 300)}\nchanged the database`);
    } else {
      state = await digest(send);
    }
    const started = performance.now();
    const health = await send({ method: 'GET', url: '/healthz' });
    assert.equal(health.status, 200, `${what}\n→ healthz ${health.status} afterwards`);
    assert.ok(performance.now() - started < 2000, `${what}\n→ healthz took ${performance.now() - started} ms afterwards`);
  }
  return statuses;
}

function injectSender(app: TestApp): Send {
  return async (request) => {
    const response = await app.app.inject({
      method: request.method as 'GET',
      url: request.url,
      ...(request.body === undefined ? {} : { payload: request.body }),
      headers: request.contentType === undefined || request.body === undefined ? {} : { 'content-type': request.contentType },
    });
    return { status: response.statusCode, contentType: String(response.headers['content-type'] ?? ''), raw: response.body };
  };
}

function summary(statuses: Map<number, number>): string {
  return [...statuses.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
}

async function runInProcess(t: TestContext, seed: number, runs: number): Promise<void> {
  const app = await openTestApp(t);
  const send = injectSender(app);
  await seedCollections(send);
  const statuses = await fuzz(send, seed, runs);
  t.diagnostic(`seed ${seed}: ${runs} requests, statuses ${summary(statuses)}`);
  // The mix exercised the endpoints: successes and refusals both.
  assert.ok((statuses.get(200) ?? 0) > runs / 20, summary(statuses));
  assert.ok((statuses.get(400) ?? 0) > runs / 5, summary(statuses));
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
}

test(`http fuzz over inject(), fixed seed ${FIXED_SEED}`, async (t) => {
  await runInProcess(t, FIXED_SEED, Math.ceil(RUNS / 2));
});

test(`http fuzz over inject(), random seed ${RANDOM_SEED} (replay: KITH_SEED=${RANDOM_SEED})`, async (t) => {
  await runInProcess(t, RANDOM_SEED, Math.floor(RUNS / 2));
});

test(`http fuzz smoke over a real server process, seed ${FIXED_SEED + 1}`, async (t) => {
  const server = await startServer(tempDbPath(t));
  t.after(() => server.stop());
  const send: Send = async (request) => {
    const response = await fetch(server.url + request.url, {
      method: request.method,
      headers: request.contentType === undefined || request.body === undefined ? {} : { 'content-type': request.contentType },
      body: request.body === undefined || request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body,
    });
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', raw: await response.text() };
  };
  await seedCollections(send);
  const statuses = await fuzz(send, FIXED_SEED + 1, Math.max(200, Math.min(2000, Math.floor(RUNS / 10))));
  t.diagnostic(`real server: statuses ${summary(statuses)}`);

  // What Node's HTTP parser refuses never reaches a route; it still gets the envelope.
  const malformed = await rawHttp(server.url, 'GARBAGE / HTTP/1.1\r\n\r\n');
  assert.match(malformed, /^HTTP\/1\.1 400 /);
  assert.match(malformed, /content-type: application\/json/i);
  assert.match(malformed, /\{"status":\{"error":"request: not valid HTTP","code":"ERR_BAD_REQUEST"\},"time":0\}$/);
  const hugeHeaders = await rawHttp(server.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20000)}\r\n\r\n`);
  assert.match(hugeHeaders, /^HTTP\/1\.1 431 /);
  assert.match(hugeHeaders, /"error":"headers: larger than the limit of the HTTP parser"/);
  const longUrl = await rawHttp(server.url, `GET /collections/${'u'.repeat(10000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  assert.match(longUrl, /^HTTP\/1\.1 414 /);
  assert.ok(longUrl.length < 2000, `the 414 answer echoes the URL: ${longUrl.length} characters`);
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(server.process.exitCode, null);
});
