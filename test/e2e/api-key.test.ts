/**
 * The optional API key on the real service process, both listeners: without the key every
 * request but the probes is a 401 in the error envelope and changes nothing; with it (the api-key
 * header or Authorization: Bearer) everything works; the official Qdrant client passes it as
 * `apiKey`. Without -api-key nothing is asked.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QdrantClient } from '@qdrant/js-client-rest';
import { httpJson, qdrantUrlOf, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers };
}

test('-api-key: 401 without it on both listeners (probes open), everything with it', async (t) => {
  const server = await startServer(tempDbPath(t), ['-qdrant-port', '0', '-api-key', 's3cret-key']);
  t.after(() => server.stop());
  const qdrant = await qdrantUrlOf(server);
  const create = { name: 'c', vector_size: 2, distance: 'dot' };
  for (const [base, headers] of [
    [server.url, {}],
    [server.url, { 'api-key': 'wrong' }],
    [server.url, { authorization: 'Bearer wrong' }],
    [qdrant, {}],
  ] as const) {
    const r = await call(base, 'POST', '/collections', headers, create);
    assert.equal(r.status, 401, r.text);
    assert.match(JSON.parse(r.text).status.error, /api key/);
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    // Probes need no key: kith's /healthz, and Qdrant's three.
    for (const probe of base === server.url ? ['/healthz'] : ['/healthz', '/livez', '/readyz']) {
      const p = await call(base, 'GET', probe, {});
      assert.equal(p.status, 200, `${base}${probe}: ${p.text}`);
    }
  }
  assert.equal((await call(server.url, 'GET', '/collections', { 'api-key': 's3cret-key' })).text.includes('"result":[]'), true, 'nothing was created');
  const made = await call(server.url, 'POST', '/collections', { authorization: 'Bearer s3cret-key' }, create);
  assert.equal(made.status, 200, made.text);
  const client = new QdrantClient({ url: qdrant, apiKey: 's3cret-key', checkCompatibility: false });
  assert.equal((await client.collectionExists('c')).exists, true);
  const keyless = new QdrantClient({ url: qdrant, checkCompatibility: false });
  await assert.rejects(keyless.collectionExists('c'), (error: { status?: number }) => error.status === 401);
});

test('without -api-key no key is asked', async (t) => {
  const server = await startServer(tempDbPath(t));
  t.after(() => server.stop());
  const r = await httpJson(server.url, 'GET', '/collections');
  assert.equal(r.status, 200, r.raw);
});
