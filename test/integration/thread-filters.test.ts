import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import type { Collection } from '../../src/collection/collection.js';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { compileFilter } from '../../src/payload/filter-compile.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import { testSeed } from '../helpers/data.js';
import { drawPayload } from '../helpers/nasty-data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

/**
 * Filters no payload index answers run on the search threads, over the payload records in shared
 * memory (payload/shared-payloads.ts), and answer exactly as the service thread does: before the
 * payloads are shared (the search runs here), after, and after writes changed them.
 */

const DIM = 6;

const vectorOf = (rng: SeededRng): number[] => Array.from({ length: DIM }, () => rng.next() * 2 - 1);

/** Filters on keys no index holds (payload_index off) or conditions none answers (regex, values_count, …). */
const FILTERS = [
  { must: [{ key: 'n', range: { gte: 2 } }] },
  { must: [{ key: 'tag', match: { any: ['a', 'b'] } }], must_not: [{ key: 'n', match: { value: 3 } }] },
  { should: [{ is_empty: { key: 'a' } }, { key: 'b', values_count: { gte: 2 } }] },
  { must: [{ key: 'name', type: 'regex', match: { value: '^p[0-9]*7' } }] },
  { must: [{ key: 'a.b', match: { value: 1 } }] },
  { must: [{ nested: { key: 'items', filter: { must: [{ key: 'k', range: { lt: 5 } }] } } }] },
  { must_not: [{ has_id: ['p1', 'p2', 'p3'] }], must: [{ key: 'n', range: { lt: 4 } }] },
  { min_should: { conditions: [{ key: 'n', match: { value: 1 } }, { key: 'tag', match: { value: 'a' } }, { is_null: { key: 'c' } }], min_count: 2 } },
];

function payloadOf(rng: SeededRng, i: number): Record<string, unknown> {
  return {
    ...drawPayload(rng, new Set()),
    name: `p${i}`,
    n: i % 6,
    tag: ['a', 'b', 'c'][i % 3],
    'a.b': i % 2,
    items: [{ k: i % 10 }, { k: (i * 7) % 10 }],
  };
}

/** Collection `c` of a database with two search threads: an HNSW graph (m 8) of DIM-d cosine vectors, and `more`. */
async function graphWithThreads(t: TestContext, more: Partial<CreateCollection>): Promise<Collection> {
  const db = Database.open(tempDbPath(t), { threads: 2 });
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: DIM, distance: 'cosine', hnsw: true, parameters: { m: 8, ef_construction: 32 }, ...more });
  return db.collection('c');
}

type CreateCollection = Parameters<Database['createCollection']>[0];

/** Waits until the collection's payloads are shared (copied in slices after the first search that needs them). */
async function untilShared(c: Collection): Promise<void> {
  for (let i = 0; i < 10_000 && c.memoryStats().sharedPayloadBytesAllocated === 0; i++) await turn();
  for (let i = 0; i < 10_000; i++) {
    const before = c.threadWorkCounts().filtered;
    await c.searchParallel({ vector: Array(DIM).fill(0.5), limit: 1, filter: parseFilter(FILTERS[3]), params: { exact: true } }, { spread: true });
    if (c.threadWorkCounts().filtered > before) return;
    await turn();
  }
  assert.fail('the payloads were never shared');
}

async function assertSameAnswers(c: Collection, rng: SeededRng, seed: number, label: string): Promise<void> {
  const strategies = ['graph-filtered', 'flat-scan', 'candidates-exact', undefined] as const;
  for (const [f, raw] of FILTERS.entries()) {
    const filter = parseFilter(raw);
    const predicate = compileFilter(filter ?? { must: [], mustNot: [], should: [] });
    for (const strategy of strategies) {
      const body = { vector: vectorOf(rng), limit: 1 + rng.int(15), filter, params: { strategy, explain: true } };
      const before = c.threadWorkCounts().filtered;
      const there = await c.searchParallel(body, { spread: true });
      const here = c.searchExplained(body);
      const context = `seed ${seed}, ${label}, filter ${f} ${JSON.stringify(raw)}, strategy ${strategy ?? 'planned'}`;
      assert.deepEqual(there.points, here.points, context);
      for (const hit of there.points) assert.equal(predicate(hit.payload ?? {}, hit.id), true, `${context}: ${hit.id} fails the filter`);
      // Exact strategies over exact candidates need no filter on the thread; the others ran it there.
      if (there.explain.strategy !== 'candidates-exact' || there.explain.candidates === null) {
        assert.ok(c.threadWorkCounts().filtered > before, `${context}: the filter did not run on a thread (${there.explain.strategy})`);
      }
    }
  }
}

for (const payloadIndex of [false, true]) {
  test(`filters no index answers run on the search threads with the service thread's answers (payload_index ${payloadIndex})`, async (t) => {
    const seed = testSeed(8080);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const c = await graphWithThreads(t, { payload_index: payloadIndex });
    await c.upsert(Array.from({ length: 1500 }, (_, i) => ({ id: `p${i}`, vector: vectorOf(rng), payload: payloadOf(rng, i) })));

    // Before the payloads are shared, such searches run here, and the first one starts the copy.
    assert.equal(c.memoryStats().sharedPayloadBytesAllocated, 0);
    const body = { vector: vectorOf(rng), limit: 5, filter: parseFilter(FILTERS[0]) };
    assert.deepEqual((await c.searchParallel(body, { spread: true })).points, c.searchExplained(body).points);
    assert.equal(c.threadWorkCounts().filtered, 0);
    await untilShared(c);
    await assertSameAnswers(c, rng, seed, 'after the copy');

    // A lone search (no spread, threads idle) runs here, filtered or not; a second filtered one in
    // the same turn of the event loop (requests queuing) goes to a thread.
    const lone = { vector: vectorOf(rng), limit: 5, filter: parseFilter(FILTERS[3]), params: { strategy: 'flat-scan' as const } };
    await new Promise((resolve) => setTimeout(resolve, 20));
    const counts = c.threadWorkCounts();
    const first = c.searchParallel(lone);
    const queued = c.searchParallel(lone);
    assert.deepEqual((await first).points, c.searchExplained(lone).points);
    assert.deepEqual((await queued).points, c.searchExplained(lone).points);
    assert.equal(c.threadWorkCounts().filtered, counts.filtered + 1, 'of two searches back to back, not just the second went to a thread');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const after = c.threadWorkCounts();
    await c.searchParallel({ vector: vectorOf(rng), limit: 5 });
    assert.deepEqual(c.threadWorkCounts(), after, 'a lone search in a new turn went to a thread');
    // Unfiltered graph walks are light: even back to back, they run here while the threads are idle.
    await Promise.all([c.searchParallel({ vector: vectorOf(rng), limit: 5 }), c.searchParallel({ vector: vectorOf(rng), limit: 5 })]);
    assert.deepEqual(c.threadWorkCounts(), after, 'a light search went to a thread');

    // Writes keep the records in step: new points, re-upserts with new payloads (and vectors), deletes.
    for (let round = 0; round < 3; round++) {
      await c.upsert(
        Array.from({ length: 300 }, (_, i) => {
          const n = rng.int(2000);
          return { id: `p${n}`, vector: vectorOf(rng), payload: payloadOf(rng, n + round + i) };
        }),
      );
      await c.deleteIds(Array.from({ length: 100 }, () => `p${rng.int(2000)}`));
    }
    await assertSameAnswers(c, rng, seed, 'after writes');
    assert.deepEqual(c.checkIntegrity(), []);
  });
}

test('a search too long for the service thread waits for the payload copy instead of running its filter here', async (t) => {
  const seed = testSeed(7070);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const db = Database.open(tempDbPath(t), { threads: 2 });
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: DIM, distance: 'euclid', hnsw: false, payload_index: false });
  const c = db.collection('c');
  await c.upsert(Array.from({ length: 3000 }, (_, i) => ({ id: `p${i}`, vector: vectorOf(rng), payload: payloadOf(rng, i) })));
  // 250 terms no index answers, on 3,000 points: long by collection.ts's estimate (isLong).
  const filter = parseFilter({ must: Array.from({ length: 250 }, (_, i) => ({ key: 'n', range: { gte: -1 - i } })) });
  const body = { vector: vectorOf(rng), limit: 10, filter };
  assert.equal(c.memoryStats().sharedPayloadBytesAllocated, 0);
  // Alone, in a new turn, threads idle: before, this scan ran here (and held the service thread).
  await new Promise((resolve) => setTimeout(resolve, 20));
  const answer = await c.searchParallel(body);
  assert.deepEqual(answer.points, c.searchExplained(body).points, `seed ${seed}`);
  assert.equal(c.threadWorkCounts().filtered, 1, 'the first long filtered search ran its filter on a thread');
  assert.ok(c.memoryStats().sharedPayloadBytesAllocated > 0);
});

test('a payload record compaction under writes and searches on threads keeps answers equal', async (t) => {
  const seed = testSeed(9090);
  const rng = new SeededRng(seed);
  const db = Database.open(tempDbPath(t), { threads: 2 });
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: DIM, distance: 'euclid', hnsw: false, payload_index: false });
  const c = db.collection('c');
  const big = 'z'.repeat(3000);
  const write = (round: number): Promise<unknown> =>
    c.upsert(Array.from({ length: 200 }, (_, i) => ({ id: `p${i}`, vector: vectorOf(rng), payload: { ...payloadOf(rng, i + round), big } })));
  await write(0);
  await untilShared(c);
  const shared = c.memoryStats().sharedPayloadBytesAllocated;
  // Each round rewrites 200 × 3 KB: garbage passes the live records and 1 MiB within a few rounds.
  for (let round = 1; round <= 8; round++) {
    const searches = Array.from({ length: 6 }, () => c.searchParallel({ vector: vectorOf(rng), limit: 10, filter: parseFilter(FILTERS[0]) }, { spread: true }));
    await Promise.all([write(round), ...searches]);
    await assertSameAnswers(c, rng, seed, `round ${round}`);
  }
  // Without compaction the records would hold 9 × 200 × 3 KB (5.4 MB).
  assert.ok(c.memoryStats().sharedPayloadBytesAllocated < 4.5e6, `${c.memoryStats().sharedPayloadBytesAllocated} bytes (was ${shared})`);
});

test('has_vector of a named or sparse vector beside conditions no index answers runs on a thread, from the holders bitset, with the service thread answers', async (t) => {
  const seed = testSeed(6060);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const c = await graphWithThreads(t, { payload_index: false, named_vectors: { img: { size: 3, distance: 'dot' } }, sparse_vectors: { words: {} } });
  // Holders at irregular slots (and some deleted below), so that a bit read for the wrong slot shows.
  const holdsImg = (i: number): boolean => (i * 7) % 5 < 2;
  const holdsWords = (i: number): boolean => (i * 3) % 7 !== 0;
  await c.upsert(
    Array.from({ length: 1500 }, (_, i) => ({
      id: `p${i}`,
      vector: vectorOf(rng),
      payload: payloadOf(rng, i),
      ...(holdsImg(i) ? { named_vectors: { img: [rng.next(), rng.next(), rng.next()] } } : {}),
      ...(holdsWords(i) ? { sparse_vectors: { words: { indices: [i % 50, 50 + (i % 13)], values: [1, 0.5] } } } : {}),
    })),
  );
  await c.deleteIds(Array.from({ length: 100 }, () => `p${rng.int(1500)}`));
  await untilShared(c);
  const mixed = [
    { must: [{ has_vector: 'img' }, { key: 'n', range: { gte: 2 } }] },
    { must: [{ key: 'tag', match: { any: ['a', 'b'] } }], must_not: [{ has_vector: 'words' }] },
    { should: [{ has_vector: 'img' }, { key: 'name', type: 'regex', match: { value: '^p[0-9]*7' } }] },
    { must: [{ nested: { key: 'items', filter: { must: [{ key: 'k', range: { lt: 5 } }] } } }, { has_vector: 'words' }], must_not: [{ has_vector: 'img' }] },
  ];
  for (const [f, raw] of mixed.entries()) {
    const filter = parseFilter(raw);
    for (const strategy of ['graph-filtered', 'flat-scan'] as const) {
      const body = { vector: vectorOf(rng), limit: 1 + rng.int(30), filter, params: { strategy } };
      const before = c.threadWorkCounts().filtered;
      const there = await c.searchParallel(body, { spread: true });
      const context = `seed ${seed}, filter ${f} ${JSON.stringify(raw)}, ${strategy}`;
      assert.ok(c.threadWorkCounts().filtered > before, `${context}: the filter did not run on a thread`);
      assert.ok(there.points.length > 0, `${context}: no hits`);
      assert.deepEqual(there.points, c.searchExplained(body).points, context);
    }
  }
});
