/** The `restart` scenario's result shapes, its printed table and its one-line JSON summary. */
import type { RecallReport } from './brute-force.js';
import type { PhaseReport } from './restart-phases.js';
import type { OpenReport } from './restart-worker.js';
import { round } from './stats.js';
import { formatTable } from './table.js';

/** From the issue: a restart of 1M × 128 within 15 s. */
export const TARGET = { n: 1_000_000, seconds: 15 } as const;

export type MemoryReport = OpenReport['memory'];

export interface BuildReport {
  /** The upserts alone (number[] conversion of the bench's vectors excluded). */
  readonly upsert_seconds: number;
  readonly points_per_s: number;
  readonly convert_seconds: number;
  /** `db.close()`: the final graph snapshot, then the file closed. */
  readonly close_seconds: number;
  readonly file_bytes: number;
  readonly file_bytes_allocated: number;
  readonly memory: MemoryReport;
}

export interface ServiceRun {
  /** Spawn → first 200 from GET /readyz (polled every 5 ms). */
  readonly ready_ms: number;
  /** The service's own `loadMs` log field: Database.open, then building the Fastify app (src/main.ts). */
  readonly db_load_ms: number | null;
  readonly rss_bytes: number | null;
  readonly peak_rss_bytes: number | null;
  readonly rss_anon_bytes: number | null;
  readonly rss_file_bytes: number | null;
  readonly exit: number | string;
}

export interface RestartSizeResult {
  readonly n: number;
  readonly build: BuildReport;
  /** 1-minute load average when the build started and before each restart (in-process + service) pair. */
  readonly load_1m: { readonly build_start: number; readonly before_each_restart: readonly number[] };
  readonly restart_in_process: {
    readonly open_seconds_median: number;
    readonly open_seconds_per_run: readonly number[];
    readonly close_ms_median: number;
    readonly load_reports: readonly OpenReport['load'][];
    readonly warnings: readonly string[];
    /** Every run: fromSnapshot == points == n, inserted 0, nothing rejected, no warning. */
    readonly snapshot_used: boolean;
    readonly memory: MemoryReport;
    readonly rss_delta_bytes_median: number;
    readonly rss_after_bytes: number;
    /** V8 heap in use after the open (after a full GC): ids, payloads, the point table's maps. */
    readonly heap_used_after_bytes: number;
    readonly rss_anon_after_bytes: number | null;
    readonly rss_file_after_bytes: number | null;
  };
  readonly restart_service: {
    readonly ready_seconds_median: number;
    readonly ready_seconds_per_run: readonly number[];
    readonly db_load_ms_median: number;
    readonly runs: readonly ServiceRun[];
    readonly rss_bytes: number | null;
    readonly rss_anon_bytes: number | null;
    readonly rss_file_bytes: number | null;
    readonly rss_bytes_per_point_beyond_empty: number | null;
  };
  readonly phases: PhaseReport | null;
  readonly recall: {
    readonly ef: number;
    readonly queries: number;
    readonly before: RecallReport;
    readonly after_in_process: RecallReport;
    readonly after_service: RecallReport | null;
    /** The same ids in the same order for every query, before and after every restart. */
    readonly identical_hits: boolean;
  };
  readonly no_snapshot: {
    readonly snapshot_chunks_removed: number;
    readonly open_s: number;
    readonly load: OpenReport['load'];
    readonly recall_at_10: RecallReport;
  } | null;
}

export interface ServiceFloor {
  readonly ready_seconds_median: number;
  readonly rss_bytes: number | null;
  readonly runs: readonly ServiceRun[];
}

export interface RestartParams {
  readonly dim: number;
  readonly m: number;
  readonly ef_construction: number;
  readonly ef: number;
  readonly queries: number;
  readonly batch: number;
  readonly runs: number;
}

const int = (x: number): string => Math.round(x).toLocaleString('en-US');
const mib = (bytes: number | null): string => (bytes === null ? '—' : (bytes / 2 ** 20).toFixed(1));
const secs = (xs: readonly number[], median: number): string => `${median.toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
const perPoint = (m: MemoryReport): string =>
  m.points === 0
    ? '—'
    : `${int((m.vector_bytes_allocated + m.graph_bytes_allocated) / m.points)} (${int(m.vector_bytes_allocated / m.points)} + ${int(m.graph_bytes_allocated / m.points)})`;
const ms = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(0));

export function targetMet(results: readonly RestartSizeResult[]): boolean | null {
  const at = results.find((r) => r.n === TARGET.n);
  return at === undefined ? null : at.restart_service.ready_seconds_median <= TARGET.seconds && at.restart_in_process.open_seconds_median <= TARGET.seconds;
}

export function printRestartTable(results: readonly RestartSizeResult[], floor: ServiceFloor, p: RestartParams): void {
  const rows: [string, (r: RestartSizeResult) => string][] = [
    [`build: upsert s (batches of ${p.batch}, each durable, in-process)`, (r) => r.build.upsert_seconds.toFixed(1)],
    ['build: points/s', (r) => int(r.build.points_per_s)],
    ['1-min load: at build start / before each restart', (r) => `${r.load_1m.build_start} / ${r.load_1m.before_each_restart.join(', ')}`],
    ['close (writes the graph snapshot) s', (r) => r.build.close_seconds.toFixed(2)],
    ['database file MiB / of which snapshot MiB', (r) => `${mib(r.build.file_bytes)} / ${r.phases === null ? '—' : mib(r.phases.snapshot_bytes)}`],
    ['memory after build: vectors + graph bytes/point', (r) => perPoint(r.build.memory)],
    ['memory after restart: vectors + graph bytes/point', (r) => perPoint(r.restart_in_process.memory)],
    ['restart in-process: Database.open s, median (min–max)', (r) => secs(r.restart_in_process.open_seconds_per_run, r.restart_in_process.open_seconds_median)],
    [
      '  load report: from snapshot / inserted / rejected',
      (r) => {
        const l = r.restart_in_process.load_reports[0];
        return l === undefined
          ? '—'
          : `${int(l.fromSnapshot)} / ${int(l.inserted)} / ${l.snapshotRejected ?? 'no'}${r.restart_in_process.snapshot_used ? '' : ' (!)'}`;
      },
    ],
    [
      '  RSS of that process after the open MiB (anon / file-mapped)',
      (r) =>
        `${mib(r.restart_in_process.rss_after_bytes)} (${mib(r.restart_in_process.rss_anon_after_bytes)} / ${mib(r.restart_in_process.rss_file_after_bytes)})`,
    ],
    ['  RSS Δ of the open, bytes/point', (r) => int(r.restart_in_process.rss_delta_bytes_median / r.n)],
    ['  JS heap in use after it (ids, payloads, maps), bytes/point', (r) => int(r.restart_in_process.heap_used_after_bytes / r.n)],
    ['restart service: spawn → /readyz 200 s, median (min–max)', (r) => secs(r.restart_service.ready_seconds_per_run, r.restart_service.ready_seconds_median)],
    ['  of which Database.open + app build (its loadMs log) s', (r) => (r.restart_service.db_load_ms_median / 1000).toFixed(2)],
    [
      '  service RSS after the restart MiB (anon / file-mapped)',
      (r) => `${mib(r.restart_service.rss_bytes)} (${mib(r.restart_service.rss_anon_bytes)} / ${mib(r.restart_service.rss_file_bytes)})`,
    ],
    [
      '  beyond an empty service, bytes/point',
      (r) => (r.restart_service.rss_bytes_per_point_beyond_empty === null ? '—' : int(r.restart_service.rss_bytes_per_point_beyond_empty)),
    ],
    [`target: 1M restart ≤ ${TARGET.seconds} s`, (r) => (r.n !== TARGET.n ? '—' : targetMet([r]) ? 'met' : 'MISSED')],
    ['phases (warm, ms): snapshot read', (r) => ms(r.phases?.warm.snapshot_read_ms)],
    [
      '  snapshot decode (of which CRC-32)',
      (r) => (r.phases === null ? '—' : `${ms(r.phases.warm.snapshot_decode_ms)} (${ms(r.phases.warm.snapshot_checksum_ms)})`),
    ],
    ['  graph decode', (r) => ms(r.phases?.warm.graph_decode_ms)],
    [
      '  point records: decode (of which LMDB scan)',
      (r) => (r.phases === null ? '—' : `${ms(r.phases.warm.records_decode_ms)} (${ms(r.phases.warm.points_scan_ms)})`),
    ],
    ['  point table fill', (r) => ms(r.phases?.warm.table_fill_ms)],
    ['  vector arena fill', (r) => ms(r.phases?.warm.vector_fill_ms)],
    ['  payload index build', (r) => ms(r.phases?.warm.payload_index_ms)],
    ['  rest: id → slot map, reconcile, GC', (r) => ms(r.phases?.warm.rest_ms)],
    ['  = loadCollection warm (cold)', (r) => (r.phases === null ? '—' : `${ms(r.phases.warm.load_ms)} (${ms(r.phases.load_cold_ms)})`)],
    [`recall@10 (ef ${p.ef}): before the close`, (r) => r.recall.before.recall.toFixed(4)],
    ['  after the in-process restart', (r) => r.recall.after_in_process.recall.toFixed(4)],
    ['  after the service restart', (r) => r.recall.after_service?.recall.toFixed(4) ?? '—'],
    ['  same hits before and after every restart', (r) => (r.recall.identical_hits ? 'yes' : 'NO')],
    ['restart WITHOUT snapshot (rebuild): Database.open s', (r) => (r.no_snapshot === null ? '—' : r.no_snapshot.open_s.toFixed(2))],
    [
      '  snapshot speed-up (rebuild / snapshot open)',
      (r) => (r.no_snapshot === null ? '—' : `${(r.no_snapshot.open_s / r.restart_in_process.open_seconds_median).toFixed(1)}×`),
    ],
    ['  recall@10 after the rebuild', (r) => (r.no_snapshot === null ? '—' : r.no_snapshot.recall_at_10.recall.toFixed(4))],
  ];
  process.stdout.write(
    `\nrestart — HNSW (M=${p.m}, ef_construction=${p.ef_construction}), d=${p.dim}, cosine, payload {category}; ` +
      `median of ${p.runs} restarts per kind, page cache warm; recall on ${p.queries} queries vs float64 brute force\n` +
      `service on an empty database: ready in ${floor.ready_seconds_median.toFixed(2)} s, RSS ${mib(floor.rss_bytes)} MiB ` +
      `(process start, imports, Fastify, listen)\n\n`,
  );
  const header = ['metric', ...results.map((r) => `n=${r.n.toLocaleString('en-US')}`)];
  process.stdout.write(
    `${formatTable(
      header,
      rows.map(([label, f]) => [label, ...results.map(f)]),
    )}\n\n`,
  );
}

export function restartSummary(
  results: readonly RestartSizeResult[],
  floor: ServiceFloor,
  p: RestartParams,
  load1m: readonly [number, number],
  commit: string | null,
): Record<string, unknown> {
  return {
    scenario: 'restart',
    dim: p.dim,
    m: p.m,
    ef_construction: p.ef_construction,
    ef: p.ef,
    runs: p.runs,
    load_1m: load1m,
    commit,
    target: { ...TARGET, met: targetMet(results) },
    service_empty_ready_s: floor.ready_seconds_median,
    results: results.map((r) => ({
      n: r.n,
      build_s: r.build.upsert_seconds,
      file_mib: round(r.build.file_bytes / 2 ** 20, 1),
      open_s: r.restart_in_process.open_seconds_median,
      service_ready_s: r.restart_service.ready_seconds_median,
      snapshot_used: r.restart_in_process.snapshot_used,
      bytes_per_point: round((r.build.memory.vector_bytes_allocated + r.build.memory.graph_bytes_allocated) / r.build.memory.points, 1),
      service_rss_mib: r.restart_service.rss_bytes === null ? null : round(r.restart_service.rss_bytes / 2 ** 20, 1),
      recall_before: r.recall.before.recall,
      recall_after: r.recall.after_in_process.recall,
      recall_after_service: r.recall.after_service?.recall ?? null,
      no_snapshot_open_s: r.no_snapshot?.open_s ?? null,
    })),
  };
}
