/**
 * The HTTP side of a benchmark, shared by scenarios: encode request bodies ahead of time (so the
 * client's JSON.stringify is not timed), load points in awaited batches, and time searches.
 */
import type { VectorSet } from '../datasets/synthetic.js';
import { type HttpClient, requestJson } from './http-client.js';
import { median, round, type LatencySummary, summarizeLatencies } from './stats.js';
import { closedLoop } from './closed-loop.js';

/**
 * A float32 value as the shortest decimal that parses back to the same float32 (9 significant
 * digits always suffice), so the server stores exactly the bench's vector and bodies stay small.
 */
export function f32Json(x: number): string {
  return String(Number(x.toPrecision(9)));
}

export function vectorJson(row: Float32Array): string {
  let s = '[';
  for (let j = 0; j < row.length; j++) s += (j === 0 ? '' : ',') + f32Json(row[j] as number);
  return `${s}]`;
}

/**
 * Upsert bodies of `batch` points each; row i has id `firstId + i` (by default the row index) and
 * `payload(i)`.
 */
export function encodeUpsertBatches(base: VectorSet, batch: number, payload?: (i: number) => unknown, firstId = 0): Buffer[] {
  const bodies: Buffer[] = [];
  for (let start = 0; start < base.rows.length; start += batch) {
    const end = Math.min(base.rows.length, start + batch);
    const parts: string[] = [];
    for (let i = start; i < end; i++) {
      const p = payload === undefined ? '' : `,"payload":${JSON.stringify(payload(i))}`;
      parts.push(`{"id":${firstId + i},"vector":${vectorJson(base.rows[i] as Float32Array)}${p}}`);
    }
    bodies.push(Buffer.from(`{"points":[${parts.join(',')}]}`));
  }
  return bodies;
}

/** Search bodies, one per query: `{"vector":[…],"limit":k, …extra}`. */
export function encodeSearchBodies(queries: VectorSet, limit: number, extra: (qi: number) => Record<string, unknown> = () => ({})): Buffer[] {
  return queries.rows.map((row, qi) => {
    const more = Object.entries(extra(qi))
      .map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`)
      .join('');
    return Buffer.from(`{"vector":${vectorJson(row)},"limit":${limit}${more}}`);
  });
}

export interface LoadReport {
  readonly points: number;
  readonly batches: number;
  readonly seconds: number;
  readonly points_per_s: number;
  readonly batch_latency: LatencySummary;
  readonly body_mib: number;
}

/** PUTs every batch in order, each awaited (the 200 means durable); times the whole load. */
export async function loadPoints(client: HttpClient, collection: string, bodies: readonly Buffer[], points: number): Promise<LoadReport> {
  const path = `/collections/${collection}/points`;
  const latencies: number[] = [];
  let bytes = 0;
  const t0 = performance.now();
  for (const body of bodies) {
    const s = performance.now();
    const { status, text } = await client.request('PUT', path, body);
    latencies.push(performance.now() - s);
    if (status !== 200) throw new Error(`PUT ${path}: HTTP ${status}: ${text.slice(0, 500)}`);
    bytes += body.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  const info = (await requestJson(client, 'GET', `/collections/${collection}`)) as { result: { points_count: number } };
  if (info.result.points_count !== points) throw new Error(`after the load: points_count ${info.result.points_count}, expected ${points}`);
  return {
    points,
    batches: bodies.length,
    seconds: round(seconds, 3),
    points_per_s: Math.round(points / seconds),
    batch_latency: summarizeLatencies(latencies),
    body_mib: round(bytes / 2 ** 20, 1),
  };
}

export interface Hit {
  readonly id: string;
  readonly score: number;
}

interface SearchEnvelope {
  status: string;
  result: { id: string; score: number }[];
  time: number;
}

export interface SearchRunsReport {
  /** In-flight requests at any moment (1 = one client issuing requests one after another). */
  readonly concurrency: number;
  readonly queries_per_run: number;
  readonly runs: number;
  readonly warmup_queries: number;
  readonly qps_per_run: readonly number[];
  readonly qps_median: number;
  /** Client-side latency (request written → body parsed), over every timed request. */
  readonly latency: LatencySummary;
  /**
   * The server's own `time` field: from request start to the handler's return (body parse,
   * validation, search), without response serialisation and the network.
   */
  readonly server_time: LatencySummary;
}

/**
 * Warm-up, then `runs` timed passes over every body with `concurrency` requests in flight (each
 * "client" takes the next query when its previous answer arrives). Returns the hits of the first
 * timed pass, per query, for recall.
 */
export async function measureSearch(
  client: HttpClient,
  collection: string,
  bodies: readonly Buffer[],
  options: { runs: number; warmup: number; concurrency: number; expectHits?: number },
): Promise<{ report: SearchRunsReport; hits: Hit[][] }> {
  const path = `/collections/${collection}/points/search`;
  const latencies: number[] = [];
  const serverMs: number[] = [];
  const qps: number[] = [];
  let hits: Hit[][] = [];

  const pass = (count: number, record: boolean, keep: Hit[][] | null): Promise<number> =>
    closedLoop(count, options.concurrency, async (i) => {
      const body = bodies[i % bodies.length] as Buffer;
      const s = performance.now();
      const { status, text } = await client.request('POST', path, body);
      const envelope = JSON.parse(text) as SearchEnvelope;
      const elapsed = performance.now() - s;
      if (status !== 200) throw new Error(`POST ${path}: HTTP ${status}: ${text.slice(0, 500)}`);
      if (options.expectHits !== undefined && envelope.result.length !== options.expectHits) {
        throw new Error(`query ${i}: ${envelope.result.length} hits, expected ${options.expectHits}`);
      }
      if (record) {
        latencies.push(elapsed);
        serverMs.push(envelope.time * 1000);
      }
      if (keep !== null) keep[i] = envelope.result.map((h) => ({ id: String(h.id), score: h.score }));
    });

  await pass(options.warmup, false, null);
  for (let run = 0; run < options.runs; run++) {
    const keep: Hit[][] | null = run === 0 ? [] : null;
    const seconds = await pass(bodies.length, true, keep);
    if (keep !== null) hits = keep;
    qps.push(round(bodies.length / seconds, 1));
  }
  return {
    report: {
      concurrency: options.concurrency,
      queries_per_run: bodies.length,
      runs: options.runs,
      warmup_queries: options.warmup,
      qps_per_run: qps,
      qps_median: round(median(qps), 1),
      latency: summarizeLatencies(latencies),
      server_time: summarizeLatencies(serverMs),
    },
    hits,
  };
}

export interface FloorReport {
  readonly requests: number;
  readonly qps: number;
  readonly latency: LatencySummary;
}

/** GET /healthz one after another: the HTTP round trip with no body and no work, for comparison. */
export async function measureFloor(client: HttpClient, requests: number): Promise<FloorReport> {
  const latencies: number[] = [];
  for (let i = 0; i < Math.min(200, requests); i++) await client.request('GET', '/healthz');
  const t0 = performance.now();
  for (let i = 0; i < requests; i++) {
    const s = performance.now();
    const { status, text } = await client.request('GET', '/healthz');
    JSON.parse(text);
    latencies.push(performance.now() - s);
    if (status !== 200) throw new Error(`GET /healthz: HTTP ${status}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { requests, qps: Math.round(requests / seconds), latency: summarizeLatencies(latencies) };
}
