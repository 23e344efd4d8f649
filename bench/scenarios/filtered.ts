/**
 * Scenario `filtered`: kith's filtered HNSW search against the targets of the issue, beside
 * kith's own unfiltered search and hnswlib-node's filtered search, in-process, single-threaded.
 *
 * For each dataset (mnist10k with its digit labels; the synthetic mixture with payloads built for
 * 0.1%–90% selectivities, bench/datasets/filtered-workload.ts), exact filtered top-k is computed by
 * float64 brute force over the matching points and cached; then one child process per engine
 * (bench/lib/filtered-worker.ts) builds the index with the payloads and measures, per filter
 * shape: recall@k, QPS, and for kith the strategy its planner chose (explain), the distances it
 * computed and its fallbacks, next to the same searches with each strategy forced
 * (`candidates-exact`, `graph-filtered` with a two-hop or plain walk).
 *
 * Output: per dataset a planner table with the targets marked pass/FAIL, the forced-strategy
 * table, the hnswlib-node table (and an ef sweep with --efs), bench/results/<date>-filtered.json,
 * and one final JSON line.
 */
import { fileURLToPath } from 'node:url';
import type { DatasetRequest } from '../datasets/dataset.js';
import { FILTERED_DATASETS, type FilteredDatasetName, filteredWorkload } from '../datasets/filtered-workload.js';
import { loadDataset, SYNTHETIC_DEFAULTS } from '../datasets/load.js';
import { DEFAULT_DATA_DIR } from '../datasets/real.js';
import { runChildWorker } from '../lib/child-worker.js';
import { type Cell, FILTERED_ENGINES, type FilteredEngineName, KITH_MODES } from '../lib/filtered-engines.js';
import {
  type DatasetResult,
  printDataset,
  type ShapeInfo,
  summarizeDataset,
  TARGET_RATIO,
  TARGET_RATIO_SELECTIVE,
  TARGET_RECALL,
} from '../lib/filtered-report.js';
import { filteredGroundTruth, selectivity } from '../lib/filtered-truth.js';
import type { FilteredFailure, FilteredJob, FilteredRun, FilteredWorkerResult } from '../lib/filtered-worker.js';
import { groundTruth } from '../lib/ground-truth.js';
import { requireWasmKernels } from '../lib/kernels-check.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { PEERS_INSTALL_HINT, peerStatus } from '../lib/peers.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { nameList, parseOptions, positiveInt, positiveIntList, type Scenario, UsageError } from '../lib/scenario.js';
import { round } from '../lib/stats.js';

const WORKER = fileURLToPath(new URL('../lib/filtered-worker.js', import.meta.url));

const OPTIONS = `  --datasets <a,b>        ${FILTERED_DATASETS.join(', ')} (default: both)
  --engines <a,b>         ${FILTERED_ENGINES.join(', ')} (default: both; hnswlib is skipped when not installed)
  --m <m>                 HNSW M (default 16)
  --ef-construction <e>   HNSW ef_construction (default 100)
  --ef <e>                search ef for every table and the targets (default 64)
  --efs <e,e,…>           also sweep these ef values (kith planner, unfiltered, hnswlib; forced strategies stay at --ef)
  --no-forced             skip kith's forced strategies (candidates-exact, graph-filtered two-hop / plain)
  --k <k>                 neighbours per query; recall@k (default 10)
  --runs <r>              timed passes over the queries per cell; QPS is the median (default 5)
  --cell-seconds <s>      stop adding passes once a cell has spent this long, after at least one (default 20)
  --warmup <w>            untimed queries before each cell's passes (default 200)
  --n <n>                 synthetic: base vectors (default ${SYNTHETIC_DEFAULTS.n})
  --dim <d>               synthetic: dimension (default ${SYNTHETIC_DEFAULTS.dim})
  --queries <q>           synthetic: queries (default ${SYNTHETIC_DEFAULTS.queries})
  --seed <s>              synthetic: seed of vectors and payloads (default ${SYNTHETIC_DEFAULTS.seed})
  --data <dir>            the real datasets (default: datasets/ in the repository)
  --no-write              do not write bench/results/<date>-filtered.json

Targets (from the issue), per shape, kith's planner at --ef: recall@k ≥ ${TARGET_RECALL}; QPS ≥ ${TARGET_RATIO}× kith's
unfiltered QPS; QPS ≥ ${TARGET_RATIO_SELECTIVE}× unfiltered where the shape matches 1% or less.
Peers: install once with \`${PEERS_INSTALL_HINT}\`.`;

function log(message: string): void {
  process.stderr.write(`[filtered] ${message}\n`);
}

/**
 * kith: per ef, unfiltered, every shape, unfiltered again (the baseline brackets the shapes); at
 * the main ef each shape's forced strategies follow its planner cell.
 */
function kithCells(efs: readonly number[], ef: number, shapes: readonly string[], forced: boolean): Cell[] {
  const cells: Cell[] = [];
  for (const e of efs) {
    cells.push({ ef: e, shape: null, mode: 'auto' });
    for (const shape of shapes) {
      for (const mode of KITH_MODES) if (mode === 'auto' || (forced && e === ef)) cells.push({ ef: e, shape, mode });
    }
    cells.push({ ef: e, shape: null, mode: 'auto', again: true });
  }
  return cells;
}

function hnswlibCells(efs: readonly number[], shapes: readonly string[]): Cell[] {
  return efs.flatMap((e) => [
    { ef: e, shape: null, mode: 'callback' } as const,
    ...shapes.map((shape): Cell => ({ ef: e, shape, mode: 'callback' })),
    { ef: e, shape: null, mode: 'callback', again: true } as const,
  ]);
}

/** Loads the dataset, computes (or reads) both ground truths, measures each shape's selectivity. */
function prepare(request: DatasetRequest, payloadSeed: number, k: number): { info: DatasetResult['dataset']; shapes: ShapeInfo[] } {
  const t0 = performance.now();
  const dataset = loadDataset(request);
  const workload = filteredWorkload(dataset, payloadSeed);
  log(
    `${dataset.label}: ${dataset.base.count} × ${dataset.dim}, ${dataset.queries.count} queries, loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const gt = groundTruth(dataset, k, log);
  log(`${dataset.label}: ground truth ${gt.cached ? 'from cache' : `computed in ${gt.seconds.toFixed(1)} s`} (${gt.path})`);
  const ft = filteredGroundTruth(dataset, workload, k, log);
  log(`${dataset.label}: filtered ground truth ${ft.cached ? 'from cache' : `computed in ${ft.seconds.toFixed(1)} s`} (${ft.path})`);
  const shapes = workload.shapes.map((s) => {
    const truth = ft.shapes.get(s.name);
    if (truth === undefined) throw new Error(`no ground truth for ${s.name}`);
    const sel = selectivity(truth, dataset.base.count);
    log(
      `${dataset.label}: ${s.name}: ${s.description}; matches ${(sel.mean * 100).toFixed(3)}% (${(sel.min * 100).toFixed(3)}–${(sel.max * 100).toFixed(3)}%)`,
    );
    return {
      name: s.name,
      description: s.description,
      nominal: s.nominal,
      selectivity: { ...sel, mean: round(sel.mean, 6), min: round(sel.min, 6), max: round(sel.max, 6) },
    };
  });
  const rel = (path: string): string => (path.startsWith(REPO_DIR) ? path.slice(REPO_DIR.length + 1) : path);
  const info: DatasetResult['dataset'] = {
    name: dataset.name,
    label: dataset.label,
    description: dataset.description,
    metric: dataset.metric,
    dim: dataset.dim,
    base: dataset.base.count,
    queries: dataset.queries.count,
    payloads: workload.description,
    ground_truth: { cached: gt.cached, seconds: round(gt.seconds, 2), file: rel(gt.path) },
    filtered_ground_truth: { cached: ft.cached, seconds: round(ft.seconds, 2), file: rel(ft.path) },
  };
  return { info, shapes };
}

function runWorker(job: FilteredJob): Promise<FilteredWorkerResult> {
  return runChildWorker<FilteredJob, FilteredWorkerResult>(WORKER, job, (error) => ({ ok: false, engine: job.engine, missing_peer: false, error }));
}

async function run(argv: readonly string[]): Promise<void> {
  const values = parseOptions(argv, {
    datasets: { type: 'string' },
    engines: { type: 'string' },
    m: { type: 'string' },
    'ef-construction': { type: 'string' },
    ef: { type: 'string' },
    efs: { type: 'string' },
    'no-forced': { type: 'boolean' },
    k: { type: 'string' },
    runs: { type: 'string' },
    'cell-seconds': { type: 'string' },
    warmup: { type: 'string' },
    n: { type: 'string' },
    dim: { type: 'string' },
    queries: { type: 'string' },
    seed: { type: 'string' },
    data: { type: 'string' },
    'no-write': { type: 'boolean' },
  });
  const datasets = nameList<FilteredDatasetName>(values.datasets, '--datasets', FILTERED_DATASETS);
  const engines = nameList<FilteredEngineName>(values.engines, '--engines', FILTERED_ENGINES);
  const m = positiveInt(values.m, '--m', 16);
  const efConstruction = positiveInt(values['ef-construction'], '--ef-construction', 100);
  const ef = positiveInt(values.ef, '--ef', 64);
  const sweep = values.efs === undefined ? [] : [...new Set(positiveIntList(values.efs, '--efs', []))].sort((a, b) => a - b);
  const efs = [...new Set([ef, ...sweep])].sort((a, b) => a - b);
  const forced = values['no-forced'] !== true;
  const k = positiveInt(values.k, '--k', 10);
  const runs = positiveInt(values.runs, '--runs', 5);
  const cellSeconds = positiveInt(values['cell-seconds'], '--cell-seconds', 20);
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
  if (engines.includes('kith')) requireWasmKernels();

  const machine = machineInfo(REPO_DIR);
  const [load1] = machine.load_average;
  log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}`);
  log(`load average ${machine.load_average.join(', ')}`);
  if (load1 > QUIET_LOAD) log(`WARNING: 1-minute load ${load1} > ${QUIET_LOAD}: the machine is busy, numbers will be low and noisy`);

  const hnswlib = peerStatus('hnswlib-node');
  const skipped: string[] = [];
  const runEngines = engines.filter((e) => e !== 'hnswlib' || hnswlib.installed);
  if (engines.includes('hnswlib') && !hnswlib.installed) {
    skipped.push(`hnswlib-node: skipped: ${hnswlib.reason}`);
    log(`skipping hnswlib-node: ${hnswlib.reason}`);
  }

  const results: DatasetResult[] = [];
  const generated = new Date();
  for (const name of datasets) {
    const request: DatasetRequest = name === 'synthetic' ? { name, dataDir, ...synthetic } : { name, dataDir };
    // The workers load their own copies; this process keeps only the shapes' statistics while they measure.
    const { info, shapes } = prepare(request, synthetic.seed, k);
    const shapeNames = shapes.map((s) => s.name);

    const done: Partial<Record<FilteredEngineName, FilteredRun>> = {};
    const failed: FilteredFailure[] = [];
    for (const engine of runEngines) {
      const cells = engine === 'kith' ? kithCells(efs, ef, shapeNames, forced) : hnswlibCells(efs, shapeNames);
      const job: FilteredJob = { dataset: request, payloadSeed: synthetic.seed, engine, build: { m, efConstruction }, cells, k, runs, warmup, cellSeconds };
      const result = await runWorker(job);
      if (result.ok) done[engine] = result;
      else {
        log(`${info.label}/${engine}: ${result.missing_peer ? 'skipped' : 'FAILED'}: ${result.error}`);
        failed.push(result);
      }
    }
    const result: DatasetResult = { dataset: info, shapes, kith: done.kith ?? null, hnswlib: done.hnswlib ?? null, failed, skipped };
    printDataset(result, { m, efConstruction, ef, efs: sweep, k, runs, cellSeconds });
    results.push(result);
  }
  const loadAfter = loadAverage();

  const full = {
    scenario: 'filtered',
    date: generated.toISOString(),
    machine,
    // Includes this benchmark's own work: only the value before says whether the machine was quiet.
    load_average_after: loadAfter,
    params: {
      m,
      ef_construction: efConstruction,
      ef,
      efs,
      forced,
      k,
      runs,
      cell_seconds: cellSeconds,
      warmup,
      targets: { recall: TARGET_RECALL, qps_vs_unfiltered: TARGET_RATIO, qps_vs_unfiltered_at_1pct: TARGET_RATIO_SELECTIVE },
      threads: 1,
      queries: 'sequential, one at a time, in-process (no HTTP); filters parsed before the clock starts',
      isolation: 'one child process per engine and dataset (node --expose-gc)',
      synthetic: datasets.includes('synthetic') ? synthetic : undefined,
      data_dir: dataDir,
    },
    hnswlib: hnswlib.installed ? hnswlib.version : null,
    skipped,
    datasets: results,
  };
  if (write) log(`wrote ${writeResult('filtered', full)}`);

  const summary = {
    scenario: 'filtered',
    m,
    ef_construction: efConstruction,
    ef,
    k,
    runs,
    load_1m: [machine.load_average[0], loadAfter[0]],
    commit: machine.commit,
    hnswlib: hnswlib.installed ? hnswlib.version : null,
    datasets: Object.fromEntries(results.map((r) => [r.dataset.label, summarizeDataset(r, ef)])),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

export const filteredScenario: Scenario = {
  name: 'filtered',
  summary: 'filtered HNSW search per selectivity: recall, QPS vs unfiltered, planner strategy, forced strategies, hnswlib-node callback filter',
  options: OPTIONS,
  run,
};
