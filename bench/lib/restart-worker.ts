/**
 * One restart of the embedded engine, in a process of its own (forked by bench/scenarios/restart.ts
 * with --expose-gc): a restart is always a fresh process, so each timed `Database.open` starts with
 * a cold JIT and an empty heap, as the service's would, and its RSS is not mixed with the bench's
 * (which holds the base vectors and the ground truth).
 *
 * Job `open`: time `Database.open(path)`, report its load report (did the graph come from the
 * snapshot?), memory, and the hits of the recall queries at a given ef; then close (timed; with
 * nothing changed, close writes no snapshot). Job `phases`: where start-up time goes, see
 * restart-phases.ts. Progress goes to stderr; the result goes back over IPC.
 */
import { Database } from '../../src/db/database.js';
import { measurePhases, type PhaseReport } from './restart-phases.js';
import { procRss } from './server.js';

export interface RestartJob {
  readonly kind: 'open' | 'phases';
  readonly path: string;
  readonly collection: string;
  /** Recall queries (rows of `dim` numbers), searched after the open with `limit` k and `ef`. */
  readonly queries: readonly (readonly number[])[];
  readonly k: number;
  readonly ef: number;
  /** Search threads of the open (`Database.open` option; 0: none). */
  readonly threads: number;
}

export interface OpenReport {
  readonly kind: 'open';
  readonly open_ms: number;
  readonly close_ms: number;
  readonly load: { points: number; fromSnapshot: number; inserted: number; snapshotRejected: string | null };
  readonly warnings: readonly string[];
  readonly memory: { points: number; vector_bytes_allocated: number; graph_bytes_allocated: number; graph_nodes: number };
  /** Process RSS before the open and after it (after a full GC both times). */
  readonly rss_before_bytes: number;
  readonly rss_after_bytes: number;
  readonly heap_used_after_bytes: number;
  /** After the open: private memory, and file pages mapped in (the LMDB file it read), when /proc exists. */
  readonly rss_anon_after_bytes: number | null;
  readonly rss_file_after_bytes: number | null;
  readonly hits: readonly (readonly { id: string; score: number }[])[];
}

export type RestartResult = OpenReport | { kind: 'phases'; phases: PhaseReport } | { kind: 'error'; error: string };

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

async function timedOpen(job: RestartJob): Promise<OpenReport> {
  const warnings: string[] = [];
  collectGarbage();
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const db = Database.open(job.path, { threads: job.threads, onWarning: (message) => warnings.push(message) });
  const openMs = performance.now() - t0;
  try {
    const report = db.loadReports.get(job.collection);
    if (report === undefined) throw new Error(`no collection ${job.collection} in ${job.path}`);
    const collection = db.collection(job.collection);
    collectGarbage();
    const usage = process.memoryUsage();
    const proc = procRss(process.pid);
    const stats = collection.memoryStats();
    const hits = job.queries.map((q) =>
      collection.search({ vector: q, limit: job.k, params: { ef: job.ef } }).map((h) => ({ id: String(h.id), score: h.score })),
    );
    const c0 = performance.now();
    await db.close();
    return {
      kind: 'open',
      open_ms: openMs,
      close_ms: performance.now() - c0,
      load: {
        points: report.points,
        fromSnapshot: report.fromSnapshot,
        inserted: report.inserted,
        snapshotRejected: report.snapshotRejected ?? null,
      },
      warnings,
      memory: {
        points: stats.points,
        vector_bytes_allocated: stats.vectorBytesAllocated,
        graph_bytes_allocated: stats.graphBytesAllocated,
        graph_nodes: stats.graphNodes,
      },
      rss_before_bytes: rssBefore,
      rss_after_bytes: usage.rss,
      heap_used_after_bytes: usage.heapUsed,
      rss_anon_after_bytes: proc?.rss_anon_bytes ?? null,
      rss_file_after_bytes: proc?.rss_file_bytes ?? null,
      hits,
    };
  } finally {
    await db.close();
  }
}

async function runJob(job: RestartJob): Promise<RestartResult> {
  if (job.kind === 'open') return timedOpen(job);
  return { kind: 'phases', phases: await measurePhases(job.path, job.collection, collectGarbage) };
}

/** Forked: one job in over IPC, one result out, then exit. */
if (process.send !== undefined) {
  process.once('message', (job: RestartJob) => {
    runJob(job).then(
      (result) => process.send?.(result, () => process.disconnect()),
      (error: unknown) => {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        process.stderr.write(`[restart] worker failed: ${text}\n`);
        process.send?.({ kind: 'error', error: text } satisfies RestartResult, () => process.disconnect());
      },
    );
  });
}
