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
    // Wait for the batch's nodes to be in the graph but not yet published.
    let turns = 0;
    while (c.memoryStats().graphNodes === c.pointsCount) {
      assert.ok(!acknowledged && turns++ < 100_000, `seed ${seed}: the batch was never seen between steps`);
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
