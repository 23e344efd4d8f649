/**
 * Scroll pages of a large collection, in this process (the engine's `Collection.scroll`, no HTTP):
 *
 *   npm run bench -- scroll [--n 1000000] [--pages 100] [--limit 100]
 *
 * A Flat collection (the vector index plays no part in a scroll) of `n` points, dimension 4,
 * integer ids 0…n-1 upserted in a shuffled order (so slot order is not id order), payload
 * `{ category: i % 10, rare: i % 1000 === 0 }`, loaded in batches of 10,000. Then, for each case,
 * `pages` consecutive pages of `limit` points (with payload) from the first id, each page from
 * the previous page's cursor, timed one by one after an untimed pass of 10 pages: ms per page
 * (median, p95). Cases: no filter; `category = 3` (10% of the
 * points); `rare = true` (0.1%). Times are wall time on a shared machine: indicative only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { loadAverage, machineInfo } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { parseOptions, positiveInt, type Scenario } from '../lib/scenario.js';
import { quantile } from '../lib/stats.js';
import { formatTable } from '../lib/table.js';

const BATCH = 10_000;
/** Pages scrolled untimed before each case. */
const WARM_PAGES = 10;

const CASES: readonly { readonly name: string; readonly filter?: Record<string, unknown> }[] = [
  { name: 'no filter' },
  { name: 'category = 3 (10%)', filter: { must: [{ key: 'category', match: { value: 3 } }] } },
  { name: 'rare = true (0.1%)', filter: { must: [{ key: 'rare', match: { value: true } }] } },
];

interface CaseResult {
  readonly case: string;
  readonly pages: number;
  readonly points: number;
  readonly ms_per_page_median: number;
  readonly ms_per_page_p95: number;
}

const OPTIONS = `  --n <n>          points (default 1000000)
  --pages <p>      consecutive pages timed per case (default 100)
  --limit <l>      points per page (default 100)
  --no-write       do not write bench/results/<date>-scroll.json`;

export const scrollScenario: Scenario = {
  name: 'scroll',
  summary: 'scroll pages of a large collection in process: ms per page, with and without a filter',
  options: OPTIONS,
  async run(argv) {
    const values = parseOptions(argv, { n: { type: 'string' }, pages: { type: 'string' }, limit: { type: 'string' }, 'no-write': { type: 'boolean' } });
    const n = positiveInt(values.n, '--n', 1_000_000);
    const pages = positiveInt(values.pages, '--pages', 100);
    const limit = positiveInt(values.limit, '--limit', 100);
    const machine = machineInfo(REPO_DIR);
    process.stderr.write(`scroll: n ${n}, ${pages} pages of ${limit}; load average ${loadAverage().join(' ')}\n`);
    const dir = mkdtempSync(join(tmpdir(), 'kith-bench-scroll-'));
    const db = Database.open(join(dir, 'bench.kith'));
    try {
      await db.createCollection({ name: 'c', vector_size: 4, distance: 'Euclid', hnsw: false });
      const collection = db.collection('c');
      const order = Array.from({ length: n }, (_, i) => i);
      const rng = new SeededRng(42);
      for (let i = n - 1; i > 0; i--) {
        const j = rng.int(i + 1);
        [order[i], order[j]] = [order[j] as number, order[i] as number];
      }
      const began = performance.now();
      for (let from = 0; from < n; from += BATCH) {
        const batch = order
          .slice(from, from + BATCH)
          .map((id) => ({ id, vector: [id % 7, id % 11, id % 13, 1], payload: { category: id % 10, rare: id % 1000 === 0 } }));
        await collection.upsert(batch);
        if ((from / BATCH) % 20 === 0) process.stderr.write(`  loaded ${from + batch.length}\n`);
      }
      const loadSeconds = (performance.now() - began) / 1000;
      const memory = process.memoryUsage();
      const results: CaseResult[] = [];
      for (const c of CASES) {
        // An untimed pass of a few pages first: a case's first pages otherwise time the compiler (a rare filter has 10 pages at 1M).
        let warm: string | undefined;
        for (let p = 0; p < WARM_PAGES && (p === 0 || warm !== undefined); p++)
          warm = (await collection.scroll({ filter: c.filter, from: warm, limit, with_payload: true })).next;
        let from: string | undefined;
        const times: number[] = [];
        let points = 0;
        for (let p = 0; p < pages && (p === 0 || from !== undefined); p++) {
          const t0 = performance.now();
          const page = await collection.scroll({ filter: c.filter, from, limit, with_payload: true });
          times.push(performance.now() - t0);
          points += page.points.length;
          from = page.next;
        }
        const row = {
          case: c.name,
          pages: times.length,
          points,
          ms_per_page_median: round(quantile(times, 0.5)),
          ms_per_page_p95: round(quantile(times, 0.95)),
        };
        process.stderr.write(`  ${JSON.stringify(row)}\n`);
        results.push(row);
      }
      console.log(
        formatTable(
          ['case', 'pages', 'points', 'ms/page median', 'ms/page p95'],
          results.map((r) => [r.case, r.pages, r.points, r.ms_per_page_median, r.ms_per_page_p95]),
        ),
      );
      const summary = {
        scenario: 'scroll',
        commit: machine.commit,
        uptime: machine.uptime,
        n,
        limit,
        load_s: round(loadSeconds),
        rss_mb: Math.round(memory.rss / 2 ** 20),
        heap_used_mb: Math.round(memory.heapUsed / 2 ** 20),
        cases: results,
      };
      if (values['no-write'] !== true)
        process.stderr.write(`scroll: wrote ${writeResult('scroll', { ...summary, machine, load_average_after: loadAverage() })}\n`);
      console.log(JSON.stringify(summary));
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
