/** The `cluster` scenario's result per target (single node, cluster per replication factor), its tables and summary line. */
import type { CatchUpReport, FailoverReport, LeaderKillReport, ReseedReport } from './cluster-faults.js';
import type { PollFailures, TimelineRow, WriteReport } from './cluster-measure.js';
import type { MachineInfo } from './machine.js';
import { round } from './stats.js';
import { formatTable } from './table.js';
import type { SearchRunsReport } from './workload.js';

export interface TargetResult {
  readonly label: string;
  /** As the service echoed them for the created collection. */
  readonly hnsw: { readonly m: number; readonly ef_construction: number; readonly ef_search: number; readonly calibration: string };
  /** Per shard, the nodes holding its replicas (the cluster only). */
  readonly placement?: readonly (readonly string[])[] | undefined;
  readonly writes: WriteReport;
  /** After the last acknowledgement, seconds until every replica had applied every write (0 for one node). */
  readonly replicated_s: number;
  readonly points_per_s_replicated: number;
  /** CPU of every server process (kith nodes and NATS servers) over the writes and the replication, per point. */
  readonly write_cpu_ms_per_point: number;
  readonly points_count: number;
  /** Cores the server processes kept busy over 5 s without requests, after the writes were applied everywhere. */
  readonly idle_server_cores: number;
  readonly search?: SearchRunsReport;
  readonly recall?: number;
  readonly recall_ids?: number;
  readonly search_cpu_ms_per_query?: number;
  readonly search_server_cores?: number;
  readonly search_client_cores?: number;
  readonly faults?: { failover?: FailoverReport; catch_up?: CatchUpReport; reseed?: ReseedReport; leader_kill?: LeaderKillReport };
}

type Cell = number | string | undefined;

function mainTable(results: readonly TargetResult[], params: Record<string, unknown>): string {
  const col = (f: (r: TargetResult) => Cell): Cell[] => results.map(f);
  const rows: [string, Cell[]][] = [
    ['writes: points/s acknowledged', col((r) => r.writes.points_per_s)],
    ['writes: batch p50 ms', col((r) => r.writes.batch_latency.p50_ms)],
    ['writes: batch p99 ms', col((r) => r.writes.batch_latency.p99_ms)],
    ['writes: batch max ms', col((r) => r.writes.batch_latency.max_ms)],
    ['writes: failed batches', col((r) => r.writes.failed)],
    ['writes: s after the last ack until every replica applied', col((r) => r.replicated_s)],
    ['writes: points/s until every replica applied', col((r) => r.points_per_s_replicated)],
    ['writes: server CPU ms/point (kith + NATS)', col((r) => r.write_cpu_ms_per_point)],
    ['points_count after the writes', col((r) => r.points_count)],
    ['idle, no requests: server cores busy (kith + NATS)', col((r) => r.idle_server_cores)],
    [`search ${params.clients} clients: QPS (median pass)`, col((r) => r.search?.qps_median)],
    ['search: p50 ms', col((r) => r.search?.latency.p50_ms)],
    ['search: p99 ms', col((r) => r.search?.latency.p99_ms)],
    ['search: recall@10', col((r) => r.recall)],
    ['search: server CPU ms/query (kith + NATS)', col((r) => r.search_cpu_ms_per_query)],
    ['search: server cores busy', col((r) => r.search_server_cores)],
    ['search: client (bench) cores busy', col((r) => r.search_client_cores)],
  ];
  const header = ['', ...results.map((r) => r.label)];
  const single = results.findIndex((r) => r.label === 'single');
  return formatTable(
    header,
    rows.map(([name, cells]) => [name, ...cells.map((c) => (c === undefined || (typeof c === 'number' && Number.isNaN(c)) ? '–' : c))]),
  ).concat(single >= 0 ? '' : '\n(no single-node run: --no-single)');
}

function timelineTable(rows: readonly TimelineRow[]): string {
  return formatTable(
    ['sent at (s from the kill)', 'requests', 'errors', 'p50 ms', 'p99 ms', 'max ms'],
    rows.map((r) => [`[${r.from_s}, ${r.to_s})`, r.requests, r.errors, r.p50_ms, r.p99_ms, r.max_ms]),
  );
}

/** The nodes some node's GET /cluster no longer lists although every kith process still runs (their membership entries are gone). */
function unlisted(listed: readonly (readonly string[] | null)[]): string[] {
  const seen = listed.filter((ids): ids is readonly string[] => ids !== null);
  // Listed in node order; KithCluster names its nodes n1, n2, …
  const all = listed.map((_, i) => `n${i + 1}`);
  const missing = all.filter((id) => seen.some((ids) => !ids.includes(id)));
  return missing.length === 0 ? [] : [`  ! not listed as live any more, though running: ${missing.join(', ')} (their membership entries expired)`];
}

function failedPolls(f: PollFailures): string[] {
  return f.count === 0 ? [] : [`  GET /cluster failed ${f.count} times while polled (first: ${f.first})`];
}

function failoverText(f: FailoverReport): string {
  const s = (ms: number): string => `${round(ms / 1000, 2)} s`;
  return [
    `kill -9 of kith ${f.node} while ${f.clients} clients search through ${f.searched_through.join(', ')} (process gone ${f.exit_ms} ms after the signal)`,
    `  GET /cluster stopped listing ${f.node} after: ${f.unlisted_ms.map((ms, i) => `${f.searched_through[i]} ${s(ms)}`).join(', ')} (membership TTL 5 s)`,
    `  client errors: ${f.errors} of ${f.requests} searches${f.first_error === null ? '' : ` (first: ${f.first_error})`}`,
    ...failedPolls(f.cluster_get_failures),
    `  before the kill:       ${f.before.requests} searches, p50 ${f.before.latency.p50_ms} ms, p99 ${f.before.latency.p99_ms} ms, max ${f.before.latency.max_ms} ms`,
    `  kill → unlisted:       ${f.until_unlisted.requests} searches, ${f.until_unlisted.errors} errors, p50 ${f.until_unlisted.latency.p50_ms} ms, p99 ${f.until_unlisted.latency.p99_ms} ms, max ${f.until_unlisted.latency.max_ms} ms`,
    `  after it was unlisted: ${f.after_unlisted.requests} searches, ${f.after_unlisted.errors} errors, p50 ${f.after_unlisted.latency.p50_ms} ms, p99 ${f.after_unlisted.latency.p99_ms} ms, max ${f.after_unlisted.latency.max_ms} ms`,
    '',
    timelineTable(f.timeline),
  ].join('\n');
}

function catchUpText(c: CatchUpReport): string {
  const s = (ms: number): string => `${round(ms / 1000, 2)} s`;
  const w = c.writes_while_down;
  return [
    `catch-up of kith ${c.node} (replicas of shards ${c.shards.join(', ')}) after it was down while ${w.points_acked} points were written`,
    `  writes with it down: ${w.points_per_s} points/s, batch p50 ${w.batch_latency.p50_ms} ms, p99 ${w.batch_latency.p99_ms} ms, ${w.failed} failed`,
    `  restart: listening ${s(c.listening_ms)} after spawn, GET /cluster lag 0 on every replica after ${s(c.caught_up_ms)}, /readyz 200 after ${s(c.ready_ms)}`,
    `  applied ${c.entries} log entries (${c.points} points): ${c.entries_per_s} entries/s, ${c.points_per_s} points/s (spawn → caught up)`,
    `  from its first GET /cluster answer: ${c.entries_per_s_after_listening === null ? 'nothing left to apply by then' : `${c.entries_per_s_after_listening} entries/s`}`,
  ].join('\n');
}

function reseedText(r: ReseedReport): string {
  return [
    `kith ${r.node} killed -9, its file deleted, started again: ${r.replicas} replicas (${r.points} points) back`,
    `  listening ${round(r.listening_ms / 1000, 2)} s after spawn; every replica serving, lag 0, after ${round(r.serving_ms / 1000, 2)} s: ${r.points_per_s} points/s`,
    `  seeded from a peer's export: ${r.seeded.peer}; from the log: ${r.seeded.log}`,
  ].join('\n');
}

function leaderText(l: LeaderKillReport): string {
  return [
    `kill -9 of nats ${l.killed}, leader of ${l.stream} (shard 0; every batch writes to it), while ${l.writes.writers} writers write; new leader: ${l.new_leader ?? '?'}`,
    `  it also led: ${l.killed_also_led.filter((name) => name !== l.stream).join(', ') || 'nothing else'}`,
    `  writes: ${l.writes.batches} batches, ${l.writes.failed} failed`,
    ...Object.entries(l.errors).map(([kind, count]) => `    ${count} × ${kind}`),
    `  before the kill: p50 ${l.before.latency.p50_ms} ms, p99 ${l.before.latency.p99_ms} ms, max ${l.before.latency.max_ms} ms`,
    `  longest write: ${l.longest_write_ms} ms; in flight at the kill: ${l.in_flight.writes}, longest ${l.in_flight.latency.max_ms} ms`,
    `  longest time without an acknowledgement: ${l.longest_gap_ms} ms, starting ${round(l.longest_gap_from_ms / 1000, 2)} s from the kill (to the next one, or to the end of the writes)`,
    `  then every replica caught up: ${typeof l.replicas_caught_up_s === 'number' ? `after ${l.replicas_caught_up_s} s` : `NO: ${l.replicas_caught_up_s}`}`,
    `  nodes each kith node lists then: ${l.nodes_listed.map((ids) => (ids === null ? '(no answer)' : `[${ids.join(',')}]`)).join(' ')}`,
    ...unlisted(l.nodes_listed),
    ...failedPolls(l.cluster_get_failures),
    '',
    timelineTable(l.timeline).replace('sent at (s from the kill)', 'write sent at (s from kill)'),
  ].join('\n');
}

/** Prints the tables and the summary line on stdout; returns the summary. */
export function printClusterReport(
  results: readonly TargetResult[],
  params: Record<string, unknown>,
  machine: MachineInfo,
  after: MachineInfo,
): Record<string, unknown> {
  const hnsw = results[0]?.hnsw;
  const lines = [
    '',
    `cluster: ${params.points} × ${params.dim} cosine, HNSW m ${hnsw?.m} ef_construction ${hnsw?.ef_construction} (defaults), ef_search ${hnsw?.ef_search} given at create (calibration ${hnsw?.calibration}), limit ${params.limit}`,
    `  cluster: ${params.nodes} kith nodes (-threads ${params.threads}) over 3 NATS servers (JetStream, sync_interval: always, logs on 3 servers), shard_number ${params.shards}, on loopback; single: one kith process (-threads ${params.threads})`,
    `  writes: ${params.writers} writers, batches of ${params.batch}; search: ${params.clients} clients, ${params.queries} queries × ${params.passes} passes after ${params.warmup} untimed; requests round robin over the nodes, keep-alive node:http`,
    `  ${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}, ${new Date().toISOString()}`,
    `  uptime before: ${machine.uptime ?? machine.load_average.join(', ')}`,
    `  uptime after:  ${after.uptime ?? after.load_average.join(', ')}`,
    '',
    mainTable(results, params),
  ];
  for (const r of results) {
    const f = r.faults;
    if (f === undefined) continue;
    lines.push('', `${r.label}, placement ${JSON.stringify(r.placement)}:`);
    if (f.failover !== undefined) lines.push('', failoverText(f.failover));
    if (f.catch_up !== undefined) lines.push('', catchUpText(f.catch_up));
    if (f.reseed !== undefined) lines.push('', reseedText(f.reseed));
    if (f.leader_kill !== undefined) lines.push('', leaderText(f.leader_kill));
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
  const summary: Record<string, unknown> = { scenario: 'cluster', points: params.points, dim: params.dim, ef: hnsw?.ef_search, commit: machine.commit };
  for (const r of results) {
    const f = r.faults;
    summary[r.label.replace(/ /g, '_')] = {
      write_points_per_s: r.writes.points_per_s,
      write_p50_ms: r.writes.batch_latency.p50_ms,
      write_p99_ms: r.writes.batch_latency.p99_ms,
      write_failed: r.writes.failed,
      replicated_points_per_s: r.points_per_s_replicated,
      idle_server_cores: r.idle_server_cores,
      qps: r.search?.qps_median,
      search_p50_ms: r.search?.latency.p50_ms,
      search_p99_ms: r.search?.latency.p99_ms,
      recall: r.recall,
      ...(f?.failover === undefined
        ? {}
        : { failover_errors: f.failover.errors, failover_max_ms: f.failover.until_unlisted.latency.max_ms, unlisted_ms: Math.max(...f.failover.unlisted_ms) }),
      ...(f?.catch_up === undefined
        ? {}
        : {
            catchup_s: round(f.catch_up.caught_up_ms / 1000, 2),
            catchup_entries_per_s: f.catch_up.entries_per_s,
            catchup_points_per_s: f.catch_up.points_per_s,
          }),
      ...(f?.reseed === undefined ? {} : { reseed_s: round(f.reseed.serving_ms / 1000, 2), reseed_points_per_s: f.reseed.points_per_s }),
      ...(f?.leader_kill === undefined
        ? {}
        : {
            leader_kill_longest_write_ms: f.leader_kill.longest_write_ms,
            leader_kill_gap_ms: f.leader_kill.longest_gap_ms,
            leader_kill_failed: f.leader_kill.writes.failed,
          }),
    };
  }
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return summary;
}
