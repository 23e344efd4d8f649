/**
 * The `cluster` scenario's faults, on a running cluster that holds the loaded collection:
 *
 * - `failover`: kill -9 of one kith node while clients search through the others: what the clients
 *   saw over time, and when the survivors' `GET /cluster` stopped listing the node (its
 *   membership entry expires after the 5 s TTL; until then a fan-out may still pick it, and
 *   passes over it on the connection error).
 * - `catchUp`: points written while that node is down, then its restart on its own file: the time
 *   until its `GET /cluster` shows lag 0 for every replica it holds, as entries/s and points/s.
 * - `reseed`: kill -9 of that node again, its file deleted, its restart: the time until every
 *   replica it held is back (imported from a peer's export, then caught up with its log).
 * - `leaderKill`: kill -9 of the NATS server leading shard 0's stream while writers run: the
 *   longest write, the longest time without an acknowledgement, and whether any write failed.
 */
import { rmSync } from 'node:fs';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Catalog, shardLogSpec } from '../../src/cluster/catalog.js';
import { type KithCluster, replicaSeeds } from '../../test/helpers/kith-cluster.js';
import type { NatsCluster } from '../../test/helpers/nats-cluster.js';
import { closedLoop } from './closed-loop.js';
import {
  type ClusterView,
  caughtUp,
  clusterView,
  longestGap,
  type PollFailures,
  pollFailures,
  type RequestSample,
  runWriters,
  spreadClient,
  type TimelineRow,
  timed,
  timeline,
  tryClusterView,
  type UpsertBatch,
  type WriteReport,
  waitCaughtUp,
  window,
  writeReport,
} from './cluster-measure.js';
import { type HttpClient, requestJson } from './http-client.js';
import { type LatencySummary, round, summarizeLatencies } from './stats.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a restarted kith node may take to listen, in ms. */
export const RESTART_LISTEN_MS = 600_000;

/** How long the load runs before a fault, in ms. */
const BEFORE_MS = 2000;

export interface FaultContext {
  readonly kith: KithCluster;
  readonly nats: NatsCluster;
  /** One keep-alive client per kith node, by index. */
  readonly clients: readonly HttpClient[];
  readonly collection: string;
  readonly log: (message: string) => void;
}

/** Milliseconds from `origin` until no client's `GET /cluster` lists `nodeId`; per client, in order. */
export async function untilUnlisted(
  clients: readonly HttpClient[],
  nodeId: string,
  origin: number,
  timeoutMs: number,
  failures: PollFailures = pollFailures(),
): Promise<number[]> {
  const seen: (number | undefined)[] = clients.map(() => undefined);
  const deadline = performance.now() + timeoutMs;
  while (seen.some((s) => s === undefined)) {
    if (performance.now() > deadline) throw new Error(`node ${nodeId} still listed by GET /cluster ${timeoutMs} ms after its kill`);
    await Promise.all(
      clients.map(async (client, i) => {
        if (seen[i] !== undefined) return;
        const view = await tryClusterView(client, failures);
        if (view !== undefined && !view.nodes.some((n) => n.id === nodeId)) seen[i] = round(performance.now() - origin, 1);
      }),
    );
    await sleep(100);
  }
  return seen as number[];
}

export interface FailoverReport {
  readonly node: string;
  readonly searched_through: readonly string[];
  readonly clients: number;
  /** kill -9 sent → the process's exit seen. */
  readonly exit_ms: number;
  /** Per survivor, ms from the kill until its GET /cluster stopped listing the node. */
  readonly unlisted_ms: readonly number[];
  readonly requests: number;
  readonly errors: number;
  readonly first_error: string | null;
  readonly before: { readonly requests: number; readonly errors: number; readonly latency: LatencySummary };
  /** Sent from the kill until the last survivor stopped listing the node. */
  readonly until_unlisted: { readonly requests: number; readonly errors: number; readonly latency: LatencySummary };
  readonly after_unlisted: { readonly requests: number; readonly errors: number; readonly latency: LatencySummary };
  readonly timeline: readonly TimelineRow[];
  /** GET /cluster polls of the survivors that failed meanwhile. */
  readonly cluster_get_failures: PollFailures;
}

/** kill -9 of node `victim` while `clients` search through the other nodes (closed loop over `bodies`). */
export async function failover(ctx: FaultContext, victim: number, bodies: readonly Buffer[], clients: number): Promise<FailoverReport> {
  const { kith } = ctx;
  const node = kith.nodes[victim]?.id as string;
  const survivors = ctx.clients.filter((_, i) => i !== victim);
  const through = spreadClient(survivors);
  const path = `/collections/${ctx.collection}/points/search`;
  const samples: RequestSample[] = [];
  let stop = false;
  const start = performance.now();
  const load = closedLoop(
    Number.POSITIVE_INFINITY,
    clients,
    async (i) => {
      samples.push(await timed(through, 'POST', path, bodies[i % bodies.length], start));
    },
    () => stop,
  );
  let exitMs = Number.NaN;
  let unlisted: number[] = [];
  let killedAt = Number.NaN;
  const failures = pollFailures();
  try {
    await sleep(BEFORE_MS);
    killedAt = performance.now();
    ctx.log(`failover: kill -9 of kith ${node} while ${clients} clients search through ${kith.nodes.filter((_, i) => i !== victim).map((n) => n.id)}`);
    await kith.kill(victim);
    exitMs = round(performance.now() - killedAt, 1);
    unlisted = await untilUnlisted(survivors, node, killedAt, 30_000, failures);
    ctx.log(`failover: GET /cluster stopped listing ${node} after ${unlisted.map((ms) => `${round(ms / 1000, 2)} s`).join(', ')}`);
    await sleep(BEFORE_MS);
  } finally {
    stop = true;
    await load;
  }
  const shifted = samples.map((s) => ({ ...s, at_ms: s.at_ms - (killedAt - start) }));
  const last = Math.max(...unlisted);
  const errors = shifted.filter((s) => !s.ok);
  return {
    node,
    searched_through: kith.nodes.filter((_, i) => i !== victim).map((n) => n.id),
    clients,
    exit_ms: exitMs,
    unlisted_ms: unlisted,
    requests: shifted.length,
    errors: errors.length,
    first_error: errors[0]?.error ?? null,
    before: window(shifted, Number.NEGATIVE_INFINITY, 0),
    until_unlisted: window(shifted, 0, last),
    after_unlisted: window(shifted, last, Number.POSITIVE_INFINITY),
    timeline: timeline(shifted, 500),
    cluster_get_failures: failures,
  };
}

export interface CatchUpReport {
  readonly node: string;
  /** The shards of its replicas. */
  readonly shards: readonly number[];
  /** The writes made while it was down, through the other nodes. */
  readonly writes_while_down: WriteReport;
  /** Log entries its replicas had to apply, and the points in them. */
  readonly entries: number;
  readonly points: number;
  /** Spawn → the "listening" line; spawn → GET /cluster lag 0 for every replica it holds; spawn → /readyz 200. */
  readonly listening_ms: number;
  readonly caught_up_ms: number;
  readonly ready_ms: number;
  readonly entries_per_s: number;
  readonly points_per_s: number;
  /** From the first GET /cluster answer to the caught-up one: entries applied in that span, per second (null when nothing was left by then). */
  readonly entries_per_s_after_listening: number | null;
  /** GET /cluster on the restarted node: ms since spawn, entries applied (summed over its replicas), lag. */
  readonly samples: readonly { readonly ms: number; readonly applied: number; readonly lag: number | null }[];
}

export interface ReseedReport {
  readonly node: string;
  readonly replicas: number;
  /** The points its replicas hold once back. */
  readonly points: number;
  /** Spawn (on an empty file) → the "listening" line; → every replica serving with lag 0. */
  readonly listening_ms: number;
  readonly serving_ms: number;
  readonly points_per_s: number;
  /** kith_replica_seeds_total on the restarted node. */
  readonly seeded: { readonly peer: number; readonly log: number };
}

/**
 * Node `victim` (up, caught up) is killed -9, its file deleted, and started again once the others
 * stopped listing it: every replica placed on it comes back from a peer's export (or its log).
 */
export async function reseed(ctx: FaultContext, victim: number, before: ClusterView): Promise<ReseedReport> {
  const { kith } = ctx;
  const node = kith.nodes[victim] as { id: string; dbPath: string };
  const killed = performance.now();
  await kith.kill(victim);
  await untilUnlisted(
    ctx.clients.filter((_, i) => i !== victim),
    node.id,
    killed,
    30_000,
  );
  for (const path of [node.dbPath, `${node.dbPath}-lock`]) rmSync(path, { force: true });
  const client = ctx.clients[victim] as HttpClient;
  const spawned = performance.now();
  await kith.startNode(victim, { listeningOnly: true, listenTimeoutMs: RESTART_LISTEN_MS });
  const listening = performance.now() - spawned;
  let view: ClusterView | undefined;
  for (;;) {
    if (performance.now() - spawned > 900_000) throw new Error(`kith ${node.id} was not back within 900 s of its restart on an empty file`);
    view = await clusterView(client).catch(() => undefined);
    if (view !== undefined && view.replicas.length === before.replicas.length && caughtUp(view)) break;
    await sleep(50);
  }
  const serving = performance.now() - spawned;
  let points = 0;
  for (const r of view.replicas) {
    points += ((await requestJson(client, 'POST', `/cluster/local/collections/${r.local}/points/count`, {})) as { result: { count: number } }).result.count;
  }
  const seeded = await replicaSeeds((kith.nodes[victim] as { url: string }).url);
  ctx.log(
    `reseed: kith ${node.id} back on an empty file: ${view.replicas.length} replicas, ${points} points, serving ${round(serving / 1000, 2)} s from spawn`,
  );
  return {
    node: node.id,
    replicas: view.replicas.length,
    points,
    listening_ms: round(listening, 1),
    serving_ms: round(serving, 1),
    points_per_s: round(points / (serving / 1000), 0),
    seeded,
  };
}

const appliedSum = (view: ClusterView): number => view.replicas.reduce((sum, r) => sum + r.applied, 0);
const lagSum = (view: ClusterView): number | null => (view.replicas.some((r) => r.lag === null) ? null : view.replicas.reduce((s, r) => s + (r.lag ?? 0), 0));

/**
 * Node `victim` is down (killed, its membership entry expired): `batches` are written through the
 * others, then it is started again on its own file and watched until it has caught up.
 * `before`: its GET /cluster from before the kill; `pointsIn(shard)`: the points of `batches` in a shard.
 */
export async function catchUp(
  ctx: FaultContext,
  victim: number,
  before: ClusterView,
  batches: readonly UpsertBatch[],
  writers: number,
  pointsIn: (shard: number) => number,
): Promise<CatchUpReport> {
  const { kith } = ctx;
  const node = kith.nodes[victim]?.id as string;
  const survivors = ctx.clients.filter((_, i) => i !== victim);
  ctx.log(`catch-up: writing ${batches.reduce((s, b) => s + b.points, 0)} points through the other nodes while kith ${node} is down`);
  const writes = writeReport(await runWriters(spreadClient(survivors), ctx.collection, batches, { writers }), writers);
  ctx.log(`catch-up: ${writes.points_per_s} points/s with ${node} down, p99 ${writes.batch_latency.p99_ms} ms, ${writes.failed} failed`);
  await waitCaughtUp(survivors, 600_000, ctx.log);
  // Each shard's log's last position, from a survivor holding a replica of it.
  const last = new Map<number, number>();
  for (const view of await Promise.all(survivors.map(clusterView))) for (const r of view.replicas) if (r.last !== null) last.set(r.shard, r.last);
  const shards = before.replicas.map((r) => r.shard);
  const entries = before.replicas.reduce((sum, r) => sum + ((last.get(r.shard) ?? Number.NaN) - r.applied), 0);
  const points = shards.reduce((sum, shard) => sum + pointsIn(shard), 0);

  const client = ctx.clients[victim] as HttpClient;
  const spawned = performance.now();
  // It loads its file before it listens, re-inserting what its graphs' last snapshots lack: give it time.
  await kith.startNode(victim, { listeningOnly: true, listenTimeoutMs: RESTART_LISTEN_MS });
  const listening = performance.now() - spawned;
  const samples: { ms: number; applied: number; lag: number | null }[] = [];
  let done = Number.NaN;
  for (;;) {
    if (performance.now() - spawned > 900_000) throw new Error(`kith ${node} did not catch up within 900 s`);
    let view: ClusterView;
    try {
      view = await clusterView(client);
    } catch {
      // A keep-alive socket to the killed process, or the route not up yet.
      await sleep(20);
      continue;
    }
    const ms = performance.now() - spawned;
    samples.push({ ms: round(ms, 1), applied: appliedSum(view), lag: lagSum(view) });
    if (view.replicas.length === before.replicas.length && caughtUp(view)) {
      done = ms;
      break;
    }
    await sleep(50);
  }
  let ready = Number.NaN;
  while (Number.isNaN(ready)) {
    const { status } = await client.request('GET', '/readyz');
    if (status === 200) ready = performance.now() - spawned;
    else if (performance.now() - spawned > done + 60_000) throw new Error(`kith ${node}: /readyz not 200 a minute after it caught up`);
    else await sleep(20);
  }
  const first = samples[0] as (typeof samples)[number];
  const lastSample = samples.at(-1) as (typeof samples)[number];
  const afterListening = lastSample.applied > first.applied ? round((lastSample.applied - first.applied) / ((lastSample.ms - first.ms) / 1000), 1) : null;
  return {
    node,
    shards,
    writes_while_down: writes,
    entries,
    points,
    listening_ms: round(listening, 1),
    caught_up_ms: round(done, 1),
    ready_ms: round(ready, 1),
    entries_per_s: round(entries / (done / 1000), 1),
    points_per_s: Math.round(points / (done / 1000)),
    entries_per_s_after_listening: afterListening,
    samples,
  };
}

export interface LeaderKillReport {
  readonly stream: string;
  readonly killed: string;
  /** Every stream the killed server led, this one included (KV_kith_nodes: membership; KV_kith_catalog: the catalogue). */
  readonly killed_also_led: readonly string[];
  /** The stream's leader once the writers stopped. */
  readonly new_leader: string | null;
  readonly writes: WriteReport;
  /** Failed writes by answer (status and message, the time field dropped). */
  readonly errors: Readonly<Record<string, number>>;
  readonly before: { readonly requests: number; readonly errors: number; readonly latency: LatencySummary };
  /** The writes sent before the kill and answered after it. */
  readonly in_flight: { readonly writes: number; readonly latency: LatencySummary };
  readonly longest_write_ms: number;
  /** The longest time between two acknowledgements, and when it began (ms from the kill). */
  readonly longest_gap_ms: number;
  readonly longest_gap_from_ms: number;
  readonly timeline: readonly TimelineRow[];
  /** After the writers stopped: seconds until every replica caught up, or why not. */
  readonly replicas_caught_up_s: number | string;
  /** Then, the nodes each kith node's GET /cluster lists (null: it answered no GET /cluster of 10). */
  readonly nodes_listed: readonly (readonly string[] | null)[];
  /** GET /cluster polls that failed after the kill (the waits above). */
  readonly cluster_get_failures: PollFailures;
}

/** kill -9 of the NATS server leading shard 0's stream, `windowS` seconds of writes after it. */
export async function leaderKill(ctx: FaultContext, batches: readonly UpsertBatch[], writers: number, windowS: number): Promise<LeaderKillReport> {
  const nc = await connect({ servers: ctx.nats.urls, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  try {
    const jsm = await jetstreamManager(nc);
    const collection = await (await Catalog.open(nc, 3)).get(ctx.collection);
    if (collection === undefined) throw new Error(`no catalogue entry for ${ctx.collection}`);
    const stream = shardLogSpec(collection, 0, 3).stream;
    const leader = (await jsm.streams.info(stream)).cluster?.leader;
    if (leader === undefined) throw new Error(`stream ${stream} reports no leader`);
    const victim = ctx.nats.indexOf(leader);
    // What else its kill interrupts: the other streams it leads (the membership and catalogue buckets are streams too).
    const led: string[] = [];
    for await (const info of jsm.streams.list()) if (info.cluster?.leader === leader) led.push(info.config.name);
    let stop = false;
    const start = performance.now();
    const run = runWriters(spreadClient(ctx.clients), ctx.collection, batches, { writers, stop: () => stop, origin: start });
    let killedAt = Number.NaN;
    try {
      await sleep(BEFORE_MS);
      killedAt = performance.now();
      ctx.log(`leader kill: kill -9 of nats ${leader}, leader of ${stream}, while ${writers} writers write`);
      await ctx.nats.kill(victim);
      await sleep(windowS * 1000);
    } finally {
      stop = true;
    }
    const written = await run;
    const samples = written.samples.map((s) => ({ ...s, at_ms: s.at_ms - (killedAt - start) }));
    const inFlight = samples.filter((s) => s.at_ms < 0 && s.at_ms + s.ms > 0);
    const gap = longestGap(samples);
    const report = writeReport(written, writers);
    ctx.log(`leader kill: longest write ${report.batch_latency.max_ms} ms, longest gap ${gap.ms} ms, ${report.failed} failed of ${report.batches}`);
    const errors: Record<string, number> = {};
    for (const sample of samples) {
      if (sample.error === undefined) continue;
      const kind = sample.error.replace(/,"time":[\d.e-]+/, '').slice(0, 200);
      errors[kind] = (errors[kind] ?? 0) + 1;
    }
    const newLeader = (await jsm.streams.info(stream).catch(() => undefined))?.cluster?.leader ?? null;
    const failures = pollFailures();
    let caught: number | string;
    try {
      caught = round(await waitCaughtUp(ctx.clients, 120_000, ctx.log, failures), 2);
    } catch (error) {
      caught = error instanceof Error ? error.message : String(error);
    }
    const listed = await Promise.all(
      ctx.clients.map(async (c) => {
        for (let attempt = 0; attempt < 10; attempt++) {
          const view = await tryClusterView(c, failures);
          if (view !== undefined) return view.nodes.map((n) => n.id);
        }
        return null;
      }),
    );
    if (failures.count > 0) ctx.log(`leader kill: ${failures.count} GET /cluster failed afterwards (first: ${failures.first})`);
    return {
      stream,
      killed: leader,
      killed_also_led: led,
      new_leader: newLeader,
      writes: report,
      errors,
      before: window(samples, Number.NEGATIVE_INFINITY, 0),
      in_flight: { writes: inFlight.length, latency: summarizeLatencies(inFlight.map((s) => s.ms)) },
      longest_write_ms: report.batch_latency.max_ms,
      longest_gap_ms: gap.ms,
      longest_gap_from_ms: gap.from_ms,
      timeline: timeline(samples, 1000),
      replicas_caught_up_s: caught,
      nodes_listed: listed,
      cluster_get_failures: failures,
    };
  } finally {
    await nc.close().catch(() => undefined);
  }
}
