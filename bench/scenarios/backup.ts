/**
 * `npm run bench -- backup`: `kith backup --url` of a 1M-point database while a client upserts,
 * and what it does to search latency.
 *
 * The database: n synthetic vectors (the peers' Gaussian mixture, unit length; default 1,000,000
 * × 32) loaded with `kith import .fvecs --db` into a cosine collection with the exact (flat) index.
 * Flat and 32 dimensions so that the file builds in about a minute on two cores: an HNSW graph of
 * 1M points would take the better part of an hour here, and a backup copies pages whatever index
 * they hold (the graph snapshot is one more sub-database). The file is ~0.2 GB.
 *
 * A spawned server then serves it, and three phases of `--seconds` each are measured with one
 * search client (sequential keep-alive requests, limit 10, random queries from the mixture):
 *
 * 1. idle: searches only;
 * 2. writes: one more client upserting batches of `--write-batch` new points, each awaited;
 * 3. backup: the same writer, and `kith backup DEST --url` run to its end; its time, the copy's
 *    size, the writer's batches acknowledged during it, and the searches during it.
 *
 * The copy is then verified with `kith check` (time reported) and must hold at least every point
 * acknowledged before the backup started.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SeededRng } from '../../src/core/rng.js';
import { GaussianMixture, PEER_MIXTURE } from '../datasets/synthetic.js';
import { createClient, type HttpClient, requestJson } from '../lib/http-client.js';
import { loadAverage, machineInfo } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { parseOptions, positiveInt, type Scenario } from '../lib/scenario.js';
import { startServer } from '../lib/server.js';
import { quantile, round } from '../lib/stats.js';
import { writeFvecs } from '../lib/vector-files.js';

const KITH_JS = fileURLToPath(new URL('../../src/cli/entry.js', import.meta.url));

const OPTIONS = `  --n <n>               points in the database (default 1000000)
  --dim <d>             dimension (default 32)
  --seconds <s>         length of the idle and writes phases (default 15)
  --write-batch <b>     points per upsert of the writer (default 100)
  --no-write            do not write bench/results/<date>-backup.json`;

function log(message: string): void {
  process.stderr.write(`[backup] ${message}\n`);
}

function runKith(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KITH_JS, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`kith ${args.join(' ')} exited ${code}:\n${output}`))));
  });
}

interface Latencies {
  readonly searches: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
}

function summarize(ms: number[]): Latencies {
  return { searches: ms.length, p50_ms: round(quantile(ms, 0.5), 2), p99_ms: round(quantile(ms, 0.99), 2), max_ms: round(Math.max(...ms), 2) };
}

/** Runs `search` back to back until `until` resolves; returns each request's milliseconds. */
async function searchLoop(client: HttpClient, queries: readonly Float32Array[], until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const ms: number[] = [];
  const rng = new SeededRng(7);
  while (!done) {
    const q = queries[rng.int(queries.length)] as Float32Array;
    const body = Buffer.from(JSON.stringify({ vector: Array.from(q), limit: 10 }));
    const started = performance.now();
    const { status, text } = await client.request('POST', '/collections/c/points/search', body);
    ms.push(performance.now() - started);
    if (status !== 200) throw new Error(`search: HTTP ${status}: ${text.slice(0, 300)}`);
  }
  return ms;
}

/** Upserts batches of new points back to back until `stop()`; counts acknowledged points. */
function startWriter(url: string, dim: number, firstId: number, batch: number) {
  const client = createClient('http', url, 1);
  const rng = new SeededRng(11);
  let stopped = false;
  let acked = 0;
  const done = (async () => {
    for (let next = firstId; !stopped; next += batch) {
      const points = Array.from({ length: batch }, (_, i) => ({ id: next + i, vector: Array.from({ length: dim }, () => rng.gaussian()) }));
      await requestJson(client, 'PUT', '/collections/c/points', { points });
      acked += batch;
    }
  })().finally(() => client.close());
  return {
    get acked() {
      return acked;
    },
    async stop(): Promise<number> {
      stopped = true;
      await done;
      return acked;
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const backupScenario: Scenario = {
  name: 'backup',
  summary: 'kith backup --url of a 1M-point database under an upsert load: backup time, search p99 during it vs idle',
  options: OPTIONS,
  async run(argv) {
    const opts = parseOptions(argv, {
      n: { type: 'string' },
      dim: { type: 'string' },
      seconds: { type: 'string' },
      'write-batch': { type: 'string' },
      'no-write': { type: 'boolean' },
    });
    const n = positiveInt(opts.n, '--n', 1_000_000);
    const dim = positiveInt(opts.dim, '--dim', 32);
    const seconds = positiveInt(opts.seconds, '--seconds', 15);
    const writeBatch = positiveInt(opts['write-batch'], '--write-batch', 100);
    const machine = machineInfo(REPO_DIR);
    log(`load ${machine.load_average.join(' ')}; ${n} × ${dim}, flat, cosine`);
    const dir = mkdtempSync(join(tmpdir(), 'kith-bench-backup-'));
    try {
      const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim });
      const fvecs = join(dir, 'base.fvecs');
      await writeFvecs(fvecs, mixture.base(n).data, dim);
      const queries = mixture.queries(1000).rows;
      const dbPath = join(dir, 'live.db');
      let started = performance.now();
      await runKith(['import', fvecs, '--collection', 'c', '--dim', String(dim), '--distance', 'cosine', '--batch', '10000', '--db', dbPath, '--quiet']);
      const buildSeconds = (performance.now() - started) / 1000;
      rmSync(fvecs);
      log(`built in ${buildSeconds.toFixed(1)} s: ${(statSync(dbPath).size / 1048576).toFixed(0)} MiB`);

      const server = await startServer({ dbPath, timeoutMs: 600_000 });
      log(`server ready in ${(server.readyMs / 1000).toFixed(1)} s`);
      const searcher = createClient('http', server.url, 1);
      try {
        // Warm-up, then idle.
        await searchLoop(searcher, queries, sleep(2000));
        const loadIdle = loadAverage();
        const idle = summarize(await searchLoop(searcher, queries, sleep(seconds * 1000)));
        log(`idle: ${JSON.stringify(idle)}`);

        const writer = startWriter(server.url, dim, n, writeBatch);
        const loadWrites = loadAverage();
        const writes = summarize(await searchLoop(searcher, queries, sleep(seconds * 1000)));
        log(`writes: ${JSON.stringify(writes)}, ${writer.acked} points written`);

        const dest = join(dir, 'copy.db');
        const ackedBefore = writer.acked;
        const loadBackup = loadAverage();
        started = performance.now();
        const backup = runKith(['backup', dest, '--url', server.url, '--quiet']);
        const during = summarize(await searchLoop(searcher, queries, backup));
        await backup;
        const backupSeconds = (performance.now() - started) / 1000;
        const ackedDuring = writer.acked - ackedBefore;
        const written = await writer.stop();
        log(`backup: ${backupSeconds.toFixed(1)} s, ${JSON.stringify(during)}, ${ackedDuring} points written during it`);

        started = performance.now();
        const checkOut = await runKith(['check', dest]);
        const checkSeconds = (performance.now() - started) / 1000;
        const records = Number(/collection "c" \(uid \d+[^)]*\): (\d+) point record/.exec(checkOut)?.[1] ?? Number.NaN);
        if (!(records >= n + ackedBefore)) throw new Error(`the copy holds ${records} points; ${n + ackedBefore} were acknowledged before the backup`);
        log(`check: ${checkSeconds.toFixed(1)} s, ${records} points in the copy`);

        const result = {
          scenario: 'backup',
          machine,
          n,
          dim,
          index: 'flat',
          distance: 'cosine',
          build_s: round(buildSeconds, 1),
          db_bytes: statSync(dbPath).size,
          server_ready_s: round(server.readyMs / 1000, 1),
          phases: {
            idle: { ...idle, load: loadIdle },
            writes: { ...writes, load: loadWrites },
            backup: { ...during, load: loadBackup, backup_s: round(backupSeconds, 2), copy_bytes: statSync(dest).size, points_written_during: ackedDuring },
          },
          write_batch: writeBatch,
          points_written_total: written,
          check_s: round(checkSeconds, 1),
          copy_points: records,
          load_after: loadAverage(),
        };
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        if (opts['no-write'] !== true) log(`wrote ${writeResult('backup', result)}`);
      } finally {
        searcher.close();
        await server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
