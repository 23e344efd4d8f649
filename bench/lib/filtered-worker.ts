/**
 * One engine on one dataset for the `filtered` benchmark, in a process of its own (forked by
 * bench/scenarios/filtered.ts with --expose-gc, as the `index` benchmark's workers): load the
 * dataset and its payloads, build, then measure every cell (ef × filter shape × mode) in order:
 * warm-up, then up to `runs` timed sequential passes over every query (fewer once a cell has
 * spent `cellSeconds`, at least one). Recall and kith's explain come from the first timed pass.
 * Progress goes to stderr; the result goes back over IPC.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatasetRequest } from '../datasets/dataset.js';
import { filteredWorkload } from '../datasets/filtered-workload.js';
import { loadDataset } from '../datasets/load.js';
import { type BuildInfo, type Cell, createFilteredEngine, type FilteredEngine, type FilteredEngineName } from './filtered-engines.js';
import { type FilteredRecall, filteredGroundTruth, filteredRecall, unfilteredTruth } from './filtered-truth.js';
import { groundTruth } from './ground-truth.js';
import type { BuildParams } from './index-adapter.js';
import { PeerMissingError } from './peers.js';
import { type LatencySummary, median, round, summarizeLatencies } from './stats.js';

export interface FilteredJob {
  readonly dataset: DatasetRequest;
  /** Seed of the synthetic payloads. */
  readonly payloadSeed: number;
  readonly engine: FilteredEngineName;
  readonly build: BuildParams;
  readonly cells: readonly Cell[];
  readonly k: number;
  readonly runs: number;
  readonly warmup: number;
  readonly cellSeconds: number;
}

/** kith's explain over the recorded pass (one entry per query). */
export interface ExplainSummary {
  /** Queries per strategy that answered them (after any sampling; a fallback keeps `graph-filtered`). */
  readonly strategies: Readonly<Record<string, number>>;
  /** Mean distances computed per query. */
  readonly scored_mean: number;
  /** Filtered walks that came back short and were answered by exact scoring instead. */
  readonly fallbacks: number;
  /** Queries whose estimate straddled the threshold, so a sample decided. */
  readonly sampled: number;
  readonly exact_answers: number;
  /** Mean of the planner's expected match count (from the indexes, before any sample); null without a filter. */
  readonly estimate_mean: number | null;
  /** Mean count of candidate slots the indexes named; null when they named none. */
  readonly candidates_mean: number | null;
  /** Over sampled queries: the mean share of sampled candidates that matched; null when none sampled. */
  readonly sample_share_mean: number | null;
}

export interface CellResult extends Cell, FilteredRecall {
  readonly qps_median: number;
  readonly qps_per_run: readonly number[];
  /** Timed passes actually run (fewer than `runs` when the cell hit its time budget). */
  readonly passes: number;
  readonly latency: LatencySummary;
  readonly explain: ExplainSummary | null;
}

export interface FilteredRun {
  readonly ok: true;
  readonly engine: FilteredEngineName;
  readonly name: string;
  readonly n: number;
  readonly queries: number;
  readonly build: BuildInfo;
  readonly cells: readonly CellResult[];
}

export interface FilteredFailure {
  readonly ok: false;
  readonly engine: FilteredEngineName;
  readonly missing_peer: boolean;
  readonly error: string;
}

export type FilteredWorkerResult = FilteredRun | FilteredFailure;

function log(message: string): void {
  process.stderr.write(`[filtered] ${message}\n`);
}

class ExplainTally {
  private readonly strategies = new Map<string, number>();
  private scored = 0;
  private fallbacks = 0;
  private sampled = 0;
  private exact = 0;
  private estimate = 0;
  private estimated = 0;
  private candidates = 0;
  private withCandidates = 0;
  private sampleShare = 0;
  private count = 0;

  add(engine: FilteredEngine): void {
    const e = engine.lastExplain();
    if (e === undefined) return;
    this.count++;
    this.strategies.set(e.strategy, (this.strategies.get(e.strategy) ?? 0) + 1);
    this.scored += e.scored;
    if (e.fallback) this.fallbacks++;
    if (e.sample !== null) {
      this.sampled++;
      this.sampleShare += e.sample.size === 0 ? 0 : e.sample.matched / e.sample.size;
    }
    if (e.candidates !== null) {
      this.candidates += e.candidates;
      this.withCandidates++;
    }
    if (e.exact) this.exact++;
    if (e.estimate !== null) {
      this.estimate += e.estimate.expected;
      this.estimated++;
    }
  }

  summary(): ExplainSummary | null {
    if (this.count === 0) return null;
    return {
      strategies: Object.fromEntries(this.strategies),
      scored_mean: round(this.scored / this.count, 1),
      fallbacks: this.fallbacks,
      sampled: this.sampled,
      exact_answers: this.exact,
      estimate_mean: this.estimated === 0 ? null : round(this.estimate / this.estimated, 1),
      candidates_mean: this.withCandidates === 0 ? null : round(this.candidates / this.withCandidates, 1),
      sample_share_mean: this.sampled === 0 ? null : round(this.sampleShare / this.sampled, 4),
    };
  }
}

interface Measured {
  readonly ids: Int32Array;
  readonly qps: number[];
  readonly latency: LatencySummary;
  readonly explain: ExplainSummary | null;
}

/** Warm-up, then timed passes; the first pass's ids and explain are kept. */
function measure(engine: FilteredEngine, search: (qi: number) => ArrayLike<number>, nq: number, job: FilteredJob): Measured {
  const k = job.k;
  for (let qi = 0; qi < Math.min(job.warmup, nq); qi++) search(qi);
  const ids = new Int32Array(nq * k);
  const latencies = new Float64Array(nq * job.runs);
  const tally = new ExplainTally();
  const qps: number[] = [];
  let spent = 0;
  for (let run = 0; run < job.runs && (run === 0 || spent < job.cellSeconds); run++) {
    const at = run * nq;
    const t0 = performance.now();
    for (let qi = 0; qi < nq; qi++) {
      const s = performance.now();
      const found = search(qi);
      latencies[at + qi] = performance.now() - s;
      if (run !== 0) continue;
      tally.add(engine);
      const m = Math.min(k, found.length);
      for (let i = 0; i < m; i++) ids[qi * k + i] = found[i] as number;
      for (let i = m; i < k; i++) ids[qi * k + i] = -1;
    }
    const seconds = (performance.now() - t0) / 1000;
    spent += seconds;
    qps.push(nq / seconds);
  }
  return { ids, qps, latency: summarizeLatencies(latencies.subarray(0, qps.length * nq)), explain: tally.summary() };
}

export async function runFilteredJob(job: FilteredJob): Promise<FilteredWorkerResult> {
  const dataset = loadDataset(job.dataset);
  const workload = filteredWorkload(dataset, job.payloadSeed);
  const truth = filteredGroundTruth(dataset, workload, job.k, log).shapes;
  const plain = groundTruth(dataset, job.k, log).truth;
  const unfiltered = unfilteredTruth(plain.ids, plain.distances, job.k, dataset.base.count);
  const tmpDir = mkdtempSync(join(tmpdir(), `kith-bench-filtered-${job.engine}-`));
  let engine: FilteredEngine;
  try {
    engine = createFilteredEngine(job.engine, tmpDir);
  } catch (error) {
    rmSync(tmpDir, { recursive: true, force: true });
    return { ok: false, engine: job.engine, missing_peer: error instanceof PeerMissingError, error: error instanceof Error ? error.message : String(error) };
  }
  const tag = `${dataset.label}/${engine.name}`;
  try {
    log(`${tag}: building (n=${dataset.base.count}, d=${dataset.dim}, ${dataset.metric}, M=${job.build.m}, ef_construction=${job.build.efConstruction})`);
    const build = await engine.build(dataset, workload, job.build);
    log(`${tag}: built in ${build.seconds.toFixed(1)} s`);
    const queries = dataset.queries.rows;
    const nq = queries.length;
    const cells: CellResult[] = [];
    for (const cell of job.cells) {
      const shape = cell.shape === null ? undefined : workload.shapes.find((s) => s.name === cell.shape);
      if (cell.shape !== null && shape === undefined) throw new Error(`unknown filter shape ${JSON.stringify(cell.shape)}`);
      const search = engine.searcher(cell, shape, queries, job.k);
      const m = measure(engine, search, nq, job);
      const shapeTruth = shape === undefined ? unfiltered : truth.get(shape.name);
      if (shapeTruth === undefined) throw new Error(`no ground truth for ${cell.shape}`);
      const recall = filteredRecall(dataset, shapeTruth, shape === undefined ? null : shape.matcher, m.ids, job.k);
      const result: CellResult = {
        ...cell,
        recall: round(recall.recall, 4),
        recall_ids: round(recall.recall_ids, 4),
        violations: recall.violations,
        short_answers: recall.short_answers,
        qps_median: round(median(m.qps), 1),
        qps_per_run: m.qps.map((x) => round(x, 1)),
        passes: m.qps.length,
        latency: m.latency,
        explain: m.explain,
      };
      cells.push(result);
      const strategies =
        result.explain === null
          ? ''
          : `, ${Object.entries(result.explain.strategies)
              .map(([s, c]) => `${s} ${c}`)
              .join(' / ')}`;
      log(
        `${tag}: ef ${cell.ef}, ${cell.shape ?? `unfiltered${cell.again === true ? ' (again)' : ''}`}, ${cell.mode}: recall@${job.k} ${result.recall.toFixed(4)}, ` +
          `${Math.round(result.qps_median).toLocaleString('en-US')} QPS (${result.passes} passes)${strategies}`,
      );
    }
    return { ok: true, engine: job.engine, name: engine.name, n: dataset.base.count, queries: nq, build, cells };
  } finally {
    await engine.close();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

/** Forked: one job in over IPC, one result out, then exit. */
if (process.send !== undefined) {
  process.once('message', (message: FilteredJob) => {
    runFilteredJob(message).then(
      (result) => {
        process.send?.(result, () => process.disconnect());
      },
      (error: unknown) => {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        log(`worker failed: ${text}`);
        const failure: FilteredFailure = { ok: false, engine: message.engine, missing_peer: false, error: text };
        process.send?.(failure, () => process.disconnect());
      },
    );
  });
}
