/**
 * `npm run bench -- cluster`: three kith nodes on loopback (`-cluster-nats`, each on its own file,
 * `-threads 0`) over three NATS servers (JetStream, `sync_interval: always`, shard logs and
 * buckets replicated three ways), against one plain kith process, same data, same requests:
 *
 * 1. writes: batches of `--batch` points from `--writers` concurrent writers (round robin over the
 *    nodes): points/s acknowledged, batch latency; for the cluster also the time until every
 *    replica has applied them (a write answers once one replica of each shard has);
 * 2. search: `--clients` concurrent clients (round robin over the nodes, closed loop): QPS,
 *    p50/p99, recall@10 against float64 brute force, at a fixed ef;
 * then, on a cluster with replication_factor ≥ 2 (lib/cluster-faults.ts):
 * 3. failover: kill -9 of a kith node while clients search through the others;
 * 4. catch-up: points written while it is down, its restart, the time until it has caught up;
 * 5. leader kill: kill -9 of the NATS server leading shard 0's stream while writers write.
 *
 * The NATS servers and kith nodes are started by the test helpers (test/helpers/nats-cluster.ts,
 * kith-cluster.ts, compiled into <out>/test/); the single node by lib/server.ts. Every process is
 * stopped by its PID when the scenario ends, fails, or is interrupted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shardOf } from '../../src/cluster/shard-of.js';
import { KithCluster } from '../../test/helpers/kith-cluster.js';
import { NatsCluster, natsServerPath } from '../../test/helpers/nats-cluster.js';
import { syntheticDataset } from '../datasets/dataset.js';
import { GaussianMixture, PEER_MIXTURE, type VectorSet } from '../datasets/synthetic.js';
import { catchUp, type FaultContext, failover, leaderKill, RESTART_LISTEN_MS, reseed, untilUnlisted } from '../lib/cluster-faults.js';
import { clusterView, cpuMsOf, runWriters, spreadClient, type UpsertBatch, waitCaughtUp, writeReport } from '../lib/cluster-measure.js';
import { printClusterReport, type TargetResult } from '../lib/cluster-report.js';
import { type ExactNeighbours, groundTruth, recallAtK } from '../lib/ground-truth.js';
import { createClient, type HttpClient, requestJson } from '../lib/http-client.js';
import { requireWasmKernels } from '../lib/kernels-check.js';
import { machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { nameList, parseOptions, positiveInt, positiveIntList, type Scenario, UsageError } from '../lib/scenario.js';
import { startServer } from '../lib/server.js';
import { coresBusy, round } from '../lib/stats.js';
import { encodeSearchBodies, encodeUpsertBatches, measureSearch } from '../lib/workload.js';

const COLLECTION = 'bench';
const LIMIT = 10;
const NODES = 3;
/** The kith node the faults kill (n3). */
const VICTIM = 2;
const PHASES = ['search', 'failover', 'catchup', 'reseed', 'leader'] as const;
/** The integer options and their defaults (OPTIONS says what each means). */
const DEFAULTS = {
  points: 200000,
  dim: 128,
  queries: 1000,
  passes: 3,
  warmup: 1000,
  clients: 16,
  writers: 4,
  batch: 100,
  ef: 64,
  shards: 3,
  'catchup-points': 20000,
  'leader-window': 30,
} as const;
type Phase = (typeof PHASES)[number];

const OPTIONS = `  --points <n>           points loaded (default 200000), the peers' Gaussian mixture, cosine
  --dim <d>              dimension (default 128)
  --queries <q>          search queries from the mixture (default 1000); a pass sends each once
  --passes <p>           timed search passes (default 3)
  --warmup <w>           untimed searches first (default 1000)
  --clients <c>          concurrent search clients, round robin over the nodes (default 16)
  --writers <w>          concurrent writers, round robin over the nodes (default 4)
  --batch <b>            points per upsert (default 100)
  --ef <ef>              ef_search given at create, so every shard and the single node search
                         with it (default 64, kith's default ef; m and ef_construction: defaults)
  --shards <s>           shard_number (default 3)
  --replication <r,…>    replication_factor, one cluster per value (default 2; e.g. 2,1); the
                         faults run on each cluster with 2 or more
  --catchup-points <n>   points written while a node is down (default 20000)
  --leader-window <s>    seconds of writes after the NATS leader's kill (default 30)
  --phases <list>        some of ${PHASES.join(',')} (default all; the writes always run)
  --no-single            the cluster only
  --no-write             do not write bench/results/<date>-cluster.json

Needs nats-server ≥ 2.10: $KITH_NATS_SERVER, or what scripts/nats-server.mjs finds.`;

function log(message: string): void {
  process.stderr.write(`[cluster] ${message}\n`);
}

/** Upsert bodies of `batch` rows each, ids from `firstId`. */
function upsertBatches(rows: VectorSet, batch: number, firstId: number): UpsertBatch[] {
  return encodeUpsertBatches(rows, batch, undefined, firstId).map((body, i) => ({ body, points: Math.min(batch, rows.rows.length - i * batch) }));
}

function slice(set: VectorSet, from: number, to: number): VectorSet {
  return { dim: set.dim, data: set.data.subarray(from * set.dim, to * set.dim), rows: set.rows.slice(from, to), cluster: set.cluster.subarray(from, to) };
}

interface Workload {
  readonly n: number;
  readonly dim: number;
  readonly ef: number;
  readonly writers: number;
  readonly clients: number;
  readonly passes: number;
  readonly warmup: number;
  readonly load: readonly UpsertBatch[];
  readonly searches: readonly Buffer[];
  readonly truth: ExactNeighbours | undefined;
  readonly dataset: ReturnType<typeof syntheticDataset>;
}

/** Things to stop however the scenario ends (also on SIGINT/SIGTERM). */
const cleanups = new Set<() => Promise<void>>();

/** Creates the collection; its parameters as the service echoes them. */
async function createCollection(client: HttpClient, w: Workload, cluster?: { shard_number: number; replication_factor: number }) {
  const created = (await requestJson(client, 'POST', '/collections', {
    name: COLLECTION,
    vector_size: w.dim,
    distance: 'cosine',
    hnsw: true,
    parameters: { ef_search: w.ef },
    ...cluster,
  })) as { result: { cluster?: { placement: string[][] } } };
  const info = (await requestJson(client, 'GET', `/collections/${COLLECTION}`)) as {
    result: { parameters: { m: number; ef_construction: number; ef_search: number }; calibration: { state: string; ef: number } };
  };
  const { m, ef_construction, ef_search } = info.result.parameters;
  return { hnsw: { m, ef_construction, ef_search, calibration: info.result.calibration.state }, placement: created.result.cluster?.placement };
}

/** Seconds of doing nothing over which the server processes' own CPU is read. */
const IDLE_SECONDS = 5;

/** Cores the server processes keep busy while no request is made (a cluster node polls its logs). */
async function idleCores(pids: () => number[]): Promise<number> {
  const cpu0 = cpuMsOf(pids());
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  return coresBusy(cpuMsOf(pids()) - cpu0, (performance.now() - t0) / 1000);
}

/** The writes, then (unless skipped) the searches, through `clients` (one per node); `pids`: the server processes whose CPU is counted. */
async function measure(
  label: string,
  clients: readonly HttpClient[],
  pids: () => number[],
  w: Workload,
  phases: Set<Phase>,
  afterWrites: () => Promise<number>,
): Promise<Omit<TargetResult, 'label' | 'hnsw' | 'placement'>> {
  const say = (m: string): void => log(`${label}: ${m}`);
  const spread = spreadClient(clients);
  const cpu0 = cpuMsOf(pids());
  const run = await runWriters(spread, COLLECTION, w.load, { writers: w.writers });
  const writes = writeReport(run, w.writers);
  say(
    `wrote ${writes.points_acked} points: ${writes.points_per_s} points/s, batch p50 ${writes.batch_latency.p50_ms} ms, p99 ${writes.batch_latency.p99_ms} ms, ${writes.failed} failed`,
  );
  if (writes.failed > 0) say(`first failed write: ${writes.first_error}`);
  const replicatedS = await afterWrites();
  const writeCpu = cpuMsOf(pids()) - cpu0;
  const count = ((await requestJson(clients[0] as HttpClient, 'GET', `/collections/${COLLECTION}`)) as { result: { points_count: number } }).result
    .points_count;
  if (count !== w.n) say(`WARNING: points_count ${count}, expected ${w.n}`);
  const result: Omit<TargetResult, 'label' | 'hnsw' | 'placement'> = {
    writes,
    replicated_s: round(replicatedS, 2),
    points_per_s_replicated: Math.round(writes.points_acked / (writes.seconds + replicatedS)),
    write_cpu_ms_per_point: round(writeCpu / w.n, 3),
    points_count: count,
    idle_server_cores: await idleCores(pids),
  };
  if (!phases.has('search') || w.truth === undefined) return result;
  await measureSearch(spread, COLLECTION, w.searches, { runs: 0, warmup: w.warmup, concurrency: w.clients });
  const cpu1 = cpuMsOf(pids());
  const client0 = process.cpuUsage();
  const { report, hits } = await measureSearch(spread, COLLECTION, w.searches, { runs: w.passes, warmup: 0, concurrency: w.clients, expectHits: LIMIT });
  const searchCpu = cpuMsOf(pids()) - cpu1;
  const clientCpu = process.cpuUsage(client0);
  const queries = report.runs * report.queries_per_run;
  const returned = new Int32Array(w.searches.length * LIMIT).fill(-1);
  hits.forEach((list, qi) => {
    list.forEach((hit, j) => {
      returned[qi * LIMIT + j] = Number(hit.id);
    });
  });
  const recall = recallAtK(w.dataset, w.truth, returned, LIMIT);
  const wall = report.qps_per_run.reduce((sum, qps) => sum + report.queries_per_run / qps, 0);
  say(`${w.clients} clients: ${report.qps_median} QPS, p50 ${report.latency.p50_ms} ms, p99 ${report.latency.p99_ms} ms, recall@10 ${round(recall.recall, 4)}`);
  return {
    ...result,
    search: report,
    recall: round(recall.recall, 4),
    recall_ids: round(recall.recall_ids, 4),
    search_cpu_ms_per_query: round(searchCpu / queries, 3),
    search_server_cores: coresBusy(searchCpu, wall),
    search_client_cores: coresBusy((clientCpu.user + clientCpu.system) / 1000, wall),
  };
}

async function runSingle(w: Workload, phases: Set<Phase>): Promise<TargetResult> {
  const server = await startServer({ args: ['-threads', '0'] });
  const stop = async (): Promise<void> => {
    const code = await server.stop();
    if (code !== 0) log(`single: exit ${code}\n${server.output().slice(-2000)}`);
  };
  cleanups.add(stop);
  const client = createClient('http', server.url, Math.max(w.writers, w.clients));
  try {
    const { hnsw } = await createCollection(client, w);
    log(`single: pid ${server.pid}, HNSW m ${hnsw.m} ef_construction ${hnsw.ef_construction} ef_search ${hnsw.ef_search} (${hnsw.calibration})`);
    const measured = await measure(
      'single',
      [client],
      () => [server.pid],
      w,
      phases,
      async () => 0,
    );
    return { label: 'single', hnsw, ...measured };
  } finally {
    client.close();
    cleanups.delete(stop);
    await stop();
  }
}

async function runCluster(
  w: Workload,
  phases: Set<Phase>,
  options: { shards: number; rf: number; catchUp: readonly UpsertBatch[]; catchUpFirstId: number; leader: readonly UpsertBatch[]; leaderWindow: number },
): Promise<TargetResult> {
  const label = `cluster rf ${options.rf}`;
  const say = (m: string): void => log(`${label}: ${m}`);
  const dir = mkdtempSync(join(tmpdir(), 'kith-bench-cluster-'));
  let nats: NatsCluster | undefined;
  let kith: KithCluster | undefined;
  const clients: HttpClient[] = [];
  const stop = async (): Promise<void> => {
    for (const c of clients) c.close();
    if (kith !== undefined) {
      const nodes = kith.nodes;
      // A node that does not stop within 30 s of its SIGTERM is killed (by its PID, through its handle).
      const force = setTimeout(() => {
        for (const node of nodes) node.server?.process.kill('SIGKILL');
      }, 30_000);
      try {
        await kith.stop();
      } finally {
        clearTimeout(force);
      }
    }
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.add(stop);
  try {
    nats = await NatsCluster.start(join(dir, 'nats'), NODES);
    kith = await KithCluster.start(nats, dir, NODES);
    const started = kith;
    const natsRunning = nats;
    for (const node of started.nodes) clients.push(createClient('http', node.url, Math.max(w.writers, w.clients)));
    const pids = (): number[] => [
      ...started.nodes.flatMap((n) => (n.server?.process.pid === undefined ? [] : [n.server.process.pid])),
      ...natsRunning.servers.flatMap((s) => (s.process?.pid === undefined ? [] : [s.process.pid])),
    ];
    say(
      `nats ${natsRunning.servers.map((s) => `${s.name} pid ${s.process?.pid}`).join(', ')}; kith ${started.nodes.map((n) => `${n.id} pid ${n.server?.process.pid}`).join(', ')}`,
    );
    const { hnsw, placement } = await createCollection(clients[0] as HttpClient, w, { shard_number: options.shards, replication_factor: options.rf });
    say(`placement ${JSON.stringify(placement)}, HNSW m ${hnsw.m} ef_construction ${hnsw.ef_construction} ef_search ${hnsw.ef_search} (${hnsw.calibration})`);
    const measured = await measure(label, clients, pids, w, phases, async () => {
      const s = await waitCaughtUp(clients, 1_200_000, say);
      say(`every replica applied the writes ${round(s, 2)} s after the last acknowledgement`);
      return s;
    });
    const result: TargetResult = { label, hnsw, placement, ...measured };
    const wanted = (['failover', 'catchup', 'reseed', 'leader'] as const).filter((p) => phases.has(p));
    if (wanted.length === 0) return result;
    if (options.rf < 2) {
      say(`faults skipped: they need replication_factor ≥ 2 (a killed node's shards have no other replica with ${options.rf})`);
      return result;
    }
    const ctx: FaultContext = { kith: started, nats: natsRunning, clients, collection: COLLECTION, log: say };
    const faults: NonNullable<TargetResult['faults']> = {};
    if (phases.has('failover') || phases.has('catchup')) {
      const before = await clusterView(clients[VICTIM] as HttpClient);
      if (phases.has('failover')) {
        faults.failover = await failover(ctx, VICTIM, w.searches, w.clients);
      } else {
        const killed = performance.now();
        await started.kill(VICTIM);
        await untilUnlisted(
          clients.filter((_, i) => i !== VICTIM),
          before.node,
          killed,
          30_000,
        );
      }
      if (phases.has('catchup')) {
        const mine = new Set(before.replicas.map((r) => r.shard));
        const inShard = new Map<number, number>();
        const total = options.catchUp.reduce((sum, b) => sum + b.points, 0);
        for (let id = options.catchUpFirstId; id < options.catchUpFirstId + total; id++) {
          const shard = shardOf(String(id), options.shards);
          if (mine.has(shard)) inShard.set(shard, (inShard.get(shard) ?? 0) + 1);
        }
        faults.catch_up = await catchUp(ctx, VICTIM, before, options.catchUp, w.writers, (shard) => inShard.get(shard) ?? 0);
        say(
          `catch-up: ${faults.catch_up.entries} entries (${faults.catch_up.points} points) in ${round(faults.catch_up.caught_up_ms / 1000, 2)} s from spawn (listening at ${round(faults.catch_up.listening_ms / 1000, 2)} s): ${faults.catch_up.entries_per_s} entries/s, ${faults.catch_up.points_per_s} points/s`,
        );
      } else {
        await started.startNode(VICTIM, { listenTimeoutMs: RESTART_LISTEN_MS });
      }
    }
    if (phases.has('reseed')) {
      faults.reseed = await reseed(ctx, VICTIM, await clusterView(clients[VICTIM] as HttpClient));
    }
    if (phases.has('leader')) faults.leader_kill = await leaderKill(ctx, options.leader, w.writers, options.leaderWindow);
    return { ...result, faults };
  } finally {
    cleanups.delete(stop);
    await stop();
  }
}

export const clusterScenario: Scenario = {
  name: 'cluster',
  summary: '3 kith nodes over 3 NATS servers vs 1 node: writes, 16-client search + recall, node kill, catch-up, NATS leader kill',
  options: OPTIONS,
  async run(argv) {
    const values = parseOptions(argv, {
      ...Object.fromEntries(Object.keys(DEFAULTS).map((name) => [name, { type: 'string' as const }])),
      replication: { type: 'string' },
      phases: { type: 'string' },
      'no-single': { type: 'boolean' },
      'no-write': { type: 'boolean' },
    });
    const ints = Object.fromEntries(
      (Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).map((name) => [name, positiveInt(values[name], `--${name}`, DEFAULTS[name])]),
    ) as Record<keyof typeof DEFAULTS, number>;
    const { points: n, dim, queries: queryCount, passes, warmup, clients, writers, batch, ef, shards } = ints;
    const catchUpPoints = ints['catchup-points'];
    const leaderWindow = ints['leader-window'];
    const replication = positiveIntList(values.replication, '--replication', [2]);
    if (replication.some((rf) => rf > NODES)) throw new UsageError(`--replication: at most ${NODES} (the nodes)`);
    const phases = new Set<Phase>(nameList(values.phases, '--phases', PHASES));
    requireWasmKernels();

    const machine = machineInfo(REPO_DIR);
    const load = machine.load_average;
    log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}`);
    log(`uptime: ${machine.uptime ?? `load ${load.join(', ')}`}`);
    if (load[0] > QUIET_LOAD) log(`WARNING: 1-minute load ${load[0]} > ${QUIET_LOAD}: the machine is busy, numbers will be noisy`);
    const natsBinary = natsServerPath();
    log(`nats-server: ${natsBinary}`);

    // Data: the loaded rows (ids 0…n−1), the rows written while a node is down, the rows the
    // writers cycle through around the leader's kill; queries; ground truth (cached).
    const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim });
    const all = mixture.base(n + 2 * catchUpPoints);
    const dataset = syntheticDataset(n, dim, queryCount);
    let truth: ExactNeighbours | undefined;
    if (phases.has('search')) {
      const gt = groundTruth(dataset, LIMIT, log);
      truth = gt.truth;
      log(`ground truth: ${gt.cached ? 'cached' : `computed in ${round(gt.seconds, 1)} s`}`);
    }
    const w: Workload = {
      n,
      dim,
      ef,
      writers,
      clients,
      passes,
      warmup,
      load: upsertBatches(slice(all, 0, n), batch, 0),
      searches: encodeSearchBodies(mixture.queries(queryCount), LIMIT),
      truth,
      dataset,
    };
    const catchUpBatches = upsertBatches(slice(all, n, n + catchUpPoints), batch, n);
    const leaderBatches = upsertBatches(slice(all, n + catchUpPoints, n + 2 * catchUpPoints), batch, n + catchUpPoints);
    log(`data: ${n} × ${dim}, ${w.load.length} upserts of ${batch}, ${queryCount} queries`);

    const onSignal = (signal: NodeJS.Signals): void => {
      log(`${signal}: stopping every process started`);
      void Promise.allSettled([...cleanups].map((c) => c())).finally(() => process.exit(130));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const results: TargetResult[] = [];
    try {
      if (values['no-single'] !== true) results.push(await runSingle(w, phases));
      for (const rf of replication) {
        results.push(
          await runCluster(w, phases, {
            shards,
            rf,
            catchUp: catchUpBatches,
            catchUpFirstId: n,
            leader: leaderBatches,
            leaderWindow,
          }),
        );
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await Promise.allSettled([...cleanups].map((c) => c()));
    }

    const after = machineInfo(REPO_DIR);
    log(`uptime after: ${after.uptime ?? ''}`);
    const params = {
      ...ints,
      replication,
      distance: 'cosine',
      limit: LIMIT,
      nodes: NODES,
      threads: 0,
      membership_ttl_s: 5,
      nats_server: natsBinary,
      phases: [...phases],
    };
    const summary = printClusterReport(results, params, machine, after);
    if (values['no-write'] !== true) {
      const path = writeResult('cluster', {
        scenario: 'cluster',
        machine,
        load_average_after: after.load_average,
        uptime_after: after.uptime,
        params,
        results,
        summary,
      });
      log(`wrote ${path}`);
    }
  },
};
