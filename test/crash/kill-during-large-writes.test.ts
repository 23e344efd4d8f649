/**
 * Crash test for writes large enough to be committed by a thread of their own
 * (src/storage/point-writer.ts: LARGE_WRITE_OPERATIONS puts or removes): a client upserts batches
 * of BATCH points and deletes earlier batches by id, SIGKILL lands mid-stream; after a restart
 * every acknowledged write is there, and every other one is wholly there or wholly absent, with
 * no point torn. Two rounds on one file, each with its own seed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { LARGE_WRITE_OPERATIONS } from '../../src/storage/point-writer.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const DIM = 4;
/** Just over the threshold (and under a search's limit, which counts a batch). */
const BATCH = LARGE_WRITE_OPERATIONS + 800;

interface Batch {
  readonly round: number;
  readonly batch: number;
  upsertAcked: boolean;
  deleteSent: boolean;
  deleteAcked: boolean;
}

const idOf = (b: Batch, i: number): string => `r${b.round}-b${b.batch}-${i}`;

function batchPoints(b: Batch, rng: SeededRng) {
  return Array.from({ length: BATCH }, (_, i) => {
    const vector = Array.from({ length: DIM }, () => rng.int(1000) - 500);
    return { id: idOf(b, i), vector, payload: { round: b.round, batch: b.batch, checksum: vector.reduce((s, x, j) => s + x * (j + 1), 0) } };
  });
}

/** Upserts batch after batch, deleting every third one's predecessor but one by id, until the server dies. */
async function writeUntilFailure(url: string, round: number, rng: SeededRng, batches: Batch[]): Promise<void> {
  for (let batch = 0; ; batch++) {
    const b: Batch = { round, batch, upsertAcked: false, deleteSent: false, deleteAcked: false };
    batches.push(b);
    try {
      const upserted = await httpJson(url, 'PUT', '/collections/crash/points', { points: batchPoints(b, rng) });
      if (upserted.status !== 200) return;
      b.upsertAcked = true;
      const victim = batches.find((v) => v.round === round && v.batch === batch - 2);
      if (batch % 3 === 2 && victim !== undefined) {
        victim.deleteSent = true;
        const deleted = await httpJson(url, 'POST', '/collections/crash/points/delete', { points: Array.from({ length: BATCH }, (_, i) => idOf(victim, i)) });
        if (deleted.status !== 200) return;
        victim.deleteAcked = true;
      }
    } catch {
      return; // the server died under us: this write is unacknowledged
    }
  }
}

async function countBatch(url: string, b: Batch): Promise<{ count: number; corrupt: string[] }> {
  const r = await httpJson(url, 'POST', '/collections/crash/points/search', {
    vector: Array(DIM).fill(0),
    limit: 10000,
    with_vector: true,
    filter: {
      must: [
        { key: 'round', match: { value: b.round } },
        { key: 'batch', match: { value: b.batch } },
      ],
    },
  });
  assert.equal(r.status, 200, r.raw);
  const corrupt: string[] = [];
  for (const hit of r.body.result as Array<{ id: string; vector: number[]; payload: { checksum: number } }>) {
    if (hit.vector.reduce((s, x, j) => s + x * (j + 1), 0) !== hit.payload.checksum) corrupt.push(hit.id);
  }
  return { count: r.body.result.length, corrupt };
}

test('SIGKILL during large upserts and deletes (committed on their own thread) loses no acknowledged write and tears none', async (t) => {
  const dbPath = tempDbPath(t);
  const batches: Batch[] = [];
  for (let round = 0; round < 2; round++) {
    const seed = 2000 + round;
    const rng = new SeededRng(seed);
    const server = await startServer(dbPath);
    t.after(() => server.stop('SIGKILL'));
    if (round === 0) {
      const created = await httpJson(server.url, 'POST', '/collections', { name: 'crash', vector_size: DIM, distance: 'euclid' });
      assert.equal(created.status, 200, created.raw);
    }
    const writer = writeUntilFailure(server.url, round, rng, batches);
    const killAfterMs = 1500 + rng.int(2500);
    await new Promise((resolve) => setTimeout(resolve, killAfterMs));
    await server.stop('SIGKILL');
    await writer;
    const acked = batches.filter((b) => b.round === round && b.upsertAcked).length;
    assert.ok(acked > 0, `[seed ${seed}] no batch was acknowledged within ${killAfterMs} ms`);
    t.diagnostic(
      `round ${round}: killed after ${killAfterMs} ms; ${acked} upserts and ${batches.filter((b) => b.round === round && b.deleteAcked).length} deletes acknowledged`,
    );

    const restarted = await startServer(dbPath);
    try {
      let expected = 0;
      for (const b of batches) {
        const { count, corrupt } = await countBatch(restarted.url, b);
        const what = `[seed ${seed}] batch ${JSON.stringify(b)}`;
        assert.deepEqual(corrupt, [], `${what}: torn points`);
        if (b.deleteAcked) assert.equal(count, 0, `${what}: an acknowledged delete left ${count} points`);
        else if (b.upsertAcked && !b.deleteSent) assert.equal(count, BATCH, `${what}: an acknowledged upsert lost points`);
        else assert.ok(count === 0 || count === BATCH, `${what}: half-written (${count} points)`);
        expected += count;
      }
      const info = await httpJson(restarted.url, 'GET', '/collections/crash');
      assert.equal(info.body.result.points_count, expected, `[seed ${seed}] points_count`);
    } finally {
      assert.equal(await restarted.stop('SIGTERM'), 0);
    }
  }
});
