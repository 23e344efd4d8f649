/**
 * `npm run bench -- hot-backup`: how long a hot backup of an HNSW collection takes to open,
 * against a restart of the same data, and whether the service answers its liveness probe while
 * it loads.
 *
 * 1. Build n × d (cosine, HNSW defaults, payload `{category}`) through the embedded API, in
 *    durable batches of 1,000, and close it (the close writes the graph snapshot). `--db FILE`
 *    reuses a file built before (it is copied, never changed).
 * 2. Serve a copy of it (`-threads`, default the cores) and time spawn → `GET /readyz` 200.
 * 3. Write: one client upserts batches of `--write-batch` points back to back for
 *    `--write-seconds`, half of each batch new vectors for existing ids, half new ids; then
 *    `POST /backup` while it keeps writing; the writer stops when the backup is downloaded.
 * 4. Stop the service (SIGTERM: it saves the graph) and serve the live file again: the restart.
 * 5. Serve a copy of the backup: the restore. Its load report (graph nodes taken from the
 *    snapshot, nodes re-inserted) is read from the service's log.
 * 6. With `--rebuild`: serve a copy of the live file without its snapshots (lib/lmdb-snapshots.ts),
 *    so every point is inserted again: the longest load, and the most graph work between probes.
 *
 * Each start is probed from spawn: `GET /healthz` every 20 ms (the first answer is when it
 * listened; the slowest answer says how long the event loop stalled), `GET /readyz` until 200.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { GaussianMixture, PEER_MIXTURE } from '../datasets/synthetic.js';
import { createClient, requestJson } from '../lib/http-client.js';
import { copyWithoutSnapshots } from '../lib/lmdb-snapshots.js';
import { loadAverage, machineInfo } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { parseOptions, positiveInt, type Scenario } from '../lib/scenario.js';
import { freePort, MAIN_JS } from '../lib/server.js';
import { quantile, round } from '../lib/stats.js';

const OPTIONS = `  --n <n>               points (default 100000)
  --dim <d>             dimension (default 128)
  --write-seconds <s>   how long the writer runs before the backup (default 20)
  --write-batch <b>     points per upsert of the writer (default 100)
  --threads <t>         -threads of the service (default: the service's default, the cores)
  --db <file>           a database built before (collection "c"); copied, never changed
  --keep <file>         keep the built database at this path (to pass as --db later)
  --rebuild             also start on a copy without graph snapshots (every point re-inserted)
  --no-write            do not write bench/results/<date>-hot-backup.json`;

const COLLECTION = 'c';

function log(message: string): void {
  process.stderr.write(`[hot-backup] ${message}\n`);
}

async function build(path: string, n: number, dim: number): Promise<number> {
  const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim });
  const base = mixture.base(n);
  const categories = mixture.categories(n);
  const db = Database.open(path, { threads: 2 });
  await db.createCollection({ name: COLLECTION, vector_size: dim, distance: 'cosine', hnsw: true });
  const collection = db.collection(COLLECTION);
  const started = performance.now();
  let lastLog = started;
  for (let start = 0; start < n; start += 1000) {
    const batch = [];
    for (let i = start; i < Math.min(n, start + 1000); i++)
      batch.push({ id: i, vector: Array.from(base.rows[i] as Float32Array), payload: { category: categories[i] } });
    await collection.upsert(batch);
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`built ${start + batch.length} of ${n}`);
    }
  }
  await db.close();
  return (performance.now() - started) / 1000;
}

export interface StartReport {
  /** Spawn → the first answer of GET /healthz (the listener is open). */
  readonly listening_ms: number;
  /** Spawn → the first 200 of GET /readyz. */
  readonly ready_ms: number;
  /** /healthz answers while loading (from the first to the first 200 of /readyz) and the slowest of them. */
  readonly healthz_answers: number;
  readonly healthz_max_ms: number;
  readonly healthz_p99_ms: number;
  /** What the service logged when every collection was loaded (null when it logs none). */
  readonly loaded: Record<string, unknown> | null;
  /** Its per-collection load report ("collection loaded"). */
  readonly collection: Record<string, unknown> | null;
}

interface Service {
  readonly url: string;
  readonly start: StartReport;
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<number | string>;
}

function lastJsonLine(output: string, msg: string): Record<string, unknown> | null {
  const lines = output.split('\n').filter((line) => line.includes(`"msg":"${msg}"`));
  const line = lines[lines.length - 1];
  return line === undefined ? null : (JSON.parse(line) as Record<string, unknown>);
}

async function serve(dbPath: string, threads: number | undefined): Promise<Service> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [MAIN_JS, '-port', String(port), '-host', '127.0.0.1', '-db', dbPath, ...(threads === undefined ? [] : ['-threads', String(threads)])];
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, KITH_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  let listeningMs = Number.NaN;
  let readyMs = Number.NaN;
  const healthz: number[] = [];
  const deadline = spawnedAt + 900_000;
  while (Number.isNaN(readyMs)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited before it was ready:\n${output.slice(-3000)}`);
    if (performance.now() > deadline) throw new Error(`not ready within 900 s:\n${output.slice(-3000)}`);
    const sent = performance.now();
    try {
      const health = await fetch(`${url}/healthz`);
      await health.arrayBuffer();
      if (health.ok) {
        healthz.push(performance.now() - sent);
        if (Number.isNaN(listeningMs)) listeningMs = sent - spawnedAt;
        const ready = await fetch(`${url}/readyz`);
        await ready.arrayBuffer();
        if (ready.ok) readyMs = performance.now() - spawnedAt;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // /readyz turns 200 as the load ends; the "database loaded" line follows in the same moment.
  for (let i = 0; i < 100 && !output.includes('"msg":"database loaded"'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return {
    url,
    child,
    output: () => output,
    start: {
      listening_ms: round(listeningMs, 0),
      ready_ms: round(readyMs, 0),
      healthz_answers: healthz.length,
      healthz_max_ms: round(Math.max(...healthz), 1),
      healthz_p99_ms: round(quantile(healthz, 0.99), 1),
      loaded: lastJsonLine(output, 'database loaded'),
      collection: lastJsonLine(output, 'collection loaded'),
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

function describe(label: string, s: StartReport): void {
  const c = s.collection;
  const graph = c === null ? '' : `; graph: ${String(c.fromSnapshot)} nodes from the snapshot, ${String(c.inserted)} re-inserted`;
  const stall = s.loaded?.maxEventLoopDelayMs === undefined ? '' : `; its longest event-loop stall ${String(s.loaded.maxEventLoopDelayMs)} ms`;
  log(
    `${label}: listening after ${(s.listening_ms / 1000).toFixed(2)} s, ready after ${(s.ready_ms / 1000).toFixed(2)} s; ` +
      `/healthz answered ${s.healthz_answers}× (slowest ${s.healthz_max_ms} ms)${graph}${stall}`,
  );
}

export const hotBackupScenario: Scenario = {
  name: 'hot-backup',
  summary: 'HNSW: opening a hot backup taken under writes vs a restart; /healthz during the load',
  options: OPTIONS,
  async run(argv) {
    const opts = parseOptions(argv, {
      n: { type: 'string' },
      dim: { type: 'string' },
      'write-seconds': { type: 'string' },
      'write-batch': { type: 'string' },
      threads: { type: 'string' },
      db: { type: 'string' },
      keep: { type: 'string' },
      rebuild: { type: 'boolean' },
      'no-write': { type: 'boolean' },
    });
    const n = positiveInt(opts.n, '--n', 100_000);
    const dim = positiveInt(opts.dim, '--dim', 128);
    const writeSeconds = positiveInt(opts['write-seconds'], '--write-seconds', 20);
    const writeBatch = positiveInt(opts['write-batch'], '--write-batch', 100);
    const threads = opts.threads === undefined ? undefined : Number(opts.threads);
    const machine = machineInfo(REPO_DIR);
    log(`load ${machine.load_average.join(' ')}; ${n} × ${dim}, hnsw, cosine`);
    const dir = mkdtempSync(join(tmpdir(), 'kith-bench-hot-backup-'));
    try {
      const live = join(dir, 'live.db');
      let buildSeconds: number | null = null;
      if (typeof opts.db === 'string') {
        copyFileSync(opts.db, live);
      } else {
        buildSeconds = await build(live, n, dim);
        log(`built in ${buildSeconds.toFixed(1)} s`);
        if (typeof opts.keep === 'string') copyFileSync(live, opts.keep);
      }

      let service = await serve(live, threads);
      const first = service.start;
      describe('first start', first);
      const writer = createClient('http', service.url, 1);
      const rng = new SeededRng(11);
      let acked = 0;
      let stop = false;
      let nextId = 10_000_000;
      const writing = (async () => {
        while (!stop) {
          const points = Array.from({ length: writeBatch }, (_, i) => ({
            id: i % 2 === 0 ? rng.int(n) : nextId++,
            vector: Array.from({ length: dim }, () => rng.gaussian()),
            payload: { category: rng.int(10) },
          }));
          await requestJson(writer, 'PUT', `/collections/${COLLECTION}/points`, { points });
          acked += writeBatch;
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, writeSeconds * 1000));
      const ackedBefore = acked;
      const backupStarted = performance.now();
      const response = await fetch(`${service.url}/backup`, { method: 'POST' });
      const bytes = Buffer.from(await response.arrayBuffer());
      const backupSeconds = (performance.now() - backupStarted) / 1000;
      if (response.status !== 200) throw new Error(`POST /backup: HTTP ${response.status}: ${bytes.toString('utf8', 0, 300)}`);
      stop = true;
      await writing;
      writer.close();
      const backupPath = join(dir, 'backup.db');
      writeFileSync(backupPath, bytes);
      log(
        `${ackedBefore} points written before the backup, ${acked - ackedBefore} during it (${backupSeconds.toFixed(1)} s, ${(bytes.length / 2 ** 20).toFixed(0)} MiB)`,
      );
      const exit = await service.stop();
      if (exit !== 0) throw new Error(`the service exited with ${exit}:\n${service.output().slice(-2000)}`);

      service = await serve(live, threads);
      const restart = service.start;
      describe('restart', restart);
      await service.stop();

      service = await serve(backupPath, threads);
      const restore = service.start;
      describe('restore of the hot backup', restore);
      await service.stop();

      let rebuild: StartReport | null = null;
      if (opts.rebuild === true) {
        const bare = join(dir, 'no-snapshots.db');
        await copyWithoutSnapshots(live, bare);
        service = await serve(bare, threads);
        rebuild = service.start;
        describe('start without snapshots', rebuild);
        await service.stop();
      }

      const result = {
        scenario: 'hot-backup',
        machine,
        n,
        dim,
        threads: threads ?? 'default',
        build_s: buildSeconds === null ? null : round(buildSeconds, 1),
        db_bytes: statSync(live).size,
        writes: {
          seconds: writeSeconds,
          batch: writeBatch,
          points_before_backup: ackedBefore,
          points_during_backup: acked - ackedBefore,
          backup_s: round(backupSeconds, 2),
        },
        first_start: first,
        restart,
        restore,
        restore_over_restart: round(restore.ready_ms / restart.ready_ms, 2),
        rebuild,
        load_after: loadAverage(),
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
      if (opts['no-write'] !== true) log(`wrote ${writeResult('hot-backup', result)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
