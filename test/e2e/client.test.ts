/**
 * `kith/client` against the real service over a real socket: every method, its errors (status,
 * message, and the code the server's envelope carries, compared with the raw answer) and versions
 * read exactly (compared with the digits of the raw response). An HTTP server that is not kith (a
 * proxy, a newer version) shows what the client makes of answers it does not know.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { KithClient, KithClientError } from '../../src/api/client/kith-client.js';
import { kith } from '../helpers/kith-cli.js';
import { httpJson, type ServerProcess, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

let server: ServerProcess;
let client: KithClient;

// One service for the whole file; each group below is a subtest of this one.
test('kith/client against the real service', async (t) => {
  server = await startServer(tempDbPath(t));
  t.after(() => server.stop());
  client = new KithClient(server.url);
  await t.test('service endpoints', serviceEndpoints);
  await t.test('collections', collections);
  await t.test('points', points);
  await t.test('batch, scroll, count, retrieve, payloads, readiness, metrics', operatorEndpoints);
  await t.test('not kith', notKith);
  await t.test("codes are the envelope's", codesFromEnvelope);
});

/** The version digits as the server wrote them. */
function rawVersions(raw: string): string[] {
  return [...raw.matchAll(/"version":(\d+)/g)].map((m) => m[1] as string);
}

function isClientError(status: number, code: string, message: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof KithClientError, `expected a KithClientError, got ${String(error)}`);
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  };
}

/** info, health, the OpenAPI document */
async function serviceEndpoints(): Promise<void> {
  assert.equal((await client.info()).title, 'kith');
  assert.deepEqual(await client.health(), { healthy: true });
  const doc = await client.openapi();
  assert.match(String(doc.openapi), /^3\.1/);
  assert.ok(Object.keys(doc.paths as object).includes('/collections/{name}/points/search'));
}

/** create, list, get, drop, and their errors */
async function collections(): Promise<void> {
  const created = await client.createCollection({ name: 'c-coll', vector_size: 2, distance: 'dot', hnsw: true });
  assert.equal(created.operation, 'completed');
  assert.equal(created.distance, 'Dot');
  assert.equal(created.points_count, 0);
  assert.ok((await client.listCollections()).some((c) => c.name === 'c-coll' && c.hnsw));
  assert.equal((await client.getCollection('c-coll')).vector_size, 2);

  await assert.rejects(
    client.createCollection({ name: 'c-coll', vector_size: 2, distance: 'dot' }),
    isClientError(409, 'ERR_COLLECTION_EXISTS', /already exists/),
  );
  await assert.rejects(client.createCollection({ name: 'c-x', vector_size: 0, distance: 'dot' }), isClientError(400, 'ERR_BAD_INPUT', /^vector_size: /));
  await assert.rejects(client.getCollection('missing'), isClientError(404, 'ERR_COLLECTION_NOT_FOUND', /"missing" does not exist/));
  await assert.rejects(client.getCollection('bad name!'), isClientError(400, 'ERR_BAD_INPUT', /^name: /));

  assert.deepEqual(await client.dropCollection('c-coll'), { collection: 'c-coll', operation: 'completed' });
  await assert.rejects(client.dropCollection('c-coll'), isClientError(404, 'ERR_COLLECTION_NOT_FOUND', /does not exist/));
  assert.ok(!(await client.listCollections()).some((c) => c.name === 'c-coll'));
}

/** upsert, get, search, delete by ids and by filter, with exact bigint versions */
async function points(): Promise<void> {
  await client.createCollection({ name: 'c-pts', vector_size: 3, distance: 'euclid' });
  assert.deepEqual(
    await client.upsert('c-pts', [
      { id: 7, vector: [0, 0, 0], payload: { lang: 'en', version: 5, note: 'a "version":12 string' } },
      { id: 'b', vector: [1, 0, 0], payload: { lang: 'de' } },
      { id: 'c/d', vector: [2, 0, 0], payload: { lang: 'de' } },
    ]),
    { operation: 'completed', upserted: 3 },
  );

  // The same point by integer and by string id; the version is the server's exact integer.
  const point = await client.getPoint('c-pts', 7);
  assert.deepEqual(await client.getPoint('c-pts', '7'), point);
  assert.equal(point.id, '7');
  assert.deepEqual(point.vector, [0, 0, 0]);
  assert.equal(typeof point.version, 'bigint');
  const raw = await httpJson(server.url, 'GET', '/collections/c-pts/points/7');
  // The record's own version, then its payload's "version" key.
  assert.deepEqual(rawVersions(raw.raw), [String(point.version), '5']);
  assert.ok(point.version > BigInt(Number.MAX_SAFE_INTEGER), 'nanosecond versions exceed 2^53');
  // A payload's own "version" key stays a JSON number, and a string that reads like one is untouched.
  assert.deepEqual(point.payload, { lang: 'en', version: 5, note: 'a "version":12 string' });
  assert.equal((await client.getPoint('c-pts', 'c/d')).id, 'c/d');

  const hits = await client.search('c-pts', { vector: [0.9, 0, 0], limit: 3 });
  assert.deepEqual(
    hits.map((h) => h.id),
    ['b', '7', 'c/d'],
  );
  assert.ok(
    hits.every((h) => typeof h.version === 'bigint' && h.version === point.version),
    'one batch, one version',
  );
  const rawHits = await httpJson(server.url, 'POST', '/collections/c-pts/points/search', { vector: [0.9, 0, 0], limit: 3 });
  // Hits b, 7, c/d: point 7's payload key "version":5 follows its own version in the text.
  assert.deepEqual(rawVersions(rawHits.raw), [String(hits[0]?.version), String(hits[1]?.version), '5', String(hits[2]?.version)]);

  const filtered = await client.search('c-pts', {
    vector: [0, 0, 0],
    filter: { must: [{ key: 'lang', match: { value: 'de' } }] },
    with_payload: false,
    with_vector: true,
  });
  assert.deepEqual(
    filtered.map((h) => [h.id, h.payload, h.vector]),
    [
      ['b', undefined, [1, 0, 0]],
      ['c/d', undefined, [2, 0, 0]],
    ],
  );
  const explained = await client.searchExplained('c-pts', { vector: [0, 0, 0], limit: 1, params: { explain: true } });
  assert.equal(explained.points[0]?.id, '7');
  assert.equal(explained.explain?.strategy, 'flat-scan');
  assert.equal(explained.explain?.exact, true);

  await assert.rejects(
    client.upsert('c-pts', [{ id: 1, vector: [1, 2] }]),
    isClientError(400, 'ERR_BAD_INPUT', /^points\[0\]\.vector: expected 3 numbers, got 2/),
  );
  await assert.rejects(client.search('c-pts', { vector: [1] }), isClientError(400, 'ERR_BAD_INPUT', /^vector: expected 3 numbers/));
  await assert.rejects(
    client.search('c-pts', { vector: [0, 0, 0], filter: { must: [{ key: 'lang', match: {} }] } }),
    isClientError(400, 'ERR_BAD_INPUT', /^filter\.must\[0\]\.match/),
  );
  await assert.rejects(client.upsert('nope', [{ id: 1, vector: [1, 2, 3] }]), isClientError(404, 'ERR_COLLECTION_NOT_FOUND', /"nope"/));
  await assert.rejects(client.getPoint('c-pts', 'zz'), isClientError(404, 'ERR_POINT_NOT_FOUND', /^point "zz" does not exist/));
  assert.equal((await client.getCollection('c-pts')).points_count, 3, 'refused requests changed nothing');

  assert.deepEqual(await client.deletePoints('c-pts', [7, 'zz']), { operation: 'completed', deleted: 1 });
  assert.deepEqual(await client.deleteByFilter('c-pts', { must: [{ key: 'lang', match: { value: 'de' } }] }), { operation: 'completed', deleted: 2 });
  assert.deepEqual(await client.search('c-pts', { vector: [0, 0, 0] }), []);
  await assert.rejects(client.deleteByFilter('c-pts', { must: 3 } as never), isClientError(400, 'ERR_BAD_INPUT', /^filter\.must: /));
}

/** The operator endpoints: every version exact, every page and count as the raw answer gives it. */
async function operatorEndpoints(): Promise<void> {
  await client.createCollection({ name: 'c-ops', vector_size: 2, distance: 'dot' });
  await client.upsert('c-ops', [
    { id: 3, vector: [1, 0], payload: { g: 'a', version: 1 } },
    { id: 'x\u0000y', vector: [0, 1], payload: { g: 'b', nested: { k: [1, 2] } } },
    { id: 20, vector: [1, 1], payload: { g: 'a' } },
  ]);
  const version = (await client.getPoint('c-ops', 3)).version;

  const batch = await client.searchBatch('c-ops', [
    { vector: [1, 0], limit: 2 },
    { vector: [0, 1], limit: 1, filter: { must: [{ key: 'g', match: { value: 'b' } }] } },
  ]);
  assert.deepEqual(
    batch.map((hits) => hits.map((h) => h.id)),
    [['20', '3'], ['x\u0000y']],
  );
  assert.ok(
    batch.flat().every((h) => h.version === version),
    'versions read exactly in a batch',
  );
  const explained = await client.searchBatchExplained('c-ops', [
    { vector: [1, 0], limit: 1 },
    { vector: [1, 0], limit: 1, params: { explain: true } },
  ]);
  assert.deepEqual([explained.explain?.[0], explained.explain?.[1]?.strategy], [null, 'flat-scan']);

  // Pages in id order; the versions as the raw answer's digits.
  const first = await client.scroll('c-ops', { limit: 2, with_payload: ['g'] });
  assert.deepEqual(
    first.points.map((p) => [p.id, p.payload]),
    [
      ['3', { g: 'a' }],
      ['20', { g: 'a' }],
    ],
  );
  assert.equal(first.next_cursor, 'x\u0000y');
  const raw = await httpJson(server.url, 'POST', '/collections/c-ops/points/scroll', { limit: 2, with_payload: ['g'] });
  assert.deepEqual(
    rawVersions(raw.raw),
    first.points.map((p) => String(p.version)),
  );
  assert.ok(first.points.every((p) => p.version === version));
  const pages: string[][] = [];
  for await (const page of client.scrollAll('c-ops', { limit: 1, filter: { must: [{ key: 'g', match: { value: 'a' } }] } })) pages.push(page.map((p) => p.id));
  assert.deepEqual(pages, [['3'], ['20']]);
  assert.equal(await client.count('c-ops'), 3);
  assert.equal(await client.count('c-ops', { must: [{ key: 'g', match: { value: 'a' } }] }), 2);
  const records = await client.retrieve('c-ops', { ids: ['x\u0000y', 404, '3'], with_vector: true });
  assert.deepEqual(
    records.map((r) => [r.id, r.vector, r.version === version]),
    [
      ['x\u0000y', [0, 1], true],
      ['3', [1, 0], true],
    ],
  );
  // A payload's own "version" key stays a number.
  assert.equal((records[1]?.payload as { version?: unknown } | undefined)?.version, 1);

  assert.deepEqual(await client.setPayload('c-ops', { payload: { z: true }, key: 'nested', points: ['x\u0000y'] }), { operation: 'completed', updated: 1 });
  assert.deepEqual(await client.deletePayloadKeys('c-ops', { keys: ['nested.k'], filter: { must: [{ key: 'g', match: { value: 'b' } }] } }), {
    operation: 'completed',
    updated: 1,
  });
  assert.deepEqual(await client.overwritePayload('c-ops', { payload: { only: 1 }, points: [3] }), { operation: 'completed', updated: 1 });
  assert.deepEqual(await client.clearPayload('c-ops', { points: [20] }), { operation: 'completed', updated: 1 });
  const after = await client.retrieve('c-ops', { ids: [3, 20, 'x\u0000y'] });
  assert.deepEqual(
    after.map((r) => r.payload),
    [{ only: 1 }, {}, { g: 'b', nested: { z: true } }],
  );
  assert.ok(
    after.every((r) => r.version > version),
    'each change gave a newer version',
  );
  await assert.rejects(client.setPayload('c-ops', { payload: { q: 1 }, points: [3, 'missing'] }), isClientError(404, 'ERR_POINT_NOT_FOUND', /"missing"/));
  await assert.rejects(client.scroll('c-ops', { limit: 0 }), isClientError(400, 'ERR_BAD_INPUT', /limit/));
  await assert.rejects(client.retrieve('c-ops', { ids: new Array(100_001).fill(1) }), isClientError(400, 'ERR_OVER_LIMIT', /^ids: /));

  assert.deepEqual(await client.ready(), { ready: true, collections: (await client.listCollections()).length });
  assert.match(await client.metrics(), /^# HELP /m);
}

/** an address that is not kith, or not an endpoint, is a KithClientError with a code */
async function notKith(): Promise<void> {
  await assert.rejects(new KithClient(`${server.url}/nowhere`).info(), isClientError(404, 'ERR_ROUTE_NOT_FOUND', /^no endpoint GET \/nowhere\//));
  await assert.rejects(new KithClient(`${server.url}/openapi.json?`).info(), isClientError(200, 'ERR_UNEXPECTED_RESPONSE', /not a kith envelope/));
}

/** For each refusal, the code in the server's own answer is the code the client reports. */
async function codesFromEnvelope(): Promise<void> {
  await client.createCollection({ name: 'c-codes', vector_size: 2, distance: 'dot' });
  await client.upsert('c-codes', [{ id: 1, vector: [1, 0] }]);
  // A payload key JSON.parse keeps as an own "__proto__": refused as ERR_INVALID_JSON, a 400 like ERR_BAD_INPUT.
  const poisoned = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
  const cases: [string, string, string, unknown, () => Promise<unknown>][] = [
    ['ERR_COLLECTION_NOT_FOUND', 'GET', '/collections/missing', undefined, () => client.getCollection('missing')],
    ['ERR_POINT_NOT_FOUND', 'GET', '/collections/c-codes/points/zz', undefined, () => client.getPoint('c-codes', 'zz')],
    ['ERR_BAD_INPUT', 'POST', '/collections/c-codes/points/search', { vector: [1] }, () => client.search('c-codes', { vector: [1] })],
    [
      'ERR_COLLECTION_EXISTS',
      'POST',
      '/collections',
      { name: 'c-codes', vector_size: 2, distance: 'dot' },
      () => client.createCollection({ name: 'c-codes', vector_size: 2, distance: 'dot' }),
    ],
    [
      'ERR_INVALID_JSON',
      'PUT',
      '/collections/c-codes/points',
      { points: [{ id: 2, vector: [1, 0], payload: poisoned }] },
      () => client.upsert('c-codes', [{ id: 2, vector: [1, 0], payload: poisoned }]),
    ],
    ['ERR_ROUTE_NOT_FOUND', 'GET', '/nowhere', undefined, () => new KithClient(`${server.url}/nowhere`).info()],
  ];
  for (const [expected, method, path, body, call] of cases) {
    const raw = await httpJson(server.url, method, path === '/nowhere' ? '/nowhere/' : path, body);
    assert.equal(raw.body?.status?.code, expected, `${method} ${path}: ${raw.raw}`);
    await assert.rejects(call(), (error: unknown) => {
      assert.ok(error instanceof KithClientError, String(error));
      assert.equal(error.code, raw.body.status.code, `${method} ${path}`);
      assert.equal(error.status, raw.status);
      assert.equal(error.message, raw.body.status.error);
      return true;
    });
  }
  assert.equal((await client.getCollection('c-codes')).points_count, 1, 'refused requests changed nothing');
}

test('a wrong or missing API key is ERR_UNAUTHORIZED in the client and the CLI', async (t) => {
  const keyed = await startServer(tempDbPath(t), ['-api-key', 'open-sesame']);
  t.after(() => keyed.stop());
  for (const apiKey of ['wrong', undefined]) {
    const refused = new KithClient(keyed.url, apiKey === undefined ? {} : { apiKey });
    await assert.rejects(refused.listCollections(), isClientError(401, 'ERR_UNAUTHORIZED', /API key/i));
    await assert.rejects(refused.getCollection('any'), isClientError(401, 'ERR_UNAUTHORIZED', /API key/i));
    const run = await kith(['ls', '--url', keyed.url, ...(apiKey === undefined ? [] : ['--api-key', apiKey])]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /^kith: .*API key.* \[ERR_UNAUTHORIZED\]\n$/i);
  }
  assert.deepEqual(await new KithClient(keyed.url, { apiKey: 'open-sesame' }).listCollections(), []);
  // The CLI's other refusals carry the server's code too.
  const key = ['--url', keyed.url, '--api-key', 'open-sesame'];
  const missing = await kith(['info', 'missing', ...key]);
  assert.match(missing.stderr, /\[ERR_COLLECTION_NOT_FOUND\]\n$/);
});

/** An HTTP server that is not kith: `answer(path)` gives each path's status, content type and body. */
async function foreignServer(t: { after(fn: () => Promise<void>): void }, answers: Record<string, [number, string, string]>): Promise<string> {
  const foreign = createServer((request, response) => {
    const [status, type, body] = answers[request.url ?? ''] ?? [500, 'text/plain', 'no answer'];
    response.writeHead(status, { 'content-type': type }).end(body);
  });
  foreign.listen(0, '127.0.0.1');
  await once(foreign, 'listening');
  t.after(async () => {
    foreign.close();
    await once(foreign, 'close');
  });
  return `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
}

test("codes a client does not list pass through; answers that are not kith's are ERR_UNEXPECTED_RESPONSE, never a guess", async (t) => {
  const json = 'application/json';
  const url = await foreignServer(t, {
    // A 503 of a newer server (a code this client does not list) and one that is not "shutting down".
    '/collections/loading': [503, json, '{"status":{"error":"collections are still loading","code":"ERR_LOADING"},"time":0}'],
    '/collections/unavailable': [503, json, '{"status":{"error":"the dashboard is not built","code":"ERR_UNAVAILABLE"},"time":0}'],
    // An error envelope without a code (a Qdrant-dialect server), a proxy's HTML page, a code of another shape.
    '/collections/codeless': [404, json, '{"status":{"error":"Not found: Collection `codeless` doesn\'t exist!"},"time":0}'],
    '/collections/proxy': [502, 'text/html', '<html><body>Bad Gateway</body></html>'],
    '/collections/odd': [401, json, '{"status":{"error":"go away","code":"<b>nope</b>"},"time":0}'],
  });
  const foreign = new KithClient(url);
  await assert.rejects(foreign.getCollection('loading'), isClientError(503, 'ERR_LOADING', /^collections are still loading$/));
  await assert.rejects(foreign.getCollection('unavailable'), isClientError(503, 'ERR_UNAVAILABLE', /^the dashboard is not built$/));
  await assert.rejects(
    foreign.getCollection('codeless'),
    isClientError(404, 'ERR_UNEXPECTED_RESPONSE', /^GET \/collections\/codeless: HTTP 404 without kith's error code .*: Not found: Collection/),
  );
  await assert.rejects(
    foreign.getCollection('proxy'),
    isClientError(502, 'ERR_UNEXPECTED_RESPONSE', /^GET \/collections\/proxy: the answer is not JSON \(HTTP 502\)$/),
  );
  await assert.rejects(foreign.getCollection('odd'), isClientError(401, 'ERR_UNEXPECTED_RESPONSE', /without kith's error code .*: go away$/));
  // The CLI prints the code it was given.
  const run = await kith(['info', 'loading', '--url', url]);
  assert.equal(run.code, 1);
  assert.equal(run.stderr, 'kith: collections are still loading [ERR_LOADING]\n');
});
