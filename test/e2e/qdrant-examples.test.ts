/**
 * Searches by examples on the Qdrant port: the recommend strategies `best_score` and `sum_scores`,
 * discovery (`POST …/points/discover`, the query API's `{discover}`) and context search
 * (`{context}`). Qdrant's own cases (tests/openapi/test_discover.py, test_recommend.py, on its basic
 * collection), then random examples (ids and vectors) on Cosine and Euclid collections compared
 * with a brute-force model of Qdrant's formulas (lib/segment/src/vector_storage/query/), and the
 * refusals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { QDRANT_BASIC_VECTORS } from '../helpers/qdrant-basic.js';
import { sameSparseHits } from '../helpers/sparse-model.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;

const sigmoid = (x: number): number => x / (1 + Math.abs(x));
const scaled = (x: number): number => 0.5 * (sigmoid(x) + 1);

test("Qdrant's discovery and best_score cases on its basic collection", async (t) => {
  const { url } = await startQdrant(t);
  const call = async (path: string, body: Body, status = 200): Promise<Body> => {
    const r = await http(url, 'POST', path, body);
    assert.equal(r.status, status, `${path}: ${r.text}`);
    return r.body;
  };
  const put = await http(url, 'PUT', '/collections/b', { vectors: { size: 4, distance: 'Dot' } });
  assert.equal(put.status, 200, put.text);
  await http(url, 'PUT', '/collections/b/points', { points: QDRANT_BASIC_VECTORS.map((vector, i) => ({ id: i + 1, vector })) });

  // test_context: scores are losses (≤ 0); the examples given by id are left out.
  const context = [
    { positive: 1, negative: [0.1, 0.2, 0.3, 0.4] },
    { positive: [0.5, 0.5, 0.5, 0.5], negative: 2 },
  ];
  const byContext = await call('/collections/b/points/discover', { context, limit: 8 });
  assert.equal(byContext.result.length, 6);
  for (const p of byContext.result) assert.ok(p.score <= 0, JSON.stringify(p));
  assert.ok(!byContext.result.some((p: Body) => p.id === 1 || p.id === 2));

  // test_only_target_is_search_with_different_scoring
  const target = [0.2, 0.1, 0.9, 0.7];
  const search = await call('/collections/b/points/search', { vector: target, limit: 8 });
  const discover = await call('/collections/b/points/discover', { target, limit: 8 });
  assert.deepEqual(
    discover.result.map((p: Body) => p.id),
    search.result.map((p: Body) => p.id),
  );
  for (const [i, p] of discover.result.entries()) {
    assert.notEqual(p.score, search.result[i].score);
    assert.ok(Math.abs(p.score - scaled(search.result[i].score)) < 1e-6, 'the target similarity squashed into (0, 1)');
  }

  // test_best_score_works_with_only_negatives
  const negatives = await call('/collections/b/points/recommend', { negative: [1, 2], strategy: 'best_score', limit: 5 });
  assert.equal(negatives.result.length, 5);
  for (const p of negatives.result) assert.ok(p.score < 0);

  // test_only_1_positive_in_best_score_is_equivalent_to_normal_search
  const reco = await call('/collections/b/points/recommend', { positive: [1], strategy: 'best_score', limit: 4 });
  const plain = await call('/collections/b/points/search', { vector: QDRANT_BASIC_VECTORS[0], filter: { must_not: [{ has_id: [1] }] }, limit: 4 });
  assert.deepEqual(
    reco.result.map((p: Body) => p.id),
    plain.result.map((p: Body) => p.id),
  );

  // The query API's spellings answer as the endpoints do.
  const viaQuery = await call('/collections/b/points/query', { query: { recommend: { negative: [1, 2], strategy: 'best_score' } }, limit: 5 });
  assert.deepEqual(viaQuery.result.points, negatives.result);
  const viaDiscover = await call('/collections/b/points/query', { query: { discover: { target, context: [] } }, limit: 8 });
  assert.deepEqual(viaDiscover.result.points, discover.result);
  const viaContext = await call('/collections/b/points/query', { query: { context }, limit: 8 });
  assert.deepEqual(viaContext.result.points, byContext.result);

  for (const [path, body, pattern] of [
    ['/collections/b/points/recommend', { positive: [], strategy: 'best_score' }, /best_score strategy needs at least one positive or negative example/],
    ['/collections/b/points/recommend', { positive: [1], strategy: 'best' }, /unknown variant "best"/],
    ['/collections/b/points/query', { query: { context: [] } }, /at least one context pair is required/],
    ['/collections/b/points/query', { query: { discover: { context: [] } } }, /query\.discover\.target: required/],
    ['/collections/b/points/discover', { context: [{ positive: 1 }] }, /context\[0\]: a context pair needs `positive` and `negative`/],
    ['/collections/b/points/discover', { target: [1, 2] }, /target: expected a vector of 4 numbers, got 2/],
    ['/collections/b/points/discover', { target: 99 }, /No point with id 99 found/],
  ] as const) {
    const r = await http(url, 'POST', path, body);
    assert.ok(r.status === 400 || r.status === 404, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.body.status.error, pattern, JSON.stringify(body));
  }
});

for (const distance of ['Cosine', 'Euclid'] as const) {
  test(`searches by examples against a model of Qdrant's formulas (${distance})`, async (t) => {
    const { url } = await startQdrant(t);
    const seed = distance === 'Cosine' ? 8801 : 8802;
    const rng = new SeededRng(seed);
    const dim = 3;
    const vec = (): number[] => Array.from({ length: dim }, () => rng.int(7) - 3);
    const vectors = new Map<number, number[]>();
    const points = Array.from({ length: 60 }, (_, i) => {
      // Duplicates and zero vectors among them.
      const v = i % 13 === 0 ? [0, 0, 0] : i % 11 === 0 ? (vectors.get(i - 1) ?? vec()) : vec();
      vectors.set(i, v);
      return { id: i, vector: v, payload: { even: i % 2 === 0 } };
    });
    assert.equal((await http(url, 'PUT', '/collections/e', { vectors: { size: dim, distance }, hnsw_config: { m: 4 } })).status, 200);
    assert.equal((await http(url, 'PUT', '/collections/e/points', { points })).status, 200);
    const unit = (v: number[]): number[] => {
      const n = Math.hypot(...v);
      return n === 0 ? v : v.map((x) => Math.fround(x / n));
    };
    const stored = (v: number[]): number[] => (distance === 'Cosine' ? unit(v) : v);
    const sim = (a: number[], b: number[]): number =>
      distance === 'Euclid' ? -a.reduce((s, x, i) => s + (x - (b[i] as number)) ** 2, 0) : a.reduce((s, x, i) => s + x * (b[i] as number), 0);
    for (let round = 0; round < 24; round++) {
      const used = new Set<number>();
      const example = (): number | number[] => {
        if (rng.int(2) === 0) {
          const id = rng.int(60);
          used.add(id);
          return id;
        }
        return vec().map((x) => (x === 0 ? 1 : x));
      };
      const vectorOf = (e: number | number[]): number[] => stored(typeof e === 'number' ? (vectors.get(e) as number[]) : e);
      const kind = round % 4;
      let body: Body;
      let score: (v: number[]) => number;
      if (kind < 2) {
        const positive = Array.from({ length: rng.int(3) }, example);
        const negative = Array.from({ length: positive.length === 0 ? 1 + rng.int(2) : rng.int(3) }, example);
        const strategy = kind === 0 ? 'best_score' : 'sum_scores';
        body = { query: { recommend: { positive, negative, strategy } } };
        score = (v) => {
          const ps = positive.map((e) => sim(vectorOf(e), v));
          const ns = negative.map((e) => sim(vectorOf(e), v));
          if (strategy === 'sum_scores') return ps.reduce((s, x) => s + x, 0) - ns.reduce((s, x) => s + x, 0);
          const bp = Math.max(Number.NEGATIVE_INFINITY, ...ps);
          const bn = Math.max(Number.NEGATIVE_INFINITY, ...ns);
          return bp > bn ? scaled(bp) : -scaled(bn);
        };
      } else {
        const pairs = Array.from({ length: 1 + rng.int(3) }, () => ({ positive: example(), negative: example() }));
        const target = example();
        body = kind === 2 ? { query: { discover: { target, context: pairs } } } : { query: { context: pairs } };
        score = (v) => {
          if (kind === 2) {
            const rank = pairs.reduce((s, p) => s + Math.sign(sim(vectorOf(p.positive), v) - sim(vectorOf(p.negative), v)), 0);
            return rank + scaled(sim(vectorOf(target), v));
          }
          return pairs.reduce((s, p) => s + sigmoid(Math.min(sim(vectorOf(p.positive), v) - sim(vectorOf(p.negative), v) - 2 ** -23, 0)), 0);
        };
      }
      const limit = 1 + rng.int(12);
      const filtered = round % 3 === 0;
      const answer = await http(url, 'POST', '/collections/e/points/query', {
        ...body,
        limit,
        ...(filtered ? { filter: { must: [{ key: 'even', match: { value: true } }] } } : {}),
      });
      assert.equal(answer.status, 200, answer.text);
      const expected = [...vectors]
        .filter(([id]) => !used.has(id) && (!filtered || id % 2 === 0))
        .map(([id, v]) => ({ id: String(id), score: score(stored(v)) }))
        .sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id))
        .slice(0, limit);
      sameSparseHits(
        answer.body.result.points.map((p: Body) => ({ id: String(p.id), score: p.score })),
        expected,
        `seed ${seed}, round ${round}: ${JSON.stringify(body)}`,
      );
    }
  });
}
