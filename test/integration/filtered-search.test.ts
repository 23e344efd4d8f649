/**
 * Filtered search on a synthetic seeded collection (20,000 clustered points, d = 16) with keyword
 * fields matching 0.1%, 1%, 10%, 50% and 90% of the points, a numeric field and a second keyword
 * field. For HNSW and Flat collections, and for AND (must), OR (should), NOT (must_not) and an
 * unestimated (regex) shape at each selectivity, every search returns min(limit, matches) results
 * (matches counted by the reference evaluator), all matching, sorted best first (ties by id); the
 * same for a second page (limit 50, offset 20). When `explain` says the answer is exact, it equals the `params.exact`
 * answer. The strategy the planner chose per shape is printed.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import { testSeed } from '../helpers/data.js';
import { type JsonObject, refFilter } from '../helpers/filter-reference.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const N = 20_000;
const DIM = 16;
const CLUSTERS = 40;
const SELECTIVITIES = [0.001, 0.01, 0.1, 0.5, 0.9];
const CATEGORIES = ['c0', 'c1', 'c2', 'c3', 'c4'];
const QUERIES = 4;
const SEED = testSeed(0xf11e);

const field = (s: number): string => `k${String(s * 100).replace('.', '_')}`;

interface Dataset {
  ids: string[];
  vectors: number[][];
  payloads: JsonObject[];
  queries: number[][];
}

function makeDataset(seed: number): Dataset {
  const rng = new SeededRng(seed);
  const centres = Array.from({ length: CLUSTERS }, () => Array.from({ length: DIM }, () => 3 * rng.gaussian()));
  const vectors = Array.from({ length: N }, () => (rng.pick(centres) as number[]).map((c) => c + rng.gaussian()));
  // Each selectivity field says "y" on exactly round(s · N) points, chosen at random.
  const chosen = SELECTIVITIES.map((s) => {
    const order = Array.from({ length: N }, (_, i) => i);
    for (let i = N - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    return new Set(order.slice(0, Math.round(s * N)));
  });
  const payloads = vectors.map((_, i) => {
    const p: JsonObject = { price: rng.int(1000), cat: rng.pick(CATEGORIES) };
    SELECTIVITIES.forEach((s, j) => {
      p[field(s)] = (chosen[j] as Set<number>).has(i) ? 'y' : 'n';
    });
    return p;
  });
  const queries = Array.from({ length: QUERIES }, () => (rng.pick(centres) as number[]).map((c) => c + 0.5 * rng.gaussian()));
  return { ids: vectors.map((_, i) => `p${i}`), vectors, payloads, queries };
}

const dataset = makeDataset(SEED);

/**
 * The shapes at selectivity s: AND (about s·0.8 of the points), OR (s + 1%), NOT (s·0.8), and a
 * regex the indexes cannot estimate (s), which on HNSW makes the planner sample.
 */
function shapes(s: number): Array<[string, JsonObject]> {
  const k = field(s);
  return [
    [
      'AND',
      {
        must: [
          { key: k, match: { value: 'y' } },
          { key: 'cat', match: { any: ['c0', 'c1', 'c2', 'c3'] } },
        ],
      },
    ],
    [
      'OR',
      {
        should: [
          { key: k, match: { value: 'y' } },
          { key: 'price', range: { lt: 10 } },
        ],
      },
    ],
    [
      'NOT',
      {
        must_not: [
          { key: k, match: { value: 'n' } },
          { key: 'cat', match: { value: 'c4' } },
        ],
      },
    ],
    ['REGEX', { must: [{ key: k, type: 'regex', match: { value: '^y$' } }] }],
  ];
}

interface Hit {
  id: string;
  score: number;
}

async function build(t: TestContext, hnsw: boolean): Promise<Database> {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({ name: 'f', vector_size: DIM, distance: 'euclid', hnsw });
  const collection = db.collection('f');
  for (let start = 0; start < N; start += 2000) {
    const points = [];
    for (let i = start; i < Math.min(N, start + 2000); i++) points.push({ id: dataset.ids[i], vector: dataset.vectors[i], payload: dataset.payloads[i] });
    await collection.upsert(points);
  }
  assert.equal(collection.pointsCount, N);
  return db;
}

function assertPage(hits: readonly Hit[], expectedLength: number, matching: ReadonlySet<string>, context: string): void {
  assert.equal(hits.length, expectedLength, `${context}: ${hits.length} results, expected ${expectedLength}`);
  const foreign = hits.filter((h) => !matching.has(h.id)).map((h) => h.id);
  assert.deepEqual(foreign, [], `${context}: results that do not match the filter`);
  assert.equal(new Set(hits.map((h) => h.id)).size, hits.length, `${context}: repeated ids`);
  for (let i = 1; i < hits.length; i++) {
    const a = hits[i - 1] as Hit;
    const b = hits[i] as Hit;
    assert.ok(a.score < b.score || (a.score === b.score && a.id < b.id), `${context}: rank ${i} out of order (${a.id} ${a.score}, ${b.id} ${b.score})`);
  }
}

async function runShapes(t: TestContext, hnsw: boolean): Promise<void> {
  const db = await build(t, hnsw);
  const collection = db.collection('f');
  const strategies: string[] = [];
  let searches = 0;
  for (const s of SELECTIVITIES) {
    for (const [shape, json] of shapes(s)) {
      const filter = parseFilter(json);
      const matching = new Set(dataset.ids.filter((_, i) => refFilter(json, dataset.payloads[i] as JsonObject)));
      const seen = new Map<string, number>();
      for (const [q, vector] of dataset.queries.entries()) {
        const context = `${hnsw ? 'HNSW' : 'Flat'} ${shape} at ${s * 100}% (${matching.size} matches), query ${q}`;
        const first = collection.searchExplained({ vector, limit: 10, filter, with_payload: false, params: { explain: true } });
        assertPage(first.points, Math.min(10, matching.size), matching, `${context}, limit 10`);
        const sample = first.explain.sample;
        const label =
          first.explain.strategy + (first.explain.fallback ? '+fallback' : '') + (sample === null ? '' : ` (sample ${sample.matched}/${sample.size})`);
        seen.set(label, (seen.get(label) ?? 0) + 1);
        const page = collection.searchExplained({ vector, limit: 50, offset: 20, filter, with_payload: false });
        assertPage(page.points, Math.max(0, Math.min(50, matching.size - 20)), matching, `${context}, limit 50 offset 20`);
        const truth = collection.search({ vector, limit: 70, filter, with_payload: false, params: { exact: true } });
        assertPage(truth, Math.min(70, matching.size), matching, `${context}, exact limit 70`);
        if (first.explain.exact) {
          assert.deepEqual(
            first.points.map((h) => h.id),
            truth.slice(0, 10).map((h) => h.id),
            `${context}: an exact answer equals params.exact`,
          );
        }
        if (page.explain.exact) {
          assert.deepEqual(
            page.points.map((h) => h.id),
            truth.slice(20, 70).map((h) => h.id),
            `${context}: an exact page equals params.exact`,
          );
        }
        if (!hnsw) assert.equal(first.explain.exact, true, `${context}: Flat is always exact`);
        if (shape === 'REGEX') {
          assert.deepEqual([first.explain.estimate?.min, first.explain.estimate?.max], [0, N], `${context}: a regex is not estimated`);
          assert.equal(first.explain.sample !== null, hnsw, `${context}: HNSW samples a straddling estimate, Flat need not`);
        }
        searches += 3;
      }
      const estimate = collection.searchExplained({ vector: dataset.queries[0], limit: 1, filter }).explain.estimate;
      assert.ok(
        estimate !== null && estimate.min <= matching.size && matching.size <= estimate.max,
        `${shape} ${s}: estimate ${JSON.stringify(estimate)} vs ${matching.size}`,
      );
      strategies.push(`${shape} ${s * 100}% (${matching.size}): ${[...seen].map(([k, v]) => `${k}×${v}`).join(' ')}`);
    }
  }
  t.diagnostic(`${hnsw ? 'HNSW' : 'Flat'} strategies (${searches} searches):\n  ${strategies.join('\n  ')}`);
}

test(`filtered search on HNSW returns min(limit, matches) matching, sorted results for AND/OR/NOT/regex at 0.1–90% (seed ${SEED})`, async (t) => {
  await runShapes(t, true);
});

test(`filtered search on Flat returns min(limit, matches) matching, sorted results for AND/OR/NOT/regex at 0.1–90% (seed ${SEED})`, async (t) => {
  await runShapes(t, false);
});
