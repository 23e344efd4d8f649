import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { openTestApp, type TestApp } from '../helpers/app.js';
import { randomVectors } from '../helpers/data.js';

type Call = TestApp['call'];

interface Hit {
  id: string;
  version: number;
  score: number;
  payload?: Record<string, unknown>;
  vector?: number[];
}

interface Seed {
  id: string | number;
  vector: number[];
  payload?: Record<string, unknown>;
}

async function collectionWith(call: Call, name: string, config: Record<string, unknown>, points: Seed[]): Promise<void> {
  const created = await call('POST', '/collections', { name, ...config });
  assert.equal(created.status, 200, created.raw);
  if (points.length === 0) return;
  const upserted = await call('PUT', `/collections/${name}/points`, { points });
  assert.equal(upserted.status, 200, upserted.raw);
}

async function search(call: Call, name: string, body: Record<string, unknown>): Promise<Hit[]> {
  const r = await call('POST', `/collections/${name}/points/search`, body);
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.body.status, 'ok');
  assert.ok(Array.isArray(r.body.result), 'result is an array');
  return r.body.result;
}

function idsOf(hits: Hit[]): string[] {
  return hits.map((h) => h.id);
}

function assertScores(hits: Hit[], expected: Array<[string, number]>, tolerance = 1e-6): void {
  assert.deepEqual(
    idsOf(hits),
    expected.map(([id]) => id),
  );
  hits.forEach((hit, i) => {
    const want = (expected[i] as [string, number])[1];
    assert.ok(Math.abs(hit.score - want) <= tolerance, `${hit.id}: score ${hit.score}, expected ${want}`);
  });
}

const PLANE: Seed[] = [
  { id: 'a', vector: [1, 0], payload: { n: 1 } },
  { id: 'b', vector: [1, 1], payload: { n: 2 } },
  { id: 'c', vector: [0, 1], payload: { n: 3 } },
  { id: 'd', vector: [-1, 0], payload: { n: 4 } },
];

test('Cosine: results are {id, version, score, payload}, cosine similarity descending', async (t) => {
  const { call } = await openTestApp(t);
  await collectionWith(call, 'cos', { vector_size: 2, distance: 'cosine' }, PLANE);
  const hits = await search(call, 'cos', { vector: [2, 0] });
  assertScores(hits, [
    ['a', 1],
    ['b', Math.SQRT1_2],
    ['c', 0],
    ['d', -1],
  ]);
  for (const [i, hit] of hits.entries()) {
    assert.deepEqual(Object.keys(hit).sort(), ['id', 'payload', 'score', 'version']);
    assert.equal(typeof hit.score, 'number');
    assert.deepEqual(hit.payload, PLANE[i]?.payload);
  }
  const r = await call('POST', '/collections/cos/points/search', { vector: [0, 3] });
  assert.match(r.raw, /"version":[0-9]{19}[,}]/);
  assertScores(r.body.result, [
    ['c', 1],
    ['b', Math.SQRT1_2],
    ['a', 0],
    ['d', 0],
  ]);
});

test('Dot: dot product descending, exact on small integers', async (t) => {
  const { call } = await openTestApp(t);
  await collectionWith(call, 'dot', { vector_size: 2, distance: 'dot' }, [
    { id: 'a', vector: [1, 2] },
    { id: 'b', vector: [3, -1] },
    { id: 'c', vector: [-2, -2] },
    { id: 'd', vector: [0.5, 0.25] },
  ]);
  const hits = await search(call, 'dot', { vector: [2, 1] });
  assert.deepEqual(
    hits.map((h) => [h.id, h.score]),
    [
      ['b', 5],
      ['a', 4],
      ['d', 1.25],
      ['c', -6],
    ],
  );
});

test('Euclid: L2 distance ascending', async (t) => {
  const { call } = await openTestApp(t);
  await collectionWith(call, 'l2', { vector_size: 2, distance: 'euclidean' }, [
    { id: 'far', vector: [3, 4] },
    { id: 'origin', vector: [0, 0] },
    { id: 'diag', vector: [1, 1] },
    { id: 'neg', vector: [-6, -8] },
  ]);
  assertScores(await search(call, 'l2', { vector: [0, 0] }), [
    ['origin', 0],
    ['diag', Math.SQRT2],
    ['far', 5],
    ['neg', 10],
  ]);
  assertScores(await search(call, 'l2', { vector: [3, 4] }), [
    ['far', 0],
    ['diag', Math.sqrt(13)],
    ['origin', 5],
    ['neg', 15],
  ]);
});

test('equal scores break by id ascending, also across the limit', async (t) => {
  const { call } = await openTestApp(t);
  const same = ['b', 'ab', 'c', 'a', 'B'].map((id) => ({ id, vector: [1, 1] }));
  await collectionWith(call, 'tie', { vector_size: 2, distance: 'dot' }, [...same, { id: 'top', vector: [5, 5] }]);
  assert.deepEqual(idsOf(await search(call, 'tie', { vector: [1, 0] })), ['top', 'B', 'a', 'ab', 'b', 'c']);
  assert.deepEqual(idsOf(await search(call, 'tie', { vector: [1, 0], limit: 3 })), ['top', 'B', 'a']);
  assert.deepEqual(idsOf(await search(call, 'tie', { vector: [1, 0], limit: 2, offset: 2 })), ['a', 'ab']);

  // Cosine: parallel vectors of different length tie at 1.
  await collectionWith(call, 'tiecos', { vector_size: 2, distance: 'cosine' }, [
    { id: 'long', vector: [10, 0] },
    { id: 'short', vector: [0.1, 0] },
    { id: 'mid', vector: [3, 0] },
  ]);
  assert.deepEqual(idsOf(await search(call, 'tiecos', { vector: [1, 0] })), ['long', 'mid', 'short']);
  // Euclid: equidistant points.
  await collectionWith(call, 'tiel2', { vector_size: 2, distance: 'euclid' }, [
    { id: 'y', vector: [0, 1] },
    { id: 'x', vector: [1, 0] },
    { id: 'w', vector: [-1, 0] },
  ]);
  assert.deepEqual(
    (await search(call, 'tiel2', { vector: [0, 0] })).map((h) => [h.id, h.score]),
    [
      ['w', 1],
      ['x', 1],
      ['y', 1],
    ],
  );
});

test('Cosine: a zero vector scores 0, as query and as stored point', async (t) => {
  const { call } = await openTestApp(t);
  await collectionWith(call, 'cos', { vector_size: 2, distance: 'cosine' }, [...PLANE, { id: 'zero', vector: [0, 0] }]);
  const hits = await search(call, 'cos', { vector: [0, 0] });
  assert.deepEqual(
    hits.map((h) => [h.id, h.score]),
    [
      ['a', 0],
      ['b', 0],
      ['c', 0],
      ['d', 0],
      ['zero', 0],
    ],
  );
  const zero = (await search(call, 'cos', { vector: [1, 0] })).find((h) => h.id === 'zero');
  assert.equal(zero?.score, 0);
});

test("limit defaults to the collection's k, is bounded 1..10000, and offset skips", async (t) => {
  const { call } = await openTestApp(t);
  const points = Array.from({ length: 12 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, vector: [i, 1] }));
  await collectionWith(call, 'k3', { vector_size: 2, distance: 'dot', parameters: { k: 3 } }, points);
  await collectionWith(call, 'k10', { vector_size: 2, distance: 'dot' }, points);
  const ranked = points.map((p) => p.id).reverse();
  assert.deepEqual(idsOf(await search(call, 'k3', { vector: [1, 0] })), ranked.slice(0, 3));
  assert.deepEqual(idsOf(await search(call, 'k3', { vector: [1, 0], limit: null })), ranked.slice(0, 3));
  assert.deepEqual(idsOf(await search(call, 'k10', { vector: [1, 0] })), ranked.slice(0, 10));
  assert.deepEqual(idsOf(await search(call, 'k3', { vector: [1, 0], limit: 5 })), ranked.slice(0, 5));
  assert.deepEqual(idsOf(await search(call, 'k3', { vector: [1, 0], limit: 10000 })), ranked);
  assert.deepEqual(idsOf(await search(call, 'k3', { vector: [1, 0], offset: 2 })), ranked.slice(2, 5));
  assert.deepEqual(idsOf(await search(call, 'k3', { vector: [1, 0], offset: 4, limit: 4 })), ranked.slice(4, 8));
  assert.deepEqual(await search(call, 'k3', { vector: [1, 0], offset: 12 }), []);
  for (const limit of [0, -1, 10001, 2.5, '5']) {
    const r = await call('POST', '/collections/k3/points/search', { vector: [1, 0], limit });
    assert.equal(r.status, 400, `limit ${limit}`);
    assert.match(r.body.status.error, /^limit: /);
  }
  const badOffset = await call('POST', '/collections/k3/points/search', { vector: [1, 0], offset: -1 });
  assert.equal(badOffset.status, 400);
  assert.match(badOffset.body.status.error, /^offset: /);
});

test('score_threshold keeps scores >= it for Cosine/Dot and distances <= it for Euclid', async (t) => {
  const { call } = await openTestApp(t);
  const points = [
    { id: 'a', vector: [1, 2] },
    { id: 'b', vector: [3, -1] },
    { id: 'c', vector: [-2, -2] },
  ];
  await collectionWith(call, 'dot', { vector_size: 2, distance: 'dot' }, points);
  await collectionWith(call, 'cos', { vector_size: 2, distance: 'cosine' }, PLANE);
  await collectionWith(call, 'l2', { vector_size: 2, distance: 'euclidean' }, [
    { id: 'o', vector: [0, 0] },
    { id: 'm', vector: [3, 4] },
    { id: 'n', vector: [1, 1] },
  ]);
  assert.deepEqual(idsOf(await search(call, 'dot', { vector: [2, 1], score_threshold: 4 })), ['b', 'a']);
  assert.deepEqual(idsOf(await search(call, 'dot', { vector: [2, 1], score_threshold: 4.5 })), ['b']);
  assert.deepEqual(idsOf(await search(call, 'dot', { vector: [2, 1], score_threshold: -100 })), ['b', 'a', 'c']);
  assert.deepEqual(await search(call, 'dot', { vector: [2, 1], score_threshold: 6 }), []);
  assert.deepEqual(idsOf(await search(call, 'cos', { vector: [1, 0], score_threshold: 0.5 })), ['a', 'b']);
  assert.deepEqual(idsOf(await search(call, 'cos', { vector: [1, 0], score_threshold: -0.5 })), ['a', 'b', 'c']);
  assert.deepEqual(idsOf(await search(call, 'l2', { vector: [0, 0], score_threshold: 5 })), ['o', 'n', 'm']);
  assert.deepEqual(idsOf(await search(call, 'l2', { vector: [0, 0], score_threshold: 4.9 })), ['o', 'n']);
  assert.deepEqual(idsOf(await search(call, 'l2', { vector: [0, 0], score_threshold: 0 })), ['o']);
});

test('with_payload and with_vector shape each hit', async (t) => {
  const { call } = await openTestApp(t);
  const payload = { a: 1, b: 'two', c: { d: [3] } };
  await collectionWith(call, 'cos', { vector_size: 2, distance: 'cosine' }, [{ id: 'p', vector: [3, 4], payload }]);
  await collectionWith(call, 'dot', { vector_size: 2, distance: 'dot' }, [{ id: 'p', vector: [3, 4], payload }]);

  const noPayload = await search(call, 'dot', { vector: [1, 0], with_payload: false });
  assert.deepEqual(Object.keys(noPayload[0] as Hit).sort(), ['id', 'score', 'version']);
  assert.deepEqual((await search(call, 'dot', { vector: [1, 0], with_payload: ['a'] }))[0]?.payload, { a: 1 });
  assert.deepEqual((await search(call, 'dot', { vector: [1, 0], with_payload: ['c', 'missing'] }))[0]?.payload, { c: { d: [3] } });
  assert.deepEqual((await search(call, 'dot', { vector: [1, 0], with_payload: true }))[0]?.payload, payload);
  assert.equal((await search(call, 'dot', { vector: [1, 0] }))[0]?.vector, undefined);

  const dot = await search(call, 'dot', { vector: [1, 0], with_vector: true });
  assert.deepEqual(Object.keys(dot[0] as Hit).sort(), ['id', 'payload', 'score', 'vector', 'version']);
  assert.deepEqual(dot[0]?.vector, [3, 4]);
  const cos = await search(call, 'cos', { vector: [1, 0], with_vector: true, with_payload: false });
  assert.deepEqual(Object.keys(cos[0] as Hit).sort(), ['id', 'score', 'vector', 'version']);
  const [x, y] = cos[0]?.vector ?? [];
  assert.ok(Math.abs((x as number) - 0.6) < 1e-6 && Math.abs((y as number) - 0.8) < 1e-6, `normalised vector, got ${cos[0]?.vector}`);
  assert.ok(Math.abs((cos[0] as Hit).score - 0.6) < 1e-6);

  for (const body of [{ with_payload: 'a' }, { with_payload: [1] }, { with_vector: 'yes' }]) {
    const r = await call('POST', '/collections/dot/points/search', { vector: [1, 0], ...body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.status.error, new RegExp(`^${Object.keys(body)[0]}`));
  }
});

test('params.exact and params.ef are accepted and give the exact ranking', async (t) => {
  const { call } = await openTestApp(t);
  const vectors = randomVectors(new SeededRng(11), 40, 4);
  await collectionWith(
    call,
    'r',
    { vector_size: 4, distance: 'euclid' },
    vectors.map((vector, i) => ({ id: `v${i}`, vector })),
  );
  const query = [0.1, -0.2, 0.3, 0];
  const plain = await search(call, 'r', { vector: query, limit: 40 });
  const expected = vectors.map((v, i) => ({ id: `v${i}`, d: Math.hypot(...v.map((x, j) => Math.fround(x) - (query[j] as number))) })).sort((p, q) => p.d - q.d);
  assert.deepEqual(
    idsOf(plain),
    expected.map((e) => e.id),
  );
  assert.deepEqual(await search(call, 'r', { vector: query, limit: 40, params: { exact: true } }), plain);
  assert.deepEqual(await search(call, 'r', { vector: query, limit: 40, params: { exact: false, ef: 8 } }), plain);
  const bad = await call('POST', '/collections/r/points/search', { vector: query, params: { exact: 'yes' } });
  assert.equal(bad.status, 400);
  assert.match(bad.body.status.error, /^params\.exact: /);
});

test('the query vector is validated: dimension, element types, finiteness', async (t) => {
  const { call } = await openTestApp(t);
  await collectionWith(call, 'd', { vector_size: 2, distance: 'dot' }, PLANE);
  const cases: Array<[unknown, RegExp]> = [
    [{ vector: [1, 0, 0] }, /^vector: expected 2 numbers, got 3$/],
    [{ vector: [1] }, /^vector: expected 2 numbers, got 1$/],
    [{ vector: [] }, /^vector: expected 2 numbers, got 0$/],
    [{ vector: [1, 'x'] }, /^vector\[1\]: /],
    [{ vector: [1, 1e39] }, /^vector\[1\]: /],
    [{ limit: 3 }, /^vector: /],
    ['{"vector":[1e400,0]}', /^vector\[0\]: /],
  ];
  for (const [body, message] of cases) {
    const r = await call('POST', '/collections/d/points/search', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.status.error, message, JSON.stringify(body));
  }
  const missing = await call('POST', '/collections/nope/points/search', { vector: [1, 0] });
  assert.equal(missing.status, 404);
});

test('a filtered search returns min(limit, matches) results, all matching, best first', async (t) => {
  const { call } = await openTestApp(t);
  const points = Array.from({ length: 30 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, vector: [i, 1], payload: { n: i, even: i % 2 === 0 } }));
  await collectionWith(call, 'f', { vector_size: 2, distance: 'dot' }, points);
  const high = await search(call, 'f', { vector: [1, 0], limit: 10, filter: { must: [{ key: 'n', range: { gte: 25 } }] } });
  assert.deepEqual(idsOf(high), ['p29', 'p28', 'p27', 'p26', 'p25']);
  const even = await search(call, 'f', { vector: [-1, 0], limit: 4, filter: { must: [{ key: 'even', match: { value: true } }] } });
  assert.deepEqual(idsOf(even), ['p00', 'p02', 'p04', 'p06']);
  const odd = await search(call, 'f', { vector: [1, 0], limit: 100, filter: { must_not: [{ key: 'even', match: { value: true } }] } });
  assert.equal(odd.length, 15);
  assert.ok(odd.every((h) => (h.payload?.n as number) % 2 === 1));
  assert.deepEqual(
    odd.map((h) => h.score),
    [...odd.map((h) => h.score)].sort((a, b) => b - a),
  );
  // A selective filter far from the query still fills the limit.
  const rare = await search(call, 'f', { vector: [1, 0], limit: 3, filter: { must: [{ key: 'n', range: { lt: 2 } }] } });
  assert.deepEqual(idsOf(rare), ['p01', 'p00']);
  assert.deepEqual(await search(call, 'f', { vector: [1, 0], filter: { must: [{ key: 'n', match: { value: 'x' } }] } }), []);
  assert.equal((await search(call, 'f', { vector: [1, 0], limit: 30, filter: {} })).length, 30);
  assert.equal((await search(call, 'f', { vector: [1, 0], limit: 30, filter: null })).length, 30);
});

test('an empty collection gives [] (never null), also after deleting every point', async (t) => {
  const { call } = await openTestApp(t);
  await collectionWith(call, 'e', { vector_size: 3, distance: 'cosine' }, []);
  const r = await call('POST', '/collections/e/points/search', { vector: [1, 2, 3] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.result, []);
  assert.match(r.raw, /"result":\[\]/);
  await call('PUT', '/collections/e/points', { points: [{ id: 'a', vector: [1, 0, 0] }] });
  await call('POST', '/collections/e/points/delete', { points: ['a'] });
  assert.deepEqual(await search(call, 'e', { vector: [1, 2, 3], filter: { must: [{ key: 'x', match: { value: 1 } }] } }), []);
});

function unit(v: number[]): number[] {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

test('sq8 collections search with scores close to the float32 ones', async (t) => {
  const { call } = await openTestApp(t);
  const rng = new SeededRng(42);
  const vectors = randomVectors(rng, 60, 16).map(unit);
  const points = vectors.map((vector, i) => ({ id: `v${i}`, vector, payload: { i } }));
  for (const distance of ['cosine', 'dot', 'euclid']) {
    await collectionWith(call, `${distance}-f32`, { vector_size: 16, distance }, points);
    await collectionWith(call, `${distance}-sq8`, { vector_size: 16, distance, quantization: 'sq8' }, points);
    const info = await call('GET', `/collections/${distance}-sq8`);
    assert.equal(info.body.result.quantization, 'sq8');
    assert.equal(info.body.result.points_count, 60);
    for (const query of randomVectors(rng, 3, 16).map(unit)) {
      const exact = await search(call, `${distance}-f32`, { vector: query, limit: 60 });
      const quantized = await search(call, `${distance}-sq8`, { vector: query, limit: 60, with_vector: true });
      assert.equal(quantized.length, 60);
      const exactScore = new Map(exact.map((h) => [h.id, h.score]));
      for (const hit of quantized) {
        const want = exactScore.get(hit.id) as number;
        assert.ok(Math.abs(hit.score - want) <= 0.05, `${distance} ${hit.id}: sq8 ${hit.score} vs f32 ${want}`);
        assert.deepEqual(hit.payload, { i: Number(hit.id.slice(1)) });
        const original = vectors[Number(hit.id.slice(1))] as number[];
        assert.ok(
          hit.vector?.every((x, j) => Math.abs(x - (original[j] as number)) <= 0.05),
          `${distance} ${hit.id}: dequantized vector too far from the original`,
        );
      }
      const ascending = distance === 'euclid';
      const scores = quantized.map((h) => h.score);
      assert.deepEqual(
        scores,
        [...scores].sort((a, b) => (ascending ? a - b : b - a)),
      );
    }
    // A stored vector finds itself first.
    const self = await search(call, `${distance}-sq8`, { vector: vectors[7] as number[], limit: 1 });
    assert.equal(self[0]?.id, 'v7');
  }
});
