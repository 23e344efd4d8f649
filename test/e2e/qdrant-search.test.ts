/**
 * Qdrant port, searches: search, query (vector, by id, none), their batch forms, filters, offset,
 * score threshold, payload/vector selectors, compared with a brute force computed here; filter
 * translation (Qdrant's `should: []`, single-object clauses) and refusals of what kith lacks.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { SeededRng } from '../../src/core/rng.js';
import { randomVectors, testSeed, withSeed } from '../helpers/data.js';
import { http, type QdrantHarness, startQdrant } from './qdrant-harness.js';

const DIM = 8;
const N = 300;
const COLORS = ['red', 'green', 'blue'];

interface Row {
  id: number;
  vector: number[];
  payload: { color: string; rank: number };
}

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

function cosine(a: readonly number[], b: readonly number[]): number {
  return dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
}

/** Every row scored by cosine, best first, after the keep() filter. */
function brute(rows: readonly Row[], query: readonly number[], keep: (r: Row) => boolean = () => true): { id: number; score: number }[] {
  return rows
    .filter(keep)
    .map((r) => ({ id: r.id, score: cosine(query, r.vector) }))
    .sort((a, b) => b.score - a.score);
}

function assertSameHits(actual: readonly { id: unknown; score: number }[], expected: readonly { id: number; score: number }[], label: string): void {
  assert.deepEqual(
    actual.map((h) => h.id),
    expected.map((h) => h.id),
    label,
  );
  actual.forEach((h, i) => {
    assert.ok(Math.abs(h.score - (expected[i] as { score: number }).score) < 1e-5, `${label}: score ${i}`);
  });
}

async function seeded(t: TestContext, rng: SeededRng): Promise<{ h: QdrantHarness; rows: Row[] }> {
  const h = await startQdrant(t);
  await h.client.createCollection('v', { vectors: { size: DIM, distance: 'Cosine' } });
  const rows = randomVectors(rng, N, DIM).map((vector, i) => ({
    id: i * 3 + 1,
    vector,
    payload: { color: COLORS[i % 3] as string, rank: i },
  }));
  await h.client.upsert('v', { points: rows });
  return { h, rows };
}

test('search and query match a brute force: plain, exact, filtered, offset, score threshold', async (t) => {
  const seed = testSeed(9001);
  await withSeed(seed, async (rng) => {
    const { h, rows } = await seeded(t, rng);
    const { client } = h;
    for (let q = 0; q < 5; q++) {
      const query = randomVectors(rng, 1, DIM)[0] as number[];
      assertSameHits(await client.search('v', { vector: query, limit: 10 }), brute(rows, query).slice(0, 10), `search ${q}`);
      assertSameHits(await client.search('v', { vector: query, limit: 10, params: { exact: true } }), brute(rows, query).slice(0, 10), `exact ${q}`);
      const red = (r: Row) => r.payload.color === 'red' && r.payload.rank >= 30;
      const filter = {
        must: [
          { key: 'color', match: { value: 'red' } },
          { key: 'rank', range: { gte: 30 } },
        ],
      };
      const queried = await client.query('v', { query, filter, limit: 7, offset: 3, params: { hnsw_ef: 128 } });
      assertSameHits(queried.points, brute(rows, query, red).slice(3, 10), `filtered query ${q}`);
      assert.equal(queried.points[0]?.payload, undefined, 'query returns no payload by default');
      // Midway between the 12th and 13th scores: float32 scores cannot land on the wrong side.
      const all = brute(rows, query);
      const threshold = ((all[11] as { score: number }).score + (all[12] as { score: number }).score) / 2;
      const above = await client.query('v', { query: { nearest: query }, score_threshold: threshold, limit: 100, with_payload: true });
      assertSameHits(above.points, all.slice(0, 12), `threshold ${q}`);
      assert.equal(typeof above.points[0]?.payload?.color, 'string');
    }
  });
});

test('query by id leaves that point out; no query lists points in id order', async (t) => {
  await withSeed(testSeed(9002), async (rng) => {
    const { h, rows } = await seeded(t, rng);
    const target = rows[17] as Row;
    const byId = await h.client.query('v', { query: target.id, limit: 5, offset: 2, with_vector: true });
    const expected = brute(rows, target.vector, (r) => r.id !== target.id).slice(2, 7);
    assertSameHits(byId.points, expected, 'by id');
    // with_vector returns the stored vector: normalised, as Cosine stores it.
    const first = rows.find((r) => r.id === byId.points[0]?.id) as Row;
    const norm = Math.sqrt(dot(first.vector, first.vector));
    const returned = byId.points[0]?.vector as number[];
    assert.equal(returned.length, DIM);
    returned.forEach((x, i) => {
      assert.ok(Math.abs(x - (first.vector[i] as number) / norm) < 1e-6, `component ${i}`);
    });
    const listed = await h.client.query('v', { limit: 4, offset: 2, filter: { must: [{ key: 'color', match: { any: ['green', 'blue'] } }] } });
    assert.deepEqual(
      listed.points.map((p) => p.id),
      rows
        .filter((r) => r.payload.color !== 'red')
        .map((r) => r.id)
        .slice(2, 6),
    );
    await assert.rejects(h.client.query('v', { query: 999999 }), { status: 404 });
  });
});

test('batch forms answer like the single requests', async (t) => {
  await withSeed(testSeed(9003), async (rng) => {
    const { h, rows } = await seeded(t, rng);
    const [a, b] = randomVectors(rng, 2, DIM) as [number[], number[]];
    const searched = await h.client.searchBatch('v', {
      searches: [
        { vector: a, limit: 3 },
        { vector: b, limit: 4, offset: 1 },
      ],
    });
    assertSameHits(searched[0] ?? [], brute(rows, a).slice(0, 3), 'search batch 0');
    assertSameHits(searched[1] ?? [], brute(rows, b).slice(1, 5), 'search batch 1');
    const queried = await h.client.queryBatch('v', {
      searches: [
        { query: a, limit: 2 },
        { query: rows[0]?.id as number, limit: 2 },
      ],
    });
    assertSameHits(queried[0]?.points ?? [], brute(rows, a).slice(0, 2), 'query batch 0');
    assertSameHits(queried[1]?.points ?? [], brute(rows, rows[0]?.vector as number[], (r) => r.id !== rows[0]?.id).slice(0, 2), 'query batch 1');
  });
});

test('filters: Qdrant conditions and spellings, should: [] matches nothing, has_id takes Qdrant ids, bad and unsupported filters are 400', async (t) => {
  await withSeed(testSeed(9004), async (rng) => {
    const { h, rows } = await seeded(t, rng);
    const { client, url } = h;
    const count = async (filter: unknown) => (await client.count('v', { filter: filter as never })).count;
    assert.equal(await count({ should: [] }), 0);
    assert.equal(await count({ must: [{ should: [] }] }), 0);
    assert.equal(await count({ must_not: [{ should: [] }] }), N);
    assert.equal(await count({ must: { key: 'color', match: { value: 'blue' } } }), rows.filter((r) => r.payload.color === 'blue').length);
    assert.equal(await count({ must_not: [{ key: 'color', match: { except: ['red'] } }] }), rows.filter((r) => r.payload.color === 'red').length);
    assert.equal(await count({ must: [{ key: 'rank', range: { gt: 10, lte: null } }] }), N - 11);
    await assert.rejects(client.search('v', { vector: rows[0]?.vector as number[], filter: { must: [{ key: 'color', match: {} }] } as never }), {
      status: 400,
    });
    // Qdrant's conditions, with Qdrant ids in has_id (integers as numbers).
    assert.equal(await count({ must: [{ has_id: [1, 4, 5, 7] }] }), 3, 'ids 1, 4 and 7 exist (ids are 3i + 1)');
    assert.equal(await count({ must_not: [{ has_id: [1] }], must: [{ key: 'rank', range: { lt: 3 } }] }), 2);
    assert.equal(await count({ must: [{ is_empty: { key: 'missing' } }] }), N);
    assert.equal(await count({ must: [{ key: 'color', match: { text: 'ree' } }] }), rows.filter((r) => r.payload.color === 'green').length);
    assert.equal(
      await count({
        min_should: {
          conditions: [
            { key: 'color', match: { value: 'red' } },
            { key: 'rank', range: { lt: 10 } },
          ],
          min_count: 2,
        },
      }),
      rows.filter((r) => r.payload.color === 'red' && r.payload.rank < 10).length,
    );
    // A string that is no UUID is a kith id (docs/qdrant.md, "Point ids"): none of these points has it.
    assert.equal(await count({ must: [{ has_id: ['seven'] }] }), 0);
    const badId = await http(url, 'POST', '/collections/v/points/count', { filter: { must: [{ has_id: [-7] }] } });
    assert.equal(badId.status, 400);
    assert.match(badId.body.status.error, /filter\.must\[0\]\.has_id\[0\]/);
    // has_vector of the unnamed vector: every point; the field forms of is_empty / is_null.
    assert.equal(await count({ must: [{ has_vector: '' }] }), N);
    assert.equal(await count({ must_not: [{ has_vector: '' }] }), 0);
    assert.equal(await count({ must: [{ key: 'missing', is_empty: true }] }), N);
    assert.equal(await count({ must: [{ key: 'color', is_empty: false }] }), await count({ must_not: [{ is_empty: { key: 'color' } }] }));
    assert.equal(await count({ must: [{ key: 'color', is_null: false, match: { value: 'red' } }] }), rows.filter((r) => r.payload.color === 'red').length);
    assert.equal(await count({ should: [{ key: 'color', is_null: true }] }), await count({ should: [{ is_null: { key: 'color' } }] }));
    const notFlag = await http(url, 'POST', '/collections/v/points/count', { filter: { must: [{ key: 'color', is_empty: 'yes' }] } });
    assert.equal(notFlag.status, 400);
    assert.match(notFlag.body.status.error, /filter\.must\[0\]\.is_empty: expected a boolean/);
    // A name the collection lacks: no point holds it (Qdrant's answer), in either clause.
    assert.equal(await count({ must: [{ has_vector: 'image' }] }), 0);
    assert.equal(await count({ must_not: [{ has_vector: 'image' }] }), N);
    const notName = await http(url, 'POST', '/collections/v/points/count', { filter: { must: [{ has_vector: 7 }] } });
    assert.equal(notName.status, 400);
    assert.match(notName.body.status.error, /filter\.must\[0\]\.has_vector: expected a vector name/);
    const named = await http(url, 'POST', '/collections/v/points/query', { query: rows[0]?.vector, using: 'image' });
    assert.equal(named.status, 400);
    assert.match(named.body.status.error, /Not existing vector name error: /);
    // Prefetches and fusion are served (qdrant-query-stages.test.ts); a prefetch using a name the collection lacks is not.
    const prefetch = await http(url, 'POST', '/collections/v/points/query', {
      prefetch: [{ query: rows[0]?.vector, using: 'image' }],
      query: { fusion: 'rrf' },
    });
    assert.equal(prefetch.status, 400);
    assert.match(prefetch.body.status.error, /Not existing vector name error: image/);
    const limit = await http(url, 'POST', '/collections/v/points/search', { vector: rows[0]?.vector, limit: 0 });
    assert.equal(limit.status, 422);
    // As on the kith port, the vectors one request returns are bounded (524,288 components over its searches).
    const many = Array.from({ length: Math.ceil(524288 / DIM / 1000) + 1 }, () => ({ vector: rows[0]?.vector, limit: 1000, with_vector: true }));
    const volume = await http(url, 'POST', '/collections/v/points/search/batch', { searches: many });
    assert.equal(volume.status, 422);
    assert.match(
      volume.body.status.error,
      /^Validation error in JSON body: searches\[\d+\]\.with_vector: the request asks for [\d,]+ returned vector components/,
    );
    const page = await http(url, 'POST', '/collections/v/points/scroll', { limit: 10001 });
    assert.equal(page.status, 422, 'a scroll page is at most 10,000 points');
  });
});

test('Euclid scores are distances and the threshold keeps the near ones', async (t) => {
  const { client } = await startQdrant(t);
  await client.createCollection('e', { vectors: { size: 2, distance: 'Euclid' }, hnsw_config: { m: 0 } });
  await client.upsert('e', { points: [0, 1, 2, 3, 4].map((i) => ({ id: i, vector: [i, 0] })) });
  const hits = await client.search('e', { vector: [0, 0], limit: 10, score_threshold: 2.5 });
  assert.deepEqual(
    hits.map((x) => [x.id, x.score]),
    [
      [0, 0],
      [1, 1],
      [2, 2],
    ],
  );
});

test('recommend (average_vector) and query {recommend} match a brute force and leave the examples out', async (t) => {
  await withSeed(testSeed(9005), async (rng) => {
    const { h, rows } = await seeded(t, rng);
    const unit = (v: readonly number[]) => {
      const n = Math.sqrt(dot(v, v));
      return v.map((x) => x / n);
    };
    const [a, b, c] = [rows[3], rows[50], rows[120]] as [Row, Row, Row];
    const pos = unit(a.vector).map((x, i) => (x + (unit(b.vector)[i] as number)) / 2);
    const neg = unit(c.vector);
    const target = pos.map((p, i) => p + (p - (neg[i] as number)));
    const examples = new Set([a.id, b.id, c.id]);
    const expected = brute(rows, target, (r) => !examples.has(r.id));
    const recommended = await h.client.recommend('v', { positive: [a.id, b.id], negative: [c.id], limit: 6, offset: 1 });
    assertSameHits(recommended, expected.slice(1, 7), 'recommend');
    assert.equal(typeof recommended[0]?.payload?.color, 'string', 'the client asks for payloads');
    const queried = await h.client.query('v', { query: { recommend: { positive: [a.id, b.id], negative: [c.id] } }, limit: 5 });
    assertSameHits(queried.points, expected.slice(0, 5), 'query recommend');
    const byVector = await h.client.recommend('v', { positive: [a.vector], limit: 3 });
    assertSameHits(byVector, brute(rows, a.vector).slice(0, 3), 'recommend by vector keeps every point');
    // best_score with one positive orders as a plain search near it (qdrant-examples.test.ts checks the strategies in depth).
    const best = await h.client.recommend('v', { positive: [a.id], strategy: 'best_score', limit: 3 });
    assert.deepEqual(
      best.map((p) => p.id),
      brute(rows, a.vector, (r) => r.id !== a.id)
        .slice(0, 3)
        .map((p) => p.id),
    );
    await assert.rejects(h.client.recommend('v', { positive: [a.id], strategy: 'no_such' as 'best_score', limit: 3 }), { status: 400 });
    await assert.rejects(h.client.recommend('v', { positive: [999999], limit: 3 }), { status: 404 });
  });
});

test('query with mmr re-ranks the nearest candidates for diversity, as a greedy brute force does', async (t) => {
  await withSeed(testSeed(9006), async (rng) => {
    const { h, rows } = await seeded(t, rng);
    const unit = (v: readonly number[]) => {
      const n = Math.sqrt(dot(v, v));
      return v.map((x) => x / n);
    };
    const query = randomVectors(rng, 1, DIM)[0] as number[];
    const candidates = brute(rows, query).slice(0, 30);
    const byId = new Map(rows.map((r) => [r.id, unit(r.vector)]));
    const greedy = (diversity: number, count: number): number[] => {
      const picked: number[] = [];
      const free = [...candidates];
      while (picked.length < count) {
        let best = 0;
        let bestValue = Number.NEGATIVE_INFINITY;
        free.forEach((c, i) => {
          const penalty = picked.length === 0 ? 0 : Math.max(...picked.map((p) => dot(byId.get(p) as number[], byId.get(c.id) as number[])));
          const value = (1 - diversity) * c.score - diversity * penalty;
          if (value > bestValue) {
            bestValue = value;
            best = i;
          }
        });
        picked.push((free.splice(best, 1)[0] as { id: number }).id);
      }
      return picked;
    };
    const diverse = await h.client.query('v', { query: { nearest: query, mmr: { diversity: 0.7, candidates_limit: 30 } }, limit: 6, params: { exact: true } });
    const expected = greedy(0.7, 6);
    assert.deepEqual(
      diverse.points.map((p) => p.id),
      expected,
    );
    assert.notDeepEqual(
      expected,
      candidates.slice(0, 6).map((c) => c.id),
      'the seed makes diversity change the answer',
    );
    diverse.points.forEach((p) => {
      assert.ok(Math.abs(p.score - cosine(query, (rows.find((r) => r.id === p.id) as Row).vector)) < 1e-5, 'scores stay similarities to the query');
    });
    const relevant = await h.client.query('v', { query: { nearest: query, mmr: { diversity: 0, candidates_limit: 30 } }, limit: 6, params: { exact: true } });
    assertSameHits(relevant.points, candidates.slice(0, 6), 'diversity 0 is the plain nearest order');
    const bad = await http(h.url, 'POST', '/collections/v/points/query', { query: { nearest: query, mmr: { diversity: 2 } } });
    assert.equal(bad.status, 422);
  });
});
