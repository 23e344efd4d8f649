/**
 * A graph collection applies a batch in steps (segment.ts, "writes in steps"): searches run
 * between the steps instead of waiting for the whole batch, and see none of it until it is
 * published, then all of it. Observed through the graph's node count, which counts the batch's
 * nodes from the first step while the point count moves only when the batch is published.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const DIM = 16;

for (const threads of [0, 2]) {
  test(`searches run between a batch's steps and see none of it before it is published (threads ${threads})`, async (t) => {
    const seed = testSeed(5150);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const vector = (): number[] => Array.from({ length: DIM }, () => rng.gaussian());
    const db = Database.open(tempDbPath(t), { threads });
    t.after(() => db.close());
    await db.createCollection({ name: 'c', vector_size: DIM, distance: 'euclid', hnsw: true });
    const c = db.collection('c');
    await c.upsert(Array.from({ length: 3000 }, (_, i) => ({ id: `old${i}`, vector: vector() })));
    const batch = Array.from({ length: 800 }, (_, i) => ({ id: `new${i}`, vector: vector() }));

    let acknowledged = false;
    const write = c.upsert(batch).then((result) => {
      acknowledged = true;
      return result;
    });
    // Wait for the batch's nodes to be in the graph but not yet published. The steps begin once the
    // batch is durable, which takes longer on a busy disk: the wait is bounded by time, not by turns
    // of the event loop (100,000 turns can pass in half a second, and failed a CI run).
    const deadline = Date.now() + 60_000;
    while (c.memoryStats().graphNodes === c.pointsCount) {
      assert.ok(!acknowledged, `seed ${seed}: the write was acknowledged, its batch never seen between steps`);
      assert.ok(Date.now() < deadline, `seed ${seed}: no step of the batch within 60 s`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(c.pointsCount, 3000, `seed ${seed}: points counted before publishing`);
    const target = batch[0]?.vector as number[];
    const during = [
      ...(await c.searchParallel({ vector: target, limit: 10 }, { spread: true })).points,
      ...c.search({ vector: target, limit: 10, params: { exact: true } }),
    ];
    assert.equal(acknowledged, false, `seed ${seed}: the searches were meant to run while the write was under way`);
    assert.ok(during.length === 20, `seed ${seed}: ${during.length} hits`);
    for (const hit of during) assert.ok(String(hit.id).startsWith('old'), `seed ${seed}: ${hit.id} seen before the batch was published`);

    assert.deepEqual(await write, { upserted: 800 });
    assert.equal(c.pointsCount, 3800);
    assert.equal(c.search({ vector: target, limit: 1 })[0]?.id, 'new0');
    assert.deepEqual(c.checkIntegrity(), [], `seed ${seed}: integrity`);
  });
}

test('with threads, a batch links alone while searches run and shares its inserts with the threads otherwise', async (t) => {
  const seed = testSeed(6160);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const vector = (): number[] => Array.from({ length: DIM }, () => rng.gaussian());
  const db = Database.open(tempDbPath(t), { threads: 2 });
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: DIM, distance: 'euclid', hnsw: true });
  const c = db.collection('c');
  await c.upsert(Array.from({ length: 2000 }, (_, i) => ({ id: `old${i}`, vector: vector() })));

  // Searches keep arriving while the batch is written: every link step runs on the writer alone,
  // for a step shares its inserts with the threads only when no search started in the last
  // SEARCHES_RECENT_MS (200 ms, collection.ts). On a starved machine this loop itself can stall
  // that long between two searches (up to 300 ms at load 11 on two cores; it failed a CI run), so
  // the rule is checked turn by turn: inserts shared between two searches need such a gap.
  const recentMs = 200;
  const before = c.graphInserts();
  let writing = true;
  let searches = 0;
  const write = c.upsert(Array.from({ length: 600 }, (_, i) => ({ id: `busy${i}`, vector: vector() }))).finally(() => {
    writing = false;
  });
  let lastSearchAt = performance.now();
  c.search({ vector: vector(), limit: 5 });
  let sharedSoFar = before.shared;
  let stalls = 0;
  const sharedWhileSearching: string[] = [];
  while (writing) {
    // Every link step runs between two of these turns (each waits for a turn of the loop).
    const now = performance.now();
    const shared = c.graphInserts().shared;
    if (now - lastSearchAt >= recentMs) stalls++;
    else if (shared > sharedSoFar) sharedWhileSearching.push(`${shared - sharedSoFar} ${(now - lastSearchAt).toFixed(1)} ms after a search`);
    sharedSoFar = shared;
    lastSearchAt = now;
    c.search({ vector: vector(), limit: 5 });
    searches++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await write;
  const busy = c.graphInserts();
  t.diagnostic(`${searches} searches ran between the steps; ${stalls} gaps of ${recentMs} ms or more`);
  assert.ok(searches > 1, `seed ${seed}: the searches were meant to run while the batch was linked`);
  assert.deepEqual(sharedWhileSearching, [], `seed ${seed}: inserts were shared with threads while searches ran`);
  assert.equal(busy.alone - before.alone + (busy.shared - before.shared), 600, `seed ${seed}: every node linked once`);
  if (stalls === 0) assert.equal(busy.alone - before.alone, 600, `seed ${seed}: the writer linked ${busy.alone - before.alone} of 600 alone`);

  // Once no search has run for a while, the threads take part again.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await c.upsert(Array.from({ length: 600 }, (_, i) => ({ id: `quiet${i}`, vector: vector() })));
  const quiet = c.graphInserts();
  assert.ok(quiet.shared - busy.shared > 300, `seed ${seed}: only ${quiet.shared - busy.shared} of 600 quiet inserts were shared`);
  assert.equal(c.pointsCount, 3200);
  assert.deepEqual(c.checkIntegrity(), [], `seed ${seed}: integrity`);
});
