/**
 * Scenario `index`: kith's vector index side by side with the peer libraries hnswlib-node and
 * usearch, in-process (no HTTP), single-threaded, sequential queries.
 *
 * For each dataset (sift5k, mnist10k, glove12k from the repository's datasets/ folder; the
 * synthetic Gaussian mixture) and each engine, in a fresh child process
 * (bench/lib/index-worker.ts): build with M / ef_construction (build time; bytes per vector as
 * the engine reports it and as the process RSS delta), then sweep ef, measuring recall@k
 * against cached float64 brute force and QPS (the median of `--runs` timed passes over every
 * query). From each sweep, the QPS at recall 0.90, 0.95 and 0.99 is interpolated on the Pareto
 * frontier.
 *
 * Output: a summary and a sweep table per dataset, docs/img/recall-qps-<dataset>.svg,
 * bench/results/<date>-index.json, and one final JSON line with kith / hnswlib-node ratios.
 * Peers come from bench/peers (`npm ci --prefix bench/peers`); a missing one is skipped with a message.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AnnDataset, DATASET_NAMES, type DatasetName, type DatasetRequest } from '../datasets/dataset.js';
import { loadDataset, SYNTHETIC_DEFAULTS } from '../datasets/load.js';
import { DEFAULT_DATA_DIR } from '../datasets/real.js';
import { runChildWorker } from '../lib/child-worker.js';
import { ENGINE_NAMES, type EngineName, engineStatus } from '../lib/engines.js';
import { groundTruth } from '../lib/ground-truth.js';
import type { EngineFailure, EngineRun, WorkerJob, WorkerResult } from '../lib/index-worker.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { PEERS_INSTALL_HINT } from '../lib/peers.js';
import { type AtRecall, qpsAtRecall } from '../lib/recall-curve.js';
import { localDate, REPO_DIR, writeResult } from '../lib/results.js';
import { nameList, parseOptions, positiveInt, positiveIntList, type Scenario, UsageError } from '../lib/scenario.js';
import { round } from '../lib/stats.js';
import { renderRecallQpsSvg } from '../lib/svg-plot.js';
import { formatTable } from '../lib/table.js';

export const DEFAULT_EFS = [10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512] as const;
const TARGETS = [0.9, 0.95, 0.99] as const;
const PLOT_DIR = join(REPO_DIR, 'docs', 'img');
const WORKER = fileURLToPath(new URL('../lib/index-worker.js', import.meta.url));

const OPTIONS = `  --datasets <a,b,…>      ${DATASET_NAMES.join(', ')} (default: all)
  --engines <a,b,…>       ${ENGINE_NAMES.join(', ')} (default: all; a peer that is not installed is skipped)
  --m <m>                 HNSW M (default 16)
  --ef-construction <e>   HNSW ef_construction (default 100)
  --efs <e,e,…>           ef values to sweep (default ${DEFAULT_EFS.join(',')})
  --k <k>                 neighbours per query; recall@k (default 10)
  --runs <r>              timed passes over the queries per ef; QPS is the median (default 5)
  --warmup <w>            untimed queries before the passes, per ef (default 200)
  --n <n>                 synthetic: base vectors (default ${SYNTHETIC_DEFAULTS.n})
  --dim <d>               synthetic: dimension (default ${SYNTHETIC_DEFAULTS.dim})
  --queries <q>           synthetic: queries (default ${SYNTHETIC_DEFAULTS.queries})
  --seed <s>              synthetic: seed (default ${SYNTHETIC_DEFAULTS.seed})
  --data <dir>            the real datasets (default: datasets/ in the repository)
  --no-write              write neither bench/results/<date>-index.json nor docs/img/recall-qps-*.svg

Peers: install once with \`${PEERS_INSTALL_HINT}\` (hnswlib-node is compiled by node-gyp).`;

function log(message: string): void {
  process.stderr.write(`[index] ${message}\n`);
}

interface EngineResult {
  readonly run: EngineRun;
  readonly at_recall: readonly AtRecall[];
  readonly max_recall: number;
}

interface DatasetResult {
  readonly dataset: {
    readonly name: string;
    readonly label: string;
    readonly description: string;
    readonly source: string;
    readonly metric: string;
    readonly dim: number;
    readonly base: number;
    readonly queries: number;
    readonly ground_truth: { readonly cached: boolean; readonly seconds: number; readonly file: string };
  };
  readonly engines: readonly EngineResult[];
  readonly failed: readonly EngineFailure[];
  readonly plot: string | null;
}

function describeDataset(d: AnnDataset): string {
  return `${d.base.count.toLocaleString('en-US')} × ${d.dim}, ${d.metric === 'l2' ? 'L2' : d.metric}, ${d.queries.count.toLocaleString('en-US')} queries`;
}

function int(x: number): string {
  return Math.round(x).toLocaleString('en-US');
}

function atRecallCell(a: AtRecall | undefined, kind: 'hnsw' | 'flat'): string {
  if (a === undefined || a.qps === null) return 'not reached';
  if (kind === 'flat') return `${int(a.qps)} (exact)`;
  const ef = a.ef === null ? '' : a.how === 'interpolated' ? ` (ef≈${Math.round(a.ef)})` : ` (ef ${a.ef})`;
  return `${a.how === 'lower bound' ? '≥ ' : ''}${int(a.qps)}${ef}`;
}

function printDataset(
  result: DatasetResult,
  params: { m: number; efConstruction: number; k: number; runs: number },
  skipped: readonly { engine: EngineName; reason: string }[],
): void {
  const d = result.dataset;
  process.stdout.write(
    `\nindex — ${d.label}: ${d.base.toLocaleString('en-US')} × ${d.dim}, ${d.metric === 'l2' ? 'L2' : d.metric}, ` +
      `${d.queries.toLocaleString('en-US')} queries; M=${params.m}, ef_construction=${params.efConstruction}; recall@${params.k}; ` +
      `single-threaded sequential queries, QPS = median of ${params.runs} passes\n\n`,
  );
  if (result.engines.length > 0) {
    const header = ['engine', 'build s', 'bytes/vector (index)', 'RSS Δ bytes/vector', ...TARGETS.map((t) => `QPS @ recall ${t.toFixed(2)}`), 'max recall'];
    const rows = result.engines.map((e) => [
      e.run.name,
      e.run.build_seconds.toFixed(2),
      e.run.bytes_per_vector === null ? '—' : int(e.run.bytes_per_vector),
      int(e.run.memory.rss_bytes_per_vector),
      ...TARGETS.map((_, i) => atRecallCell(e.at_recall[i], e.run.kind)),
      e.max_recall.toFixed(4),
    ]);
    process.stdout.write(`${formatTable(header, rows)}\n`);
    for (const e of result.engines) {
      const d = e.run.build_details;
      if (typeof d.upsert_seconds !== 'number') continue;
      const storage = typeof d.durable_storage_baseline_seconds === 'number' ? `${d.durable_storage_baseline_seconds.toFixed(2)} s` : '—';
      const index = typeof d.index_estimate_seconds === 'number' ? `${d.index_estimate_seconds.toFixed(2)} s` : '—';
      process.stdout.write(
        `${e.run.name} build: vectors to number[] ${typeof d.convert_seconds === 'number' ? d.convert_seconds.toFixed(2) : '—'} s, ` +
          `upsert ${d.upsert_seconds.toFixed(2)} s in batches of ${d.batch}, each committed durably to LMDB; ` +
          `durable-storage share ${storage}, index share ${index}; LMDB file ${d.lmdb_file_bytes_per_vector ?? '—'} bytes/vector\n`,
      );
    }
    process.stdout.write('\n');
    const sweepHeader = ['engine', 'ef', `recall@${params.k}`, 'QPS (median)', 'QPS min–max', 'p50 ms', 'p99 ms'];
    const sweepRows = result.engines.flatMap((e) =>
      e.run.sweep.map((p) => [
        e.run.name,
        p.ef === null ? 'exact' : String(p.ef),
        p.recall.toFixed(4),
        int(p.qps_median),
        `${int(Math.min(...p.qps_per_run))}–${int(Math.max(...p.qps_per_run))}`,
        p.latency.p50_ms.toFixed(3),
        p.latency.p99_ms.toFixed(3),
      ]),
    );
    process.stdout.write(`${formatTable(sweepHeader, sweepRows)}\n`);
  }
  for (const f of result.failed) process.stdout.write(`${f.engine}: ${f.missing_peer ? 'skipped' : 'FAILED'}: ${f.error}\n`);
  for (const s of skipped) process.stdout.write(`${s.engine}: skipped: ${s.reason}\n`);
  if (result.engines.length === 0 && result.failed.length === 0 && skipped.length === 0) process.stdout.write('no engine ran\n');
  process.stdout.write('\n');
}

function maxRecall(e: EngineResult | undefined): number | undefined {
  return e?.max_recall;
}

/** QPS of one exact engine over another (an exact engine is measured once: its first sweep point). */
function exactRatio(ours: EngineResult | undefined, theirs: EngineResult | undefined): number | null {
  return ratio(ours?.run.sweep[0]?.qps_median, theirs?.run.sweep[0]?.qps_median);
}

function ratio(a: number | null | undefined, b: number | null | undefined, digits = 3): number | null {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return null;
  return round(a / b, digits);
}

function runWorker(job: WorkerJob): Promise<WorkerResult> {
  return runChildWorker<WorkerJob, WorkerResult>(WORKER, job, (error) => ({ ok: false, engine: job.engine, missing_peer: false, error }));
}

async function run(argv: readonly string[]): Promise<void> {
  const values = parseOptions(argv, {
    datasets: { type: 'string' },
    engines: { type: 'string' },
    m: { type: 'string' },
    'ef-construction': { type: 'string' },
    efs: { type: 'string' },
    k: { type: 'string' },
    runs: { type: 'string' },
    warmup: { type: 'string' },
    n: { type: 'string' },
    dim: { type: 'string' },
    queries: { type: 'string' },
    seed: { type: 'string' },
    data: { type: 'string' },
    'no-write': { type: 'boolean' },
  });
  const datasets = nameList<DatasetName>(values.datasets, '--datasets', DATASET_NAMES);
  const engines = nameList<EngineName>(values.engines, '--engines', ENGINE_NAMES);
  const m = positiveInt(values.m, '--m', 16);
  const efConstruction = positiveInt(values['ef-construction'], '--ef-construction', 100);
  const efs = [...new Set(positiveIntList(values.efs, '--efs', DEFAULT_EFS))].sort((a, b) => a - b);
  const k = positiveInt(values.k, '--k', 10);
  const runs = positiveInt(values.runs, '--runs', 5);
  const warmup = values.warmup === '0' ? 0 : positiveInt(values.warmup, '--warmup', 200);
  const synthetic = {
    n: positiveInt(values.n, '--n', SYNTHETIC_DEFAULTS.n),
    dim: positiveInt(values.dim, '--dim', SYNTHETIC_DEFAULTS.dim),
    queries: positiveInt(values.queries, '--queries', SYNTHETIC_DEFAULTS.queries),
    seed: positiveInt(values.seed, '--seed', SYNTHETIC_DEFAULTS.seed),
  };
  if (values.data !== undefined && typeof values.data !== 'string') throw new UsageError('--data: expected a folder');
  const dataDir = typeof values.data === 'string' ? values.data : DEFAULT_DATA_DIR;
  const write = values['no-write'] !== true;

  const machine = machineInfo(REPO_DIR);
  const [load1] = machine.load_average;
  log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}`);
  log(`load average ${machine.load_average.join(', ')}`);
  if (load1 > QUIET_LOAD) log(`WARNING: 1-minute load ${load1} > ${QUIET_LOAD}: the machine is busy, numbers will be low and noisy`);

  const available: EngineName[] = [];
  const versions: Partial<Record<EngineName, string>> = {};
  const skipped: { engine: EngineName; reason: string }[] = [];
  for (const engine of engines) {
    const status = engineStatus(engine);
    if (status.installed) {
      available.push(engine);
      versions[engine] = status.version;
    } else {
      skipped.push({ engine, reason: status.reason });
      log(`skipping ${engine}: ${status.reason}`);
    }
  }
  if (available.length === 0) log(`no engine to run: the selected peers are missing (\`${PEERS_INSTALL_HINT}\`)`);

  const results: DatasetResult[] = [];
  const generated = new Date();
  for (const name of available.length === 0 ? [] : datasets) {
    const request: DatasetRequest = name === 'synthetic' ? { name, dataDir, ...synthetic } : { name, dataDir };
    const t0 = performance.now();
    let dataset: AnnDataset | undefined = loadDataset(request);
    log(`${dataset.label}: ${describeDataset(dataset)} (${dataset.source}), loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const gt = groundTruth(dataset, k, log);
    log(`${dataset.label}: ground truth ${gt.cached ? 'from cache' : `computed in ${gt.seconds.toFixed(1)} s`} (${gt.path})`);
    const info: DatasetResult['dataset'] = {
      name: dataset.name,
      label: dataset.label,
      description: dataset.description,
      source: dataset.source,
      metric: dataset.metric,
      dim: dataset.dim,
      base: dataset.base.count,
      queries: dataset.queries.count,
      ground_truth: { cached: gt.cached, seconds: round(gt.seconds, 2), file: gt.path.slice(REPO_DIR.length + 1) },
    };
    // The workers load their own copy; this process holds nothing big while they measure.
    dataset = undefined;

    const done: EngineResult[] = [];
    const failed: EngineFailure[] = [];
    for (const engine of available) {
      const result = await runWorker({ dataset: request, engine, build: { m, efConstruction }, efs, k, runs, warmup });
      if (!result.ok) {
        log(`${info.label}/${engine}: ${result.missing_peer ? 'skipped' : 'FAILED'}: ${result.error}`);
        failed.push(result);
        continue;
      }
      const points = result.sweep.map((p) => ({ recall: p.recall, qps: p.qps_median, ef: p.ef }));
      done.push({
        run: result,
        at_recall: TARGETS.map((t) => qpsAtRecall(points, t)),
        max_recall: Math.max(...result.sweep.map((p) => p.recall)),
      });
    }

    let plotPath: string | null = null;
    if (write && done.length > 0) {
      mkdirSync(PLOT_DIR, { recursive: true });
      plotPath = join(PLOT_DIR, `recall-qps-${info.label}.svg`);
      const svg = renderRecallQpsSvg({
        title: `${info.label}: recall@${k} vs QPS (${info.base.toLocaleString('en-US')} × ${info.dim}, ${info.metric === 'l2' ? 'L2' : info.metric})`,
        subtitle: [
          `M=${m}, ef_construction=${efConstruction}, ef ${efs[0]}–${efs[efs.length - 1]}; ${info.queries.toLocaleString('en-US')} queries, ` +
            `one at a time, 1 thread; QPS = median of ${runs} passes`,
          `${machine.cores}× ${machine.cpu_model}, Node ${machine.node}, 1-min load ${load1} at start; ${localDate(generated)}, commit ${machine.commit ?? '?'}`,
        ],
        xLabel: `recall@${k}`,
        yLabel: 'queries per second (log scale)',
        targets: [...TARGETS],
        series: done.map((e) => ({
          name: e.run.name,
          exact: e.run.kind === 'flat',
          points: e.run.sweep.map((p) => ({ recall: p.recall, qps: p.qps_median, ef: p.ef })),
        })),
      });
      writeFileSync(plotPath, svg);
      log(`wrote ${plotPath}`);
    }
    const result: DatasetResult = { dataset: info, engines: done, failed, plot: plotPath === null ? null : plotPath.slice(REPO_DIR.length + 1) };
    printDataset(result, { m, efConstruction, k, runs }, skipped);
    results.push(result);
  }
  const loadAfter = loadAverage();

  const kithRuns = results.flatMap((r) => r.engines.filter((e) => e.run.engine === 'kith'));
  const kithIndex = kithRuns[0]?.run.kind ?? null;
  const at95 = TARGETS.indexOf(0.95);
  const summaryDatasets: Record<string, unknown> = {};
  for (const r of results) {
    const byEngine = new Map(r.engines.map((e) => [e.run.engine, e]));
    const kith = byEngine.get('kith');
    const hnswlib = byEngine.get('hnswlib');
    const comparable = kith !== undefined && hnswlib !== undefined && kith.run.kind === 'hnsw';
    summaryDatasets[r.dataset.label] = {
      qps_at_recall_0_95: Object.fromEntries(
        r.engines.map((e) => {
          const qps = e.at_recall[at95]?.qps;
          return [e.run.engine, qps === null || qps === undefined ? null : Math.round(qps)];
        }),
      ),
      build_s: Object.fromEntries(r.engines.map((e) => [e.run.engine, e.run.build_seconds])),
      bytes_per_vector: Object.fromEntries(r.engines.map((e) => [e.run.engine, e.run.bytes_per_vector])),
      kith_vs_hnswlib: {
        qps_at_recall_0_95: comparable ? ratio(kith.at_recall[at95]?.qps, hnswlib.at_recall[at95]?.qps) : null,
        build_time: comparable ? ratio(kith.run.build_seconds, hnswlib.run.build_seconds) : null,
        bytes_per_vector: comparable ? ratio(kith.run.bytes_per_vector, hnswlib.run.bytes_per_vector) : null,
        rss_delta_per_vector: comparable ? ratio(kith.run.memory.rss_bytes_per_vector, hnswlib.run.memory.rss_bytes_per_vector) : null,
        flat_qps_vs_bruteforce: exactRatio(byEngine.get('kith-flat'), byEngine.get('hnswlib-bf')),
      },
      kith_sq8_vs_kith: {
        qps_at_recall_0_95: ratio(byEngine.get('kith-sq8')?.at_recall[at95]?.qps, kith?.at_recall[at95]?.qps),
        max_recall: ratio(maxRecall(byEngine.get('kith-sq8')), maxRecall(kith)),
        bytes_per_vector: ratio(byEngine.get('kith-sq8')?.run.bytes_per_vector, kith?.run.bytes_per_vector),
      },
    };
  }

  const full = {
    scenario: 'index',
    date: generated.toISOString(),
    machine,
    // Includes this benchmark's own work: only the value before says whether the machine was quiet.
    load_average_after: loadAfter,
    params: {
      m,
      ef_construction: efConstruction,
      efs,
      k,
      runs,
      warmup,
      recall_targets: TARGETS,
      threads: 1,
      queries: 'sequential, one at a time, in-process (no HTTP)',
      isolation: 'one child process per engine and dataset (node --expose-gc)',
      synthetic: datasets.includes('synthetic') ? synthetic : undefined,
      data_dir: dataDir,
    },
    engines: Object.fromEntries(available.map((e) => [e, versions[e]])),
    skipped,
    kith_index: kithIndex,
    datasets: results,
  };
  if (write) log(`wrote ${writeResult('index', full)}`);

  const summary = {
    scenario: 'index',
    m,
    ef_construction: efConstruction,
    k,
    runs,
    load_1m: [machine.load_average[0], loadAfter[0]],
    commit: machine.commit,
    engines: Object.fromEntries(available.map((e) => [e, versions[e]])),
    skipped: skipped.map((s) => s.engine),
    kith_index: kithIndex,
    datasets: summaryDatasets,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

export const indexScenario: Scenario = {
  name: 'index',
  summary: 'kith vs hnswlib-node and usearch in-process: build time, bytes/vector, recall@10 vs QPS over ef',
  options: OPTIONS,
  run,
};
