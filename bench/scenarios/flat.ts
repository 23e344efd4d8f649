/**
 * Scenario `flat`: search over real HTTP, per collection size, on the exact index (default) or,
 * with `--index hnsw`, on the HNSW index (default parameters unless --m/--ef-construction/--ef).
 *
 * For each size: start the compiled service on a loopback port with a fresh database file, create
 * a cosine collection of the chosen index, PUT the points in awaited batches (load points/s; each
 * 200 means the batch is durable), then time searches (limit 10) from one sequential client: warm-up, then
 * `--runs` passes over the query set, median pass QPS and p50/p99 latency over every request.
 * Recall@10 of the first timed pass is checked against float64 brute force in this process.
 * A second measurement with 2 requests in flight shows what the HTTP layer adds (the server is
 * one Node thread: this overlaps parsing and I/O with search, it does not search in parallel).
 * Refuses to run on a build without distance.wasm (the reference kernels would be measured).
 */
import { GaussianMixture, PEER_MIXTURE } from '../datasets/synthetic.js';
import { exactCosineTopK, type RecallReport, recallAtK } from '../lib/brute-force.js';
import { CLIENT_KINDS, createClient, requestJson } from '../lib/http-client.js';
import { requireWasmKernels } from '../lib/kernels-check.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { oneOf, parseOptions, positiveInt, positiveIntList, type Scenario, UsageError } from '../lib/scenario.js';
import { startServer } from '../lib/server.js';
import { round } from '../lib/stats.js';
import { formatTable } from '../lib/table.js';
import {
  encodeSearchBodies,
  encodeUpsertBatches,
  type FloorReport,
  type LoadReport,
  loadPoints,
  measureFloor,
  measureSearch,
  type SearchRunsReport,
} from '../lib/workload.js';

const COLLECTION = 'bench_flat';
const TINY_COLLECTION = 'bench_one_point';
const LIMIT = 10;
const CONCURRENT_CLIENTS = 2;
const INDEX_KINDS = ['flat', 'hnsw'] as const;
type IndexKind = (typeof INDEX_KINDS)[number];

/** What the collection is created with; HNSW parameters left undefined take the service's defaults. */
interface IndexChoice {
  readonly kind: IndexKind;
  readonly m?: number;
  readonly efConstruction?: number;
  readonly ef?: number;
}

/** The HNSW parameters as the service echoes them for the created collection (the ones in effect). */
interface HnswParams {
  readonly m: number;
  readonly ef_construction: number;
  readonly ef_search: number;
}

const OPTIONS = `  --index <kind>         flat (exact, default) or hnsw (results go to bench/results/<date>-flat-hnsw.json)
  --m <m>                hnsw: links per node (default: the service's, 16)
  --ef-construction <e>  hnsw: build beam width (default: the service's, 200)
  --ef <e>               hnsw: search beam width, set as the collection's ef_search (default: the service's, 64)
  --sizes <n,n,…>        collection sizes (default 10000,100000)
  --dim <d>              vector dimension (default 128)
  --runs <r>             timed passes over the queries (default 5)
  --queries <q>          queries per pass (default 1000)
  --warmup <w>           untimed queries before the timed passes (default 200)
  --batch <b>            points per PUT (default 1000)
  --seed <s>             dataset seed (default 42, as the peers)
  --client <kind>        http (node:http keep-alive Agent, default) or fetch (undici)
  --no-write             do not write bench/results/<date>-flat[-hnsw].json

The service must come from a build with the WASM kernels (npm run build, or node scripts/build.mjs
--out dist-<name>): without <out>/src/kernels/distance.wasm the scenario refuses to run.`;

interface SizeResult {
  readonly n: number;
  readonly index: IndexKind;
  /** null for Flat. */
  readonly hnsw: HnswParams | null;
  readonly load: LoadReport;
  readonly db_file_mib: number;
  readonly healthz_floor: FloorReport;
  /** The same searches against a 1-point collection: every per-request cost except the scan. */
  readonly fixed_cost_1_point: SearchRunsReport;
  readonly search_1_client: SearchRunsReport;
  readonly search_2_clients_http_layer: SearchRunsReport;
  readonly recall_at_10: RecallReport;
  readonly server_exit: number | string;
  readonly ground_truth_seconds: number;
}

function log(message: string): void {
  process.stderr.write(`[flat] ${message}\n`);
}

/** The create body: HNSW parameters only where given, so the rest are the service's own defaults. */
function collectionBody(name: string, dim: number, index: IndexChoice): Record<string, unknown> {
  const parameters: Record<string, number> = {};
  if (index.m !== undefined) parameters.m = index.m;
  if (index.efConstruction !== undefined) parameters.ef_construction = index.efConstruction;
  if (index.ef !== undefined) parameters.ef_search = index.ef;
  const body: Record<string, unknown> = { name, vector_size: dim, distance: 'cosine', hnsw: index.kind === 'hnsw' };
  if (Object.keys(parameters).length > 0) body.parameters = parameters;
  return body;
}

function indexLabel(index: IndexKind, hnsw: HnswParams | null): string {
  return index === 'flat' || hnsw === null ? 'flat' : `hnsw M=${hnsw.m} ef_construction=${hnsw.ef_construction} ef=${hnsw.ef_search}`;
}

async function runSize(
  mixture: GaussianMixture,
  n: number,
  params: { runs: number; queries: number; warmup: number; batch: number; client: 'http' | 'fetch'; index: IndexChoice },
): Promise<SizeResult> {
  const t0 = performance.now();
  const base = mixture.base(n);
  const categories = mixture.categories(n);
  const queries = mixture.queries(params.queries);
  const batches = encodeUpsertBatches(base, params.batch, (i) => ({ category: categories[i] }));
  const searchBodies = encodeSearchBodies(queries, LIMIT);
  log(`n=${n}: data generated and encoded in ${((performance.now() - t0) / 1000).toFixed(1)} s; starting the server`);

  const server = await startServer();
  const client = createClient(params.client, server.url, CONCURRENT_CLIENTS);
  let exit: number | string = 'not stopped';
  try {
    await requestJson(client, 'POST', '/collections', collectionBody(COLLECTION, mixture.spec.dim, params.index));
    const created = (await requestJson(client, 'GET', `/collections/${COLLECTION}`)) as { result: { hnsw: boolean; parameters: HnswParams } };
    if (created.result.hnsw !== (params.index.kind === 'hnsw')) throw new Error(`collection created with hnsw=${created.result.hnsw}`);
    const { m, ef_construction, ef_search } = created.result.parameters;
    const hnsw = params.index.kind === 'hnsw' ? { m, ef_construction, ef_search } : null;
    const label = indexLabel(params.index.kind, hnsw);
    const load = await loadPoints(client, COLLECTION, batches, n);
    log(`n=${n} (${label}): loaded in ${load.seconds} s (${load.points_per_s} points/s)`);
    const size = server.dbFileSize();
    const floor = await measureFloor(client, 2000);
    // The same index kind and parameters, so the fixed cost is the same code path minus the search work.
    await requestJson(client, 'POST', '/collections', collectionBody(TINY_COLLECTION, mixture.spec.dim, params.index));
    await loadPoints(client, TINY_COLLECTION, encodeUpsertBatches(mixture.base(1), 1), 1);
    const fixed = await measureSearch(client, TINY_COLLECTION, searchBodies, { runs: 1, warmup: params.warmup, concurrency: 1, expectHits: 1 });
    const sequential = await measureSearch(client, COLLECTION, searchBodies, {
      runs: params.runs,
      warmup: params.warmup,
      concurrency: 1,
      expectHits: LIMIT,
    });
    log(`n=${n} (${label}): 1 client ${sequential.report.qps_median} QPS (runs ${sequential.report.qps_per_run.join(', ')})`);
    const concurrent = await measureSearch(client, COLLECTION, searchBodies, {
      runs: params.runs,
      warmup: params.warmup,
      concurrency: CONCURRENT_CLIENTS,
      expectHits: LIMIT,
    });
    log(`n=${n} (${label}): 2 clients ${concurrent.report.qps_median} QPS (runs ${concurrent.report.qps_per_run.join(', ')})`);
    client.close();
    exit = await server.stop();
    if (exit !== 0) log(`n=${n}: server exited with ${exit} on SIGTERM:\n${server.output()}`);

    // Ground truth after the server has stopped, so it never competes with a measurement.
    const g0 = performance.now();
    const truth = exactCosineTopK(base, queries, LIMIT);
    const groundTruthSeconds = (performance.now() - g0) / 1000;
    const recall = recallAtK(truth, sequential.hits, base, queries);
    log(`n=${n} (${label}): recall@10 ${recall.recall} (ground truth in ${groundTruthSeconds.toFixed(1)} s)`);
    return {
      n,
      index: params.index.kind,
      hnsw,
      load,
      db_file_mib: round(size.allocated / 2 ** 20, 1),
      healthz_floor: floor,
      fixed_cost_1_point: fixed.report,
      search_1_client: sequential.report,
      search_2_clients_http_layer: concurrent.report,
      recall_at_10: recall,
      server_exit: exit,
      ground_truth_seconds: round(groundTruthSeconds, 1),
    };
  } finally {
    client.close();
    if (exit === 'not stopped') await server.stop();
  }
}

function printTable(results: readonly SizeResult[], dim: number, client: string, runs: number, queries: number, index: IndexKind): void {
  const int = (x: number): string => Math.round(x).toLocaleString('en-US');
  const ms = (x: number): string => x.toFixed(2);
  const metrics: [string, (r: SizeResult) => string][] = [
    ['load: points/s (PUTs of 1000, each durable)', (r) => int(r.load.points_per_s)],
    ['load: seconds', (r) => r.load.seconds.toFixed(2)],
    ['load: PUT p50 / p99 ms', (r) => `${ms(r.load.batch_latency.p50_ms)} / ${ms(r.load.batch_latency.p99_ms)}`],
    ['database file MiB', (r) => r.db_file_mib.toFixed(1)],
    ['search, 1 client: QPS (median run)', (r) => int(r.search_1_client.qps_median)],
    ['search, 1 client: QPS min–max of runs', (r) => `${int(Math.min(...r.search_1_client.qps_per_run))}–${int(Math.max(...r.search_1_client.qps_per_run))}`],
    ['search, 1 client: p50 / p99 ms', (r) => `${ms(r.search_1_client.latency.p50_ms)} / ${ms(r.search_1_client.latency.p99_ms)}`],
    ['search, 1 client: server time p50 ms', (r) => ms(r.search_1_client.server_time.p50_ms)],
    ['recall@10 vs float64 brute force', (r) => r.recall_at_10.recall.toFixed(4)],
    ['search, 2 clients (HTTP layer): QPS', (r) => int(r.search_2_clients_http_layer.qps_median)],
    [
      'search, 2 clients (HTTP layer): p50 / p99 ms',
      (r) => `${ms(r.search_2_clients_http_layer.latency.p50_ms)} / ${ms(r.search_2_clients_http_layer.latency.p99_ms)}`,
    ],
    ['fixed cost: search a 1-point collection, p50 ms', (r) => ms(r.fixed_cost_1_point.latency.p50_ms)],
    ['fixed cost: same, server time p50 ms', (r) => ms(r.fixed_cost_1_point.server_time.p50_ms)],
    ['floor: GET /healthz p50 ms', (r) => ms(r.healthz_floor.latency.p50_ms)],
  ];
  // Flat keeps its original title; HNSW names its parameters (as the service echoed them) in it.
  const hnsw = results[0]?.hnsw ?? null;
  const what = index === 'flat' ? 'flat — exact search over HTTP' : `flat --index hnsw — HNSW search over HTTP (${indexLabel(index, hnsw)})`;
  process.stdout.write(
    `\n${what}: d=${dim}, cosine, limit ${LIMIT}, ${queries} queries × ${runs} runs, ` +
      `client ${client === 'http' ? 'node:http keep-alive Agent' : 'fetch (undici)'}\n\n`,
  );
  const header = ['metric', ...results.map((r) => `n=${r.n.toLocaleString('en-US')}`)];
  process.stdout.write(
    `${formatTable(
      header,
      metrics.map(([label, f]) => [label, ...results.map(f)]),
    )}\n\n`,
  );
}

async function run(argv: readonly string[]): Promise<void> {
  const values = parseOptions(argv, {
    sizes: { type: 'string' },
    dim: { type: 'string' },
    runs: { type: 'string' },
    queries: { type: 'string' },
    warmup: { type: 'string' },
    batch: { type: 'string' },
    seed: { type: 'string' },
    client: { type: 'string' },
    index: { type: 'string' },
    m: { type: 'string' },
    'ef-construction': { type: 'string' },
    ef: { type: 'string' },
    'no-write': { type: 'boolean' },
  });
  const sizes = positiveIntList(values.sizes, '--sizes', [10_000, 100_000]);
  const dim = positiveInt(values.dim, '--dim', 128);
  const runs = positiveInt(values.runs, '--runs', 5);
  const queries = positiveInt(values.queries, '--queries', 1000);
  const warmup = positiveInt(values.warmup, '--warmup', 200);
  const batch = positiveInt(values.batch, '--batch', 1000);
  const seed = positiveInt(values.seed, '--seed', PEER_MIXTURE.seed);
  const client = oneOf(values.client, '--client', CLIENT_KINDS, 'http');
  const kind = oneOf(values.index, '--index', INDEX_KINDS, 'flat');
  for (const flag of ['m', 'ef-construction', 'ef'] as const) {
    if (kind === 'flat' && values[flag] !== undefined) throw new UsageError(`--${flag} applies to --index hnsw only`);
  }
  const index: IndexChoice = {
    kind,
    m: values.m === undefined ? undefined : positiveInt(values.m, '--m', 16),
    efConstruction: values['ef-construction'] === undefined ? undefined : positiveInt(values['ef-construction'], '--ef-construction', 200),
    ef: values.ef === undefined ? undefined : positiveInt(values.ef, '--ef', 64),
  };
  requireWasmKernels();
  const resultName = kind === 'flat' ? 'flat' : 'flat-hnsw';

  const machine = machineInfo(REPO_DIR);
  const [load1] = machine.load_average;
  log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}`);
  log(`load average ${machine.load_average.join(', ')}`);
  if (load1 > QUIET_LOAD) log(`WARNING: 1-minute load ${load1} > ${QUIET_LOAD}: the machine is busy, numbers will be low and noisy`);

  const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim, seed });
  const results: SizeResult[] = [];
  for (const n of sizes) results.push(await runSize(mixture, n, { runs, queries, warmup, batch, client, index }));
  const loadAfter = loadAverage();

  printTable(results, dim, client, runs, queries, kind);
  const hnsw = results[0]?.hnsw ?? null;
  const full = {
    scenario: resultName,
    date: new Date().toISOString(),
    machine,
    // Includes this benchmark's own two busy processes: only the value before says whether the machine was quiet.
    load_average_after: loadAfter,
    params: {
      dim,
      distance: 'Cosine',
      index: kind,
      hnsw,
      limit: LIMIT,
      batch,
      runs,
      queries,
      warmup,
      concurrent_clients: CONCURRENT_CLIENTS,
      client: client === 'http' ? 'node:http Agent keepAlive' : 'fetch (undici) keep-alive',
      dataset: { kind: 'gaussian-mixture', ...PEER_MIXTURE, seed, unit_normalised: true, payload: 'category uniform 0..9' },
    },
    results,
  };
  if (values['no-write'] !== true) log(`wrote ${writeResult(resultName, full)}`);
  const summary = {
    scenario: 'flat',
    index: kind,
    ...(hnsw === null ? {} : { hnsw }),
    dim,
    runs,
    queries,
    client,
    load_1m: [machine.load_average[0], loadAfter[0]],
    commit: machine.commit,
    results: results.map((r) => ({
      n: r.n,
      load_points_per_s: r.load.points_per_s,
      qps: r.search_1_client.qps_median,
      p50_ms: r.search_1_client.latency.p50_ms,
      p99_ms: r.search_1_client.latency.p99_ms,
      recall_at_10: r.recall_at_10.recall,
      qps_2_clients_http_layer: r.search_2_clients_http_layer.qps_median,
    })),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

export const flatScenario: Scenario = {
  name: 'flat',
  summary: 'load points over HTTP, then search QPS, latency and recall@10 (Flat, or --index hnsw)',
  options: OPTIONS,
  run,
};
