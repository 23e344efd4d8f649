/**
 * `npm run bench -- writes`: what the graph's upkeep costs a writer, and whether every point stays
 * findable, through the embedded API on real files (durable writes, as the service does them).
 *
 * 1. Single-point upsert latency per metric: an HNSW collection (defaults: m 16, ef_construction
 *    200) is loaded with n points of the peers' Gaussian mixture (128-d, unit length) in batches
 *    of 1,000, then `--singles` new points are upserted one request at a time, each awaited
 *    (durable before the next). p50 and p99 of those, per metric and size.
 * 2. Reachability on the data users have: sets of copies of one vector, non-negative vectors
 *    under Dot, zero and tiny vectors, one dimension; upserted in batches of 100, a third deleted
 *    and as many re-upserted with new vectors. The share of live points that a search with
 *    limit = ef = live points returns (1.0: every point reachable), and whether those are the
 *    exact answer (the same ids as `params.exact`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { GaussianMixture, PEER_MIXTURE } from '../datasets/synthetic.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { nameList, parseOptions, positiveInt, positiveIntList, type Scenario } from '../lib/scenario.js';
import { quantile, round } from '../lib/stats.js';

const METRICS = ['cosine', 'euclid', 'dot'] as const;
const NASTY = ['copies', 'dot-nonneg', 'zero-tiny', 'dim1'] as const;
type Metric = (typeof METRICS)[number];

const OPTIONS = `  --sizes <n,n,…>        points loaded before the single upserts (default 10000,100000)
  --metrics <a,b,…>      ${METRICS.join(', ')} (default: all)
  --singles <s>          single-point upserts timed per metric and size (default 300)
  --nasty <a,b,…>        reachability sets: ${NASTY.join(', ')} (default: all)
  --no-write             do not write bench/results/<date>-writes.json`;

function log(message: string): void {
  process.stderr.write(`[writes] ${message}\n`);
}

interface Latency {
  readonly metric: Metric;
  readonly n: number;
  readonly load_s: number;
  readonly singles: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
}

interface Reachability {
  readonly set: string;
  readonly metric: Metric;
  readonly live: number;
  readonly found: number;
  readonly share: number;
  readonly exact: boolean;
}

async function withDatabase<T>(body: (db: Database) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'kith-bench-writes-'));
  const db = Database.open(join(dir, 'kith.db'));
  try {
    return await body(db);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function singleUpserts(metric: Metric, n: number, singles: number): Promise<Latency> {
  const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim: 128 });
  const base = mixture.base(n + singles);
  return withDatabase(async (db) => {
    await db.createCollection({ name: 'c', vector_size: 128, distance: metric, hnsw: true });
    const c = db.collection('c');
    const t0 = performance.now();
    for (let i = 0; i < n; i += 1000) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + 1000); j++) batch.push({ id: j, vector: Array.from(base.rows[j] as Float32Array) });
      await c.upsert(batch);
    }
    const loadS = (performance.now() - t0) / 1000;
    const ms: number[] = [];
    for (let j = n; j < n + singles; j++) {
      const vector = Array.from(base.rows[j] as Float32Array);
      const t = performance.now();
      await c.upsert([{ id: j, vector }]);
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    const result = {
      metric,
      n,
      load_s: round(loadS, 1),
      singles,
      p50_ms: round(quantile(ms, 0.5), 2),
      p99_ms: round(quantile(ms, 0.99), 2),
      max_ms: round(ms[ms.length - 1] as number, 2),
    };
    log(`${metric} n=${n}: loaded in ${result.load_s} s; single upsert p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, max ${result.max_ms} ms`);
    return result;
  });
}

/** The vectors of a nasty set and the metrics it is run under. */
function nastySet(name: (typeof NASTY)[number], rng: SeededRng): { dim: number; vectors: number[][]; metrics: readonly Metric[] } {
  switch (name) {
    case 'copies': {
      const copy = Array.from({ length: 8 }, () => rng.gaussian());
      return {
        dim: 8,
        metrics: METRICS,
        vectors: Array.from({ length: 2000 }, (_, i) => (i % 2 === 0 ? copy : Array.from({ length: 8 }, () => rng.gaussian()))),
      };
    }
    case 'dot-nonneg':
      return { dim: 16, metrics: ['dot'], vectors: Array.from({ length: 3000 }, () => Array.from({ length: 16 }, () => rng.next())) };
    case 'zero-tiny':
      return {
        dim: 4,
        metrics: METRICS,
        vectors: Array.from({ length: 2000 }, (_, i) =>
          Array.from({ length: 4 }, () => (i % 3 === 0 ? 0 : i % 3 === 1 ? rng.gaussian() * 1e-30 : rng.gaussian())),
        ),
      };
    case 'dim1':
      return { dim: 1, metrics: ['euclid', 'dot'], vectors: Array.from({ length: 2000 }, () => [rng.int(7) - 3]) };
  }
}

async function reachability(name: (typeof NASTY)[number], metric: Metric, seed: number): Promise<Reachability> {
  const rng = new SeededRng(seed);
  const set = nastySet(name, rng);
  return withDatabase(async (db) => {
    await db.createCollection({ name: 'c', vector_size: set.dim, distance: metric, hnsw: true });
    const c = db.collection('c');
    const points = set.vectors.map((vector, i) => ({ id: i, vector }));
    for (let i = points.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [points[i], points[j]] = [points[j] as (typeof points)[number], points[i] as (typeof points)[number]];
    }
    for (let i = 0; i < points.length; i += 100) await c.upsert(points.slice(i, i + 100));
    const doomed = points.filter(() => rng.next() < 1 / 3).map((p) => String(p.id));
    await c.deleteIds(doomed);
    const again = doomed.slice(0, doomed.length >> 1).map((id) => ({ id, vector: set.vectors[rng.int(set.vectors.length)] as number[] }));
    for (let i = 0; i < again.length; i += 100) await c.upsert(again.slice(i, i + 100));
    const live = c.pointsCount;
    const query = set.vectors[0] as number[];
    const hits = c.search({ vector: query, limit: live, params: { ef: live } });
    const exact = c.search({ vector: query, limit: live, params: { exact: true } });
    const found = new Set(hits.map((h) => h.id)).size;
    const result = {
      set: name,
      metric,
      live,
      found,
      share: round(found / live, 4),
      exact: hits.length === exact.length && hits.every((h, i) => h.id === exact[i]?.id),
    };
    log(`${name} (${metric}): ${found} of ${live} live points found (${result.share}), exact answer: ${result.exact}`);
    return result;
  });
}

export const writesScenario: Scenario = {
  name: 'writes',
  summary: 'single-point upsert latency (p50/p99) per metric at 10k and 100k; reachability share on nasty data',
  options: OPTIONS,
  async run(argv) {
    const values = parseOptions(argv, {
      sizes: { type: 'string' },
      metrics: { type: 'string' },
      singles: { type: 'string' },
      nasty: { type: 'string' },
      'no-write': { type: 'boolean' },
    });
    const sizes = positiveIntList(values.sizes, '--sizes', [10000, 100000]);
    const metrics = nameList(values.metrics, '--metrics', METRICS);
    const singles = positiveInt(values.singles, '--singles', 300);
    const nasty = nameList(values.nasty, '--nasty', NASTY);
    const machine = machineInfo(REPO_DIR);
    log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}`);
    const load = loadAverage();
    if (load[0] > QUIET_LOAD) log(`WARNING: 1-minute load ${load[0]} > ${QUIET_LOAD}: the machine is busy, numbers will be noisy`);
    const latencies: Latency[] = [];
    for (const n of sizes) for (const metric of metrics) latencies.push(await singleUpserts(metric, n, singles));
    const reach: Reachability[] = [];
    let seed = 1;
    for (const name of nasty) {
      const set = nastySet(name, new SeededRng(0));
      for (const metric of set.metrics) reach.push(await reachability(name, metric, seed++));
    }
    const result = { scenario: 'writes', machine, load_1m: [load[0], loadAverage()[0]], latencies, reachability: reach };
    process.stdout.write(`${JSON.stringify({ latencies, reachability: reach })}\n`);
    if (values['no-write'] !== true) log(`wrote ${writeResult('writes', result)}`);
  },
};
