/**
 * Crash test: two clients write batches to the real server; SIGKILL lands mid-stream; after a
 * restart every acknowledged batch is there, whole and uncorrupted, and every other batch is
 * either wholly there or wholly absent. Three rounds on one file, each with its own seed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SeededRng } from '../../src/core/rng.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { httpJson, startServer } from '../helpers/server-process.js';

const DIM = 8;
const BATCH = 50;

interface Batch {
  client: number;
  round: number;
  batch: number;
}

function batchPoints(b: Batch, rng: SeededRng) {
  return Array.from({ length: BATCH }, (_, i) => {
    const vector = Array.from({ length: DIM }, () => rng.int(1000) - 500);
    return {
      id: `r${b.round}-c${b.client}-b${b.batch}-${i}`,
      vector,
      payload: { round: b.round, client: b.client, batch: b.batch, i, checksum: vector.reduce((s, x, j) => s + x * (j + 1), 0) },
    };
  });
}

async function writeUntilFailure(url: string, client: number, round: number, seed: number, acked: Batch[], sent: Batch[]) {
  const rng = new SeededRng(seed);
  for (let batch = 0; ; batch++) {
    const b = { client, round, batch };
    sent.push(b);
    try {
      const r = await httpJson(url, 'PUT', '/collections/crash/points', { points: batchPoints(b, rng) });
      if (r.status !== 200) return;
      acked.push(b);
    } catch {
      return; // the server died under us: this batch is unacknowledged
    }
  }
}

async function countBatch(url: string, b: Batch): Promise<{ count: number; corrupt: string[] }> {
  const r = await httpJson(url, 'POST', '/collections/crash/points/search', {
    vector: Array(DIM).fill(0),
    limit: BATCH * 2,
    with_vector: true,
    filter: {
      must: [
        { key: 'round', match: { value: b.round } },
        { key: 'client', match: { value: b.client } },
        { key: 'batch', match: { value: b.batch } },
      ],
    },
  });
  assert.equal(r.status, 200, r.raw);
  const corrupt: string[] = [];
  for (const hit of r.body.result as Array<{ id: string; vector: number[]; payload: { checksum: number } }>) {
    const sum = hit.vector.reduce((s, x, j) => s + x * (j + 1), 0);
    if (sum !== hit.payload.checksum) corrupt.push(hit.id);
  }
  return { count: r.body.result.length, corrupt };
}

test('SIGKILL during concurrent writes loses no acknowledged batch and tears none', async (t) => {
  const dbPath = tempDbPath(t);
  const acked: Batch[] = [];
  const sent: Batch[] = [];
  for (let round = 0; round < 3; round++) {
    const seed = 1000 + round;
    const rng = new SeededRng(seed);
    const server = await startServer(dbPath);
    t.after(() => server.stop('SIGKILL'));
    if (round === 0) {
      const created = await httpJson(server.url, 'POST', '/collections', { name: 'crash', vector_size: DIM, distance: 'euclid' });
      assert.equal(created.status, 200, created.raw);
    }
    const ackedBefore = acked.length;
    let writersEnded = false;
    const writers = Promise.all([0, 1].map((client) => writeUntilFailure(server.url, client, round, seed * 10 + client, acked, sent))).finally(() => {
      writersEnded = true;
    });
    // The kill lands at a random moment once two batches of this round are acknowledged (within two
    // minutes), however slow the machine: a fixed 0.3–1 s from the start depends on how fast
    // batches become durable.
    const killAfterMs = rng.int(700);
    const deadline = Date.now() + 120_000;
    while (acked.length - ackedBefore < 2 && !writersEnded && Date.now() < deadline) await sleep(10);
    await sleep(killAfterMs);
    const ackedAtKill = acked.length - ackedBefore;
    // Wait for the exit, as a supervisor restarting it would: the kernel frees the file lock then.
    await server.stop('SIGKILL');
    await writers;
    assert.ok(ackedAtKill >= 2, `[seed ${seed}] only ${ackedAtKill} batches acknowledged before the writers stopped`);

    const restarted = await startServer(dbPath);
    try {
      let expected = 0;
      for (const b of sent) {
        const { count, corrupt } = await countBatch(restarted.url, b);
        const wasAcked = acked.includes(b);
        assert.deepEqual(corrupt, [], `[seed ${seed}] corrupted points in batch ${JSON.stringify(b)}`);
        if (wasAcked) assert.equal(count, BATCH, `[seed ${seed}] acknowledged batch ${JSON.stringify(b)} lost points`);
        else assert.ok(count === 0 || count === BATCH, `[seed ${seed}] batch ${JSON.stringify(b)} half-written: ${count}`);
        expected += count;
      }
      const info = await httpJson(restarted.url, 'GET', '/collections/crash');
      assert.equal(info.body.result.points_count, expected, `[seed ${seed}] points_count`);
    } finally {
      assert.equal(await restarted.stop('SIGTERM'), 0);
    }
  }
});
