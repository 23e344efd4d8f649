/**
 * The `cluster` scenario's measurements over HTTP, for one kith node or a cluster of them: writers
 * and searchers spread round robin over the nodes, per-request samples on one clock (so a fault's
 * effect can be read against the moment it was caused), `GET /cluster` read and waited on, and the
 * CPU time of a set of processes.
 */
import { closedLoop } from './closed-loop.js';
import type { HttpClient } from './http-client.js';
import { procCpuMs } from './serve-process.js';
import { type LatencySummary, quantile, round, summarizeLatencies } from './stats.js';

/** One client over several nodes: request k goes to node k mod n. */
export function spreadClient(clients: readonly HttpClient[]): HttpClient {
  if (clients.length === 0) throw new Error('spreadClient: no node');
  let next = 0;
  return {
    kind: (clients[0] as HttpClient).kind,
    request(method, path, body) {
      const client = clients[next++ % clients.length] as HttpClient;
      return client.request(method, path, body);
    },
    close() {
      for (const c of clients) c.close();
    },
  };
}

/** One request as the client saw it: when it was sent (ms on the caller's clock), how long it took, and how it ended. */
export interface RequestSample {
  readonly at_ms: number;
  readonly ms: number;
  readonly ok: boolean;
  readonly error?: string;
}

/** An upsert body and the points it holds. */
export interface UpsertBatch {
  readonly body: Buffer;
  readonly points: number;
}

export interface WriteReport {
  readonly writers: number;
  readonly batches: number;
  readonly failed: number;
  /** Points in the batches answered 200. */
  readonly points_acked: number;
  readonly seconds: number;
  readonly points_per_s: number;
  /** Every batch, failed ones included (a failure's time is the time until it failed). */
  readonly batch_latency: LatencySummary;
  readonly first_error: string | null;
}

/**
 * `writers` clients PUT the batches (each takes the next when its answer has come), in order.
 * With `stop`, the batches are taken round and round until it returns true. A failed batch (not a
 * 200, or no answer) is recorded, never retried. `origin` is the clock the samples' `at_ms` count from.
 */
export async function runWriters(
  client: HttpClient,
  collection: string,
  batches: readonly UpsertBatch[],
  options: { readonly writers: number; readonly stop?: () => boolean; readonly origin?: number },
): Promise<{ samples: RequestSample[]; points: number[]; seconds: number }> {
  const path = `/collections/${collection}/points`;
  const origin = options.origin ?? performance.now();
  const samples: RequestSample[] = [];
  const points: number[] = [];
  const count = options.stop === undefined ? batches.length : Number.POSITIVE_INFINITY;
  const seconds = await closedLoop(
    count,
    options.writers,
    async (i) => {
      const batch = batches[i % batches.length] as UpsertBatch;
      samples.push(await timed(client, 'PUT', path, batch.body, origin));
      points.push(batch.points);
    },
    options.stop,
  );
  return { samples, points, seconds };
}

/** One request, timed; an HTTP error or a connection error is a failed sample, not a throw. */
export async function timed(client: HttpClient, method: string, path: string, body: Buffer | undefined, origin: number): Promise<RequestSample> {
  const s = performance.now();
  try {
    const { status, text } = await client.request(method, path, body);
    const ms = performance.now() - s;
    return status === 200 ? { at_ms: s - origin, ms, ok: true } : { at_ms: s - origin, ms, ok: false, error: `HTTP ${status}: ${text.slice(0, 300)}` };
  } catch (error) {
    return { at_ms: s - origin, ms: performance.now() - s, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

export function writeReport(run: { samples: readonly RequestSample[]; points: readonly number[]; seconds: number }, writers: number): WriteReport {
  let acked = 0;
  run.samples.forEach((s, i) => {
    if (s.ok) acked += run.points[i] as number;
  });
  const failed = run.samples.filter((s) => !s.ok);
  return {
    writers,
    batches: run.samples.length,
    failed: failed.length,
    points_acked: acked,
    seconds: round(run.seconds, 3),
    points_per_s: Math.round(acked / run.seconds),
    batch_latency: summarizeLatencies(run.samples.map((s) => s.ms)),
    first_error: failed[0]?.error ?? null,
  };
}

/** `GET /cluster` (src/api/routes/cluster-collections.ts). */
export interface ClusterView {
  readonly node: string;
  readonly nodes: readonly { readonly id: string; readonly advertise: string; readonly joined: string }[];
  readonly replicas: readonly {
    readonly collection: string;
    readonly shard: number;
    readonly local: string;
    readonly applied: number;
    readonly last: number | null;
    readonly lag: number | null;
    readonly state: 'seeding' | 'catching_up' | 'serving' | 'stopped';
    readonly stopped?: string;
  }[];
}

export async function clusterView(client: HttpClient): Promise<ClusterView> {
  const { status, text } = await client.request('GET', '/cluster');
  if (status !== 200) throw new Error(`GET /cluster: HTTP ${status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { result: ClusterView }).result;
}

/** Every replica the view lists has applied its log's last entry (the lag is 0); a stopped replica throws. */
export function caughtUp(view: ClusterView): boolean {
  for (const r of view.replicas) {
    if (r.state === 'stopped') throw new Error(`node ${view.node}: replica ${r.collection}/${r.shard} stopped: ${r.stopped ?? '?'}`);
  }
  return view.replicas.every((r) => r.lag === 0 && r.state === 'serving');
}

/** GET /cluster answers that failed while a wait polled (a node answering 500, or not at all), and the first one's message. */
export interface PollFailures {
  count: number;
  first: string | null;
}

export function pollFailures(): PollFailures {
  return { count: 0, first: null };
}

/** `clusterView`, or undefined (counted in `failures`) when the node does not answer 200. */
export async function tryClusterView(client: HttpClient, failures: PollFailures): Promise<ClusterView | undefined> {
  try {
    return await clusterView(client);
  } catch (error) {
    failures.count++;
    failures.first ??= error instanceof Error ? error.message : String(error);
    return undefined;
  }
}

/**
 * Polls `GET /cluster` on every client until each node's replicas have all caught up; the seconds
 * waited. A poll that fails is counted in `failures` and tried again. `log` hears the total lag every 5 s.
 */
export async function waitCaughtUp(
  clients: readonly HttpClient[],
  timeoutMs: number,
  log: (message: string) => void,
  failures: PollFailures = pollFailures(),
): Promise<number> {
  const t0 = performance.now();
  let said = t0;
  for (;;) {
    const views = await Promise.all(clients.map((c) => tryClusterView(c, failures)));
    if (views.every((v) => v !== undefined && caughtUp(v))) return (performance.now() - t0) / 1000;
    const now = performance.now();
    const lag = views.flatMap((v) => v?.replicas ?? []).reduce((sum, r) => sum + (r.lag ?? 0), 0);
    const failing = failures.count === 0 ? '' : `; ${failures.count} GET /cluster failed so far (first: ${failures.first})`;
    if (now - t0 > timeoutMs) throw new Error(`replicas not caught up within ${timeoutMs} ms (lag ${lag} entries${failing})`);
    if (now - said > 5000) {
      said = now;
      log(`waiting for the replicas: ${lag} entries behind${failing}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export interface TimelineRow {
  /** The bucket, in seconds from the origin (the fault). */
  readonly from_s: number;
  readonly to_s: number;
  readonly requests: number;
  readonly errors: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
}

/** Samples in buckets of `bucketMs` by the time they were sent. */
export function timeline(samples: readonly RequestSample[], bucketMs: number): TimelineRow[] {
  const buckets = new Map<number, RequestSample[]>();
  for (const s of samples) {
    const b = Math.floor(s.at_ms / bucketMs);
    const list = buckets.get(b);
    if (list === undefined) buckets.set(b, [s]);
    else list.push(s);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([b, list]) => {
      const ms = list.map((s) => s.ms);
      return {
        from_s: round((b * bucketMs) / 1000, 3),
        to_s: round(((b + 1) * bucketMs) / 1000, 3),
        requests: list.length,
        errors: list.filter((s) => !s.ok).length,
        p50_ms: round(quantile(ms, 0.5), 2),
        p99_ms: round(quantile(ms, 0.99), 2),
        max_ms: round(quantile(ms, 1), 2),
      };
    });
}

/** The samples sent in [fromMs, toMs) on their clock: how many, how many failed, latency. */
export function window(samples: readonly RequestSample[], fromMs: number, toMs: number) {
  const inside = samples.filter((s) => s.at_ms >= fromMs && s.at_ms < toMs);
  return { requests: inside.length, errors: inside.filter((s) => !s.ok).length, latency: summarizeLatencies(inside.map((s) => s.ms)) };
}

/**
 * The longest time, in ms, without a successful answer (answers at `at_ms + ms`): between two
 * successive ones, or from the last one to the last answer of any kind (the run's end), when
 * everything after it failed.
 */
export function longestGap(samples: readonly RequestSample[]): { ms: number; from_ms: number } {
  const done = samples
    .filter((s) => s.ok)
    .map((s) => s.at_ms + s.ms)
    .sort((a, b) => a - b);
  const end = Math.max(...samples.map((s) => s.at_ms + s.ms));
  if (done.length > 0 && end > (done.at(-1) as number)) done.push(end);
  let best = { ms: 0, from_ms: Number.NaN };
  for (let i = 1; i < done.length; i++) {
    const gap = (done[i] as number) - (done[i - 1] as number);
    if (gap > best.ms) best = { ms: round(gap, 1), from_ms: round(done[i - 1] as number, 1) };
  }
  return best;
}

/** CPU milliseconds the processes have used so far, summed (NaN off Linux). */
export function cpuMsOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + procCpuMs(pid), 0);
}
