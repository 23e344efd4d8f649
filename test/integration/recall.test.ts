/**
 * Recall@10 of HNSW at default parameters (m 16, ef_construction 200, ef_search 64) on the real
 * datasets in the repository's datasets/ folder (see its README), against float64 brute-force
 * ground truth: at least 0.95 on each.
 * Also run on sq8 collections, where the bar is lower (quantization moves distances) and the
 * measured value is printed for docs/benchmarks.md.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { AnnDataset } from '../../bench/datasets/dataset.js';
import { loadGlove12k, loadMnist10k, loadSift5k } from '../../bench/datasets/real.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const K = 10;
/** Queries per dataset: enough for a stable recall, few enough for CI. */
const QUERIES = 200;

function exactTopK(dataset: AnnDataset, query: Float32Array): number[] {
  const { base, metric, dim } = dataset;
  let qNorm = 0;
  for (let j = 0; j < dim; j++) qNorm += (query[j] as number) ** 2;
  const scored: Array<[number, number]> = [];
  for (let r = 0; r < base.count; r++) {
    const row = base.rows[r] as Float32Array;
    let dot = 0;
    let l2 = 0;
    let norm = 0;
    for (let j = 0; j < dim; j++) {
      const a = query[j] as number;
      const b = row[j] as number;
      dot += a * b;
      l2 += (a - b) * (a - b);
      norm += b * b;
    }
    const distance = metric === 'l2' ? l2 : metric === 'cosine' ? 1 - dot / Math.sqrt(qNorm * norm || 1) : -dot;
    scored.push([distance, r]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return scored.slice(0, K).map(([, r]) => r);
}

async function measureRecall(t: TestContext, dataset: AnnDataset, quantization: 'none' | 'sq8'): Promise<number> {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  const distance = dataset.metric === 'l2' ? 'euclid' : dataset.metric === 'cosine' ? 'cosine' : 'dot';
  await db.createCollection({ name: 'r', vector_size: dataset.dim, distance, hnsw: true, quantization });
  const collection = db.collection('r');
  for (let start = 0; start < dataset.base.count; start += 1000) {
    const rows = dataset.base.rows.slice(start, start + 1000);
    await collection.upsert(rows.map((row, i) => ({ id: start + i, vector: Array.from(row) })));
  }
  let hits = 0;
  const queries = Math.min(QUERIES, dataset.queries.count);
  for (let q = 0; q < queries; q++) {
    const query = dataset.queries.rows[q] as Float32Array;
    const truth = new Set(exactTopK(dataset, query));
    for (const h of collection.search({ vector: Array.from(query), limit: K, with_payload: false })) if (truth.has(Number(h.id))) hits++;
  }
  return hits / (queries * K);
}

for (const load of [loadSift5k, loadMnist10k, loadGlove12k]) {
  const dataset = load();
  test(`HNSW recall@10 >= 0.95 at default parameters on ${dataset.name} (${dataset.base.count} × ${dataset.dim}, ${dataset.metric})`, async (t) => {
    const recall = await measureRecall(t, dataset, 'none');
    t.diagnostic(`${dataset.name} recall@10 ${recall.toFixed(4)}`);
    assert.ok(recall >= 0.95, `${dataset.name}: recall@10 ${recall}`);
  });
  test(`HNSW on sq8 keeps recall@10 >= 0.85 on ${dataset.name}`, async (t) => {
    const recall = await measureRecall(t, dataset, 'sq8');
    t.diagnostic(`${dataset.name} sq8 recall@10 ${recall.toFixed(4)}`);
    assert.ok(recall >= 0.85, `${dataset.name} sq8: recall@10 ${recall}`);
  });
}
