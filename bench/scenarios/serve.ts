/**
 * `npm run bench -- serve`: kith over HTTP against a reference service (Fastify + hnswlib-node, one
 * thread, no schemas: bench/peers/reference-service.mjs), side by side in one run, same data, same
 * requests, same client. Per service, one after another (never both at once: the machine has two
 * cores): load over HTTP, warm up, then CPU per query (1 client), 16 clients, batch search,
 * search latency under a writer, RSS per point, and for kith the first queries after a restart and
 * searches with a filter no payload index answers (1 and 16 clients, against filtered ground truth).
 * kith's timed phases start once the background calibration of ef that the load started has
 * finished (it is logged how long that took), as the issue asks for "after warm-up".
 * Recall@10 for both against float64 brute force (cached). The measurements are in
 * lib/serve-measure.ts, the table in lib/serve-report.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticDataset } from '../datasets/dataset.js';
import { GaussianMixture, PEER_MIXTURE } from '../datasets/synthetic.js';
import { computeExactTopK, type ExactNeighbours, groundTruth } from '../lib/ground-truth.js';
import { createClient, requestJson } from '../lib/http-client.js';
import { requireWasmKernels } from '../lib/kernels-check.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { peerStatus } from '../lib/peers.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { nameList, parseOptions, positiveInt, type Scenario, UsageError } from '../lib/scenario.js';
import { MAIN_JS } from '../lib/server.js';
import { LoadGenerator } from '../lib/serve-load.js';
import {
  calibrationSettled,
  JOB_WARMUP,
  measureBatch,
  measureFloor,
  measurePredicateFilter,
  measureRestart,
  measureUnderWrites,
  measureWithRecall,
  servedLoad,
  warmGenerator,
  warmupShape,
} from '../lib/serve-measure.js';
import { spawnService } from '../lib/serve-process.js';
import { printReport, rssGrowth, type TargetResult } from '../lib/serve-report.js';
import { coresBusy, round } from '../lib/stats.js';
import { encodeSearchBodies, encodeUpsertBatches, loadPoints } from '../lib/workload.js';

const COLLECTION = 'serve';
const FLOOR = 'serve_floor';
/** The `filtered` phase's collection: the same points, no payload indexes, so its filter runs as a predicate. */
const PREDICATE = 'serve_predicate';
/** Three categories of ten: 30% of the points, checked on every node a filtered walk meets. */
const PREDICATE_FILTER = { must: [{ key: 'category', match: { any: [0, 1, 2] } }] };
const inPredicate = (row: number): boolean => row % 10 < 3;
const LIMIT = 10;
const PHASES = ['floor', 'one', 'many', 'batch', 'writes', 'restart', 'filtered'] as const;
type Phase = (typeof PHASES)[number];

const OPTIONS = `  --n <n>              points (default 100000), the peers' Gaussian mixture, cosine, HNSW at kith's defaults
  --dim <d>            dimension (default 128)
  --queries <q>        queries from the mixture (default 1000); one pass = every query once
  --passes <p>         timed passes per load measurement (default 3)
  --warmup <w>         searches after the load, before anything is timed (default 2000)
  --clients <c>        concurrent keep-alive clients of the concurrent measurement (default 16)
  --threads <t,t,…>    run kith once per value with -threads t, 0 included (default: once, without the flag)
  --phases <list>      some of ${PHASES.join(',')} (default all)
  --no-reference       kith only
  --cpu-prof <dir>     start the services with node --cpu-prof --cpu-prof-dir <dir> (profiles on exit)
  --no-write           do not write bench/results/<date>-serve.json

Needs the peers for the reference (npm ci --prefix bench/peers); without them kith runs alone.`;

function log(message: string): void {
  process.stderr.write(`[serve] ${message}\n`);
}

/** `--threads 0,1,2`: kith's -threads values (0: searches on the service thread). */
function threadList(text: string | boolean): number[] {
  if (typeof text !== 'string' || !/^\d+(,\d+)*$/.test(text.replace(/\s/g, '')))
    throw new UsageError(`--threads: expected a comma-separated list of whole numbers, got ${JSON.stringify(text)}`);
  return text.replace(/\s/g, '').split(',').map(Number);
}

interface Target {
  readonly label: string;
  readonly kind: 'kith' | 'reference';
  readonly script: string;
  readonly args: readonly string[];
}

export const serveScenario: Scenario = {
  name: 'serve',
  summary: 'kith vs a Fastify + hnswlib-node service over HTTP: CPU/query, 16 clients, batch, under writes, RSS, restart, recall',
  options: OPTIONS,
  async run(argv) {
    const values = parseOptions(argv, {
      n: { type: 'string' },
      dim: { type: 'string' },
      queries: { type: 'string' },
      passes: { type: 'string' },
      warmup: { type: 'string' },
      clients: { type: 'string' },
      threads: { type: 'string' },
      phases: { type: 'string' },
      'no-reference': { type: 'boolean' },
      'cpu-prof': { type: 'string' },
      'no-write': { type: 'boolean' },
    });
    const n = positiveInt(values.n, '--n', 100000);
    const dim = positiveInt(values.dim, '--dim', 128);
    const queryCount = positiveInt(values.queries, '--queries', 1000);
    const passes = positiveInt(values.passes, '--passes', 3);
    const warmup = positiveInt(values.warmup, '--warmup', 2000);
    const clients = positiveInt(values.clients, '--clients', 16);
    const threads = values.threads === undefined ? [undefined] : threadList(values.threads);
    const phases = new Set<Phase>(nameList(values.phases, '--phases', PHASES));
    const profDir = typeof values['cpu-prof'] === 'string' ? values['cpu-prof'] : undefined;
    requireWasmKernels();

    const machine = machineInfo(REPO_DIR);
    const load = loadAverage();
    log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}`);
    log(`uptime: ${machine.uptime ?? `load ${load.join(', ')}`}`);
    if (load[0] > QUIET_LOAD) log(`WARNING: 1-minute load ${load[0]} > ${QUIET_LOAD}: the machine is busy, numbers will be noisy`);

    const targets: Target[] = threads.map((t) => ({
      label: t === undefined ? 'kith' : `kith -threads ${t}`,
      kind: 'kith',
      script: MAIN_JS,
      args: t === undefined ? [] : ['-threads', String(t)],
    }));
    const reference = peerStatus('hnswlib-node');
    if (values['no-reference'] !== true) {
      if (reference.installed)
        targets.push({ label: 'reference', kind: 'reference', script: join(REPO_DIR, 'bench', 'peers', 'reference-service.mjs'), args: [] });
      else log(`reference skipped: ${reference.reason}`);
    }

    // Data: the base rows, extra rows for the writer (ids n…), queries; ground truth (cached).
    const extra = 20000;
    const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim });
    const all = mixture.base(n + extra);
    const base = { dim, data: all.data.subarray(0, n * dim), rows: all.rows.slice(0, n), cluster: all.cluster.subarray(0, n) };
    const writerRows = { dim, data: all.data.subarray(n * dim), rows: all.rows.slice(n), cluster: all.cluster.subarray(n) };
    const dataset = syntheticDataset(n, dim, queryCount);
    const gt = groundTruth(dataset, LIMIT, log);
    log(`ground truth: ${gt.cached ? 'cached' : `computed in ${round(gt.seconds, 1)} s`}`);
    const payload = (i: number): unknown => ({ category: i % 10 });
    const upserts = encodeUpsertBatches(base, 1000, payload);
    const [floorUpsert] = encodeUpsertBatches({ ...base, rows: base.rows.slice(0, 1) }, 1, payload);
    if (floorUpsert === undefined) throw new Error('no point for the floor collection');
    const writerBatches = encodeUpsertBatches(writerRows, 100, (i) => payload(n + i)).map((body) =>
      // encodeUpsertBatches numbers rows from 0: shift the writer's ids past the base points.
      Buffer.from(body.toString().replace(/"id":(\d+)/g, (_, id: string) => `"id":${n + Number(id)}`)),
    );
    const queryBodies = encodeSearchBodies(mixture.queries(queryCount), LIMIT);
    const queryTexts = queryBodies.map((b) => b.toString());
    const batchBody = Buffer.from(`{"searches":[${queryTexts.join(',')}]}`);
    const searchPath = `/collections/${COLLECTION}/points/search`;
    const filteredTexts = encodeSearchBodies(mixture.queries(queryCount), LIMIT, () => ({ filter: PREDICATE_FILTER })).map((b) => b.toString());
    let filteredTruth: ExactNeighbours | undefined;
    if (phases.has('filtered')) {
      const t0 = performance.now();
      filteredTruth = computeExactTopK(dataset, LIMIT, undefined, inPredicate);
      log(`filtered ground truth computed in ${round((performance.now() - t0) / 1000, 1)} s`);
    }
    log(`data: ${n} × ${dim}, ${queryCount} queries, payload {category}; ${upserts.length} upserts of 1000`);

    const results: TargetResult[] = [];
    let hnswParams: { m: number; ef_construction: number; ef_search: number } | undefined;
    for (const target of targets) {
      const dir = mkdtempSync(join(tmpdir(), 'kith-serve-'));
      const dbPath = join(dir, 'serve.db');
      const nodeArgs = profDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profDir];
      const args = target.kind === 'kith' ? ['-db', dbPath, ...target.args] : [...target.args];
      const readyPath = target.kind === 'kith' ? '/readyz' : '/healthz';
      const say = (m: string): void => log(`${target.label}: ${m}`);
      // The reference gets exactly the parameters kith echoed for its collection.
      const referenceParams = hnswParams ?? { m: 16, ef_construction: 200, ef_search: 64 };
      let service = await spawnService(target.script, args, { nodeArgs, readyPath });
      const client = createClient('http', service.url, 1);
      const generator = LoadGenerator.start(clients);
      try {
        const empty = service.rss();
        say(`ready in ${round(service.readyMs, 1)} ms, RSS ${round((empty?.rss_bytes ?? Number.NaN) / 2 ** 20, 1)} MiB`);
        if (target.kind === 'kith') {
          await requestJson(client, 'POST', '/collections', { name: COLLECTION, vector_size: dim, distance: 'cosine', hnsw: true });
          const info = (await requestJson(client, 'GET', `/collections/${COLLECTION}`)) as {
            result: { parameters: { m: number; ef_construction: number; ef_search: number } };
          };
          const p = info.result.parameters;
          hnswParams = { m: p.m, ef_construction: p.ef_construction, ef_search: p.ef_search };
        } else {
          await requestJson(client, 'POST', '/collections', { name: COLLECTION, vector_size: dim, distance: 'cosine', parameters: referenceParams });
        }
        const cpuLoad0 = service.cpuMs();
        const clientCpu0 = process.cpuUsage();
        const loaded = await loadPoints(client, COLLECTION, upserts, n);
        const ingestCpu = service.cpuMs() - cpuLoad0;
        const clientCpu = process.cpuUsage(clientCpu0);
        const ingestClientCores = coresBusy((clientCpu.user + clientCpu.system) / 1000, loaded.seconds);
        say(`loaded ${n} in ${loaded.seconds} s (${loaded.points_per_s} points/s, server CPU ${round(ingestCpu / n, 3)} ms/point)`);

        const warm: number[] = [];
        for (let i = 0; i < warmup; i++) {
          const s = performance.now();
          const { status } = await client.request('POST', searchPath, queryBodies[i % queryBodies.length] as Buffer);
          warm.push(performance.now() - s);
          if (status !== 200) throw new Error(`warm-up search: HTTP ${status}`);
        }
        if (target.kind === 'kith') say(`calibration settled after ${round(await calibrationSettled(client, COLLECTION), 1)} s more`);
        const rss = service.rss();
        const job = { path: searchPath, bodies: queryTexts, warmup: JOB_WARMUP, passes };
        const result: TargetResult = {
          label: target.label,
          kind: target.kind,
          ingest: { ...loaded, server_cpu_ms_per_point: round(ingestCpu / n, 4), durable: target.kind === 'kith', client_cores: ingestClientCores },
          warmup: { queries: warmup, ...warmupShape(warm) },
          rss: rssGrowth(empty, rss, n),
        };
        const served = { service, generator };
        await warmGenerator(served, searchPath, queryTexts, clients);
        if (phases.has('floor')) {
          const create = { vector_size: dim, distance: 'cosine', ...(target.kind === 'kith' ? { hnsw: true } : { parameters: referenceParams }) };
          result.floor = await measureFloor(served, client, { name: FLOOR, create, upsert: floorUpsert }, { ...job, concurrency: 1 });
          say(`floor (1-point collection): server ${result.floor.server_cpu_ms_per_query} ms CPU/query, p50 ${result.floor.latency.p50_ms} ms`);
        }
        if (phases.has('one') || phases.has('writes') || phases.has('restart')) {
          const one = await measureWithRecall(served, { ...job, concurrency: 1 }, dataset, gt.truth, LIMIT);
          result.one = one;
          say(
            `1 client: ${one.qps_median} QPS, p50 ${one.latency.p50_ms} ms, p99 ${one.latency.p99_ms} ms, server ${one.server_cpu_ms_per_query} ms CPU/query, recall@10 ${one.recall}`,
          );
        }
        if (phases.has('many')) {
          result.many = await servedLoad(served, { ...job, concurrency: clients });
          say(
            `${clients} clients: ${result.many.qps_median} QPS, p50 ${result.many.latency.p50_ms} ms, p99 ${result.many.latency.p99_ms} ms, client ${result.many.client_cores} cores, server ${result.many.server_cores} cores`,
          );
        }
        if (phases.has('batch')) {
          result.batch = await measureBatch(client, service, `${searchPath}/batch`, batchBody, queryCount, passes);
          say(`batch of ${queryCount}: ${result.batch.queries_per_s} queries/s`);
        }
        if (phases.has('writes')) {
          // One pass: a service that applies a batch in one event-loop turn makes every search wait for it.
          result.writes = await measureUnderWrites(client, served, COLLECTION, writerBatches, 100, { ...job, concurrency: 1, passes: 1 });
          say(
            `under writes: p99 ${result.writes.search.latency.p99_ms} ms (${result.writes.upsert_batches} upserts of 100, ${result.writes.upsert_points_per_s} points/s)`,
          );
        }
        if (phases.has('restart') && target.kind === 'kith' && result.one !== undefined) {
          client.close();
          const code = await service.stop();
          say(`stopped (${code}); restarting on the same file`);
          service = await spawnService(target.script, args, { nodeArgs, pollMs: 5, readyPath });
          const again = createClient('http', service.url, 1);
          try {
            result.restart = await measureRestart(again, service, searchPath, queryBodies, result.one.latency.p50_ms);
          } finally {
            again.close();
          }
          say(
            `restart: ready ${result.restart.ready_ms} ms, first 100 p50 ${result.restart.first_100.p50_ms} ms, first fast query at ${result.restart.first_fast_query_ms} ms`,
          );
        }
        if (filteredTruth !== undefined && target.kind === 'kith') {
          const filtered = await measurePredicateFilter(
            { service, generator },
            {
              collection: PREDICATE,
              create: { name: PREDICATE, vector_size: dim, distance: 'cosine', hnsw: true, payload_index: false },
              upserts,
              points: n,
              bodies: filteredTexts,
              limit: LIMIT,
              dataset,
              truth: filteredTruth,
              passes,
              clients,
              others: [COLLECTION],
              log: say,
            },
          );
          result.filtered = { ...filtered, recall: filtered.one.recall };
          say(
            `filter no index answers: 1 client ${filtered.one.qps_median} QPS (${filtered.one.server_cpu_ms_per_query} ms CPU/query), ${clients} clients ${filtered.many.qps_median} QPS (p99 ${filtered.many.latency.p99_ms} ms, ${filtered.many.server_cores} cores), recall@10 ${filtered.one.recall}`,
          );
        }
        results.push(result);
      } finally {
        client.close();
        await generator.close();
        const code = await service.stop();
        if (code !== 0) log(`${target.label}: exit ${code}\n${service.output().slice(-2000)}`);
        rmSync(dir, { recursive: true, force: true });
      }
    }

    const after = machineInfo(REPO_DIR);
    log(`uptime after: ${after.uptime ?? ''}`);
    const params = {
      n,
      dim,
      distance: 'cosine',
      limit: LIMIT,
      queries: queryCount,
      passes,
      warmup,
      clients,
      hnsw: hnswParams ?? null,
      payload: '{category: i mod 10}',
      upsert_batch: 1000,
      writer_batch: 100,
      predicate_filter: PREDICATE_FILTER,
    };
    const summary = printReport(results, params, machine.uptime, after.uptime);
    if (values['no-write'] !== true) log(`wrote ${writeResult('serve', { scenario: 'serve', machine, uptime_after: after.uptime, params, results, summary })}`);
  },
};
