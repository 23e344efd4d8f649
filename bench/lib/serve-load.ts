/**
 * The `serve` scenario's load generator: one long-lived process (`fork`) per service, started
 * once and given every search-load job of that service, so that its CPU is measured apart from
 * the bench's (on a 2-core machine the client's CPU is CPU the server does not get) and so that it
 * is warm when it measures. A freshly forked generator runs cold code over fresh connections; the
 * server's own CPU per request, read around such a job, came out up to 2× the steady figure (246,
 * 150, 124 µs for three fresh jobs against 101 µs from a long-lived client on the same floor,
 * bench/results/2026-11-24-serve-cpu-warm-client.txt).
 *
 * A job sends pre-encoded search bodies over `concurrency` keep-alive connections (node:http, one
 * agent per service URL, kept between jobs), each connection taking the next body when its answer
 * arrives, and reports QPS per pass, client-side latency over every timed request, its own CPU
 * time, the server's CPU time over the timed passes only (read from /proc/<pid>/stat right around
 * them, so the untimed warm-up is not in it) and, when asked, the ids of the first timed pass.
 *
 * Protocol: the parent sends `{ seq, job }` messages over IPC and gets `{ seq, result }` back, one
 * job at a time; it disconnects the channel to end the process.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { closedLoop } from './closed-loop.js';
import { createClient, type HttpClient } from './http-client.js';
import { procCpuMs } from './serve-process.js';
import { coresBusy, type LatencySummary, median, round, summarizeLatencies } from './stats.js';

export interface LoadJob {
  readonly url: string;
  /** The server's process id: its CPU time is read around the timed passes. */
  readonly serverPid: number;
  readonly path: string;
  /** Request bodies (JSON text), used in order, round robin. */
  readonly bodies: readonly string[];
  readonly concurrency: number;
  /** Untimed requests first. */
  readonly warmup: number;
  /** Timed passes over every body (0: a warm-up job only). */
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
  /** The server's CPU (all threads) over the timed passes, ms. */
  readonly server_cpu_ms: number;
  readonly wall_seconds: number;
  readonly ids?: number[];
}

/** The result of a job that did not run. */
export function failedLoad(reason: string): LoadResult {
  return {
    ok: false,
    error: reason,
    requests: 0,
    qps_per_pass: [],
    qps_median: 0,
    latency: summarizeLatencies([]),
    client_cpu_ms: 0,
    client_cores: 0,
    server_cpu_ms: 0,
    wall_seconds: 0,
  };
}

interface Envelope {
  result: { id: string }[];
}

/** Runs one job over `client` (whose agent holds at least `job.concurrency` sockets). */
async function runLoad(client: HttpClient, job: LoadJob): Promise<LoadResult> {
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
  await pass(job.warmup, false, false);
  const serverCpu0 = procCpuMs(job.serverPid);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let p = 0; p < job.passes; p++) {
    const seconds = await pass(bodies.length, true, p === 0);
    qps.push(round(bodies.length / seconds, 1));
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const serverCpu = procCpuMs(job.serverPid) - serverCpu0;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return {
    ok: true,
    requests: latencies.length,
    qps_per_pass: qps,
    qps_median: round(median(qps), 1),
    latency: summarizeLatencies(latencies),
    client_cpu_ms: Math.round(cpuMs),
    client_cores: coresBusy(cpuMs, wall),
    server_cpu_ms: Math.round(serverCpu),
    wall_seconds: round(wall, 3),
    ...(ids === undefined ? {} : { ids }),
  };
}

interface JobMessage {
  readonly seq: number;
  readonly job: LoadJob;
}

interface ResultMessage {
  readonly seq: number;
  readonly result: LoadResult;
}

const WORKER = fileURLToPath(import.meta.url);

/** The parent's handle on one long-lived generator process. */
export class LoadGenerator {
  private seq = 0;
  private readonly pending = new Map<number, (result: LoadResult) => void>();
  private exitReason: string | undefined;

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.pipe(process.stderr, { end: false });
    child.on('message', (message: ResultMessage) => {
      this.pending.get(message.seq)?.(message.result);
      this.pending.delete(message.seq);
    });
    const fail = (reason: string): void => {
      this.exitReason = reason;
      for (const resolve of this.pending.values()) resolve(failedLoad(reason));
      this.pending.clear();
    };
    child.on('error', (error) => fail(error.message));
    child.on('exit', (code, signal) => fail(`the load generator exited with ${signal ?? `code ${code}`}`));
  }

  /** Forks the generator; `maxSockets` is the most connections a job will ask for. */
  static start(maxSockets: number): LoadGenerator {
    const child = fork(WORKER, [String(maxSockets)], { execArgv: process.execArgv, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    return new LoadGenerator(child);
  }

  run(job: LoadJob): Promise<LoadResult> {
    if (this.exitReason !== undefined) return Promise.resolve(failedLoad(this.exitReason));
    const seq = ++this.seq;
    return new Promise((resolve) => {
      this.pending.set(seq, resolve);
      this.child.send({ seq, job } satisfies JobMessage);
    });
  }

  /** Ends the process (it closes its connections and exits once the channel is gone). */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await exited;
  }
}

// As a forked child: jobs in, results out, one client (agent) per service URL kept between jobs.
if (process.send !== undefined && process.argv[1] === WORKER) {
  const maxSockets = Number(process.argv[2] ?? 1);
  let current: { url: string; client: HttpClient } | undefined;
  let queue = Promise.resolve();
  process.on('message', ({ seq, job }: JobMessage) => {
    queue = queue.then(async () => {
      if (current?.url !== job.url) {
        current?.client.close();
        current = { url: job.url, client: createClient('http', job.url, Math.max(maxSockets, job.concurrency)) };
      }
      let result: LoadResult;
      try {
        result = await runLoad(current.client, job);
      } catch (error) {
        result = failedLoad(error instanceof Error ? error.message : String(error));
      }
      process.send?.({ seq, result } satisfies ResultMessage);
    });
  });
  process.on('disconnect', () => {
    void queue.then(() => {
      current?.client.close();
      process.exit(0);
    });
  });
}
