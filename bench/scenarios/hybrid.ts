/**
 * Hybrid search in process (Database and Collection, no HTTP): one collection of `n` points, each
 * with two dense vectors, the main one (the peers' Gaussian mixture, `dim` dimensions, Cosine,
 * HNSW at the defaults) and a named one (`named-dim` dimensions of another mixture, Cosine, its own
 * HNSW graph at the collection's m and ef_construction),
 * and a sparse BM25 vector (bench/lib/sparse-corpus.ts, `modifier: idf`):
 *
 *   npm run bench -- hybrid [--n 100000] [--dim 128] [--named-dim 64] [--queries 500] [--runs 3]
 *
 * Per query, timed one by one: the dense search alone (limit 100, the calibrated ef), the sparse
 * search alone (limit 100), and the hybrid query (`Collection.queryStages`: those two as
 * prefetches, fused by RRF, limit 10). Latency p50/p99 of each; recall@10 of the hybrid against
 * the same fusion over an exact dense prefetch; and the named vector's search alone, through its
 * graph (the collection's ef_search) and exact, with the graph's recall@100 against the exact
 * answer. Memory per point: the segment's own accounting (main vectors, graph, named vectors,
 * sparse index and vectors) and the process's RSS and heap growth over the load. Every number is the median of `runs` passes over the same collection, each after an
 * untimed pass over the first 50 queries. Wall time on a shared machine: indicative only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '../../src/db/database.js';
import { GaussianMixture, PEER_MIXTURE } from '../datasets/synthetic.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { parseOptions, positiveInt, type Scenario } from '../lib/scenario.js';
import { documentOf, generateCorpus, generateQueries } from '../lib/sparse-corpus.js';
import { median, quantile, round } from '../lib/stats.js';
import { formatTable } from '../lib/table.js';

const BATCH = 2000;
const PREFETCH = 100;
const LIMIT = 10;
const WARM = 50;

const OPTIONS = `  --n <n>           points (default 100000)
  --dim <d>         main dense dimensions (default 128)
  --named-dim <d>   the named dense vector's dimensions (default 64)
  --queries <q>     queries per pass (default 500)
  --runs <r>        passes; every number is their median (default 3)
  --no-write        do not write bench/results/<date>-hybrid.json`;

interface Pass {
  dense: { p50: number; p99: number };
  sparse: { p50: number; p99: number };
  hybrid: { p50: number; p99: number };
  named: { p50: number; p99: number };
  namedExact: { p50: number; p99: number };
  recall: number;
  namedRecall: number;
}

export const hybridScenario: Scenario = {
  name: 'hybrid',
  summary: 'hybrid query (dense HNSW + sparse prefetches of 100, RRF) latency vs each search alone; memory per point',
  options: OPTIONS,
  async run(argv) {
    const values = parseOptions(argv, {
      n: { type: 'string' },
      dim: { type: 'string' },
      'named-dim': { type: 'string' },
      queries: { type: 'string' },
      runs: { type: 'string' },
      'no-write': { type: 'boolean' },
    });
    const n = positiveInt(values.n, '--n', 100_000);
    const dim = positiveInt(values.dim, '--dim', 128);
    const namedDim = positiveInt(values['named-dim'], '--named-dim', 64);
    const queryCount = positiveInt(values.queries, '--queries', 500);
    const runs = positiveInt(values.runs, '--runs', 3);
    const machine = machineInfo(REPO_DIR);
    const load = loadAverage();
    process.stderr.write(`hybrid: n ${n}, dim ${dim}, ${queryCount} queries, ${runs} runs; load average ${load.join(' ')}\n`);
    if (load[0] > QUIET_LOAD) process.stderr.write(`hybrid: load ${load[0]} is above ${QUIET_LOAD}: the numbers are not clean\n`);

    const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim });
    const base = mixture.base(n);
    const denseQueries = mixture.queries(queryCount);
    const namedMixture = new GaussianMixture({ ...PEER_MIXTURE, dim: namedDim, seed: 43 });
    const namedBase = namedMixture.base(n);
    const namedQueries = namedMixture.queries(queryCount);
    const { corpus, terms } = generateCorpus({ docs: n, vocabulary: 30_000, exponent: 1.1, minLength: 20, maxLength: 200, k1: 1.2, b: 0.75, seed: 42 });
    const sparseQueries = generateQueries(terms, queryCount, 4242);

    const dir = mkdtempSync(join(tmpdir(), 'kith-bench-hybrid-'));
    const db = Database.open(join(dir, 'bench.kith'));
    try {
      await db.createCollection({
        name: 'h',
        vector_size: dim,
        distance: 'cosine',
        hnsw: true,
        named_vectors: { image: { size: namedDim, distance: 'cosine' } },
        sparse_vectors: { bm25: { modifier: 'idf' } },
      });
      const collection = db.collection('h');
      global.gc?.();
      const before = process.memoryUsage();
      const began = performance.now();
      for (let from = 0; from < n; from += BATCH) {
        const points = [];
        for (let i = from; i < Math.min(n, from + BATCH); i++) {
          const doc = documentOf(corpus, i);
          points.push({
            id: i,
            vector: Array.from(base.rows[i] as Float32Array),
            named_vectors: { image: Array.from(namedBase.rows[i] as Float32Array) },
            sparse_vectors: { bm25: { indices: Array.from(doc.indices), values: Array.from(doc.values) } },
          });
        }
        await collection.upsert(points);
        if ((from / BATCH) % 10 === 0) process.stderr.write(`  loaded ${Math.min(n, from + BATCH)}\n`);
      }
      const loadSeconds = (performance.now() - began) / 1000;
      global.gc?.();
      const after = process.memoryUsage();
      const stats = collection.memoryStats();
      const memory = {
        dense_vector_bytes_per_point: round(stats.vectorBytesAllocated / n, 1),
        graph_bytes_per_point: round(stats.graphBytesAllocated / n, 1),
        named_vector_bytes_per_point: round(stats.namedVectorBytes / n, 1),
        sparse_bytes_per_point: round(stats.sparseBytes / n, 1),
        sparse_entries_per_point: round(corpus.indices.length / n, 1),
        rss_bytes_per_point: round((after.rss - before.rss) / n, 1),
        heap_bytes_per_point: round((after.heapUsed - before.heapUsed) / n, 1),
        array_buffer_bytes_per_point: round((after.arrayBuffers - before.arrayBuffers) / n, 1),
        gc_forced: global.gc !== undefined,
      };
      process.stderr.write(`  loaded in ${round(loadSeconds, 1)} s; memory ${JSON.stringify(memory)}\n`);

      const sparseOf = (q: number) => {
        const v = sparseQueries[q] as { indices: Uint32Array; values: Float32Array };
        return { name: 'bm25', indices: Array.from(v.indices), values: Array.from(v.values) };
      };
      const denseOf = (q: number): number[] => Array.from(denseQueries.rows[q] as Float32Array);
      const hybrid = (q: number, exact: boolean) =>
        collection.queryStages({
          prefetch: [
            { vector: denseOf(q), limit: PREFETCH, ...(exact ? { params: { exact: true } } : {}) },
            { sparse_vector: sparseOf(q), limit: PREFETCH },
          ],
          fusion: 'rrf',
          limit: LIMIT,
          with_payload: false,
        });
      const truth: string[][] = [];
      for (let q = 0; q < queryCount; q++) truth.push((await hybrid(q, true)).map((h) => h.id));

      const passes: Pass[] = [];
      for (let r = 0; r < runs; r++) {
        for (let q = 0; q < Math.min(WARM, queryCount); q++) {
          await collection.searchParallel({ vector: denseOf(q), limit: PREFETCH, with_payload: false });
          await collection.searchParallel({ sparse_vector: sparseOf(q), limit: PREFETCH, with_payload: false });
          await hybrid(q, false);
        }
        const times = { dense: [] as number[], sparse: [] as number[], hybrid: [] as number[], named: [] as number[], namedExact: [] as number[] };
        let found = 0;
        let namedFound = 0;
        let namedExpected = 0;
        for (let q = 0; q < queryCount; q++) {
          let t = performance.now();
          await collection.searchParallel({ vector: denseOf(q), limit: PREFETCH, with_payload: false });
          times.dense.push(performance.now() - t);
          t = performance.now();
          await collection.searchParallel({ sparse_vector: sparseOf(q), limit: PREFETCH, with_payload: false });
          times.sparse.push(performance.now() - t);
          t = performance.now();
          const hits = await hybrid(q, false);
          times.hybrid.push(performance.now() - t);
          const namedQuery = { name: 'image', vector: Array.from(namedQueries.rows[q] as Float32Array) };
          t = performance.now();
          const namedHits = await collection.searchParallel({ named_vector: namedQuery, limit: PREFETCH, with_payload: false });
          times.named.push(performance.now() - t);
          t = performance.now();
          const namedTruth = await collection.searchParallel({ named_vector: namedQuery, limit: PREFETCH, params: { exact: true }, with_payload: false });
          times.namedExact.push(performance.now() - t);
          const namedSet = new Set(namedTruth.points.map((h) => h.id));
          namedExpected += namedSet.size;
          namedFound += namedHits.points.filter((h) => namedSet.has(h.id)).length;
          const expected = new Set(truth[q]);
          found += hits.filter((h) => expected.has(h.id)).length;
        }
        const summary = (ms: number[]) => ({ p50: round(quantile(ms, 0.5), 3), p99: round(quantile(ms, 0.99), 3) });
        const pass: Pass = {
          dense: summary(times.dense),
          sparse: summary(times.sparse),
          hybrid: summary(times.hybrid),
          named: summary(times.named),
          namedExact: summary(times.namedExact),
          recall: round(found / truth.reduce((s, t) => s + t.length, 0), 4),
          namedRecall: round(namedFound / namedExpected, 4),
        };
        process.stderr.write(`  run ${r + 1}: ${JSON.stringify(pass)}\n`);
        passes.push(pass);
      }
      const med = (pick: (p: Pass) => number): number => round(median(passes.map(pick)), 3);
      const labels = {
        dense: `dense HNSW, limit ${PREFETCH}`,
        sparse: `sparse (idf), limit ${PREFETCH}`,
        hybrid: `hybrid: both prefetches, RRF, limit ${LIMIT}`,
        named: `named vector (${namedDim}-d, its graph), limit ${PREFETCH}`,
        namedExact: `named vector (${namedDim}-d, exact), limit ${PREFETCH}`,
      };
      const rows = (['dense', 'sparse', 'hybrid', 'named', 'namedExact'] as const).map((kind) => [
        labels[kind],
        med((p) => p[kind].p50),
        med((p) => p[kind].p99),
      ]);
      process.stdout.write(`${formatTable(['query', 'p50 ms', 'p99 ms'], rows)}\n`);
      process.stdout.write(`hybrid recall@10 against the fusion over an exact dense prefetch: ${med((p) => p.recall)}\n`);
      process.stdout.write(`named vector recall@${PREFETCH} of its graph against exact: ${med((p) => p.namedRecall)}\n`);
      process.stdout.write(
        `${formatTable(
          ['memory per point', 'bytes'],
          Object.entries(memory).map(([k, v]) => [k, String(v)]),
        )}\n`,
      );
      const summary = {
        scenario: 'hybrid',
        n,
        dim,
        queries: queryCount,
        runs,
        prefetch: PREFETCH,
        limit: LIMIT,
        load_seconds: round(loadSeconds, 1),
        dense_p50_ms: med((p) => p.dense.p50),
        dense_p99_ms: med((p) => p.dense.p99),
        sparse_p50_ms: med((p) => p.sparse.p50),
        sparse_p99_ms: med((p) => p.sparse.p99),
        hybrid_p50_ms: med((p) => p.hybrid.p50),
        hybrid_p99_ms: med((p) => p.hybrid.p99),
        named_p50_ms: med((p) => p.named.p50),
        named_p99_ms: med((p) => p.named.p99),
        named_exact_p50_ms: med((p) => p.namedExact.p50),
        named_exact_p99_ms: med((p) => p.namedExact.p99),
        named_recall_at_100: med((p) => p.namedRecall),
        named_dim: namedDim,
        hybrid_recall_at_10: med((p) => p.recall),
        memory,
      };
      if (values['no-write'] !== true) {
        const written = writeResult('hybrid', { ...summary, machine, load_average_before: load, load_average_after: loadAverage(), passes });
        process.stderr.write(`  wrote ${written}\n`);
      }
      process.stdout.write(`${JSON.stringify(summary)}\n`);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
