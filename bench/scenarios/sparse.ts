/**
 * The sparse inverted index in process (src/index/sparse/, no collection, no HTTP):
 *
 *   npm run bench -- sparse [--docs 100000] [--queries 1000] [--runs 3]
 *
 * A BM25 corpus (bench/lib/sparse-corpus.ts: Zipf vocabulary of `vocabulary` terms, exponent 1.1,
 * 20–200 tokens per document, BM25 document weights with k1 1.2 and b 0.75, seed 42) indexed with
 * `idf: true`, slots 0…docs-1 in order. Queries: 2–8 distinct terms from the same law, value 1.
 *
 * Per run: build (every add, timed), memoryBytes()/docs before and after trim(), then `search(k=10)` over every query,
 * each timed (QPS over the pass, latency p50/p99), unfiltered and with an accept() passing a
 * seeded random 10% of the slots; then the exact reference (bench/lib/sparse-reference.ts: a
 * brute-force merge-join scan of every document) over the same queries, for recall@10 and its
 * QPS beside the index's. Each timed pass follows an untimed pass over the first 100 queries.
 * Every number is the median of `runs` runs. Wall time on a shared machine: indicative only.
 */
import { SeededRng } from '../../src/core/rng.js';
import { SparseIndex } from '../../src/index/sparse/sparse-index.js';
import type { SparseVector } from '../../src/index/sparse/sparse-vector.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { parseOptions, positiveInt, type Scenario } from '../lib/scenario.js';
import { documentOf, generateCorpus, generateQueries } from '../lib/sparse-corpus.js';
import { ReferenceScan } from '../lib/sparse-reference.js';
import { median, quantile, round } from '../lib/stats.js';
import { formatTable } from '../lib/table.js';

const K = 10;
const WARM_QUERIES = 100;
const FILTER_SHARE = 0.1;

const OPTIONS = `  --docs <n>        documents (default 100000)
  --queries <q>     queries (default 1000)
  --vocabulary <v>  distinct terms of the Zipf law (default 30000)
  --runs <r>        runs; every number is their median (default 3)
  --no-write        do not write bench/results/<date>-sparse.json`;

interface Pass {
  qps: number;
  p50_ms: number;
  p99_ms: number;
  recall: number;
  /** Queries whose hits equal the reference's exactly: same slots, same order, same scores. */
  exact: number;
}

interface Run {
  build_s: number;
  bytes_per_doc: number;
  /** After trim(): the posting arrays without their spare capacity. */
  bytes_per_doc_trimmed: number;
  trim_s: number;
  postings: number;
  unfiltered: Pass;
  filtered: Pass;
  /** The same index searched term at a time only (no MaxScore): what the default's choice is measured against. */
  unfiltered_taat: Pass;
  filtered_taat: Pass;
  reference_qps: number;
  reference_filtered_qps: number;
}

export const sparseScenario: Scenario = {
  name: 'sparse',
  summary: 'sparse inverted index in process: build, bytes/doc, search QPS/latency/recall vs an exact scan, 10% filter',
  options: OPTIONS,
  async run(argv) {
    const values = parseOptions(argv, {
      docs: { type: 'string' },
      queries: { type: 'string' },
      vocabulary: { type: 'string' },
      runs: { type: 'string' },
      'no-write': { type: 'boolean' },
    });
    const docs = positiveInt(values.docs, '--docs', 100_000);
    const queryCount = positiveInt(values.queries, '--queries', 1000);
    const vocabulary = positiveInt(values.vocabulary, '--vocabulary', 30_000);
    const runs = positiveInt(values.runs, '--runs', 3);
    const machine = machineInfo(REPO_DIR);
    const load = loadAverage();
    process.stderr.write(`sparse: ${docs} docs, ${queryCount} queries, vocabulary ${vocabulary}, ${runs} runs; load average ${load.join(' ')}\n`);
    if (load[0] > QUIET_LOAD) process.stderr.write(`sparse: load ${load[0]} is above ${QUIET_LOAD}: the numbers are not clean\n`);

    const generated = performance.now();
    const corpusOptions = { docs, vocabulary, exponent: 1.1, minLength: 20, maxLength: 200, k1: 1.2, b: 0.75, seed: 42 };
    const { corpus, terms } = generateCorpus(corpusOptions);
    const queries = generateQueries(terms, queryCount, 4242);
    const pass = new Uint8Array(docs);
    const filterRng = new SeededRng(7);
    for (let d = 0; d < docs; d++) pass[d] = filterRng.next() < FILTER_SHARE ? 1 : 0;
    const reference = new ReferenceScan(corpus);
    const n = reference.nonEmpty;
    const weights = queries.map((q) => reference.weighted(q, n));
    const postingsPerDoc = corpus.indices.length / docs;
    process.stderr.write(
      `  corpus in ${round((performance.now() - generated) / 1000, 1)} s: ${corpus.indices.length} postings (${round(postingsPerDoc, 1)} distinct terms/doc, avg length ${round(corpus.avgLength, 1)} tokens)\n`,
    );

    const results: Run[] = [];
    let walked = 0;
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      const index = new SparseIndex({ idf: true });
      for (let d = 0; d < docs; d++) index.add(d, documentOf(corpus, d));
      const buildS = (performance.now() - t0) / 1000;
      const grownBytes = index.memoryBytes();
      const trimStarted = performance.now();
      index.trim();
      const trimS = (performance.now() - trimStarted) / 1000;
      if (r === 0) walked = queries.reduce((sum, q) => sum + index.cost(q), 0) / queries.length;

      const taat = new SparseIndex({ idf: true, search: 'term-at-a-time' });
      for (let d = 0; d < docs; d++) taat.add(d, documentOf(corpus, d));

      const refAll = timeReference(reference, queries, weights, undefined);
      const refFiltered = timeReference(reference, queries, weights, pass);
      const accept = (slot: number): boolean => pass[slot] === 1;
      const run: Run = {
        build_s: buildS,
        bytes_per_doc: grownBytes / docs,
        bytes_per_doc_trimmed: index.memoryBytes() / docs,
        trim_s: trimS,
        postings: index.postings,
        unfiltered: timeIndex(index, queries, undefined, refAll.answers),
        filtered: timeIndex(index, queries, accept, refFiltered.answers),
        unfiltered_taat: timeIndex(taat, queries, undefined, refAll.answers),
        filtered_taat: timeIndex(taat, queries, accept, refFiltered.answers),
        reference_qps: refAll.qps,
        reference_filtered_qps: refFiltered.qps,
      };
      process.stderr.write(`  run ${r + 1}: ${JSON.stringify(run)}\n`);
      results.push(run);
    }

    const med = (pick: (run: Run) => number, digits = 3): number => round(median(results.map(pick)), digits);
    const row = (name: string, pick: (run: Run) => Pass, refQps: (run: Run) => number): (string | number)[] => [
      name,
      med((x) => pick(x).qps, 0),
      med((x) => pick(x).p50_ms),
      med((x) => pick(x).p99_ms),
      med((x) => pick(x).recall, 4),
      `${med((x) => pick(x).exact, 0)}/${queryCount}`,
      med(refQps, 1),
      med((x) => pick(x).qps / refQps(x), 0),
    ];
    const table = formatTable(
      ['case', 'QPS', 'p50 ms', 'p99 ms', 'recall@10', 'exact', 'scan QPS', '× scan'],
      [
        row(
          'unfiltered',
          (x) => x.unfiltered,
          (x) => x.reference_qps,
        ),
        row(
          'unfiltered, term at a time',
          (x) => x.unfiltered_taat,
          (x) => x.reference_qps,
        ),
        row(
          'filtered 10%',
          (x) => x.filtered,
          (x) => x.reference_filtered_qps,
        ),
        row(
          'filtered 10%, term at a time',
          (x) => x.filtered_taat,
          (x) => x.reference_filtered_qps,
        ),
      ],
    );
    console.log(table);
    console.log(
      `build ${med((x) => x.build_s, 2)} s (${med((x) => docs / x.build_s, 0)} docs/s), ${med((x) => x.bytes_per_doc, 1)} bytes/doc, ` +
        `${med((x) => x.bytes_per_doc_trimmed, 1)} after trim() (${med((x) => x.trim_s, 3)} s), ` +
        `${results[0]?.postings} postings, ${round(walked, 0)} postings walked per query (mean)`,
    );
    const summary = {
      scenario: 'sparse',
      commit: machine.commit,
      uptime: machine.uptime,
      docs,
      queries: queryCount,
      runs,
      corpus: { ...corpusOptions, postings: corpus.indices.length, avg_length: round(corpus.avgLength, 1) },
      build_s: med((x) => x.build_s),
      bytes_per_doc: med((x) => x.bytes_per_doc, 1),
      bytes_per_doc_trimmed: med((x) => x.bytes_per_doc_trimmed, 1),
      trim_s: med((x) => x.trim_s),
      postings_walked_per_query: round(walked, 0),
      unfiltered: summarize(results.map((x) => x.unfiltered)),
      filtered_10pct: summarize(results.map((x) => x.filtered)),
      unfiltered_term_at_a_time: summarize(results.map((x) => x.unfiltered_taat)),
      filtered_10pct_term_at_a_time: summarize(results.map((x) => x.filtered_taat)),
      reference_qps: med((x) => x.reference_qps, 1),
      reference_filtered_qps: med((x) => x.reference_filtered_qps, 1),
    };
    if (values['no-write'] !== true) {
      const written = writeResult('sparse', { ...summary, machine, load_average_before: load, load_average_after: loadAverage(), runs_raw: results });
      process.stderr.write(`sparse: wrote ${written}\n`);
    }
    console.log(JSON.stringify(summary));
  },
};

function summarize(passes: Pass[]): Pass {
  const med = (pick: (p: Pass) => number, digits: number): number => round(median(passes.map(pick)), digits);
  return {
    qps: med((p) => p.qps, 0),
    p50_ms: med((p) => p.p50_ms, 3),
    p99_ms: med((p) => p.p99_ms, 3),
    recall: med((p) => p.recall, 4),
    exact: med((p) => p.exact, 0),
  };
}

type Answer = { slots: number[]; scores: number[] };

function timeIndex(index: SparseIndex, queries: SparseVector[], accept: ((slot: number) => boolean) | undefined, truth: Answer[]): Pass {
  for (let q = 0; q < Math.min(WARM_QUERIES, queries.length); q++) index.search(queries[q] as SparseVector, K, accept);
  const times = new Float64Array(queries.length);
  const answers: { slots: Int32Array; scores: Float64Array }[] = [];
  const began = performance.now();
  for (let q = 0; q < queries.length; q++) {
    const t0 = performance.now();
    answers.push(index.search(queries[q] as SparseVector, K, accept));
    times[q] = performance.now() - t0;
  }
  const seconds = (performance.now() - began) / 1000;
  let recall = 0;
  let exact = 0;
  for (let q = 0; q < queries.length; q++) {
    const got = answers[q] as { slots: Int32Array; scores: Float64Array };
    const want = truth[q] as Answer;
    const wanted = new Set(want.slots);
    let found = 0;
    for (const slot of got.slots) if (wanted.has(slot)) found++;
    recall += want.slots.length === 0 ? 1 : found / want.slots.length;
    const same = got.slots.length === want.slots.length && want.slots.every((slot, i) => got.slots[i] === slot && got.scores[i] === want.scores[i]);
    if (same) exact++;
  }
  return {
    qps: queries.length / seconds,
    p50_ms: quantile(times, 0.5),
    p99_ms: quantile(times, 0.99),
    recall: recall / queries.length,
    exact,
  };
}

function timeReference(
  reference: ReferenceScan,
  queries: SparseVector[],
  weights: Float32Array[],
  pass: Uint8Array | undefined,
): { qps: number; answers: Answer[] } {
  const answers: Answer[] = [];
  const began = performance.now();
  for (let q = 0; q < queries.length; q++) answers.push(reference.search(queries[q] as SparseVector, weights[q] as Float32Array, K, pass));
  return { qps: queries.length / ((performance.now() - began) / 1000), answers };
}
