/**
 * Qdrant's `lookup_from` on the Qdrant port: Qdrant's own cases (tests/openapi/
 * test_multicollection_reco.py with the unnamed vector, test_discover.py's discovery by ids of a
 * named one): a search by ids of another collection equals the one by their vectors, for named,
 * multi- and sparse vectors and every strategy; batches mixing lookups, the query API's nearest
 * id, groups; the errors (an unknown collection, id or name, another dimension or kind, a point
 * lacking the vector, prefetches).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QDRANT_BASIC_VECTORS } from '../helpers/qdrant-basic.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

test("Qdrant's lookup_from cases: ids of another collection stand for their vectors", async (t) => {
  const { url } = await startQdrant(t);
  const call = async (method: string, path: string, body?: Body, status = 200): Promise<Body> => {
    const r = await http(url, method, path, body);
    assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
    return r.body;
  };
  await call('PUT', '/collections/a', { vectors: { size: 4, distance: 'Dot' } });
  await call('PUT', '/collections/a/points?wait=true', { points: QDRANT_BASIC_VECTORS.map((vector, i) => ({ id: i + 1, vector, payload: { g: i % 2 } })) });
  await call('PUT', '/collections/b', { vectors: { size: 4, distance: 'Dot' } });
  await call('PUT', '/collections/b/points?wait=true', {
    points: [
      { id: 1, vector: [1, 0, 0, 0] },
      { id: ZERO_UUID, vector: [0, 1, 0, 0] },
      { id: 2, vector: [0, 0, 0, 2] },
    ],
  });
  const lookup = { collection: 'b' };
  const one = await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [1], with_payload: true, lookup_from: lookup });
  assert.equal(one.result.length, 3);
  assert.equal(one.result[0].id, 8, 'the vector with the largest first component');
  const batch = await call('POST', '/collections/a/points/recommend/batch', {
    searches: [
      { limit: 3, positive: [1], lookup_from: lookup },
      { limit: 3, positive: [ZERO_UUID], lookup_from: lookup },
      { limit: 3, positive: [1] },
    ],
  });
  assert.deepEqual(
    batch.result.map((r: Body[]) => r.length),
    [3, 3, 3],
  );
  assert.equal(batch.result[0][0].id, 8);
  assert.equal(batch.result[1][0].id, 7, 'the vector with the largest second component');
  assert.ok(!batch.result[2].some((h: Body) => h.id === 1), 'without lookup_from the example is left out');

  const byId = await call('POST', '/collections/a/points/recommend', { positive: [1], negative: [2], limit: 10, lookup_from: { collection: 'b', vector: '' } });
  const byVector = await call('POST', '/collections/a/points/recommend', { positive: [[1, 0, 0, 0]], negative: [[0, 0, 0, 2]], limit: 10 });
  assert.deepEqual(byId.result, byVector.result);
  assert.equal(byId.result.length, 8, "a lookup's ids are another collection's points: none is left out here");

  const nearest = await call('POST', '/collections/a/points/query', { query: 1, lookup_from: lookup, limit: 8 });
  const plain = await call('POST', '/collections/a/points/query', { query: [1, 0, 0, 0], limit: 8 });
  assert.deepEqual(nearest.result.points, plain.result.points);
  const recommended = await call('POST', '/collections/a/points/query', { query: { recommend: { positive: [ZERO_UUID] } }, lookup_from: lookup, limit: 2 });
  assert.equal(recommended.result.points[0].id, 7);
  const grouped = await call('POST', '/collections/a/points/recommend/groups', { positive: [1], lookup_from: lookup, group_by: 'g', group_size: 2, limit: 2 });
  assert.equal(grouped.result.groups.length, 2);
  assert.equal(grouped.result.groups[0].hits[0].id, 8);

  await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [1], lookup_from: { collection: 'unknown_collection' } }, 404);
  await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [1], lookup_from: { collection: 'b', vector: 'other' } }, 400);
  await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [99], lookup_from: lookup }, 404);
  await call('PUT', '/collections/c5', { vectors: { size: 5, distance: 'Dot' } });
  await call('PUT', '/collections/c5/points?wait=true', { points: [{ id: 1, vector: [1, 0, 0, 0, 0] }] });
  const wrongSize = await call('POST', '/collections/a/points/recommend', { limit: 3, positive: [1], lookup_from: { collection: 'c5' } }, 400);
  assert.match(wrongSize.status.error, /5 dimensions/);
  // Over prefetches: the query re-scoring their candidates is the other collection's point 1's vector.
  const over = await call('POST', '/collections/a/points/query', { prefetch: { query: [0, 0, 0, 1], limit: 5 }, query: 1, lookup_from: lookup, limit: 3 });
  const overByVector = await call('POST', '/collections/a/points/query', { prefetch: { query: [0, 0, 0, 1], limit: 5 }, query: [1, 0, 0, 0], limit: 3 });
  assert.deepEqual(over.result.points, overByVector.result.points);
});

test('lookup_from with named, multi- and sparse vectors, by any strategy and in discovery: ids stand for their vectors under the looked-up name', async (t) => {
  const { url } = await startQdrant(t);
  const call = async (path: string, body: Body, status = 200): Promise<Body> => {
    const r = await http(url, 'POST', path, body);
    assert.equal(r.status, status, `${path} ${JSON.stringify(body)}: ${r.text}`);
    return r.body;
  };
  const put = async (path: string, body: Body): Promise<void> => {
    const r = await http(url, 'PUT', path, body);
    assert.equal(r.status, 200, r.text);
  };
  await put('/collections/a', {
    vectors: {
      dense: { size: 4, distance: 'Dot' },
      img: { size: 3, distance: 'Euclid' },
      col: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' } },
    },
    sparse_vectors: { s: {} },
  });
  const row = (i: number, n: number): number[] => Array.from({ length: n }, (_, d) => ((i * 7 + d * 3) % 5) - 2);
  await put('/collections/a/points?wait=true', {
    points: Array.from({ length: 30 }, (_, i) => ({
      id: i + 1,
      vector: { dense: row(i, 4), img: row(i + 1, 3), col: [row(i, 2), row(i + 2, 2)], s: { indices: [i % 4, 4 + (i % 3)], values: [1, (i % 5) - 2] } },
    })),
  });
  // The other collection: the same names, and `other` (4-d) and `words` (sparse) under other names; point 3 lacks `img`.
  await put('/collections/b', {
    vectors: {
      dense: { size: 4, distance: 'Dot' },
      other: { size: 4, distance: 'Dot' },
      img: { size: 3, distance: 'Euclid' },
      col: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' } },
    },
    sparse_vectors: { words: {} },
  });
  const theirs: Record<number, Body> = {
    1: { dense: [0, 1, 0, 0], other: [1, 0, 0, 0], img: [1, 2, 0], col: [[1, 0]], words: { indices: [1, 5], values: [2, 1] } },
    2: {
      dense: [0, 0, 1, 0],
      other: [0, 0, 0, 2],
      img: [0, -1, 1],
      col: [
        [0, 1],
        [1, 1],
      ],
      words: { indices: [0], values: [1] },
    },
    3: { dense: [1, 1, 0, 0], other: [1, 1, 1, 1], col: [[-1, 1]], words: { indices: [2, 6], values: [1, 1] } },
  };
  await put('/collections/b/points?wait=true', { points: Object.entries(theirs).map(([id, vector]) => ({ id: Number(id), vector })) });
  const points = (body: Body): Body[] => body.result.points ?? body.result;
  const same = async (path: string, byId: Body, byVector: Body, what: string): Promise<void> => {
    assert.deepEqual(points(await call(path, byId)), points(await call(path, byVector)), what);
  };

  // Qdrant's test_discover case: a target vector and a context pair by ids of the other collection's `other` vector.
  await same(
    '/collections/a/points/discover',
    { target: [0.2, 0.1, 0.9, 0.7], context: [{ positive: 1, negative: 2 }], limit: 10, using: 'dense', lookup_from: { collection: 'b', vector: 'other' } },
    { target: [0.2, 0.1, 0.9, 0.7], context: [{ positive: [1, 0, 0, 0], negative: [0, 0, 0, 2] }], limit: 10, using: 'dense' },
    'discover by ids of `other`',
  );
  for (const strategy of ['average_vector', 'best_score', 'sum_scores'] as const) {
    // Without `vector`: the name the search uses (`img`); point 3 lacks it and is dropped from its side.
    await same(
      '/collections/a/points/query',
      { query: { recommend: { positive: [1, 3], negative: [2], strategy } }, using: 'img', lookup_from: { collection: 'b' }, limit: 6 },
      { query: { recommend: { positive: [theirs[1].img], negative: [theirs[2].img], strategy } }, using: 'img', limit: 6 },
      `img ${strategy}`,
    );
    await same(
      '/collections/a/points/query',
      { query: { recommend: { positive: [1, 2], negative: [3], strategy } }, using: 'col', lookup_from: { collection: 'b' }, limit: 6 },
      { query: { recommend: { positive: [theirs[1].col, theirs[2].col], negative: [theirs[3].col], strategy } }, using: 'col', limit: 6 },
      `col ${strategy}`,
    );
    await same(
      '/collections/a/points/query',
      { query: { recommend: { positive: [1], negative: [3], strategy } }, using: 's', lookup_from: { collection: 'b', vector: 'words' }, limit: 6 },
      { query: { recommend: { positive: [theirs[1].words], negative: [theirs[3].words], strategy } }, using: 's', limit: 6 },
      `sparse ${strategy}`,
    );
  }
  await same(
    '/collections/a/points/query',
    { query: { context: [{ positive: 1, negative: 2 }] }, using: 'col', lookup_from: { collection: 'b' }, limit: 5 },
    { query: { context: [{ positive: theirs[1].col, negative: theirs[2].col }] }, using: 'col', limit: 5 },
    'context by ids of `col`',
  );
  await same(
    '/collections/a/points/query',
    { query: 2, using: 's', lookup_from: { collection: 'b', vector: 'words' }, limit: 5 },
    { query: theirs[2].words, using: 's', limit: 5 },
    'a nearest query by an id of `words`',
  );
  // In prefetches, each with its own lookup_from (or none), fused; the query over them by a looked-up id too.
  await same(
    '/collections/a/points/query',
    {
      prefetch: [
        { query: { recommend: { positive: [1], negative: [2], strategy: 'best_score' } }, using: 'col', lookup_from: { collection: 'b' }, limit: 10 },
        { query: 2, using: 's', lookup_from: { collection: 'b', vector: 'words' }, limit: 10 },
        { query: 4, using: 'img', limit: 10 },
      ],
      query: { fusion: 'rrf' },
      limit: 8,
    },
    {
      prefetch: [
        { query: { recommend: { positive: [theirs[1].col], negative: [theirs[2].col], strategy: 'best_score' } }, using: 'col', limit: 10 },
        { query: theirs[2].words, using: 's', limit: 10 },
        { query: 4, using: 'img', limit: 10 },
      ],
      query: { fusion: 'rrf' },
      limit: 8,
    },
    'prefetches by looked-up ids, fused',
  );
  await same(
    '/collections/a/points/query',
    { prefetch: { query: [1, 1, 1, 1], using: 'dense', limit: 12 }, query: 1, using: 'img', lookup_from: { collection: 'b' }, limit: 5 },
    { prefetch: { query: [1, 1, 1, 1], using: 'dense', limit: 12 }, query: theirs[1].img, using: 'img', limit: 5 },
    'a looked-up id re-scoring the prefetches',
  );
  const inPrefetch = await call(
    '/collections/a/points/query',
    { prefetch: { query: 3, using: 'img', lookup_from: { collection: 'b' } }, query: { fusion: 'rrf' } },
    404,
  );
  assert.match(inPrefetch.status.error, /Vector with name "img" for point 3/);

  // A looked-up point is another collection's: an id that is also one of this collection's is not left out.
  const near = await call('/collections/a/points/query', { query: 1, using: 'img', lookup_from: { collection: 'b' }, limit: 30 });
  assert.ok(near.result.points.some((h: Body) => h.id === 1));

  // Kinds that differ, a name the other lacks, a point that lacks the vector where one is required.
  const refused = await call(
    '/collections/a/points/query',
    { query: { recommend: { positive: [1] } }, using: 'img', lookup_from: { collection: 'b', vector: 'words' } },
    400,
  );
  assert.match(refused.status.error, /lookup_from: the vectors "words" of collection "b" are a sparse vector; this search's are a vector of 3 dimensions/);
  const multi = await call(
    '/collections/a/points/query',
    { query: { recommend: { positive: [1] } }, using: 'dense', lookup_from: { collection: 'b', vector: 'col' } },
    400,
  );
  assert.match(multi.status.error, /are a multi-vector of 2 dimensions/);
  await call('/collections/a/points/query', { query: 1, using: 'img', lookup_from: { collection: 'b', vector: 'nope' } }, 400);
  const lacking = await call('/collections/a/points/query', { query: 3, using: 'img', lookup_from: { collection: 'b' } }, 404);
  assert.match(lacking.status.error, /Vector with name "img" for point 3/);
  await call('/collections/a/points/query', { query: { discover: { target: 3, context: [] } }, using: 'img', lookup_from: { collection: 'b' } }, 404);
});
