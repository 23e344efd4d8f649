/**
 * The `serve` scenario's load generator, run in its own process (`fork`), so that its CPU is
 * measured apart from the bench's (and reported: on a 2-core machine the client's CPU is CPU the
 * server does not get). It sends pre-encoded search bodies over `concurrency` keep-alive
 * connections (node:http), each connection taking the next body when its answer arrives, and
 * reports QPS per pass, client-side latency over every timed request, its own CPU time, and (when
 * asked) the ids of the first timed pass for recall.
 *
 * Protocol: the parent sends one `LoadJob` over IPC; the child answers one `LoadResult` and exits.
 */
import { fileURLToPath } from 'node:url';
import { createClient } from './http-client.js';
import { coresBusy, median, round, type LatencySummary, summarizeLatencies } from './stats.js';
import { closedLoop } from './closed-loop.js';

export interface LoadJob {
  readonly url: string;
  readonly path: string;
  /** Request bodies (JSON text), used in order, round robin. */
  readonly bodies: readonly string[];
  readonly concurrency: number;
  /** Untimed requests first. */
  readonly warmup: number;
  /** Timed passes over every body. */
  readonly passes: number;
  /** Return the ids of the first timed pass (`k` per body, −1 for a missing hit). */
  readonly keepIds?: number;
}

export interface LoadResult {
  readonly ok: boolean;
  readonly error?: string;
  readonly requests: number;
  readonly qps_per_pass: number[];
  readonly qps_median: number;
  readonly latency: LatencySummary;
  /** This process's CPU (user + system) over the timed passes, ms, and as cores kept busy. */
  readonly client_cpu_ms: number;
  readonly client_cores: number;
  readonly wall_seconds: number;
  readonly ids?: number[];
}

interface Envelope {
  result: { id: string }[];
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const client = createClient('http', job.url, job.concurrency);
  const bodies = job.bodies.map((b) => Buffer.from(b));
  const latencies: number[] = [];
  const qps: number[] = [];
  const k = job.keepIds ?? 0;
  const ids = k > 0 ? new Array<number>(bodies.length * k).fill(-1) : undefined;
  const pass = (count: number, record: boolean, keep: boolean): Promise<number> =>
    closedLoop(count, job.concurrency, async (i) => {
      const body = bodies[i % bodies.length] as Buffer;
      const s = performance.now();
      const { status, text } = await client.request('POST', job.path, body);
      const elapsed = performance.now() - s;
      if (status !== 200) throw new Error(`POST ${job.path}: HTTP ${status}: ${text.slice(0, 300)}`);
      if (record) latencies.push(elapsed);
      if (keep && ids !== undefined) {
        const hits = (JSON.parse(text) as Envelope).result;
        for (let j = 0; j < Math.min(k, hits.length); j++) ids[i * k + j] = Number(hits[j]?.id);
      }
    });
  try {
    await pass(job.warmup, false, false);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let p = 0; p < job.passes; p++) {
      const seconds = await pass(bodies.length, true, p === 0);
      qps.push(round(bodies.length / seconds, 1));
    }
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    return {
      ok: true,
      requests: latencies.length,
      qps_per_pass: qps,
      qps_median: round(median(qps), 1),
      latency: summarizeLatencies(latencies),
      client_cpu_ms: Math.round(cpuMs),
      client_cores: coresBusy(cpuMs, wall),
      wall_seconds: round(wall, 3),
      ...(ids === undefined ? {} : { ids }),
    };
  } finally {
    client.close();
  }
}

// As a forked child: one job in, one result out.
if (process.send !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.once('message', (job: LoadJob) => {
    runLoad(job).then(
      (result) => process.send?.(result, () => process.exit(0)),
      (error: unknown) =>
        process.send?.(
          {
            ok: false,
            error: error instanceof Error ? error.message : String(error),
            requests: 0,
            qps_per_pass: [],
            qps_median: 0,
            latency: summarizeLatencies([]),
            client_cpu_ms: 0,
            client_cores: 0,
            wall_seconds: 0,
          },
          () => process.exit(1),
        ),
    );
  });
}
