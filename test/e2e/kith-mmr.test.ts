/**
 * MMR on kith's own port (`mmr: {diversity, candidates}` on …/points/search and its batch) by the
 * main vector, a named dense vector, a multi-vector and a sparse vector: the same hits, order and
 * scores as the Qdrant port's `{nearest, mmr}` over the same database, whose MMR the model tests
 * check (qdrant-mmr*.test.ts); and its 400s.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { nastySparse } from '../helpers/sparse-model.js';
import { sameHits } from '../helpers/same-hits.js';
import { http, startQdrant } from './qdrant-harness.js';

type Hit = { id: string | number; score: number };

test("MMR on kith's port equals the Qdrant port's, by every kind of vector", async (t) => {
  const { url, kithUrl } = await startQdrant(t);
  const seed = testSeed(9191);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const created = await http(kithUrl, 'POST', '/collections', {
    name: 'm',
    vector_size: 3,
    distance: 'cosine',
    hnsw: true,
    named_vectors: { img: { size: 2, distance: 'euclid' }, col: { size: 2, distance: 'dot', multivector: true } },
    sparse_vectors: { s: {} },
  });
  assert.equal(created.status, 200, created.text);
  const row = (n: number): number[] => Array.from({ length: n }, () => rng.int(7) - 3);
  const points = Array.from({ length: 80 }, (_, i) => ({
    id: i,
    // Duplicates among the main vectors: MMR must pass over them.
    vector: i % 9 === 0 ? [1, 1, 1] : row(3),
    named_vectors: { ...(i % 4 !== 0 ? { img: row(2) } : {}), ...(i % 3 !== 0 ? { col: [row(2), row(2)] } : {}) },
    ...(i % 5 !== 0 ? { sparse_vectors: { s: nastySparse(rng, 6) } } : {}),
  }));
  const put = await http(kithUrl, 'PUT', '/collections/m/points', { points });
  assert.equal(put.status, 200, put.text);
  for (let round = 0; round < 8; round++) {
    const diversity = [0, 0.3, 0.7, 1][round % 4] as number;
    const candidates = 5 + rng.int(30);
    const limit = 1 + rng.int(8);
    const queries = [
      { kith: { vector: row(3) }, qdrant: (q: { vector: number[] }) => ({ nearest: q.vector }), using: undefined },
      {
        kith: { named_vector: { name: 'img', vector: row(2) } },
        qdrant: (q: Record<string, { vector: unknown }>) => ({ nearest: q.named_vector?.vector }),
        using: 'img',
      },
      {
        kith: { named_vector: { name: 'col', vector: [row(2)] } },
        qdrant: (q: Record<string, { vector: unknown }>) => ({ nearest: q.named_vector?.vector }),
        using: 'col',
      },
    ] as const;
    for (const { kith, using } of queries) {
      const nearest = 'vector' in kith ? kith.vector : kith.named_vector.vector;
      const want = await http(url, 'POST', '/collections/m/points/query', {
        query: { nearest, mmr: { diversity, candidates_limit: candidates } },
        ...(using === undefined ? {} : { using }),
        limit,
      });
      assert.equal(want.status, 200, want.text);
      const got = await http(kithUrl, 'POST', '/collections/m/points/search', { ...kith, mmr: { diversity, candidates }, limit, with_payload: false });
      assert.equal(got.status, 200, got.text);
      sameHits(got.body.result, want.body.result.points, `seed ${seed} round ${round} ${using ?? 'main'} diversity ${diversity}`);
    }
    const sparse = nastySparse(rng, 6);
    if (sparse.indices.length === 0) continue;
    const want = await http(url, 'POST', '/collections/m/points/query', {
      query: { nearest: sparse, mmr: { diversity, candidates_limit: candidates } },
      using: 's',
      limit,
    });
    assert.equal(want.status, 200, want.text);
    const [got] = (
      await http(kithUrl, 'POST', '/collections/m/points/search/batch', {
        searches: [{ sparse_vector: { name: 's', ...sparse }, mmr: { diversity, candidates }, limit }],
      })
    ).body.result as Hit[][];
    sameHits(got as Hit[], want.body.result.points, `seed ${seed} round ${round} sparse diversity ${diversity}`);
  }
  for (const [body, pattern] of [
    [{ vector: [1, 0, 0], mmr: { diversity: 2, candidates: 10 } }, /mmr\/diversity|mmr\.diversity/],
    [{ vector: [1, 0, 0], mmr: { diversity: 0.5 } }, /mmr/],
    [{ vector: [1, 0, 0], mmr: { diversity: 0.5, candidates: 10, lambda: 1 } }, /mmr/],
  ] as const) {
    const r = await http(kithUrl, 'POST', '/collections/m/points/search', body);
    assert.equal(r.status, 400, r.text);
    assert.match(r.body.status.error, pattern);
  }
  const examples = await http(kithUrl, 'POST', '/collections/m/points/recommend', { positive: [1], mmr: { diversity: 0.5, candidates: 10 } });
  assert.equal(examples.status, 400, examples.text);
});
