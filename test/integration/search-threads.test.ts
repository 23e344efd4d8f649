import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import { testSeed } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

/**
 * Searches on search threads while the writer inserts, re-upserts and deletes: readers must see
 * each batch wholly or not at all, never a torn list, every hit live at its version and matching
 * its filter, and answers equal to the service thread's for the same state.
 */

const DIM = 8;
const GROUP = 20;

function vectorOf(rng: SeededRng): number[] {
  return Array.from({ length: DIM }, () => rng.next() * 2 - 1);
}

for (const [name, config] of [
  ['hnsw', { hnsw: true, distance: 'cosine' }],
  ['flat', { hnsw: false, distance: 'euclid' }],
  ['hnsw sq8 dot', { hnsw: true, distance: 'dot', quantization: 'sq8' }],
] as const) {
  test(`search threads under concurrent writes see whole batches, live hits, matching filters (${name})`, async (t) => {
    const seed = testSeed(31337);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const db = Database.open(tempDbPath(t), { threads: 2 });
    t.after(() => db.close());
    await db.createCollection({ name: 'c', vector_size: DIM, parameters: { m: 8, ef_construction: 32 }, payload_index: true, ...config });
    const c = db.collection('c');
    // group g exists wholly (GROUP points, version of its batch) or not at all.
    const groups = new Map<number, bigint>();
    let nextGroup = 0;
    const write = async (): Promise<void> => {
      const live = [...groups.keys()];
      const choice = rng.int(3);
      if (choice === 0 || live.length < 3) {
        const g = nextGroup++;
        await c.upsert(Array.from({ length: GROUP }, (_, i) => ({ id: `g${g}-${i}`, vector: vectorOf(rng), payload: { group: g, i, tag: `g${g}` } })));
        groups.set(g, c.getPoint(`g${g}-0`).version);
      } else if (choice === 1) {
        // Re-upsert a whole group with new vectors: the graph takes new slots, old ones become tombstones.
        const g = rng.pick(live);
        await c.upsert(Array.from({ length: GROUP }, (_, i) => ({ id: `g${g}-${i}`, vector: vectorOf(rng), payload: { group: g, i, tag: `g${g}` } })));
        groups.set(g, c.getPoint(`g${g}-0`).version);
      } else {
        const g = rng.pick(live);
        await c.deleteIds(Array.from({ length: GROUP }, (_, i) => `g${g}-${i}`));
        groups.delete(g);
      }
    };
    for (let i = 0; i < 5; i++) await write();

    let searches = 0;
    const search = async (): Promise<void> => {
      const g = rng.int(nextGroup);
      const before = groups.get(g);
      // The index answers the first; the others need the payloads, which threads read from shared memory.
      const filter = parseFilter(
        rng.pick([
          { must: [{ key: 'group', match: { value: g } }] },
          {
            must: [
              { key: 'group', match: { value: g } },
              { key: 'i', values_count: { gte: 1 } },
            ],
          },
          { must: [{ key: 'tag', type: 'regex', match: { value: `^g${g}$` } }] },
        ]),
        'filter',
      );
      const [filtered, unfiltered] = await Promise.all([
        c.searchParallel({ vector: vectorOf(rng), limit: 2 * GROUP, filter, params: { exact: rng.int(2) === 0 } }, { spread: true }),
        c.searchParallel({ vector: vectorOf(rng), limit: 10, with_vector: true }, { spread: true }),
      ]);
      searches += 2;
      const hits = filtered.points;
      assert.ok(hits.length === 0 || hits.length === GROUP, `seed ${seed}: group ${g} seen with ${hits.length} of ${GROUP} points (half a batch)`);
      const versions = new Set(hits.map((h) => h.version));
      assert.ok(versions.size <= 1, `seed ${seed}: group ${g} mixes versions ${[...versions].join(', ')}`);
      for (const hit of hits) assert.equal((hit.payload as { group: number }).group, g, `seed ${seed}: hit outside the filter`);
      const after = groups.get(g);
      // The batch the search saw was current at some point between its start and its end.
      if (hits.length > 0) {
        const seen = hits[0]?.version as bigint;
        assert.ok(seen === before || seen === after || (before !== undefined && seen > before), `seed ${seed}: version ${seen} of group ${g}`);
      }
      for (const hit of unfiltered.points) {
        const group = (hit.payload as { group: number }).group;
        assert.equal(hit.id.startsWith(`g${group}-`), true, `seed ${seed}: ${hit.id} has the payload of another point`);
        assert.equal(hit.vector?.length, DIM);
      }
    };

    // Writes and bursts of searches interleave; each burst keeps both threads busy.
    const burst = async (): Promise<void> => {
      await Promise.all(Array.from({ length: 8 }, () => search()));
    };
    for (let round = 0; round < 40; round++) await Promise.all([write(), burst(), burst()]);

    // At rest, the threads answer exactly as the service thread does.
    for (let i = 0; i < 30; i++) {
      const body = { vector: vectorOf(rng), limit: 1 + rng.int(20) };
      assert.deepEqual((await c.searchParallel(body, { spread: true })).points, c.searchExplained(body).points, `seed ${seed}: query ${i}`);
    }
    assert.ok(searches >= 640, `${searches} searches ran`);
    assert.ok(c.threadWorkCounts().filtered > 50, `${c.threadWorkCounts().filtered} searches ran a filter on a thread`);
    assert.deepEqual(c.checkIntegrity(), []);
  });
}

test('batch search through threads equals the same searches on the service thread; a closed database stops its threads', async (t) => {
  const rng = new SeededRng(testSeed(99));
  const path = tempDbPath(t);
  const db = Database.open(path, { threads: 2 });
  assert.equal(db.searchThreads, 2);
  await db.createCollection({ name: 'c', vector_size: 3, distance: 'dot', hnsw: true });
  const c = db.collection('c');
  // Non-negative vectors under Dot, exact copies and zero vectors: ties everywhere.
  const points = Array.from({ length: 300 }, (_, i) => ({
    id: `p${i}`,
    vector: i % 10 === 0 ? [0, 0, 0] : i % 7 === 0 ? [1, 1, 1] : [rng.next(), rng.next(), rng.next()],
  }));
  await c.upsert(points);
  const bodies = Array.from({ length: 100 }, () => ({
    vector: [rng.next(), rng.next(), rng.next()],
    limit: 1 + rng.int(30),
    params: { exact: rng.int(2) === 0 },
  }));
  const parallel = await Promise.all(bodies.map((b) => c.searchParallel(b, { spread: true })));
  bodies.forEach((b, i) => {
    assert.deepEqual(parallel[i]?.points, c.searchExplained(b).points, `query ${i}`);
  });
  await db.close();
  const reopened = Database.open(path);
  t.after(() => reopened.close());
  assert.equal(reopened.searchThreads, 0);
  const again = await reopened.collection('c').searchParallel(bodies[0] as (typeof bodies)[0]);
  assert.deepEqual(again.points, parallel[0]?.points);
});

test('a lone search runs on the service thread; a spread one, or one while threads are busy, on a thread', async (t) => {
  const db = Database.open(tempDbPath(t), { threads: 1 });
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'euclid', hnsw: false });
  const c = db.collection('c');
  await c.upsert([
    { id: 'a', vector: [0, 0] },
    { id: 'b', vector: [1, 1] },
  ]);
  const body = { vector: [0.1, 0.1], limit: 1 };
  const expected = c.searchExplained(body).points;
  // Whether a search's work went to a thread is counted (Collection.threadWorkCounts).
  const sent = (): number => c.threadWorkCounts().all;
  const before = sent();
  assert.deepEqual((await c.searchParallel(body)).points, expected);
  assert.equal(sent(), before, 'a lone search ran on the service thread');
  const spread = c.searchParallel(body, { spread: true });
  assert.deepEqual((await spread).points, expected);
  assert.equal(sent(), before + 1, 'a spread search went to its thread');
});

test('after a load, the search threads are warmed in the background with the load’s warm-up searches', async (t) => {
  const path = tempDbPath(t);
  const first = Database.open(path);
  await first.createCollection({ name: 'c', vector_size: 4, distance: 'cosine', hnsw: true });
  const rng = new SeededRng(5);
  await first.collection('c').upsert(Array.from({ length: 1200 }, (_, i) => ({ id: `p${i}`, vector: [rng.next(), rng.next(), rng.next(), rng.next()] })));
  await first.close();
  const db = Database.open(path, { threads: 1 });
  t.after(() => db.close());
  const warmed = db.loadReports.get('c')?.warmUp.searches ?? 0;
  assert.ok(warmed > 0, 'the load warmed the service thread');
  let settled = false;
  // The threads are busy with the warm-up, so even a lone search now goes to a thread.
  const search = db
    .collection('c')
    .searchParallel({ vector: [1, 0, 0, 0], limit: 3 })
    .then((o) => {
      settled = true;
      return o;
    });
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(settled, false, 'the threads had warm-up work in flight');
  assert.equal((await search).points.length, 3);
});
