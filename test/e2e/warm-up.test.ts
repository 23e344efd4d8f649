import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WARM_UP_LIMITS } from '../../src/search/warm-up.js';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { randomVectors } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

/**
 * After a collection loads, a bounded burst of searches on its own vectors warms the search path
 * (search/warm-up.ts): reported in the load report, skipped for small collections, and it
 * changes nothing anyone can see.
 */

const DIM = 8;

async function fill(db: Database, name: string, n: number, rng: SeededRng): Promise<void> {
  await db.createCollection({ name, vector_size: DIM, distance: 'cosine', hnsw: true });
  const vectors = randomVectors(rng, n, DIM);
  for (let start = 0; start < n; start += 500) {
    const points = vectors.slice(start, start + 500).map((vector, i) => ({ id: start + i, vector, payload: { i: start + i } }));
    await db.collection(name).upsert(points);
  }
}

test('a loaded collection of at least minPoints is warmed within the limits; a small one is not', async (t) => {
  const path = tempDbPath(t);
  const rng = new SeededRng(5);
  let db = Database.open(path);
  await fill(db, 'big', WARM_UP_LIMITS.minPoints + 200, rng);
  await fill(db, 'small', 50, rng);
  const queries = randomVectors(rng, 20, DIM);
  const answers = (d: Database): unknown => queries.map((vector) => d.collection('big').search({ vector, limit: 10 }));
  const before = answers(db);
  const countBefore = db.collection('big').pointsCount;
  await db.close();

  const opened = performance.now();
  db = Database.open(path);
  const openMs = performance.now() - opened;
  t.after(() => db.close());
  const big = db.loadReports.get('big')?.warmUp;
  const small = db.loadReports.get('small')?.warmUp;
  assert.ok(big !== undefined && small !== undefined);
  assert.ok(big.searches >= 1 && big.searches <= WARM_UP_LIMITS.maxSearches, `searches ${big.searches}`);
  // The budget is checked before each search, so the last one may run past it by its own length.
  assert.ok(big.ms >= 0 && big.ms <= WARM_UP_LIMITS.maxMs + 100, `ms ${big.ms}`);
  assert.ok(big.ms <= openMs, 'the burst is part of the open');
  assert.deepEqual(small, { searches: 0, ms: 0 });
  // Read only: same points, same answers, sound graph.
  assert.equal(db.collection('big').pointsCount, countBefore);
  assert.deepEqual(answers(db), before);
  assert.deepEqual(db.collection('big').checkIntegrity(), []);
});
