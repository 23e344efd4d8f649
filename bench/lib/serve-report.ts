/** The `serve` scenario's result per service, its table (one column per service) and summary line. */
import type { BatchReport, RestartReport, ServedLoad, UnderWritesReport } from './serve-measure.js';
import type { ProcRss } from './server.js';
import { coresBusy, round } from './stats.js';
import { formatTable } from './table.js';
import type { LoadReport } from './workload.js';

export interface TargetResult {
  readonly label: string;
  readonly kind: 'kith' | 'reference';
  readonly ingest: LoadReport & { readonly server_cpu_ms_per_point: number; readonly durable: boolean; readonly client_cores: number };
  readonly warmup: { readonly queries: number; readonly first_100_mean_ms: number; readonly last_100_mean_ms: number; readonly p50_ms: number };
  readonly rss: RssGrowth;
  floor?: ServedLoad;
  one?: ServedLoad & { readonly recall: number; readonly recall_ids: number };
  many?: ServedLoad;
  batch?: BatchReport;
  writes?: UnderWritesReport;
  restart?: RestartReport;
  /** kith only: searches with a filter no payload index answers (a collection without payload indexes). */
  filtered?: { readonly one: ServedLoad; readonly many: ServedLoad; readonly recall: number };
}

type Cell = number | undefined;

interface Row {
  readonly name: string;
  readonly cells: readonly Cell[];
  /** Show kith / reference for this row. */
  readonly ratio?: boolean;
}

const MIB = 2 ** 20;

export interface RssGrowth {
  readonly empty_bytes: number;
  readonly after_load_bytes: number;
  readonly anon_bytes: number;
  readonly file_bytes: number;
  readonly per_point_bytes: number;
  /** Anonymous memory only: what the process holds, without the database file's pages it has mapped (page cache the kernel can reclaim). */
  readonly anon_per_point_bytes: number;
}

/** RSS after a load of `points` against the empty service's (NaN where /proc could not be read). */
export function rssGrowth(empty: ProcRss | null, after: ProcRss | null, points: number): RssGrowth {
  const afterBytes = after?.rss_bytes ?? Number.NaN;
  const anonBytes = after?.rss_anon_bytes ?? Number.NaN;
  return {
    empty_bytes: empty?.rss_bytes ?? Number.NaN,
    after_load_bytes: afterBytes,
    anon_bytes: anonBytes,
    file_bytes: after?.rss_file_bytes ?? Number.NaN,
    per_point_bytes: Math.round((afterBytes - (empty?.rss_bytes ?? Number.NaN)) / points),
    anon_per_point_bytes: Math.round((anonBytes - (empty?.rss_anon_bytes ?? Number.NaN)) / points),
  };
}

function rows(results: readonly TargetResult[], clients: number, queries: number): Row[] {
  const col = (f: (r: TargetResult) => Cell): Cell[] => results.map(f);
  return [
    { name: 'ingest points/s (kith durable per batch; reference in memory)', cells: col((r) => r.ingest.points_per_s), ratio: true },
    { name: 'ingest server CPU ms/point', cells: col((r) => r.ingest.server_cpu_ms_per_point), ratio: true },
    { name: 'ingest: server cores busy', cells: col((r) => coresBusy(r.ingest.points_per_s * r.ingest.server_cpu_ms_per_point, 1)) },
    { name: 'ingest: client process cores busy', cells: col((r) => r.ingest.client_cores) },
    { name: 'warm-up: first 100 searches, mean ms', cells: col((r) => r.warmup.first_100_mean_ms) },
    { name: 'warm-up: last 100 searches, mean ms', cells: col((r) => r.warmup.last_100_mean_ms) },
    { name: 'floor (1-point collection): server CPU ms/query', cells: col((r) => r.floor?.server_cpu_ms_per_query), ratio: true },
    { name: 'floor: p50 ms', cells: col((r) => r.floor?.latency.p50_ms), ratio: true },
    { name: '1 client: server CPU ms/query', cells: col((r) => r.one?.server_cpu_ms_per_query), ratio: true },
    { name: '1 client: QPS', cells: col((r) => r.one?.qps_median), ratio: true },
    { name: '1 client: p50 ms', cells: col((r) => r.one?.latency.p50_ms), ratio: true },
    { name: '1 client: p99 ms', cells: col((r) => r.one?.latency.p99_ms), ratio: true },
    { name: 'recall@10', cells: col((r) => r.one?.recall) },
    { name: `${clients} clients: QPS`, cells: col((r) => r.many?.qps_median), ratio: true },
    { name: `${clients} clients: p50 ms`, cells: col((r) => r.many?.latency.p50_ms), ratio: true },
    { name: `${clients} clients: p99 ms`, cells: col((r) => r.many?.latency.p99_ms), ratio: true },
    { name: `${clients} clients: server cores busy`, cells: col((r) => r.many?.server_cores) },
    { name: `${clients} clients: client process cores busy`, cells: col((r) => r.many?.client_cores) },
    { name: `${clients} clients: server CPU ms/query`, cells: col((r) => r.many?.server_cpu_ms_per_query), ratio: true },
    { name: `batch of ${queries}: queries/s`, cells: col((r) => r.batch?.queries_per_s), ratio: true },
    {
      name: 'batch queries/s ÷ 1-client QPS',
      cells: col((r) => (r.batch === undefined || r.one === undefined ? undefined : round(r.batch.queries_per_s / r.one.qps_median, 2))),
    },
    { name: 'p99 ms while 1 client upserts batches of 100', cells: col((r) => r.writes?.search.latency.p99_ms), ratio: true },
    {
      name: 'p99 under writes ÷ idle p99',
      cells: col((r) => (r.writes === undefined || r.one === undefined ? undefined : round(r.writes.search.latency.p99_ms / r.one.latency.p99_ms, 2))),
    },
    { name: 'writer points/s during it', cells: col((r) => r.writes?.upsert_points_per_s), ratio: true },
    { name: 'RSS after load MiB', cells: col((r) => round(r.rss.after_load_bytes / MIB, 1)), ratio: true },
    { name: 'RSS beyond the empty service, bytes/point', cells: col((r) => r.rss.per_point_bytes), ratio: true },
    { name: '  of it anonymous MiB', cells: col((r) => round(r.rss.anon_bytes / MIB, 1)), ratio: true },
    { name: '  of it file-mapped MiB (database pages, node binary)', cells: col((r) => round(r.rss.file_bytes / MIB, 1)) },
    { name: '  anonymous beyond the empty service, bytes/point', cells: col((r) => r.rss.anon_per_point_bytes), ratio: true },
    { name: 'restart: ready ms (spawn → /healthz 200)', cells: col((r) => r.restart?.ready_ms) },
    { name: 'restart: first 100 searches p50 ms', cells: col((r) => r.restart?.first_100.p50_ms) },
    { name: 'restart: first 100 searches max ms', cells: col((r) => r.restart?.first_100.max_ms) },
    { name: 'restart: next 900 p50 ms', cells: col((r) => r.restart?.next_900.p50_ms) },
    { name: 'restart: server CPU ms/query, first 1000', cells: col((r) => r.restart?.first_1000_server_cpu_ms_per_query) },
    { name: 'restart: first fast query (ms after spawn)', cells: col((r) => r.restart?.first_fast_query_ms ?? undefined) },
    { name: 'filter no index answers: 1 client server CPU ms/query', cells: col((r) => r.filtered?.one.server_cpu_ms_per_query) },
    { name: 'filter no index answers: 1 client QPS', cells: col((r) => r.filtered?.one.qps_median) },
    { name: `filter no index answers: ${clients} clients QPS`, cells: col((r) => r.filtered?.many.qps_median) },
    { name: `filter no index answers: ${clients} clients p99 ms`, cells: col((r) => r.filtered?.many.latency.p99_ms) },
    { name: `filter no index answers: ${clients} clients server cores busy`, cells: col((r) => r.filtered?.many.server_cores) },
    { name: 'filter no index answers: recall@10', cells: col((r) => r.filtered?.recall) },
  ];
}

/** Prints the table and the summary line on stdout; returns the summary. */
export function printReport(
  results: readonly TargetResult[],
  params: Record<string, unknown> & { clients: number; queries: number },
  uptimeBefore: string | null,
  uptimeAfter: string | null,
): Record<string, unknown> {
  const refIndex = results.findIndex((r) => r.kind === 'reference');
  const kithIndex = results.findIndex((r) => r.kind === 'kith');
  const withRatio = refIndex >= 0 && kithIndex >= 0;
  const table = rows(results, params.clients, params.queries);
  const header = ['', ...results.map((r) => r.label), ...(withRatio ? [`${results[kithIndex]?.label} / reference`] : [])];
  const body = table.map((row) => {
    const cells = row.cells.map((c) => (c === undefined || Number.isNaN(c) ? '–' : c));
    const k = row.cells[kithIndex];
    const r = row.cells[refIndex];
    const ratio = withRatio && row.ratio === true && k !== undefined && r !== undefined && r !== 0 ? `×${round(k / r, 2)}` : '';
    return [row.name, ...cells, ...(withRatio ? [ratio] : [])];
  });
  const hnsw = params.hnsw as { m: number; ef_construction: number; ef_search: number } | null;
  process.stdout.write(
    `\nserve: ${params.n} × ${params.dim} cosine, HNSW m ${hnsw?.m} ef_construction ${hnsw?.ef_construction} ef ${hnsw?.ef_search}, limit ${params.limit}, ${params.queries} queries × ${params.passes} passes, keep-alive node:http clients on loopback\n` +
      `uptime before: ${uptimeBefore ?? '?'}\nuptime after:  ${uptimeAfter ?? '?'}\n\n${formatTable(header, body)}\n\n`,
  );
  const summary: Record<string, unknown> = { scenario: 'serve', n: params.n, hnsw };
  for (const r of results) {
    summary[r.label] = {
      ingest_points_per_s: r.ingest.points_per_s,
      cpu_ms_per_query: r.one?.server_cpu_ms_per_query,
      floor_cpu_ms_per_query: r.floor?.server_cpu_ms_per_query,
      qps_1: r.one?.qps_median,
      recall: r.one?.recall,
      qps_many: r.many?.qps_median,
      p99_many_ms: r.many?.latency.p99_ms,
      batch_qps: r.batch?.queries_per_s,
      p99_writes_ratio: r.writes !== undefined && r.one !== undefined ? round(r.writes.search.latency.p99_ms / r.one.latency.p99_ms, 2) : undefined,
      rss_bytes_per_point: r.rss.per_point_bytes,
      rss_anon_bytes_per_point: r.rss.anon_per_point_bytes,
      first_fast_query_ms: r.restart?.first_fast_query_ms,
      filtered_qps_many: r.filtered?.many.qps_median,
      filtered_recall: r.filtered?.recall,
    };
  }
  const k = results[kithIndex]?.one?.server_cpu_ms_per_query;
  const ref = results[refIndex]?.one?.server_cpu_ms_per_query;
  if (withRatio && k !== undefined && ref !== undefined) summary.cpu_per_query_kith_over_reference = round(k / ref, 3);
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return summary;
}
