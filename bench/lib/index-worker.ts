/**
 * One engine on one dataset, in a process of its own (forked by bench/scenarios/index.ts with
 * --expose-gc): load the dataset, build, measure the process memory delta, then for each ef:
 * warm-up, `runs` timed sequential passes over every query, recall@k of the first timed pass.
 * A fresh process per engine keeps one engine's heap, JIT state and freed native memory out of
 * the next one's numbers. Progress goes to stderr; the result goes back over IPC.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatasetRequest } from '../datasets/dataset.js';
import { loadDataset } from '../datasets/load.js';
import { ENGINES, type EngineName } from './engines.js';
import { groundTruth, recallAtK } from './ground-truth.js';
import type { BuildDetails, BuildParams, IndexAdapter } from './index-adapter.js';
import { PeerMissingError } from './peers.js';
import { type LatencySummary, median, round, summarizeLatencies } from './stats.js';

export interface WorkerJob {
  readonly dataset: DatasetRequest;
  readonly engine: EngineName;
  readonly build: BuildParams;
  readonly efs: readonly number[];
  readonly k: number;
  readonly runs: number;
  readonly warmup: number;
}

export interface SweepPoint {
  /** null for an exact engine (measured once; ef does not apply). */
  readonly ef: number | null;
  readonly recall: number;
  readonly recall_ids: number;
  readonly short_answers: number;
  readonly qps_median: number;
  readonly qps_per_run: readonly number[];
  /** Over every timed query of every run. */
  readonly latency: LatencySummary;
  /** Time to apply ef (usearch reloads its index), not part of any QPS. */
  readonly set_ef_seconds: number;
}

export interface MemoryDelta {
  /** Resident set size after build − before, after a full GC both times. Includes freed-but-kept malloc memory. */
  readonly rss_bytes: number;
  readonly rss_bytes_per_vector: number;
  readonly heap_used_bytes: number;
  /** V8 `external` (ArrayBuffers, native memory reported to V8). */
  readonly external_bytes: number;
  readonly gc_available: boolean;
}

export interface EngineRun {
  readonly ok: true;
  readonly engine: EngineName;
  readonly name: string;
  readonly kind: 'hnsw' | 'flat';
  readonly n: number;
  readonly queries: number;
  readonly build_seconds: number;
  readonly build_wall_seconds: number;
  /** The engine's own figure (serialized index size / n), when it has one. */
  readonly bytes_per_vector: number | null;
  readonly memory: MemoryDelta;
  readonly build_details: BuildDetails;
  readonly sweep: readonly SweepPoint[];
}

export interface EngineFailure {
  readonly ok: false;
  readonly engine: EngineName;
  readonly missing_peer: boolean;
  readonly error: string;
}

export type WorkerResult = EngineRun | EngineFailure;

function log(message: string): void {
  process.stderr.write(`[index] ${message}\n`);
}

function collectGarbage(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return false;
  gc();
  gc();
  return true;
}

/** One sequential pass: every query once; writes the ids into `ids` (k per query, −1 padded) and the latencies. */
function pass(adapter: IndexAdapter, queries: readonly Float32Array[], k: number, ids: Int32Array, latencies: Float64Array, latencyOffset: number): number {
  const t0 = performance.now();
  for (let qi = 0; qi < queries.length; qi++) {
    const s = performance.now();
    const found = adapter.search(queries[qi] as Float32Array, k);
    latencies[latencyOffset + qi] = performance.now() - s;
    const at = qi * k;
    const m = Math.min(k, found.length);
    for (let i = 0; i < m; i++) ids[at + i] = found[i] as number;
    for (let i = m; i < k; i++) ids[at + i] = -1;
  }
  return (performance.now() - t0) / 1000;
}

export async function runJob(job: WorkerJob): Promise<WorkerResult> {
  const engine = ENGINES[job.engine];
  const dataset = loadDataset(job.dataset);
  const truth = groundTruth(dataset, job.k, log).truth;
  const tmpDir = mkdtempSync(join(tmpdir(), `kith-bench-index-${job.engine}-`));
  let adapter: IndexAdapter;
  try {
    adapter = await engine.create({ dim: dataset.dim, metric: dataset.metric, tmpDir });
  } catch (error) {
    rmSync(tmpDir, { recursive: true, force: true });
    const missing = error instanceof PeerMissingError;
    return { ok: false, engine: job.engine, missing_peer: missing, error: error instanceof Error ? error.message : String(error) };
  }
  const tag = `${dataset.label}/${adapter.name}`;
  try {
    const vectors = dataset.base.rows;
    const queries = dataset.queries.rows;
    const gcAvailable = collectGarbage();
    const m0 = process.memoryUsage();
    log(`${tag}: building (n=${vectors.length}, d=${dataset.dim}, ${dataset.metric}, M=${job.build.m}, ef_construction=${job.build.efConstruction})`);
    const t0 = performance.now();
    await adapter.build(vectors, job.build);
    const wall = (performance.now() - t0) / 1000;
    const buildSeconds = adapter.buildSeconds?.() ?? wall;
    collectGarbage();
    const m1 = process.memoryUsage();
    const bytesPerVector = adapter.bytesPerVector() ?? null;
    log(`${tag}: built in ${buildSeconds.toFixed(2)} s`);

    const memory: MemoryDelta = {
      rss_bytes: m1.rss - m0.rss,
      rss_bytes_per_vector: round((m1.rss - m0.rss) / vectors.length, 1),
      heap_used_bytes: m1.heapUsed - m0.heapUsed,
      external_bytes: m1.external - m0.external,
      gc_available: gcAvailable,
    };

    const efs: (number | null)[] = adapter.kind === 'flat' ? [null] : [...job.efs];
    const sweep: SweepPoint[] = [];
    const ids = new Int32Array(queries.length * job.k);
    const scratchIds = new Int32Array(queries.length * job.k);
    const latencies = new Float64Array(queries.length * job.runs);
    const warmupLatencies = new Float64Array(queries.length);
    // A whole untimed pass first (at the first ef), so the first measured ef finds the JIT and caches as warm as the rest.
    const firstEf = efs[0];
    if (adapter.kind === 'hnsw' && firstEf !== undefined && firstEf !== null) {
      await adapter.setEf(firstEf);
      pass(adapter, queries, job.k, scratchIds, warmupLatencies, 0);
    }
    for (const ef of efs) {
      const e0 = performance.now();
      if (ef !== null) await adapter.setEf(ef);
      const setEfSeconds = (performance.now() - e0) / 1000;
      const warm = queries.slice(0, Math.min(job.warmup, queries.length));
      if (warm.length > 0) pass(adapter, warm, job.k, scratchIds, warmupLatencies, 0);
      const qps: number[] = [];
      for (let run = 0; run < job.runs; run++) {
        const seconds = pass(adapter, queries, job.k, run === 0 ? ids : scratchIds, latencies, run * queries.length);
        qps.push(queries.length / seconds);
      }
      const recall = recallAtK(dataset, truth, ids, job.k);
      const point: SweepPoint = {
        ef,
        recall: round(recall.recall, 4),
        recall_ids: round(recall.recall_ids, 4),
        short_answers: recall.short_answers,
        qps_median: round(median(qps), 1),
        qps_per_run: qps.map((x) => round(x, 1)),
        latency: summarizeLatencies(latencies),
        set_ef_seconds: round(setEfSeconds, 3),
      };
      sweep.push(point);
      log(
        `${tag}: ${ef === null ? 'exact' : `ef ${ef}`}: recall@${job.k} ${point.recall.toFixed(4)}, ` +
          `${Math.round(point.qps_median).toLocaleString('en-US')} QPS (runs ${point.qps_per_run.map((x) => Math.round(x)).join(', ')})`,
      );
    }
    return {
      ok: true,
      engine: job.engine,
      name: adapter.name,
      kind: adapter.kind,
      n: vectors.length,
      queries: queries.length,
      build_seconds: round(buildSeconds, 3),
      build_wall_seconds: round(wall, 3),
      bytes_per_vector: bytesPerVector === null ? null : round(bytesPerVector, 1),
      memory,
      build_details: adapter.buildDetails(),
      sweep,
    };
  } finally {
    await adapter.close();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

/** Forked: one job in over IPC, one result out, then exit. */
if (process.send !== undefined) {
  process.once('message', (message: WorkerJob) => {
    runJob(message).then(
      (result) => {
        process.send?.(result, () => process.disconnect());
      },
      (error: unknown) => {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        log(`worker failed: ${text}`);
        const failure: EngineFailure = { ok: false, engine: message.engine, missing_peer: false, error: text };
        process.send?.(failure, () => process.disconnect());
      },
    );
  });
}
