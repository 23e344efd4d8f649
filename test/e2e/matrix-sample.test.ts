/**
 * The distance matrix and random samples on both ports: Qdrant's own cases (tests/openapi/
 * test_distance_matrix.py: pairs and offsets of its 8-point collection, a wrong vector name), a
 * model of exact neighbours among the sample on random nasty data (duplicates, zero vectors,
 * three distances), and the sample's draws: distinct, matching, spread over every match.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient } from '../../src/api/client/kith-client.js';
import { compareIds } from '../../src/core/point-id.js';
import { SeededRng } from '../../src/core/rng.js';
import { QDRANT_BASIC_VECTORS } from '../helpers/qdrant-basic.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;

test("Qdrant's distance matrix cases: pairs and offsets of its 8-point collection", async (t) => {
  const { url, kithUrl } = await startQdrant(t);
  assert.equal((await http(url, 'PUT', '/collections/m', { vectors: { size: 4, distance: 'Dot' } })).status, 200);
  const put = await http(url, 'PUT', '/collections/m/points?wait=true', { points: QDRANT_BASIC_VECTORS.map((vector, i) => ({ id: i + 1, vector })) });
  assert.equal(put.status, 200, put.text);
  const pairs = await http(url, 'POST', '/collections/m/points/search/matrix/pairs', { sample: 10, limit: 2 });
  assert.equal(pairs.status, 200, pairs.text);
  const want = [
    [1, 3, 1.4063001],
    [1, 4, 1.2531],
    [2, 1, 1.1550001],
    [2, 8, 1.1359],
    [3, 1, 1.4063001],
    [3, 4, 1.2218001],
    [4, 1, 1.2531],
    [4, 3, 1.2218001],
    [5, 3, 0.70239997],
    [5, 1, 0.6146],
    [6, 3, 0.6353],
    [6, 4, 0.5093],
    [7, 3, 1.0990001],
    [7, 1, 1.0349001],
    [8, 2, 1.1359],
    [8, 3, 1.0553],
  ];
  const got = pairs.body.result.pairs as Body[];
  assert.deepEqual(
    got.map((p) => [p.a, p.b]),
    want.map(([a, b]) => [a, b]),
  );
  // Within a float32 step: kith sums a dot product in another order than Qdrant (1.155 for its 1.1550001).
  got.forEach((p, i) => {
    assert.ok(Math.abs(p.score - ((want[i] as number[])[2] as number)) < 1e-6, `pair ${i}: ${p.score}`);
  });
  const offsets = await http(url, 'POST', '/collections/m/points/search/matrix/offsets', { sample: 10, limit: 2 });
  assert.equal(offsets.status, 200, offsets.text);
  assert.deepEqual(offsets.body.result.offsets_row, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]);
  assert.deepEqual(offsets.body.result.offsets_col, [2, 3, 0, 7, 0, 3, 0, 2, 2, 0, 2, 3, 2, 0, 1, 2]);
  assert.deepEqual(offsets.body.result.ids, [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(
    offsets.body.result.scores,
    got.map((p) => p.score),
  );
  assert.equal((await http(url, 'POST', '/collections/m/points/search/matrix/pairs', { sample: 10, limit: 2, using: 'wrong_vector_name' })).status, 400);
  assert.equal((await http(url, 'POST', '/collections/m/points/search/matrix/pairs', { sample: 1 })).status, 422);
  assert.equal((await http(url, 'POST', '/collections/m/points/search/matrix/offsets', { limit: 0 })).status, 422);
  // A filter that leaves one point: no matrix.
  const one = await http(url, 'POST', '/collections/m/points/search/matrix/pairs', { filter: { must: [{ has_id: [3] }] } });
  assert.deepEqual(one.body.result, { pairs: [] });
  // kith's port: the same pairs, ids as kith writes them.
  const kith = await new KithClient(kithUrl).searchMatrix('m', { sample: 10, limit: 2 });
  assert.deepEqual(kith.ids, ['1', '2', '3', '4', '5', '6', '7', '8']);
  assert.deepEqual(
    kith.pairs.map((p) => [p.a, p.b]),
    want.map(([a, b]) => [String(a), String(b)]),
  );
});

/** Exact scores as kith's distances give them: higher better, Euclid a distance (lower better). */
function score(distance: string, a: number[], b: number[]): number {
  if (distance === 'euclid') return Math.sqrt(a.reduce((s, x, i) => s + (x - (b[i] as number)) ** 2, 0));
  const dot = a.reduce((s, x, i) => s + x * (b[i] as number), 0);
  if (distance === 'dot') return dot;
  const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return norm(a) === 0 || norm(b) === 0 ? 0 : dot / (norm(a) * norm(b));
}

test('kith port: a matrix over every match equals exact neighbours among them (random nasty data)', async (t) => {
  const { kithUrl } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  for (const seed of [41, 42, 43]) {
    const rng = new SeededRng(seed);
    const distance = ['cosine', 'euclid', 'dot'][seed % 3] as string;
    const dim = 1 + rng.int(4);
    const name = `x${seed}`;
    await client.createCollection({ name, vector_size: dim, distance });
    const shared = Array.from({ length: dim }, () => rng.int(3) - 1);
    const points = Array.from({ length: 10 + rng.int(30) }, (_, i) => ({
      id: rng.int(3) === 0 ? `p${i}` : String(i),
      vector: rng.int(4) === 0 ? shared : rng.int(6) === 0 ? Array.from({ length: dim }, () => 0) : Array.from({ length: dim }, () => rng.int(5) - 2),
      payload: { keep: rng.int(4) !== 0 },
    }));
    await client.upsert(name, points);
    const limit = 1 + rng.int(5);
    const matrix = await client.searchMatrix(name, { sample: 4096, limit, filter: { must: [{ key: 'keep', match: { value: true } }] } });
    const kept = points.filter((p) => p.payload.keep).sort((a, b) => compareIds(a.id, b.id));
    assert.deepEqual(
      matrix.ids,
      kept.map((p) => p.id),
    );
    // The stored vectors score as the engine scores them (Cosine vectors are stored normalised).
    const stored = new Map((await client.retrieve(name, { ids: kept.map((p) => p.id), with_vector: true })).map((r) => [r.id, r.vector as number[]]));
    const smallerBetter = distance === 'euclid';
    const want = kept.flatMap((a) => {
      const ranked = kept
        .map((b) => ({ id: b.id, score: score(distance, stored.get(a.id) as number[], stored.get(b.id) as number[]) }))
        .sort((x, y) => (Math.abs(x.score - y.score) > 1e-5 ? (smallerBetter ? x.score - y.score : y.score - x.score) : compareIds(x.id, y.id)));
      const top = ranked.slice(0, limit + 1);
      const self = top.findIndex((h) => h.id === a.id);
      if (self >= 0) top.splice(self, 1);
      else if (top.length > limit) top.pop();
      return top.map((h) => ({ a: a.id, b: h.id, score: h.score }));
    });
    assert.equal(matrix.pairs.length, want.length, `seed ${seed}`);
    matrix.pairs.forEach((p, i) => {
      const w = want[i] as { a: string; b: string; score: number };
      assert.equal(p.a, w.a, `seed ${seed} pair ${i}`);
      assert.ok(Math.abs(p.score - w.score) < 1e-4, `seed ${seed} pair ${i}: ${p.score} vs ${w.score}`);
    });
  }
});

test('random samples: distinct matching points, every match drawn over many draws; the query API and the matrix draw them', async (t) => {
  const { url, db } = await startQdrant(t);
  assert.equal((await http(url, 'PUT', '/collections/s', { vectors: { size: 2, distance: 'Dot' } })).status, 200);
  const points = Array.from({ length: 40 }, (_, i) => ({ id: i, vector: [1, i], payload: { even: i % 2 === 0 } }));
  assert.equal((await http(url, 'PUT', '/collections/s/points?wait=true', { points })).status, 200);
  const drawn = new Map<number, number>();
  for (let draw = 0; draw < 200; draw++) {
    const r = await http(url, 'POST', '/collections/s/points/query', {
      query: { sample: 'random' },
      limit: 5,
      filter: { must: [{ key: 'even', match: { value: true } }] },
    });
    assert.equal(r.status, 200, r.text);
    const ids = (r.body.result.points as Body[]).map((p) => p.id as number);
    assert.equal(new Set(ids).size, 5, 'distinct');
    for (const p of r.body.result.points as Body[]) assert.equal(p.score, 0);
    for (const id of ids) {
      assert.equal(id % 2, 0, 'matches the filter');
      drawn.set(id, (drawn.get(id) ?? 0) + 1);
    }
  }
  // 20 even points, 5 of them per draw: each is expected 50 times in 200 draws.
  assert.equal(drawn.size, 20);
  for (const [id, times] of drawn) assert.ok(times > 15 && times < 100, `point ${id} drawn ${times} times`);
  const all = await db.collection('s').sample({ limit: 100 });
  assert.deepEqual(
    all.map((r) => Number(r.id)).sort((a, b) => a - b),
    points.map((p) => p.id),
  );
  const tooMany = await http(url, 'POST', '/collections/s/points/query', { query: { sample: 'random' }, limit: 10, offset: 9995 });
  assert.equal(tooMany.status, 422, tooMany.text);
  const matrix = await http(url, 'POST', '/collections/s/points/search/matrix/offsets', { sample: 6, limit: 5 });
  assert.equal(matrix.body.result.ids.length, 6);
  assert.deepEqual(
    matrix.body.result.ids,
    [...matrix.body.result.ids].sort((a: number, b: number) => a - b),
  );
  assert.equal(matrix.body.result.scores.length, 30);
});
