/**
 * The measurements of the `serve` scenario on one running service (kith or the reference), each
 * a small function: search load from the separate load-generator process with the server's CPU
 * read around it, batch search, search latency under a concurrent writer, and the first queries
 * after a restart.
 */
import { fileURLToPath } from 'node:url';
import { runChildWorker } from './child-worker.js';
import { createClient, type HttpClient, requestJson } from './http-client.js';
import type { LoadJob, LoadResult } from './serve-load.js';
import { loadPoints } from './workload.js';
import type { ServiceProcess } from './serve-process.js';
import { coresBusy, median, quantile, round, type LatencySummary, summarizeLatencies } from './stats.js';

const LOAD_WORKER = fileURLToPath(new URL('./serve-load.js', import.meta.url));

export interface ServedLoad extends LoadResult {
  /** Server CPU (all threads) over the whole job, warm-up included, per request. */
  readonly server_cpu_ms_per_query: number;
  /** Server CPU over the job as cores kept busy. */
  readonly server_cores: number;
}

function failedLoad(reason: string): LoadResult {
  return {
    ok: false,
    error: reason,
    requests: 0,
    qps_per_pass: [],
    qps_median: 0,
    latency: summarizeLatencies([]),
    client_cpu_ms: 0,
    client_cores: 0,
    wall_seconds: 0,
  };
}

/**
 * Untimed requests before a concurrent measurement. Each load job runs in a fresh generator
 * process whose code is cold: with 200, three 1,000-query passes of 16 clients cost that process
 * ~0.29 ms of CPU per request against ~0.11 once warm, on the cores the server needs, and read
 * 35–90% fewer QPS than ten passes did.
 */
export const CONCURRENT_WARMUP = 3000;

/** Runs one load job in a fresh generator process; the server's CPU is read before and after. */
export async function servedLoad(service: ServiceProcess, job: Omit<LoadJob, 'url'>): Promise<ServedLoad> {
  const cpu0 = service.cpuMs();
  const t0 = performance.now();
  const result = await runChildWorker<LoadJob, LoadResult>(LOAD_WORKER, { ...job, url: service.url }, failedLoad);
  const wall = (performance.now() - t0) / 1000;
  if (!result.ok) throw new Error(`load generator: ${result.error}`);
  const cpu = service.cpuMs() - cpu0;
  const total = job.warmup + job.passes * job.bodies.length;
  return { ...result, server_cpu_ms_per_query: round(cpu / total, 4), server_cores: coresBusy(cpu, wall) };
}

export interface BatchReport {
  readonly searches_per_request: number;
  readonly requests: number;
  readonly seconds_per_request: readonly number[];
  /** Searches per second of the median request. */
  readonly queries_per_s: number;
  readonly server_cpu_ms_per_query: number;
}

/** POSTs the batch body `runs` times (after one untimed request), one at a time. */
export async function measureBatch(
  client: HttpClient,
  service: ServiceProcess,
  path: string,
  body: Buffer,
  searches: number,
  runs: number,
): Promise<BatchReport> {
  const check = (status: number, text: string): void => {
    if (status !== 200) throw new Error(`POST ${path}: HTTP ${status}: ${text.slice(0, 300)}`);
    const lists = (JSON.parse(text) as { result: unknown[] }).result;
    if (lists.length !== searches) throw new Error(`POST ${path}: ${lists.length} result lists, expected ${searches}`);
  };
  const first = await client.request('POST', path, body);
  check(first.status, first.text);
  const seconds: number[] = [];
  const cpu0 = service.cpuMs();
  for (let r = 0; r < runs; r++) {
    const s = performance.now();
    const { status, text } = await client.request('POST', path, body);
    seconds.push((performance.now() - s) / 1000);
    check(status, text);
  }
  const cpu = service.cpuMs() - cpu0;
  return {
    searches_per_request: searches,
    requests: runs,
    seconds_per_request: seconds.map((s) => round(s, 4)),
    queries_per_s: Math.round(searches / median(seconds)),
    server_cpu_ms_per_query: round(cpu / (runs * searches), 4),
  };
}

export interface UnderWritesReport {
  readonly search: ServedLoad;
  readonly upsert_batches: number;
  readonly upsert_points: number;
  readonly upsert_latency: LatencySummary;
  readonly upsert_points_per_s: number;
}

/**
 * Searches from the generator (one client) while this process upserts `bodies` (batches of new
 * points) one after another, awaited, until the searches are done.
 */
export async function measureUnderWrites(
  client: HttpClient,
  service: ServiceProcess,
  collection: string,
  upserts: readonly Buffer[],
  perBatch: number,
  job: Omit<LoadJob, 'url'>,
): Promise<UnderWritesReport> {
  let done = false;
  const latencies: number[] = [];
  const path = `/collections/${collection}/points`;
  const writer = (async () => {
    let i = 0;
    const t0 = performance.now();
    while (!done) {
      const s = performance.now();
      const { status, text } = await client.request('PUT', path, upserts[i % upserts.length] as Buffer);
      if (status !== 200) throw new Error(`PUT ${path}: HTTP ${status}: ${text.slice(0, 300)}`);
      latencies.push(performance.now() - s);
      i++;
    }
    return (performance.now() - t0) / 1000;
  })();
  let search: ServedLoad;
  try {
    search = await servedLoad(service, job);
  } finally {
    done = true;
  }
  const seconds = await writer;
  return {
    search,
    upsert_batches: latencies.length,
    upsert_points: latencies.length * perBatch,
    upsert_latency: summarizeLatencies(latencies),
    upsert_points_per_s: Math.round((latencies.length * perBatch) / seconds),
  };
}

export interface RestartReport {
  readonly ready_ms: number;
  /** Latency of the first 100 searches after ready, one client, sent at once. */
  readonly first_100: LatencySummary;
  readonly next_900: LatencySummary;
  /** Server CPU per search over the first 1000 (background warm-up included). */
  readonly first_1000_server_cpu_ms_per_query: number;
  /** The pre-restart 1-client p50 that "fast" is measured against, and the bar (× 1.5). */
  readonly steady_p50_ms: number;
  readonly fast_bar_ms: number;
  /**
   * From spawn to the answer of the first query of the first run of 10 consecutive queries each
   * under the bar; null when none within the queries sent.
   */
  readonly first_fast_query_ms: number | null;
  readonly rss_bytes_after: number | null;
}

/** Right after a (re)start: `count` searches one after another; when did they become fast? */
export async function measureRestart(
  client: HttpClient,
  service: ServiceProcess,
  path: string,
  bodies: readonly Buffer[],
  steadyP50: number,
  count = 1000,
): Promise<RestartReport> {
  const latencies: number[] = [];
  const finishedAt: number[] = [];
  const cpu0 = service.cpuMs();
  for (let i = 0; i < count; i++) {
    const s = performance.now();
    const { status, text } = await client.request('POST', path, bodies[i % bodies.length] as Buffer);
    const end = performance.now();
    if (status !== 200) throw new Error(`POST ${path}: HTTP ${status}: ${text.slice(0, 300)}`);
    latencies.push(end - s);
    finishedAt.push(end - service.spawnedAt);
  }
  const cpu = service.cpuMs() - cpu0;
  const bar = steadyP50 * 1.5;
  let firstFast: number | null = null;
  for (let i = 0; i + 10 <= latencies.length; i++) {
    if (latencies.slice(i, i + 10).every((l) => l <= bar)) {
      firstFast = round(finishedAt[i] as number, 1);
      break;
    }
  }
  return {
    ready_ms: round(service.readyMs, 1),
    first_100: summarizeLatencies(latencies.slice(0, 100)),
    next_900: summarizeLatencies(latencies.slice(100)),
    first_1000_server_cpu_ms_per_query: round(cpu / count, 4),
    steady_p50_ms: round(steadyP50, 3),
    fast_bar_ms: round(bar, 3),
    first_fast_query_ms: firstFast,
    rss_bytes_after: service.rss()?.rss_bytes ?? null,
  };
}

/** Mean latency of the first and the last 100 of a warm-up, to show what warming changed. */
export function warmupShape(latencies: readonly number[]): { first_100_mean_ms: number; last_100_mean_ms: number; p50_ms: number } {
  const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    first_100_mean_ms: round(mean(latencies.slice(0, 100)), 3),
    last_100_mean_ms: round(mean(latencies.slice(-100)), 3),
    p50_ms: round(quantile(latencies, 0.5), 3),
  };
}

/**
 * Waits until no background calibration of `ef` runs on the collection (one starts after a load
 * and competes with the timed phases for the cores); returns the seconds waited.
 */
export async function calibrationSettled(client: HttpClient, collection: string): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const info = (await requestJson(client, 'GET', `/collections/${collection}`)) as { result: { calibration: { running: boolean } } };
    // A calibration starts as soon as one is due (a write or a search notes it): not running now
    // means done, or not due (fewer than 2,000 points, an explicit ef_search, a Flat collection).
    if (!info.result.calibration.running) return (performance.now() - t0) / 1000;
    if (performance.now() - t0 > 600_000) throw new Error(`${collection}: calibration still running after 600 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export interface PredicateFilterJob {
  /** The collection to create (without payload indexes, so the filter runs as a predicate) and load. */
  readonly collection: string;
  readonly create: Record<string, unknown>;
  readonly upserts: readonly Buffer[];
  readonly points: number;
  /** Search bodies carrying the filter, and their limit (the ids of the 1-client pass are kept for recall). */
  readonly bodies: readonly string[];
  readonly limit: number;
  readonly passes: number;
  readonly clients: number;
  /** Other collections whose calibration must have ended before the timed part. */
  readonly others: readonly string[];
  readonly log: (message: string) => void;
}

/**
 * Searches with a filter no payload index answers, 1 and `clients` clients, on a collection
 * created and loaded for it. The first such searches run on the service thread while the payloads
 * are copied for the threads; the 500 warm-up searches cover that.
 */
export async function measurePredicateFilter(service: ServiceProcess, job: PredicateFilterJob): Promise<{ one: ServedLoad; many: ServedLoad }> {
  const client = createClient('http', service.url, 1);
  try {
    await requestJson(client, 'POST', '/collections', job.create);
    await loadPoints(client, job.collection, job.upserts, job.points);
    let waited = await calibrationSettled(client, job.collection);
    for (const other of job.others) waited += await calibrationSettled(client, other);
    job.log(`filtered phase: calibrations settled after ${round(waited, 1)} s`);
  } finally {
    client.close();
  }
  const load = { path: `/collections/${job.collection}/points/search`, bodies: job.bodies, warmup: 500, passes: job.passes };
  const one = await servedLoad(service, { ...load, concurrency: 1, keepIds: job.limit });
  const many = await servedLoad(service, { ...load, concurrency: job.clients, warmup: CONCURRENT_WARMUP });
  return { one, many };
}
