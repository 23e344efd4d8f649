/**
 * The measurements of the `serve` scenario on one running service (kith or the reference), each
 * a small function: search load from the service's long-lived load generator (lib/serve-load.ts)
 * with the server's CPU read around the timed passes, the floor, 1 client with recall, many
 * clients, batch search, search latency under a concurrent writer, the first queries after a
 * restart and searches with a filter no payload index answers.
 */
import type { AnnDataset } from '../datasets/dataset.js';
import { type ExactNeighbours, recallAtK } from './ground-truth.js';
import { createClient, type HttpClient, requestJson } from './http-client.js';
import type { LoadGenerator, LoadJob, LoadResult } from './serve-load.js';
import type { ServiceProcess } from './serve-process.js';
import { coresBusy, type LatencySummary, median, quantile, round, summarizeLatencies } from './stats.js';
import { loadPoints } from './workload.js';

export interface ServedLoad extends LoadResult {
  /** Server CPU (all threads) over the timed passes, per request. */
  readonly server_cpu_ms_per_query: number;
  /** Server CPU over the timed passes as cores kept busy. */
  readonly server_cores: number;
}

/** A running service and the generator that loads it (the same generator across a restart). */
export interface Served {
  readonly service: ServiceProcess;
  readonly generator: LoadGenerator;
}

/** A load job without the service's address, which `servedLoad` fills in. */
export type ServedJob = Omit<LoadJob, 'url' | 'serverPid'>;

/**
 * Untimed requests at `clients` connections once the service is loaded, before any measurement:
 * they JIT the generator, open every connection it will use and warm the server's search path.
 * A cold generator cost ~0.29 ms of its own CPU per request against ~0.11 warm, on the cores the
 * server needs, and read 35–90% fewer QPS.
 */
export const GENERATOR_WARMUP = 3000;

/** Untimed requests of each job: the generator is warm, this is the path's own warm-up (a new collection, a restarted service). */
export const JOB_WARMUP = 500;

/** Runs one load job on the service's generator; the server's CPU comes from the timed passes. */
export async function servedLoad(served: Served, job: ServedJob): Promise<ServedLoad> {
  const result = await served.generator.run({ ...job, url: served.service.url, serverPid: served.service.pid });
  if (!result.ok) throw new Error(`load generator: ${result.error}`);
  const requests = job.passes * job.bodies.length;
  return {
    ...result,
    server_cpu_ms_per_query: round(result.server_cpu_ms / requests, 4),
    server_cores: coresBusy(result.server_cpu_ms, result.wall_seconds),
  };
}

/** Warms the generator, its `clients` connections and the service (see GENERATOR_WARMUP). */
export async function warmGenerator(served: Served, path: string, bodies: readonly string[], clients: number): Promise<void> {
  const result = await served.generator.run({
    url: served.service.url,
    serverPid: served.service.pid,
    path,
    bodies,
    concurrency: clients,
    warmup: GENERATOR_WARMUP,
    passes: 0,
  });
  if (!result.ok) throw new Error(`load generator warm-up: ${result.error}`);
}

/**
 * Every per-request cost but the search: the same bodies against a 1-point collection `name`,
 * created with `create` (the service's own fields besides name, size and distance) and loaded
 * with `upsert`.
 */
export async function measureFloor(
  served: Served,
  client: HttpClient,
  floor: { readonly name: string; readonly create: Record<string, unknown>; readonly upsert: Buffer },
  job: ServedJob,
): Promise<ServedLoad> {
  await requestJson(client, 'POST', '/collections', { name: floor.name, ...floor.create });
  await loadPoints(client, floor.name, [floor.upsert], 1);
  return servedLoad(served, { ...job, path: `/collections/${floor.name}/points/search`, concurrency: 1 });
}

export type WithRecall = ServedLoad & { readonly recall: number; readonly recall_ids: number };

/** One client; recall@`limit` of the first timed pass against `truth`. The ids are not kept in the result. */
export async function measureWithRecall(served: Served, job: ServedJob, dataset: AnnDataset, truth: ExactNeighbours, limit: number): Promise<WithRecall> {
  const load = await servedLoad(served, { ...job, keepIds: limit });
  const recall = recallAtK(dataset, truth, Int32Array.from(load.ids ?? []), limit);
  return { ...load, ids: undefined, recall: round(recall.recall, 4), recall_ids: round(recall.recall_ids, 4) };
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
  served: Served,
  collection: string,
  upserts: readonly Buffer[],
  perBatch: number,
  job: ServedJob,
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
    search = await servedLoad(served, job);
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
  /** Search bodies carrying the filter, their limit, and the exact filtered top-`limit` for recall. */
  readonly bodies: readonly string[];
  readonly limit: number;
  readonly dataset: AnnDataset;
  readonly truth: ExactNeighbours;
  readonly passes: number;
  readonly clients: number;
  /** Other collections whose calibration must have ended before the timed part. */
  readonly others: readonly string[];
  readonly log: (message: string) => void;
}

/**
 * Searches with a filter no payload index answers, 1 and `clients` clients, on a collection
 * created and loaded for it. The first such searches run on the service thread while the payloads
 * are copied for the threads; the JOB_WARMUP searches cover that.
 */
export async function measurePredicateFilter(served: Served, job: PredicateFilterJob): Promise<{ one: WithRecall; many: ServedLoad }> {
  const client = createClient('http', served.service.url, 1);
  try {
    await requestJson(client, 'POST', '/collections', job.create);
    await loadPoints(client, job.collection, job.upserts, job.points);
    let waited = await calibrationSettled(client, job.collection);
    for (const other of job.others) waited += await calibrationSettled(client, other);
    job.log(`filtered phase: calibrations settled after ${round(waited, 1)} s`);
  } finally {
    client.close();
  }
  const load = { path: `/collections/${job.collection}/points/search`, bodies: job.bodies, warmup: JOB_WARMUP, passes: job.passes };
  const one = await measureWithRecall(served, { ...load, concurrency: 1 }, job.dataset, job.truth, job.limit);
  const many = await servedLoad(served, { ...load, concurrency: job.clients });
  return { one, many };
}
