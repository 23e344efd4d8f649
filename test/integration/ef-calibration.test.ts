/**
 * Calibrated ef (search/ef-calibration.ts, docs/params.md "Calibrated ef"): a collection whose
 * default ef misses its target recall reaches it after calibration, measured against exact search
 * with queries that are not in the collection; duplicates do not fool it; an explicit ef wins;
 * the result survives a restart; the background calibration starts by itself once the collection
 * is large enough.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFromStored } from '../../src/segment/collection-config.js';
import type { Collection } from '../../src/collection/collection.js';
import { MIN_POINTS } from '../../src/search/ef-calibration.js';
import { calibrateEf, efLadder, meanWithLowerBound } from '../../src/segment/recall-calibration.js';
import type { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed, withSeed } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const DIM = 16;

/** Draws points around `clusters` fixed centres (data and queries from one mixture). */
function mixture(rng: SeededRng, clusters: number, spread = 1): (n: number) => number[][] {
  const centres = Array.from({ length: clusters }, () => Array.from({ length: DIM }, () => rng.gaussian() * 2));
  return (n) => Array.from({ length: n }, () => (rng.pick(centres) as number[]).map((x) => x + rng.gaussian() * spread));
}

/** `n` points around `clusters` centres; a weak graph (m 4, ef_construction 8) makes recall at ef 64 poor. */
function clustered(rng: SeededRng, n: number, clusters: number, spread = 1): number[][] {
  return mixture(rng, clusters, spread)(n);
}

/** recall@10 of the collection's default search against exact search, ties counted as hits. */
function measuredRecall(collection: Collection, queries: readonly number[][], params: { ef?: number } = {}): number {
  let found = 0;
  for (const vector of queries) {
    const exact = collection.search({ vector, limit: 10, with_payload: false, params: { exact: true } });
    const kth = (exact[9] as { score: number }).score;
    const hits = collection.search({ vector, limit: 10, with_payload: false, params });
    found += hits.filter((h) => h.score <= kth * (1 + 1e-5) + 1e-9).length;
  }
  return found / (10 * queries.length);
}

async function fill(collection: Collection, vectors: readonly number[][]): Promise<void> {
  for (let i = 0; i < vectors.length; i += 1000) {
    await collection.upsert(vectors.slice(i, i + 1000).map((vector, j) => ({ id: i + j, vector })));
  }
}

function efSourceOf(collection: Collection, vector: number[], params: { ef?: number } = {}): { ef: number | null; ef_source: string | null } {
  const { explain } = collection.searchExplained({ vector, limit: 10, params });
  return { ef: explain.ef, ef_source: explain.ef_source };
}

test('a weak graph misses its target at the default ef; after calibration fresh queries reach it', async (t) => {
  const seed = testSeed(0xef1);
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await withSeed(seed, async (rng) => {
    const draw = mixture(rng, 12);
    const vectors = draw(1500);
    const queries = draw(150);
    await db.createCollection({
      name: 'weak',
      vector_size: DIM,
      distance: 'euclid',
      hnsw: true,
      parameters: { m: 4, ef_construction: 8, target_recall: 0.98 },
    });
    const collection = db.collection('weak');
    await fill(collection, vectors);
    // Below MIN_POINTS nothing runs by itself: the default applies.
    assert.ok(vectors.length < MIN_POINTS);
    assert.deepEqual(efSourceOf(collection, queries[0] as number[]), { ef: 64, ef_source: 'default' });
    const before = measuredRecall(collection, queries);
    assert.ok(before < 0.98, `recall at the default ef is ${before}: the test needs a collection that misses the target`);

    const result = collection.calibrateEf();
    assert.ok(result?.reached, JSON.stringify(result));
    assert.ok(result.ef > 64, `calibrated ef ${result.ef}`);
    assert.ok(result.lowerBound >= 0.98 && result.recall >= result.lowerBound, JSON.stringify(result));
    // Every ef tried before the chosen one fell short.
    for (const step of result.steps.slice(0, -1)) assert.ok(step.lowerBound < 0.98, JSON.stringify(result.steps));
    assert.deepEqual(efSourceOf(collection, queries[0] as number[]), { ef: result.ef, ef_source: 'calibrated' });
    const after = measuredRecall(collection, queries);
    t.diagnostic(`weak graph: at 64 ${before.toFixed(3)}; ef ${result.ef}: estimated ${result.recall.toFixed(3)}, measured ${after.toFixed(3)}`);
    // Queries from outside the collection: the estimate's own sampling error plus held-out vs left-out.
    assert.ok(after >= 0.97, `recall after calibration ${after} (ef ${result.ef}, estimated ${result.recall})`);
    assert.ok(after > before + 0.05, `before ${before}, after ${after}`);

    const info = collection.describe();
    assert.equal(info.parameters.target_recall, 0.98);
    assert.deepEqual(info.calibration, {
      state: 'calibrated',
      running: false,
      ef: result.ef,
      target_recall: 0.98,
      recall: result.recall,
      recall_lower_bound: result.lowerBound,
      reached: true,
      sample: 300,
      points_when_calibrated: 1500,
      duration_ms: info.calibration.duration_ms,
    });
  });
});

test('duplicates: ties with the k-th exact neighbour count as found, and the estimate matches measured recall', async (t) => {
  const seed = testSeed(0xef2);
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await withSeed(seed, async (rng) => {
    // 200 distinct vectors, each stored 8 times (plus a few singles): every query's top 10 is mostly copies.
    const draw = mixture(rng, 5, 0.3);
    const distinct = draw(200);
    const vectors = [...distinct.flatMap((v) => Array.from({ length: 8 }, () => v)), ...draw(100)];
    await db.createCollection({
      name: 'dup',
      vector_size: DIM,
      distance: 'euclid',
      hnsw: true,
      parameters: { m: 6, ef_construction: 16, target_recall: 0.95 },
    });
    const collection = db.collection('dup');
    await fill(collection, vectors);
    const result = collection.calibrateEf();
    assert.ok(result !== undefined, 'calibrated');
    const queries = draw(120);
    const measured = measuredRecall(collection, queries);
    t.diagnostic(
      `duplicates: ef ${result.ef}, estimated ${result.recall.toFixed(3)}, measured ${measured.toFixed(3)}, at 64 ${measuredRecall(collection, queries, { ef: 64 }).toFixed(3)}`,
    );
    assert.ok(result.reached, JSON.stringify(result.steps));
    assert.ok(measured >= 0.93, `measured ${measured} at ef ${result.ef} (estimated ${result.recall})`);
    assert.ok(Math.abs(measured - result.recall) <= 0.04, `measured ${measured} at ef ${result.ef}, estimated ${result.recall}`);
  });
});

test('the measurement alone: a ladder from k on random data rises with ef and stops at the first ef that reaches the target', async (t) => {
  const seed = testSeed(0xef3);
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await withSeed(seed, async (rng) => {
    const vectors = Array.from({ length: 2000 }, () => Array.from({ length: DIM }, () => rng.gaussian()));
    await db.createCollection({ name: 'r', vector_size: DIM, distance: 'cosine', hnsw: true, parameters: { m: 4, ef_construction: 10 } });
    const collection = db.collection('r');
    await fill(collection, vectors);
    // The segment as the collection's calibration reads it.
    const reader = (collection as unknown as { segment: Parameters<typeof calibrateEf>[0] }).segment;
    const job = calibrateEf(reader, { k: 10, target: 0.9, ladder: efLadder(10, 512), sampleSize: 100, seed: 5 });
    let yields = 0;
    let step = job.next();
    while (step.done !== true) {
      yields++;
      step = job.next();
    }
    const result = step.value;
    assert.ok(result !== undefined);
    assert.ok(yields > 100, `the work is cut in small steps (${yields})`);
    assert.equal(result.sample, 100);
    assert.equal(result.steps[0]?.ef, 10);
    assert.ok((result.steps[0]?.recall ?? 1) < 0.9, JSON.stringify(result.steps));
    assert.equal(result.ef, result.steps[result.steps.length - 1]?.ef);
    assert.ok(result.reached && result.lowerBound >= 0.9);
    for (let i = 1; i < result.steps.length; i++) {
      assert.ok((result.steps[i]?.recall ?? 0) >= (result.steps[i - 1]?.recall ?? 0) - 0.01, JSON.stringify(result.steps));
    }
    const queries = Array.from({ length: 100 }, () => Array.from({ length: DIM }, () => rng.gaussian()));
    // Cosine scores are similarities: measure with ids of the exact answer instead of a distance bound.
    let found = 0;
    for (const vector of queries) {
      const exact = new Set(collection.search({ vector, limit: 10, params: { exact: true } }).map((h) => h.id));
      found += collection.search({ vector, limit: 10, params: { ef: result.ef } }).filter((h) => exact.has(h.id)).length;
    }
    assert.ok(found / 1000 >= 0.87, `measured ${found / 1000} at ef ${result.ef}, estimated ${result.recall}`);
  });
});

test('the lower bound is the mean less 1.645 standard errors', () => {
  const values = Float64Array.from([1, 1, 0.9, 0.8, 1, 1, 0.7, 1]);
  const { mean, lowerBound } = meanWithLowerBound(values);
  assert.equal(mean, 7.4 / 8);
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / 7);
  assert.ok(Math.abs(lowerBound - (mean - (1.645 * sd) / Math.sqrt(8))) < 1e-12);
  assert.deepEqual(efLadder(64, 2048), [64, 96, 144, 216, 328, 496, 744, 1120, 1680, 2048]);
});

test('precedence: params.ef, then an ef_search given at create, then the calibrated ef', async (t) => {
  const seed = testSeed(0xef4);
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await withSeed(seed, async (rng) => {
    const vectors = clustered(rng, 600, 6);
    await db.createCollection({ name: 'fixed', vector_size: DIM, distance: 'euclid', hnsw: true, parameters: { m: 4, ef_construction: 8, ef_search: 40 } });
    await db.createCollection({
      name: 'cal',
      vector_size: DIM,
      distance: 'euclid',
      hnsw: true,
      parameters: { m: 4, ef_construction: 8, target_recall: 0.999 },
    });
    await db.createCollection({ name: 'flat', vector_size: DIM, distance: 'euclid' });
    for (const name of ['fixed', 'cal', 'flat']) await fill(db.collection(name), vectors);
    const q = vectors[3] as number[];

    const fixed = db.collection('fixed');
    assert.equal(fixed.calibrateEf(), undefined, 'a given ef_search is not calibrated');
    assert.equal(fixed.describe().calibration.state, 'fixed');
    assert.equal(fixed.describe().calibration.ef, 40);
    assert.deepEqual(efSourceOf(fixed, q), { ef: 40, ef_source: 'collection' });
    assert.deepEqual(efSourceOf(fixed, q, { ef: 7 }), { ef: 10, ef_source: 'request' }, 'never below the limit');

    const cal = db.collection('cal');
    const result = cal.calibrateEf();
    assert.ok(result !== undefined && result.ef > 64, JSON.stringify(result));
    assert.deepEqual(efSourceOf(cal, q), { ef: result.ef, ef_source: 'calibrated' });
    assert.deepEqual(efSourceOf(cal, q, { ef: 20 }), { ef: 20, ef_source: 'request' });
    const wide = cal.searchExplained({ vector: q, limit: 5000, params: { explain: true } });
    assert.equal(wide.explain.ef, Math.max(result.ef, 5000));

    const flat = db.collection('flat');
    assert.equal(flat.calibrateEf(), undefined);
    assert.equal(flat.describe().calibration.state, 'flat');
    assert.deepEqual(efSourceOf(flat, q), { ef: null, ef_source: null });
  });
});

for (const threads of [0, 1]) {
  test(`background (threads ${threads}): a collection reaching MIN_POINTS calibrates by itself, on a search thread when there is one, stores the result, and a restart starts calibrated`, async (t) => {
    const seed = testSeed(0xef5);
    const path = tempDbPath(t);
    let db = Database.open(path, { threads });
    t.after(() => db.close());
    const vectors = withSeed(seed, (rng) => clustered(rng, MIN_POINTS + 200, 10));
    await db.createCollection({ name: 'bg', vector_size: DIM, distance: 'euclid', hnsw: true, parameters: { m: 4, ef_construction: 8, target_recall: 0.99 } });
    let collection = db.collection('bg');
    // One batch, so the calibration it starts sees all of it.
    await collection.upsert(vectors.map((vector, id) => ({ id, vector })));
    const deadline = Date.now() + 10_000;
    while (collection.describe().calibration.state !== 'calibrated' || collection.describe().calibration.running) {
      assert.ok(Date.now() < deadline, `not calibrated in time: ${JSON.stringify(collection.describe().calibration)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const calibrated = collection.describe().calibration;
    // With a search thread the background work runs there, never on the service thread.
    assert.deepEqual(collection.calibrationsStarted(), threads > 0 ? { onThread: 1, here: 0 } : { onThread: 0, here: 1 });
    assert.equal(calibrated.points_when_calibrated, MIN_POINTS + 200);
    assert.ok(calibrated.ef > 64 && calibrated.reached === true, JSON.stringify(calibrated));
    // The annotation is written through the write queue: wait for it, then restart.
    await collection.annotate('other', 1);
    assert.deepEqual(Object.keys(collection.annotations()).sort(), ['ef_calibration', 'other']);
    await db.close();

    db = Database.open(path, { threads });
    collection = db.collection('bg');
    const q = vectors[0] as number[];
    assert.deepEqual(efSourceOf(collection, q), { ef: calibrated.ef, ef_source: 'calibrated' });
    assert.deepEqual({ ...collection.describe().calibration, running: false }, { ...calibrated, running: false });
    assert.equal(collection.describe().calibration.running, false, 'nothing changed: no new calibration');

    // Changes to a quarter of the points make it due again.
    await fill(
      collection,
      withSeed(seed + 1, (rng) => clustered(rng, 500, 10)),
    );
    assert.equal(collection.describe().calibration.running, false, 'ids 0..499 replaced: 500 changes < 25% of 2200');
    await collection.upsert(withSeed(seed + 2, (rng) => clustered(rng, 60, 10)).map((vector, i) => ({ id: `n${i}`, vector })));
    assert.equal(collection.describe().calibration.running, true, '560 changes ≥ 550');
    // Writes and searches go on while it runs; it ends with the points it began with.
    assert.deepEqual(await collection.deleteIds([1, 2, 3]), { deleted: 3 });
    assert.equal(collection.search({ vector: q, limit: 3 }).length, 3);
    while (collection.describe().calibration.running) {
      assert.ok(Date.now() < deadline + 10_000, JSON.stringify(collection.describe().calibration));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const recalibrated = collection.describe().calibration;
    assert.equal(recalibrated.state, 'calibrated');
    // Counted when its first slice runs: before the delete lands, or (a slow turn) after it.
    assert.ok([MIN_POINTS + 260, MIN_POINTS + 257].includes(recalibrated.points_when_calibrated ?? 0), JSON.stringify(recalibrated));
    assert.equal(recalibrated.reached, true);
    assert.equal(collection.calibrationsStarted().here, threads > 0 ? 0 : 1);
  });
}

test('stored configurations: ef_search is explicit when stored so, or (stored before the flag) when it is not 64', () => {
  const base = { name: 'x', vector_size: 4, distance: 'Cosine', hnsw: true, quantization: 'none', payload_index: true };
  const p = { m: 16, ef_construction: 200, k: 10 };
  assert.equal(configFromStored({ ...base, parameters: { ...p, ef_search: 64 } }, 'x').parameters.efSearchExplicit, false);
  assert.equal(configFromStored({ ...base, parameters: { ...p, ef_search: 100 } }, 'x').parameters.efSearchExplicit, true);
  assert.equal(configFromStored({ ...base, parameters: { ...p, ef_search: 64, ef_search_explicit: true } }, 'x').parameters.efSearchExplicit, true);
  const stored = configFromStored({ ...base, parameters: { ...p, ef_search: 64, target_recall: 0.9, ef_search_explicit: false } }, 'x');
  assert.equal(stored.parameters.efSearchExplicit, false);
  assert.equal(stored.parameters.targetRecall, 0.9);
  assert.equal(configFromStored({ ...base, parameters: { ...p, ef_search: 64 } }, 'x').parameters.targetRecall, 0.95);
});

test('a background calibration overtaken by calibrateNow does not replace the newer result, in memory or on disk', async (t) => {
  const seed = testSeed(0xef7);
  const path = tempDbPath(t);
  const db = Database.open(path);
  await withSeed(seed, async (rng) => {
    await db.createCollection({ name: 'c', vector_size: DIM, distance: 'euclid', hnsw: true, parameters: { m: 4, ef_construction: 8 } });
    const c = db.collection('c');
    await fill(c, clustered(rng, MIN_POINTS + 500, 30));
    // describe() touches the calibration: a background run is scheduled (it starts at the next turn)…
    assert.equal(c.describe().calibration.running, true, `seed ${seed}: a background calibration is due`);
    // …and a synchronous one, begun after it, ends first.
    const now = c.calibrateEf();
    assert.ok(now !== undefined);
    for (let waited = 0; c.describe().calibration.running && waited < 30_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    assert.equal(c.describe().calibration.running, false, `seed ${seed}: the background run ended`);
    const kept = c.describe().calibration;
    assert.equal(kept.recall, now.recall, `seed ${seed}: the newer measurement is kept`);
    assert.equal(kept.ef, now.ef);
    const duration = kept.duration_ms;
    await db.close();
    const reopened = Database.open(path);
    t.after(() => reopened.close());
    const stored = reopened.collection('c').describe().calibration;
    assert.equal(stored.recall, now.recall, `seed ${seed}: the stored record is the newer one`);
    assert.equal(stored.duration_ms, duration);
  });
});
