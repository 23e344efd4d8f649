/**
 * Scenario `restart`: how long an HNSW collection takes to come back after a restart, and what
 * the graph snapshot saves.
 *
 * For each size: build the database file in-process through the embedded API (durable upserts in
 * batches of 1000, small payloads), then `db.close()`, which writes the graph snapshot. Then, with
 * the file warm in the page cache, `--runs` times each: (a) `Database.open` in a fresh process
 * (bench/lib/restart-worker.ts) until it returns, with its load report proving the graph came from
 * the snapshot; (b) the real service spawned on the file, until GET /readyz answers 200. Once:
 * where the open's time goes (bench/lib/restart-phases.ts), and at one size (100k) the open of a
 * copy whose snapshots were removed (the rebuild a crash takes at worst). Recall@10 at a fixed ef
 * against float64 brute force is checked before the close and after each kind of restart.
 * Output: a table (bench/lib/restart-report.ts), bench/results/<date>-restart.json, one JSON line.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Database } from '../../src/db/database.js';
import { GaussianMixture, PEER_MIXTURE, type VectorSet } from '../datasets/synthetic.js';
import { exactCosineTopK, type RecallReport, recallAtK } from '../lib/brute-force.js';
import { runChildWorker } from '../lib/child-worker.js';
import { createClient } from '../lib/http-client.js';
import { requireWasmKernels } from '../lib/kernels-check.js';
import { copyWithoutSnapshots } from '../lib/lmdb-snapshots.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import type { PhaseReport } from '../lib/restart-phases.js';
import { type BuildReport, printRestartTable, type RestartSizeResult, restartSummary, type ServiceRun, TARGET } from '../lib/restart-report.js';
import type { OpenReport, RestartJob, RestartResult } from '../lib/restart-worker.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { parseOptions, positiveInt, positiveIntList, type Scenario } from '../lib/scenario.js';
import { startServer } from '../lib/server.js';
import { median, round } from '../lib/stats.js';
import { encodeSearchBodies, type Hit, measureSearch } from '../lib/workload.js';

const COLLECTION = 'bench_restart';
const K = 10;
const WORKER = fileURLToPath(new URL('../lib/restart-worker.js', import.meta.url));

const OPTIONS = `  --sizes <n,n,…>        collection sizes (default 100000,1000000)
  --runs <r>             restarts timed per kind; the median is reported (default 3)
  --m <m>                HNSW M (default 16, the service's)
  --ef-construction <e>  HNSW ef_construction (default 200, the service's)
  --ef <e>               ef of the recall check (default 64)
  --queries <q>          recall queries (default 200)
  --no-snapshot-at <n>   the size at which the restart without a snapshot is timed once (default 100000)
  --dim <d>              vector dimension (default 128)
  --batch <b>            points per upsert while building (default 1000)
  --seed <s>             dataset seed (default 42, as the peers)
  --threads <t>          search threads of the build, the opens and the service (-threads t; default 0:
                         none, so inserts run on the writer alone)
  --no-write             do not write bench/results/<date>-restart.json

Needs a build with the WASM kernels (npm run build, or node scripts/build.mjs --out dist-<name>).
The 1M build takes several minutes (progress on stderr). Target: restart of 1M × 128 ≤ ${TARGET.seconds} s.`;

function log(message: string): void {
  process.stderr.write(`[restart] ${message}\n`);
}

const int = (x: number): string => Math.round(x).toLocaleString('en-US');

function runWorker(job: RestartJob): Promise<RestartResult> {
  return runChildWorker<RestartJob, RestartResult>(WORKER, job, (error) => ({ kind: 'error', error }));
}

async function openInWorker(job: Omit<RestartJob, 'kind'>): Promise<OpenReport> {
  const result = await runWorker({ ...job, kind: 'open' });
  if (result.kind !== 'open') throw new Error(`restart worker: ${result.kind === 'error' ? result.error : 'unexpected reply'}`);
  return result;
}

/** Builds the file in-process: create, upsert in awaited durable batches, search (recall before), close. */
async function build(
  path: string,
  base: VectorSet,
  categories: Uint8Array,
  queries: VectorSet,
  params: { m: number; efConstruction: number; ef: number; batch: number; threads: number },
): Promise<{ report: BuildReport; hits: Hit[][]; load1m: number }> {
  const n = base.rows.length;
  const load1m = loadAverage()[0];
  const db = Database.open(path, { threads: params.threads });
  await db.createCollection({
    name: COLLECTION,
    vector_size: base.dim,
    distance: 'cosine',
    hnsw: true,
    parameters: { m: params.m, ef_construction: params.efConstruction },
  });
  const collection = db.collection(COLLECTION);
  let convertMs = 0;
  let lastLog = performance.now();
  const t0 = performance.now();
  for (let start = 0; start < n; start += params.batch) {
    const c0 = performance.now();
    const batch = [];
    for (let i = start; i < Math.min(n, start + params.batch); i++) {
      batch.push({ id: i, vector: Array.from(base.rows[i] as Float32Array), payload: { category: categories[i] } });
    }
    convertMs += performance.now() - c0;
    await collection.upsert(batch);
    const now = performance.now();
    if (now - lastLog > 10_000) {
      lastLog = now;
      const done = start + batch.length;
      const rate = done / ((now - t0 - convertMs) / 1000);
      log(`n=${int(n)}: ${int(done)} points (${((100 * done) / n).toFixed(0)}%), ${int(rate)} points/s, ~${int((n - done) / rate)} s to go`);
    }
  }
  const upsertSeconds = (performance.now() - t0 - convertMs) / 1000;
  const stats = collection.memoryStats();
  const hits = queries.rows.map((q) =>
    collection.search({ vector: Array.from(q), limit: K, params: { ef: params.ef } }).map((h) => ({ id: String(h.id), score: h.score })),
  );
  const c0 = performance.now();
  await db.close();
  const closeSeconds = (performance.now() - c0) / 1000;
  const st = statSync(path);
  return {
    report: {
      upsert_seconds: round(upsertSeconds, 2),
      points_per_s: Math.round(n / upsertSeconds),
      convert_seconds: round(convertMs / 1000, 2),
      close_seconds: round(closeSeconds, 2),
      file_bytes: st.size,
      file_bytes_allocated: st.blocks * 512,
      memory: {
        points: stats.points,
        vector_bytes_allocated: stats.vectorBytesAllocated,
        graph_bytes_allocated: stats.graphBytesAllocated,
        graph_nodes: stats.graphNodes,
      },
    },
    hits,
    load1m,
  };
}

/** The service on the file: spawn → /readyz 200; its own "database loaded" time from its log; RSS. */
async function serviceRun(dbPath: string, recallBodies: readonly Buffer[] | null, threads: number): Promise<{ run: ServiceRun; hits: Hit[][] | null }> {
  // info level: the service logs `loadMs` (start → every collection loaded) once its load is done.
  const server = await startServer({ dbPath, logLevel: 'info', pollMs: 5, timeoutMs: 600_000, args: ['-threads', String(threads)] });
  let hits: Hit[][] | null = null;
  let exit: number | string = 'not stopped';
  try {
    const rss = server.rss();
    if (recallBodies !== null) {
      const client = createClient('http', server.url, 1);
      hits = (await measureSearch(client, COLLECTION, recallBodies, { runs: 1, warmup: 0, concurrency: 1 })).hits;
      client.close();
    }
    exit = await server.stop();
    if (exit !== 0) log(`service exited with ${exit}:\n${server.output().slice(-2000)}`);
    const loadMs = /"loadMs":(\d+)/.exec(server.output())?.[1];
    const run: ServiceRun = {
      ready_ms: round(server.readyMs, 1),
      db_load_ms: loadMs === undefined ? null : Number(loadMs),
      rss_bytes: rss?.rss_bytes ?? null,
      peak_rss_bytes: rss?.peak_rss_bytes ?? null,
      rss_anon_bytes: rss?.rss_anon_bytes ?? null,
      rss_file_bytes: rss?.rss_file_bytes ?? null,
      exit,
    };
    return { run, hits };
  } finally {
    if (exit === 'not stopped') await server.stop();
  }
}

function snapshotUsed(r: OpenReport, n: number): boolean {
  return r.load.points === n && r.load.fromSnapshot === n && r.load.inserted === 0 && r.load.snapshotRejected === null && r.warnings.length === 0;
}

function sameHits(a: readonly (readonly Hit[])[], b: readonly (readonly Hit[])[]): boolean {
  return a.length === b.length && a.every((hits, qi) => hits.map((h) => h.id).join() === (b[qi] ?? []).map((h) => h.id).join());
}

async function runSize(
  mixture: GaussianMixture,
  n: number,
  p: {
    runs: number;
    m: number;
    efConstruction: number;
    ef: number;
    queries: number;
    batch: number;
    noSnapshotAt: number;
    emptyRss: number | null;
    threads: number;
  },
): Promise<RestartSizeResult> {
  const base = mixture.base(n);
  const categories = mixture.categories(n);
  const queries = mixture.queries(p.queries);
  const queryRows = queries.rows.map((q) => Array.from(q));
  const bodies = encodeSearchBodies(queries, K, () => ({ params: { ef: p.ef } }));
  const dir = mkdtempSync(join(tmpdir(), 'kith-bench-restart-'));
  const path = join(dir, 'restart.db');
  try {
    log(`n=${int(n)}: building (d=${mixture.spec.dim}, M=${p.m}, ef_construction=${p.efConstruction}, batches of ${p.batch}, durable)`);
    const built = await build(path, base, categories, queries, p);
    log(
      `n=${int(n)}: built in ${built.report.upsert_seconds} s (${int(built.report.points_per_s)} points/s), close ${built.report.close_seconds} s, file ${int(built.report.file_bytes / 2 ** 20)} MiB`,
    );
    const g0 = performance.now();
    const truth = exactCosineTopK(base, queries, K);
    log(`n=${int(n)}: ground truth for ${p.queries} queries in ${((performance.now() - g0) / 1000).toFixed(1)} s`);
    const recall = (hits: readonly (readonly Hit[])[]): RecallReport => recallAtK(truth, hits, base, queries);

    const job = { path, collection: COLLECTION, queries: queryRows, k: K, ef: p.ef, threads: p.threads };
    const opens: OpenReport[] = [];
    const services: ServiceRun[] = [];
    let serviceHits: Hit[][] | null = null;
    // Other people's jobs can start during a long run: the load before each restart says which runs were clean.
    const loads: number[] = [];
    for (let run = 0; run < p.runs; run++) {
      loads.push(loadAverage()[0]);
      const open = await openInWorker(job);
      opens.push(open);
      const last = run === p.runs - 1;
      const service = await serviceRun(path, last ? bodies : null, p.threads);
      services.push(service.run);
      if (last) serviceHits = service.hits;
      log(
        `n=${int(n)} run ${run + 1}/${p.runs}: Database.open ${(open.open_ms / 1000).toFixed(2)} s ` +
          `(from snapshot ${open.load.fromSnapshot}, inserted ${open.load.inserted}${open.load.snapshotRejected === null ? '' : `, REJECTED: ${open.load.snapshotRejected}`}); ` +
          `service ready in ${(service.run.ready_ms / 1000).toFixed(2)} s (its loadMs ${service.run.db_load_ms}); 1-min load before ${loads[run]}`,
      );
    }
    const first = opens[0] as OpenReport;
    const buildLoad = built.load1m;
    const snapshotOk = opens.every((o) => snapshotUsed(o, n));
    if (!snapshotOk) log(`n=${int(n)}: WARNING: a restart did not take the whole graph from the snapshot: ${JSON.stringify(opens.map((o) => o.load))}`);

    log(`n=${int(n)}: timing the phases of the open`);
    const phased = await runWorker({ ...job, kind: 'phases' });
    const phases: PhaseReport | null = phased.kind === 'phases' ? phased.phases : null;
    if (phased.kind === 'error') log(`n=${int(n)}: phases failed: ${phased.error}`);

    let noSnapshot: RestartSizeResult['no_snapshot'] = null;
    if (n === p.noSnapshotAt) {
      const copy = join(dir, 'no-snapshot.db');
      const chunks = await copyWithoutSnapshots(path, copy);
      log(`n=${int(n)}: restart without the snapshot (${chunks} chunk(s) removed from a copy): rebuilding the graph`);
      const open = await openInWorker({ ...job, path: copy });
      rmSync(copy, { force: true });
      rmSync(`${copy}-lock`, { force: true });
      noSnapshot = { snapshot_chunks_removed: chunks, open_s: round(open.open_ms / 1000, 2), load: open.load, recall_at_10: recall(open.hits) };
      log(`n=${int(n)}: without the snapshot: ${noSnapshot.open_s} s (inserted ${open.load.inserted}), recall ${noSnapshot.recall_at_10.recall}`);
    }

    const before = recall(built.hits);
    const afterOpen = recall(first.hits);
    const afterService = serviceHits === null ? null : recall(serviceHits);
    const identical = opens.every((o) => sameHits(o.hits, built.hits)) && (serviceHits === null || sameHits(serviceHits, built.hits));
    const openSeconds = opens.map((o) => round(o.open_ms / 1000, 3));
    const readySeconds = services.map((s) => round(s.ready_ms / 1000, 3));
    const rssAfter = median(opens.map((o) => o.rss_after_bytes - o.rss_before_bytes));
    const lastService = services[services.length - 1];
    const serviceRss = lastService?.rss_bytes ?? null;
    return {
      n,
      build: built.report,
      load_1m: { build_start: buildLoad, before_each_restart: loads },
      restart_in_process: {
        open_seconds_median: round(median(openSeconds), 3),
        open_seconds_per_run: openSeconds,
        close_ms_median: round(median(opens.map((o) => o.close_ms)), 1),
        load_reports: opens.map((o) => o.load),
        warnings: [...new Set(opens.flatMap((o) => o.warnings))],
        snapshot_used: snapshotOk,
        memory: first.memory,
        rss_delta_bytes_median: rssAfter,
        rss_after_bytes: first.rss_after_bytes,
        heap_used_after_bytes: first.heap_used_after_bytes,
        rss_anon_after_bytes: first.rss_anon_after_bytes,
        rss_file_after_bytes: first.rss_file_after_bytes,
      },
      restart_service: {
        ready_seconds_median: round(median(readySeconds), 3),
        ready_seconds_per_run: readySeconds,
        db_load_ms_median: median(services.map((s) => s.db_load_ms ?? Number.NaN)),
        runs: services,
        rss_bytes: serviceRss,
        rss_anon_bytes: lastService?.rss_anon_bytes ?? null,
        rss_file_bytes: lastService?.rss_file_bytes ?? null,
        rss_bytes_per_point_beyond_empty: serviceRss === null || p.emptyRss === null ? null : round((serviceRss - p.emptyRss) / n, 1),
      },
      phases,
      recall: { ef: p.ef, queries: p.queries, before: before, after_in_process: afterOpen, after_service: afterService, identical_hits: identical },
      no_snapshot: noSnapshot,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(argv: readonly string[]): Promise<void> {
  const values = parseOptions(argv, {
    sizes: { type: 'string' },
    runs: { type: 'string' },
    m: { type: 'string' },
    'ef-construction': { type: 'string' },
    ef: { type: 'string' },
    queries: { type: 'string' },
    'no-snapshot-at': { type: 'string' },
    dim: { type: 'string' },
    batch: { type: 'string' },
    seed: { type: 'string' },
    threads: { type: 'string' },
    'no-write': { type: 'boolean' },
  });
  const sizes = positiveIntList(values.sizes, '--sizes', [100_000, 1_000_000]);
  const runs = positiveInt(values.runs, '--runs', 3);
  const m = positiveInt(values.m, '--m', 16);
  const efConstruction = positiveInt(values['ef-construction'], '--ef-construction', 200);
  const ef = positiveInt(values.ef, '--ef', 64);
  const queries = positiveInt(values.queries, '--queries', 200);
  const noSnapshotAt = positiveInt(values['no-snapshot-at'], '--no-snapshot-at', 100_000);
  const dim = positiveInt(values.dim, '--dim', 128);
  const batch = positiveInt(values.batch, '--batch', 1000);
  const seed = positiveInt(values.seed, '--seed', PEER_MIXTURE.seed);
  const threads = values.threads === '0' ? 0 : positiveInt(values.threads, '--threads', 0);
  requireWasmKernels();

  const machine = machineInfo(REPO_DIR);
  const [load1] = machine.load_average;
  log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}`);
  log(`load average ${machine.load_average.join(', ')}`);
  if (load1 > QUIET_LOAD) log(`WARNING: 1-minute load ${load1} > ${QUIET_LOAD}: the machine is busy, numbers will be low and noisy`);

  // The floor: the same service on an empty file (process start, imports, Fastify, listen).
  const floorRuns: ServiceRun[] = [];
  for (let i = 0; i < runs; i++) {
    const server = await startServer({ logLevel: 'info', pollMs: 5, args: ['-threads', String(threads)] });
    const rss = server.rss();
    floorRuns.push({
      ready_ms: round(server.readyMs, 1),
      db_load_ms: null,
      rss_bytes: rss?.rss_bytes ?? null,
      peak_rss_bytes: rss?.peak_rss_bytes ?? null,
      rss_anon_bytes: rss?.rss_anon_bytes ?? null,
      rss_file_bytes: rss?.rss_file_bytes ?? null,
      exit: await server.stop(),
    });
  }
  const emptyRss = floorRuns[0]?.rss_bytes ?? null;
  const floor = { ready_seconds_median: round(median(floorRuns.map((r) => r.ready_ms)) / 1000, 3), rss_bytes: emptyRss, runs: floorRuns };
  log(`empty database: service ready in ${floor.ready_seconds_median} s, RSS ${int((emptyRss ?? 0) / 2 ** 20)} MiB`);

  const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim, seed });
  const results: RestartSizeResult[] = [];
  for (const n of sizes) results.push(await runSize(mixture, n, { runs, m, efConstruction, ef, queries, batch, noSnapshotAt, emptyRss, threads }));
  const loadAfter = loadAverage();

  const params = { dim, distance: 'Cosine', m, ef_construction: efConstruction, ef, k: K, queries, batch, runs, no_snapshot_at: noSnapshotAt };
  printRestartTable(results, floor, params);
  const full = {
    scenario: 'restart',
    date: new Date().toISOString(),
    machine,
    // Includes this benchmark's own work: only the value before says whether the machine was quiet.
    load_average_after: loadAfter,
    params: {
      ...params,
      payload: '{ category } uniform 0..9',
      page_cache: 'warm (every restart follows the build and the previous restart; nothing is evicted)',
      dataset: { kind: 'gaussian-mixture', ...PEER_MIXTURE, seed, unit_normalised: true },
      target: TARGET,
    },
    service_empty_database: floor,
    results,
  };
  if (values['no-write'] !== true) log(`wrote ${writeResult('restart', full)}`);
  process.stdout.write(`${JSON.stringify(restartSummary(results, floor, params, [machine.load_average[0], loadAfter[0]], machine.commit))}\n`);
}

export const restartScenario: Scenario = {
  name: 'restart',
  summary: 'HNSW restart time from the graph snapshot (in-process and service), vs rebuilding; memory per vector',
  options: OPTIONS,
  run,
};
