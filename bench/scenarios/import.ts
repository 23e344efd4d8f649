/**
 * `npm run bench -- import`: `kith import` throughput against the HTTP upsert path, on the same
 * file and the same batches.
 *
 * The data: n synthetic vectors (the peers' Gaussian mixture, unit length, default 100,000 × 128)
 * written once as `.fvecs` and as JSON Lines (ids 0…n-1). Into a fresh cosine collection with the
 * default HNSW index (m 16, ef_construction 200) — or, with `--index flat`, the exact index, whose
 * inserts cost next to nothing, so that what is left is reading, parsing, transport and durable
 * writes — for each file:
 *
 * - `kith import FILE --db NEW.db` (embedded: the command opens the file itself; its time includes
 *   starting Node, opening, and closing, which saves the graph snapshot);
 * - `kith import FILE --url` into a spawned server (the command reads, the server writes);
 * - the HTTP path: this process reads the same file with the same reader and sends each batch as
 *   one `PUT /collections/c/points` over a keep-alive connection, awaiting each (as the command
 *   does: one durable batch at a time).
 *
 * Points/s = n / wall time from start to the last acknowledged batch (process exit for the command).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFvecs } from '../../src/cli/readers/binary.js';
import { readJsonl } from '../../src/cli/readers/jsonl.js';
import type { SourcePoint } from '../../src/cli/readers/source.js';
import { GaussianMixture, PEER_MIXTURE } from '../datasets/synthetic.js';
import { createClient, requestJson } from '../lib/http-client.js';
import { loadAverage, machineInfo } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { nameList, oneOf, parseOptions, positiveInt, type Scenario } from '../lib/scenario.js';
import { startServer } from '../lib/server.js';
import { round } from '../lib/stats.js';
import { writeFvecs, writeJsonl } from '../lib/vector-files.js';

/** The compiled command line beside the compiled bench. */
const KITH_JS = fileURLToPath(new URL('../../src/cli/entry.js', import.meta.url));

const FORMATS = ['fvecs', 'jsonl'] as const;
const PATHS = ['kith-import-db', 'kith-import-url', 'http-upsert'] as const;
type Format = (typeof FORMATS)[number];
type Path = (typeof PATHS)[number];

const OPTIONS = `  --n <n>               points (default 100000)
  --dim <d>             dimension (default 128)
  --batch <b>           points per batch, all paths (default 1000)
  --formats <a,b>       ${FORMATS.join(', ')} (default: both)
  --paths <a,b,…>       ${PATHS.join(', ')} (default: all)
  --index <kind>        hnsw (default) or flat
  --no-write            do not write bench/results/<date>-import.json`;

function log(message: string): void {
  process.stderr.write(`[import] ${message}\n`);
}

interface Row {
  readonly format: Format;
  readonly path: Path;
  readonly seconds: number;
  readonly points_per_s: number;
  readonly load_before: readonly number[];
}

function runKith(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KITH_JS, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`kith ${args.join(' ')} exited ${code}:\n${output}`))));
  });
}

const CREATE = (dim: number, hnsw: boolean) => ({ name: 'c', vector_size: dim, distance: 'cosine', hnsw });

async function httpUpsert(source: AsyncIterable<SourcePoint>, url: string, batch: number): Promise<void> {
  const client = createClient('http', url, 1);
  try {
    let points: unknown[] = [];
    const send = async (): Promise<void> => {
      if (points.length === 0) return;
      await requestJson(client, 'PUT', '/collections/c/points', { points });
      points = [];
    };
    for await (const item of source) {
      points.push(item.point);
      if (points.length >= batch) await send();
    }
    await send();
  } finally {
    client.close();
  }
}

async function count(url: string): Promise<number> {
  const client = createClient('http', url, 1);
  try {
    const info = (await requestJson(client, 'GET', '/collections/c')) as { result?: { points_count?: number }; points_count?: number };
    return info.result?.points_count ?? info.points_count ?? -1;
  } finally {
    client.close();
  }
}

async function measure(format: Format, path: Path, file: string, dir: string, n: number, dim: number, batch: number, hnsw: boolean): Promise<Row> {
  const loadBefore = loadAverage();
  const reader = format === 'fvecs' ? readFvecs : readJsonl;
  let seconds: number;
  if (path === 'kith-import-db') {
    const db = join(dir, `${format}-${path}.db`);
    const started = performance.now();
    await runKith([
      'import',
      file,
      '--collection',
      'c',
      '--dim',
      String(dim),
      '--distance',
      'cosine',
      ...(hnsw ? ['--hnsw'] : []),
      '--batch',
      String(batch),
      '--db',
      db,
      '--quiet',
    ]);
    seconds = (performance.now() - started) / 1000;
    rmSync(db, { force: true });
    rmSync(`${db}-lock`, { force: true });
  } else {
    const server = await startServer();
    try {
      const client = createClient('http', server.url, 1);
      await requestJson(client, 'POST', '/collections', CREATE(dim, hnsw));
      client.close();
      const started = performance.now();
      if (path === 'kith-import-url') {
        await runKith(['import', file, '--collection', 'c', '--batch', String(batch), '--url', server.url, '--quiet']);
      } else {
        await httpUpsert(reader(file, file, dim), server.url, batch);
      }
      seconds = (performance.now() - started) / 1000;
      const stored = await count(server.url);
      if (stored !== n) throw new Error(`${path}: ${stored} points stored, expected ${n}`);
    } finally {
      await server.stop();
    }
  }
  const row = { format, path, seconds: round(seconds, 2), points_per_s: Math.round(n / seconds), load_before: loadBefore };
  log(`${format} ${path}: ${row.seconds} s, ${row.points_per_s} points/s (load ${loadBefore.join(' ')})`);
  return row;
}

export const importScenario: Scenario = {
  name: 'import',
  summary: 'kith import (--db and --url) vs HTTP upserts of the same file and batches: points/s, .fvecs and JSONL, HNSW',
  options: OPTIONS,
  async run(argv) {
    const opts = parseOptions(argv, {
      n: { type: 'string' },
      dim: { type: 'string' },
      batch: { type: 'string' },
      formats: { type: 'string' },
      paths: { type: 'string' },
      index: { type: 'string' },
      'no-write': { type: 'boolean' },
    });
    const n = positiveInt(opts.n, '--n', 100000);
    const dim = positiveInt(opts.dim, '--dim', 128);
    const batch = positiveInt(opts.batch, '--batch', 1000);
    const formats = opts.formats === undefined ? [...FORMATS] : nameList(opts.formats, '--formats', FORMATS);
    const paths = opts.paths === undefined ? [...PATHS] : nameList(opts.paths, '--paths', PATHS);
    const index = oneOf(opts.index, '--index', ['hnsw', 'flat'] as const, 'hnsw');
    const machine = machineInfo(REPO_DIR);
    log(`load ${machine.load_average.join(' ')}; ${n} × ${dim}, batches of ${batch}, ${index}`);
    const dir = mkdtempSync(join(tmpdir(), 'kith-bench-import-'));
    try {
      const data = new GaussianMixture({ ...PEER_MIXTURE, dim }).base(n).data;
      const files: Record<Format, string> = { fvecs: join(dir, 'base.fvecs'), jsonl: join(dir, 'base.jsonl') };
      await writeFvecs(files.fvecs, data, dim);
      await writeJsonl(files.jsonl, data, dim);
      log(`files: .fvecs ${(statSync(files.fvecs).size / 1048576).toFixed(1)} MiB, .jsonl ${(statSync(files.jsonl).size / 1048576).toFixed(1)} MiB`);
      const rows: Row[] = [];
      for (const format of formats) for (const path of paths) rows.push(await measure(format, path, files[format], dir, n, dim, batch, index === 'hnsw'));
      const result = {
        scenario: 'import',
        machine,
        n,
        dim,
        batch,
        index: index === 'hnsw' ? 'hnsw m=16 ef_construction=200' : 'flat',
        distance: 'cosine',
        rows,
        load_after: loadAverage(),
      };
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      if (opts['no-write'] !== true) log(`wrote ${writeResult(index === 'hnsw' ? 'import' : 'import-flat', result)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
