/**
 * The real service process over real HTTP: flags, smoke, restart, graceful shutdown.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { open } from 'lmdb';
import { SeededRng } from '../../src/core/rng.js';
import { randomVectors } from '../helpers/data.js';
import { httpJson, MAIN_JS, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

test('smoke: the process serves every endpoint over HTTP and exits 0 on SIGTERM', async (t) => {
  const dbPath = tempDbPath(t);
  const server = await startServer(dbPath);
  t.after(() => server.stop('SIGKILL'));
  const { url } = server;
  assert.equal((await httpJson(url, 'GET', '/healthz')).status, 200);
  const created = await httpJson(url, 'POST', '/collections', { name: 's', vector_size: 3, distance: 'dot' });
  assert.equal(created.status, 200);
  assert.equal(created.headers.get('content-type')?.startsWith('application/json'), true);
  const up = await httpJson(url, 'PUT', '/collections/s/points', {
    points: [
      { id: 1, vector: [1, 0, 0], payload: { tag: 'a' } },
      { id: 2, vector: [0, 1, 0], payload: { tag: 'b' } },
    ],
  });
  assert.deepEqual(up.body.result, { operation: 'completed', upserted: 2 });
  const found = await httpJson(url, 'POST', '/collections/s/points/search', { vector: [1, 0.5, 0], limit: 1 });
  assert.deepEqual(
    found.body.result.map((h: { id: string; score: number }) => [h.id, h.score]),
    [['1', 1]],
  );
  assert.equal((await httpJson(url, 'GET', '/collections')).body.result.length, 1);
  assert.equal((await httpJson(url, 'GET', '/collections/s/points/2')).body.result.payload.tag, 'b');
  assert.equal((await httpJson(url, 'POST', '/collections/s/points/delete', { points: [2] })).body.result.deleted, 1);
  const openapi = await httpJson(url, 'GET', '/openapi.json');
  assert.equal(openapi.status, 200);
  assert.ok(openapi.body.paths['/collections/{name}/points/search'], 'openapi has the search path');
  const missing = await httpJson(url, 'GET', '/nowhere');
  assert.equal(missing.status, 404);
  assert.equal(typeof missing.body.status.error, 'string');
  const wrong = await httpJson(url, 'PUT', '/collections/s');
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get('allow'), 'DELETE, GET, HEAD, PATCH');
  assert.equal((await httpJson(url, 'DELETE', '/collections/s')).status, 200);
  assert.equal(await server.stop('SIGTERM'), 0);
  assert.match(server.output(), /"msg":"stopped"/);
});

test('restart of the process: same answers and versions; SIGINT also exits 0', async (t) => {
  const dbPath = tempDbPath(t);
  const first = await startServer(dbPath);
  t.after(() => first.stop('SIGKILL'));
  await httpJson(first.url, 'POST', '/collections', { name: 'r', vector_size: 4, distance: 'cosine', quantization: 'sq8' });
  const points = Array.from({ length: 300 }, (_, i) => ({ id: i, vector: [i % 7, (i * 3) % 11, 1, i % 2], payload: { i } }));
  await httpJson(first.url, 'PUT', '/collections/r/points', { points });
  const query = { vector: [3, 1, 1, 0], limit: 10, filter: { must: [{ key: 'i', range: { gte: 100 } }] } };
  const before = (await httpJson(first.url, 'POST', '/collections/r/points/search', query)).raw.replace(/"time":[^}]*/, '');
  assert.equal(await first.stop('SIGINT'), 0);

  const second = await startServer(dbPath);
  t.after(() => second.stop('SIGKILL'));
  const after = (await httpJson(second.url, 'POST', '/collections/r/points/search', query)).raw.replace(/"time":[^}]*/, '');
  assert.equal(after, before);
  assert.match(after, /"version":\d{19}/);
  assert.equal(await second.stop('SIGTERM'), 0);
});

test('a request in flight at SIGTERM completes and is durable', async (t) => {
  const dbPath = tempDbPath(t);
  const server = await startServer(dbPath);
  t.after(() => server.stop('SIGKILL'));
  await httpJson(server.url, 'POST', '/collections', { name: 'g', vector_size: 64, distance: 'euclid' });
  const points = Array.from({ length: 5000 }, (_, i) => ({ id: i, vector: Array.from({ length: 64 }, (_, j) => (i * j) % 13) }));
  const pending = httpJson(server.url, 'PUT', '/collections/g/points', { points });
  await new Promise((resolve) => setTimeout(resolve, 30));
  server.process.kill('SIGTERM');
  const response = await pending;
  assert.equal(response.status, 200, response.raw);
  assert.equal(await server.stop(), 0);
  const again = await startServer(dbPath);
  t.after(() => again.stop('SIGKILL'));
  assert.equal((await httpJson(again.url, 'GET', '/collections/g')).body.result.points_count, 5000);
  assert.equal(await again.stop(), 0);
});

test('flags: --forms, -flag=value, env fallback, usage and bad flags', async (t) => {
  const envDb = tempDbPath(t);
  const viaEnv = await startServer(tempDbPath(t), ['--db', envDb]);
  t.after(() => viaEnv.stop('SIGKILL'));
  await httpJson(viaEnv.url, 'POST', '/collections', { name: 'e', vector_size: 2, distance: 'dot' });
  assert.equal(await viaEnv.stop(), 0);
  // KITH_DB is only a fallback: here no -db flag is given, so the env var names the file.
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [MAIN_JS, '-port=0', '-host=127.0.0.1'], {
    env: { ...process.env, KITH_DB: envDb, KITH_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.on('exit', () => reject(new Error(out)));
  });
  assert.deepEqual(
    (await httpJson(url, 'GET', '/collections')).body.result.map((c: { name: string }) => c.name),
    ['e'],
  );
  child.kill('SIGTERM');

  const help = spawnSync(process.execPath, [MAIN_JS, '-help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /-shutdown-timeout/);
  const bad = spawnSync(process.execPath, [MAIN_JS, '-colour', 'red'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /Usage: kith/);
  const badPort = spawnSync(process.execPath, [MAIN_JS, '-port', 'eighty'], { encoding: 'utf8' });
  assert.equal(badPort.status, 2);
  assert.match(badPort.stderr, /-port: expected an integer/);
});

test('filtered search over real HTTP: any-of and AND of indexed keywords are counted exactly, every hit matches, never short', async (t) => {
  const server = await startServer(tempDbPath(t));
  t.after(() => server.stop('SIGKILL'));
  const { url } = server;
  const n = 3000;
  assert.equal((await httpJson(url, 'POST', '/collections', { name: 'f', vector_size: 8, distance: 'cosine', hnsw: true })).status, 200);
  const rng = new SeededRng(0xf17);
  const vectors = randomVectors(rng, n, 8);
  for (let start = 0; start < n; start += 1000) {
    const points = vectors.slice(start, start + 1000).map((vector, j) => {
      const i = start + j;
      return { id: i, vector, payload: { color: `c${i % 4}`, size: i % 5 === 0 ? 'L' : 'S' } };
    });
    assert.equal((await httpJson(url, 'PUT', '/collections/f/points', { points })).status, 200);
  }
  const search = async (filter: unknown, limit: number) => {
    const r = await httpJson(url, 'POST', '/collections/f/points/search', { vector: vectors[5], limit, filter, params: { explain: true } });
    assert.equal(r.status, 200, r.raw);
    return r.body;
  };

  // Two values of a single-valued keyword: disjoint posting sets, counted exactly, no sample.
  const anyOf = await search({ must: [{ key: 'color', match: { any: ['c1', 'c2', 'c1'] } }] }, 10);
  assert.deepEqual(anyOf.explain.estimate, { min: n / 2, expected: n / 2, max: n / 2, counted: true });
  assert.equal(anyOf.explain.sample, null);
  assert.equal(anyOf.result.length, 10);
  for (const hit of anyOf.result) assert.ok(['c1', 'c2'].includes(hit.payload.color), JSON.stringify(hit));

  // An AND of two keywords (i % 20 === 5: 150 points): the intersection is counted exactly and
  // scored exactly; a limit above the matches returns every match.
  const and = {
    must: [
      { key: 'color', match: { value: 'c1' } },
      { key: 'size', match: { value: 'L' } },
    ],
  };
  const both = await search(and, 200);
  assert.deepEqual(both.explain.estimate, { min: 150, expected: 150, max: 150, counted: true });
  assert.equal(both.explain.strategy, 'candidates-exact');
  assert.equal(both.explain.exact, true);
  assert.equal(both.explain.scored, 150);
  assert.equal(both.result.length, 150);
  for (const hit of both.result) assert.ok(Number(hit.id) % 20 === 5, hit.id);

  // A bad filter is a 400 naming the field, and the collection is unchanged.
  const bad = await httpJson(url, 'POST', '/collections/f/points/search', { vector: vectors[5], filter: { must: [{ key: 'color', match: { any: 'c1' } }] } });
  assert.equal(bad.status, 400, bad.raw);
  assert.match(bad.body.status.error, /must\[0\]/, bad.raw);
  assert.equal((await httpJson(url, 'GET', '/collections/f')).body.result.points_count, n);
  assert.deepEqual((await search(and, 200)).result, both.result);
  assert.equal(await server.stop('SIGTERM'), 0);
});

test('the service logs a graph snapshot it could not use (and still answers)', async (t) => {
  const dbPath = tempDbPath(t);
  const first = await startServer(dbPath);
  t.after(() => first.stop('SIGKILL'));
  assert.equal((await httpJson(first.url, 'POST', '/collections', { name: 'h', vector_size: 4, distance: 'dot', hnsw: true })).status, 200);
  const points = randomVectors(new SeededRng(0x5a), 300, 4).map((vector, id) => ({ id, vector }));
  assert.equal((await httpJson(first.url, 'PUT', '/collections/h/points', { points })).status, 200);
  assert.equal(await first.stop('SIGTERM'), 0, 'a clean stop writes the graph snapshot');

  const raw = open({ path: dbPath, noSubdir: true });
  const snapshots = raw.openDB<Buffer, [number, number]>({ name: 'snapshots', encoding: 'binary' });
  const chunk = Buffer.from(snapshots.get([1, 0]) as Buffer);
  const middle = Math.floor(chunk.length / 2);
  chunk[middle] = (chunk[middle] as number) ^ 0xff;
  await snapshots.put([1, 0], chunk);
  await raw.close();

  const second = await startServer(dbPath);
  t.after(() => second.stop('SIGKILL'));
  const found = await httpJson(second.url, 'POST', '/collections/h/points/search', { vector: points[7]?.vector, limit: 3, params: { exact: true } });
  assert.equal(found.status, 200);
  assert.equal(found.body.result.length, 3);
  assert.equal(await second.stop('SIGTERM'), 0);
  assert.match(second.output(), /"level":40.*graph snapshot not used \(checksum mismatch\)/);
});
