/**
 * Listen first, then load: the real service started on a database whose HNSW graph was never
 * saved (every point must be inserted again, a load of a few seconds) listens at once, answers its
 * liveness probes within 250 ms throughout the load (95% of them; every one within 1 s on a busy
 * machine), is not ready (503) until every collection is
 * loaded, refuses collection requests with 503 ERR_LOADING and Retry-After meanwhile (on both
 * ports), logs each collection's progress, then serves the whole collection. A hot backup taken
 * under writes then carries a graph snapshot as recent as the backup, so a restore of it takes its
 * graph from the snapshot instead of inserting every point again.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { BatchWriter } from '../helpers/batch-writer.js';
import { randomVectors, testSeed } from '../helpers/data.js';
import { httpJson, qdrantUrlOf, startServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { buildUnsavedGraphDb } from '../helpers/unsaved-graph-db.js';

const POINTS = 12_000;
const DIM = 32;
/**
 * What a liveness probe may wait while the service loads: 95% of them, and every one. On a shared
 * 2-core machine (the suite runs two files at once) a probe is sometimes late because a process
 * was not scheduled, not because the loop was held; a load held in one piece (seconds here) fails
 * both.
 */
const PROBE_LIMIT_MS = 250;
const OUTLIER_LIMIT_MS = 1000;

interface LogLine {
  readonly msg: string;
  readonly level: number;
  readonly [field: string]: unknown;
}

function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** The ids of the `k` stored vectors nearest to `query` (squared Euclidean distance), nearest first. */
function nearest(vectors: readonly number[][], query: readonly number[], k: number): string[] {
  const scored = vectors.map((vector, id) => ({ id, d: vector.reduce((sum, x, i) => sum + (x - (query[i] as number)) ** 2, 0) }));
  scored.sort((a, b) => a.d - b.d || a.id - b.id);
  return scored.slice(0, k).map((s) => String(s.id));
}

test('the service listens while it loads, refuses collection requests until loaded, logs progress; a hot backup carries its graph', async (t) => {
  const seed = testSeed(19);
  const dir = tempDir(t);
  const dbPath = join(dir, 'kith.db');
  const built = await buildUnsavedGraphDb(dbPath, { points: POINTS, dim: DIM, seed });
  const vectors = randomVectors(new SeededRng(built.seed), POINTS, DIM);
  const query = vectors[123] as number[];
  const search = { vector: query, limit: 10, params: { exact: true } };

  const server = await startServer(dbPath, ['-qdrant-port', '0'], {}, { listeningOnly: true });
  t.after(() => server.stop('SIGKILL'));
  const qdrantUrl = await qdrantUrlOf(server);

  // Loading: not ready, and nothing that reads collections answers, on either port.
  const notReady = await httpJson(server.url, 'GET', '/readyz');
  assert.equal(notReady.status, 503, `seed ${seed}: /readyz while loading: ${notReady.raw}`);
  assert.match(notReady.body.status.error, /loading/);
  assert.equal(notReady.headers.get('retry-after'), '1');
  for (const [method, path, body] of [
    ['POST', '/collections/c/points/search', search],
    ['GET', '/collections', undefined],
    ['GET', '/collections/c', undefined],
    ['PUT', '/collections/c/points', { points: [{ id: 'new', vector: query }] }],
    ['POST', '/backup', undefined],
  ] as const) {
    const r = await httpJson(server.url, method, path, body);
    assert.equal(r.status, 503, `${method} ${path} while loading: ${r.raw}`);
    assert.match(r.body.status.error, /loading its collections/, `${method} ${path}`);
    assert.equal(r.headers.get('retry-after'), '1', `${method} ${path}`);
  }
  const qdrantReady = await fetch(`${qdrantUrl}/readyz`);
  assert.equal(qdrantReady.status, 503);
  assert.equal(await qdrantReady.text(), 'some shards are not ready');
  const qdrantSearch = await httpJson(qdrantUrl, 'POST', '/collections/c/points/search', { vector: query, limit: 10 });
  assert.equal(qdrantSearch.status, 503, qdrantSearch.raw);
  assert.match(qdrantSearch.body.status.error, /loading its collections/);
  const qdrantHealth = await fetch(`${qdrantUrl}/healthz`);
  assert.equal(qdrantHealth.status, 200);
  assert.equal(await qdrantHealth.text(), 'healthz check passed');
  const metrics = await fetch(`${server.url}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(await metrics.text(), /^kith_loading 1$/m);

  // Liveness every 50 ms until ready: each answer within the limit.
  const probes: number[] = [];
  for (;;) {
    const sent = performance.now();
    const health = await fetch(`${server.url}/healthz`);
    await health.arrayBuffer();
    probes.push(performance.now() - sent);
    assert.equal(health.status, 200);
    const ready = await fetch(`${server.url}/readyz`);
    await ready.arrayBuffer();
    if (ready.status === 200) break;
    assert.equal(ready.status, 503);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(probes.length >= 5, `the load lasted only ${probes.length} probes: too short to show anything`);
  const sorted = [...probes].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(0.95 * (sorted.length - 1))] as number;
  const slowest = sorted[sorted.length - 1] as number;
  const seen = `seed ${seed}: ${probes.length} /healthz answers, p95 ${p95.toFixed(0)} ms, slowest ${slowest.toFixed(0)} ms`;
  assert.ok(p95 < PROBE_LIMIT_MS, seen);
  assert.ok(slowest < OUTLIER_LIMIT_MS, seen);

  // Loaded: the whole collection, on both ports.
  const after = await httpJson(server.url, 'POST', '/collections/c/points/search', search);
  assert.equal(after.status, 200, after.raw);
  assert.deepEqual(
    after.body.result.map((hit: { id: unknown }) => String(hit.id)),
    nearest(vectors, query, 10),
    `seed ${seed}`,
  );
  assert.equal((await httpJson(server.url, 'GET', '/collections/c')).body.result.points_count, POINTS);
  assert.equal((await fetch(`${qdrantUrl}/readyz`)).status, 200);
  assert.match(await (await fetch(`${server.url}/metrics`)).text(), /^kith_loading 0$/m);

  // The log: start, progress, done (every point inserted: there was no snapshot), and the whole.
  const lines = logLines(server.output());
  const ofC = (msg: string) => lines.filter((line) => line.msg === msg && line.collection === 'c');
  assert.equal(ofC('collection loading').length, 1);
  const progress = ofC('collection load progress');
  assert.ok(progress.length >= 1, `no progress line in:\n${server.output()}`);
  for (const line of progress) {
    assert.equal(line.points, POINTS);
    assert.ok((line.pointsRead as number) <= POINTS && (line.inserted as number) <= (line.pointsRead as number), JSON.stringify(line));
  }
  const [loaded] = ofC('collection loaded');
  assert.ok(loaded !== undefined, server.output());
  assert.equal(loaded.points, POINTS);
  assert.equal(loaded.fromSnapshot, 0);
  assert.equal(loaded.inserted, POINTS);
  const whole = lines.find((line) => line.msg === 'database loaded');
  assert.ok(whole !== undefined && typeof whole.maxEventLoopDelayMs === 'number' && whole.maxEventLoopDelayMs < OUTLIER_LIMIT_MS, JSON.stringify(whole));

  // A hot backup under writes: it carries a snapshot of the graph as recent as the backup.
  const writer = new BatchWriter(server.url, 'c', seed, 100, DIM);
  await writer.waitFor(3);
  const ackedBefore = writer.acked.length * writer.size;
  const response = await fetch(`${server.url}/backup`, { method: 'POST' });
  const bytes = Buffer.from(await response.arrayBuffer());
  await writer.stop();
  assert.equal(writer.error, undefined, String(writer.error));
  assert.equal(response.status, 200, bytes.toString('utf8', 0, 300));
  const copyPath = join(dir, 'restored.db');
  writeFileSync(copyPath, bytes);
  const copy = Database.open(copyPath);
  t.after(() => copy.close());
  const report = copy.loadReports.get('c');
  assert.ok(report !== undefined);
  // Every point acknowledged before the backup was asked for is in the snapshot's graph.
  assert.ok(
    report.fromSnapshot >= POINTS + ackedBefore,
    `seed ${seed}: ${report.fromSnapshot} of ${report.points} points from the snapshot (${POINTS + ackedBefore} were written before the backup), ${report.inserted} inserted`,
  );
  assert.equal(report.fromSnapshot + report.inserted, report.points);
  assert.equal(copy.collection('c').pointsCount, report.points);
});
