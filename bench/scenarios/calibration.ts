/**
 * Recall by default, with and without the calibrated ef (docs/params.md, "Calibrated ef";
 * docs/benchmarks.md, "Issue 10: recall by default"). In this process, no HTTP:
 *
 *   npm run bench -- calibration [--datasets sift5k,mnist10k,glove12k,synthetic] [--n 100000] [--queries 300] [--target 0.95]
 *
 * For each set: an HNSW collection at the defaults (m 16, ef_construction 200, target_recall
 * 0.95 unless --target), loaded in batches of 1,000 while the service's background calibration runs as it would;
 * then recall@10 of the set's own queries (not in the collection) against exact search, at ef 64
 * (the default before calibration), at the ef the background calibration left in use, and at the
 * ef of one more calibration run now on every point (timed). A hit counts when its distance
 * reaches the exact 10th, so ties count as found. Recall is what this measures; the machine is
 * shared, so times are indicative only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Collection } from '../../src/collection/collection.js';
import { Database } from '../../src/db/database.js';
import type { AnnDataset } from '../datasets/dataset.js';
import { syntheticDataset } from '../datasets/dataset.js';
import { loadGlove12k, loadMnist10k, loadSift5k } from '../datasets/real.js';
import { nameList, parseOptions, positiveInt, type Scenario, UsageError } from '../lib/scenario.js';

interface Row {
  set: string;
  target: number;
  points: number;
  dim: number;
  load_s: number;
  default_ef: number;
  recall_default: number;
  served_ef: number;
  served_points_when_calibrated: number | null;
  recall_served: number;
  calibrated_ef: number;
  estimated_recall: number;
  lower_bound: number;
  recall_calibrated: number;
  calibration_s: number;
}

function load(name: string, n: number, queries: number): AnnDataset {
  if (name === 'sift5k') return loadSift5k();
  if (name === 'mnist10k') return loadMnist10k();
  if (name === 'glove12k') return loadGlove12k();
  if (name === 'synthetic') return syntheticDataset(n, 128, queries);
  throw new Error(`unknown dataset ${name}`);
}

/** recall@10 at `ef` (undefined: the collection's default) against the exact answers' 10th score. */
function recallAt(collection: Collection, queries: readonly number[][], kth: readonly number[], ascending: boolean, ef?: number): number {
  let found = 0;
  queries.forEach((vector, i) => {
    const bound = kth[i] as number;
    const tolerance = 1e-5 * Math.max(1, Math.abs(bound));
    const hits = collection.search({ vector, limit: 10, with_payload: false, params: ef === undefined ? {} : { ef } });
    found += hits.filter((h) => (ascending ? h.score <= bound + tolerance : h.score >= bound - tolerance)).length;
  });
  return found / (10 * queries.length);
}

async function measure(dataset: AnnDataset, queryCount: number, target: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'kith-calibration-'));
  const db = Database.open(join(dir, 'bench.kith'));
  try {
    const distance = dataset.metric === 'l2' ? 'euclid' : dataset.metric === 'cosine' ? 'cosine' : 'dot';
    await db.createCollection({ name: 'c', vector_size: dataset.dim, distance, hnsw: true, parameters: { target_recall: target } });
    const collection = db.collection('c');
    const began = performance.now();
    for (let i = 0; i < dataset.base.count; i += 1000) {
      const rows = dataset.base.rows.slice(i, i + 1000);
      await collection.upsert(rows.map((row, j) => ({ id: i + j, vector: Array.from(row) })));
    }
    const loadSeconds = (performance.now() - began) / 1000;
    // Let the background calibration the load started finish, as a served collection would.
    while (collection.describe().calibration.running) await new Promise((resolve) => setTimeout(resolve, 100));
    const served = collection.describe().calibration;

    const queries = dataset.queries.rows.slice(0, queryCount).map((row) => Array.from(row));
    const ascending = distance === 'euclid';
    const kth = queries.map((vector) => {
      const exact = collection.search({ vector, limit: 10, with_payload: false, params: { exact: true } });
      return (exact[9] as { score: number }).score;
    });
    const recallDefault = recallAt(collection, queries, kth, ascending, 64);
    const recallServed = recallAt(collection, queries, kth, ascending);
    const t0 = performance.now();
    const result = collection.calibrateEf();
    const calibrationSeconds = (performance.now() - t0) / 1000;
    if (result === undefined) throw new Error('not calibrated');
    const recallCalibrated = recallAt(collection, queries, kth, ascending);
    return {
      set: dataset.label,
      target,
      points: dataset.base.count,
      dim: dataset.dim,
      load_s: Math.round(loadSeconds),
      default_ef: 64,
      recall_default: recallDefault,
      served_ef: served.ef,
      served_points_when_calibrated: served.points_when_calibrated,
      recall_served: recallServed,
      calibrated_ef: result.ef,
      estimated_recall: result.recall,
      lower_bound: result.lowerBound,
      recall_calibrated: recallCalibrated,
      calibration_s: Math.round(calibrationSeconds * 10) / 10,
    };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const OPTIONS = `  --datasets <a,b,…>     sift5k, mnist10k, glove12k, synthetic (default all four)
  --n <n>                points of the synthetic set (default 100000)
  --queries <q>          queries per set (default 300)
  --target <r>           target_recall of the collections (default 0.95)`;

export const calibrationScenario: Scenario = {
  name: 'calibration',
  summary: 'recall@10 at the defaults: at ef 64, at the background-calibrated ef, after a full calibration (timed)',
  options: OPTIONS,
  async run(argv) {
    const values = parseOptions(argv, { datasets: { type: 'string' }, n: { type: 'string' }, queries: { type: 'string' }, target: { type: 'string' } });
    const names = nameList(values.datasets, '--datasets', ['sift5k', 'mnist10k', 'glove12k', 'synthetic']);
    const n = positiveInt(values.n, '--n', 100000);
    const queryCount = positiveInt(values.queries, '--queries', 300);
    const target = values.target === undefined ? 0.95 : Number(values.target);
    if (!(target >= 0.5 && target < 1)) throw new UsageError(`--target: expected a recall in [0.5, 1), got ${JSON.stringify(values.target)}`);
    for (const name of names) {
      const row = await measure(load(name, n, queryCount), queryCount, target);
      console.log(JSON.stringify(row));
    }
  },
};
