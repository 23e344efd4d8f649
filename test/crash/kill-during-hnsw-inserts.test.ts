/**
 * SIGKILL while an HNSW collection takes inserts, updates and deletes: after a restart every
 * acknowledged write is there, and the graph is usable: sound structure, no deleted point
 * returned, recall against exact search as before.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const DIM = 16;

test('SIGKILL during HNSW writes loses no acknowledged write and leaves a usable graph', async (t) => {
  const dbPath = tempDbPath(t);
  const seed = 2024;
  const rng = new SeededRng(seed);
  const server = await startServer(dbPath);
  t.after(() => server.stop('SIGKILL'));
  const created = await httpJson(server.url, 'POST', '/collections', {
    name: 'g',
    vector_size: DIM,
    distance: 'euclid',
    hnsw: true,
    parameters: { m: 8, ef_construction: 64 },
  });
  assert.equal(created.status, 200);

  const present = new Map<string, number[]>();
  const absent = new Set<string>();
  // The write in flight at the kill may or may not have been applied: its ids are not checked.
  let uncertain = new Set<string>();
  let acknowledged = 0;
  let running = true;
  let writerEnded = false;
  const writer = (async () => {
    for (let batch = 0; running; batch++) {
      try {
        if (batch % 4 === 3 && present.size > 100) {
          const ids = [...present.keys()].filter(() => rng.next() < 0.1);
          uncertain = new Set(ids);
          const r = await httpJson(server.url, 'POST', '/collections/g/points/delete', { points: ids });
          if (r.status !== 200) return;
          for (const id of ids) {
            present.delete(id);
            absent.add(id);
          }
        } else {
          const points = Array.from({ length: 200 }, (_, i) => ({
            id: `b${batch}-${i}`,
            vector: Array.from({ length: DIM }, () => rng.gaussian()),
          }));
          uncertain = new Set(points.map((p) => p.id));
          const r = await httpJson(server.url, 'PUT', '/collections/g/points', { points });
          if (r.status !== 200) return;
          for (const p of points) present.set(p.id, p.vector);
        }
        acknowledged++;
        uncertain = new Set();
      } catch {
        return;
      }
    }
  })().finally(() => {
    writerEnded = true;
  });
  // The kill lands at a random moment once three writes are acknowledged (within two minutes),
  // however slow the machine: a fixed 1.5–2.5 s from the start saw only two on two cores at load 20.
  const killDelayMs = rng.int(1000);
  const deadline = Date.now() + 120_000;
  while (acknowledged < 3 && !writerEnded && Date.now() < deadline) await sleep(10);
  await sleep(killDelayMs);
  // Wait for the exit, as a supervisor restarting it would: the kernel frees the file lock then.
  await server.stop('SIGKILL');
  running = false;
  await writer;
  assert.ok(acknowledged >= 3, `[seed ${seed}] only ${acknowledged} writes acknowledged before the kill`);

  const db = Database.open(dbPath);
  t.after(() => db.close());
  const g = db.collection('g');
  assert.deepEqual(g.checkIntegrity(), [], `[seed ${seed}] graph integrity`);
  for (const [id, vector] of present) {
    if (uncertain.has(id)) continue;
    const point = g.getPoint(id);
    assert.deepEqual(point.vector, vector.map(Math.fround), `[seed ${seed}] acknowledged point ${id}`);
  }
  for (const id of absent) assert.throws(() => g.getPoint(id), { code: 'ERR_POINT_NOT_FOUND' });
  let hit = 0;
  const queries = 30;
  for (let q = 0; q < queries; q++) {
    const vector = Array.from({ length: DIM }, () => rng.gaussian());
    const exact = new Set(g.search({ vector, limit: 10, params: { exact: true } }).map((h) => h.id));
    for (const h of g.search({ vector, limit: 10 })) {
      assert.ok(!absent.has(h.id) || uncertain.has(h.id), `[seed ${seed}] deleted ${h.id} returned`);
      if (exact.has(h.id)) hit++;
    }
  }
  assert.ok(hit / (10 * queries) >= 0.9, `[seed ${seed}] recall ${hit / (10 * queries)}`);
});
