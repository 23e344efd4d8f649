/**
 * Sparse vectors on kith's own port and through its client: a collection declares them
 * (`sparse_vectors`, `vector_name`), points carry them (`sparse_vectors`), reads show them, a
 * search by `sparse_vector` answers as the Qdrant port's query `using` the same name over the same
 * database, a hybrid `/points/query` fuses a dense and a sparse prefetch as the Qdrant port does,
 * vector updates keep what they do not name, and the answers outlive a restart.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient, type KithClientError } from '../../src/api/client/kith-client.js';
import { SeededRng } from '../../src/core/rng.js';
import { nastySparse } from '../helpers/sparse-model.js';
import { openTestApp } from '../helpers/app.js';
import { http, startQdrant } from './qdrant-harness.js';

test("kith's port: sparse vectors declared, written, shown and searched as the Qdrant port searches them", async (t) => {
  const { kithUrl, url } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  const created = await client.createCollection({
    name: 'k',
    vector_size: 2,
    distance: 'cosine',
    hnsw: true,
    vector_name: 'dense',
    sparse_vectors: { words: { modifier: 'idf' }, tags: {} },
  });
  assert.equal(created.vector_name, 'dense');
  assert.deepEqual(created.sparse_vectors, { words: { modifier: 'idf' }, tags: { modifier: 'none' } });
  const rng = new SeededRng(91);
  await client.upsert(
    'k',
    Array.from({ length: 50 }, (_, i) => ({
      id: `p${i}`,
      vector: [1, i % 4],
      payload: { i },
      ...(i % 6 === 5 ? {} : { sparse_vectors: { words: nastySparse(rng, 15) } }),
    })),
  );
  const [p0] = await client.retrieve('k', { ids: ['p0'], with_vector: true });
  assert.deepEqual(Object.keys(p0?.sparse_vectors ?? {}), ['words']);
  const [p5] = await client.retrieve('k', { ids: ['p5'], with_vector: true });
  assert.equal(p5?.sparse_vectors, undefined, 'a point without sparse vectors shows none');
  for (let round = 0; round < 12; round++) {
    const query = nastySparse(rng, 15);
    if (query.indices.length === 0) continue;
    const kith = await client.search('k', { sparse_vector: { name: 'words', ...query }, limit: 7, with_payload: false });
    const qdrant = await http(url, 'POST', '/collections/k/points/query', { query, using: 'words', limit: 7 });
    assert.equal(qdrant.status, 200, qdrant.text);
    assert.deepEqual(
      kith.map((h) => h.id),
      qdrant.body.result.points.map((h: { id: string }) => h.id),
      `round ${round}: ${JSON.stringify(query)}`,
    );
    // A hybrid query: a dense and a sparse prefetch fused by RRF, in both dialects.
    const kithHybrid = await client.query('k', {
      prefetch: [
        { vector: [1, round % 4], limit: 10, params: { exact: true } },
        { sparse_vector: { name: 'words', ...query }, limit: 10 },
      ],
      fusion: 'rrf',
      limit: 5,
    });
    const qdrantHybrid = await http(url, 'POST', '/collections/k/points/query', {
      prefetch: [
        { query: [1, round % 4], using: 'dense', limit: 10, params: { exact: true } },
        { query, using: 'words', limit: 10 },
      ],
      query: { fusion: 'rrf' },
      limit: 5,
    });
    assert.equal(qdrantHybrid.status, 200, qdrantHybrid.text);
    assert.deepEqual(
      kithHybrid.map((h) => [h.id, Math.fround(h.score)]),
      qdrantHybrid.body.result.points.map((h: { id: string; score: number }) => [h.id, Math.fround(h.score)]),
      `hybrid round ${round}`,
    );
  }
  await client.updateVectors('k', [{ id: 'p1', sparse_vectors: { tags: { indices: [7], values: [2] } } }]);
  const [p1] = await client.retrieve('k', { ids: ['p1'], with_vector: true });
  assert.deepEqual(Object.keys(p1?.sparse_vectors ?? {}).sort(), ['tags', 'words'], 'the update added tags and kept words');
  assert.deepEqual(p1?.vector, [Math.SQRT1_2, Math.SQRT1_2].map(Math.fround), 'and kept the dense vector');
  await assert.rejects(
    () => client.search('k', { sparse_vector: { name: 'nope', indices: [1], values: [1] } }),
    (e: KithClientError) => e.status === 400 && /sparse_vector\.name: the collection has no sparse vector named "nope"/.test(e.message),
  );
  await assert.rejects(
    () => client.createCollection({ name: 'bad', vector_size: 2, distance: 'dot', vector_name: 's', sparse_vectors: { s: {} } }),
    (e: KithClientError) => e.status === 400 && /sparse_vectors\.s: the dense vector is named "s" already/.test(e.message),
  );
});

test('sparse vectors outlive a restart: records, config and answers', async (t) => {
  let app = await openTestApp(t);
  const create = await app.call('POST', '/collections', { name: 'r', vector_size: 2, distance: 'dot', sparse_vectors: { s: { modifier: 'idf' } } });
  assert.equal(create.status, 200, create.raw);
  const write = await app.call('PUT', '/collections/r/points', {
    points: [
      { id: 'a', vector: [1, 0], sparse_vectors: { s: { indices: [1, 2], values: [1, 1] } } },
      { id: 'b', vector: [0, 1], sparse_vectors: { s: { indices: [2], values: [3] } } },
      { id: 'c', vector: [1, 1] },
    ],
  });
  assert.equal(write.status, 200, write.raw);
  const search = { sparse_vector: { name: 's', indices: [1, 2], values: [1, 1] }, with_vector: true };
  const before = await app.call('POST', '/collections/r/points/search', search);
  assert.equal(before.status, 200, before.raw);
  assert.deepEqual(
    before.body.result.map((h: { id: string }) => h.id),
    ['a', 'b'],
  );
  app = await app.reopen();
  const after = await app.call('POST', '/collections/r/points/search', search);
  assert.deepEqual(after.body.result, before.body.result);
  const info = await app.call('GET', '/collections/r');
  assert.deepEqual(info.body.result.sparse_vectors, { s: { modifier: 'idf' } });
  const missing = await app.call('POST', '/collections/r/points/search', { limit: 1 });
  assert.equal(missing.status, 400);
  assert.match(missing.body.status.error, /vector/);
});

test("kith's port: named vectors and a multi-vector declared, written, shown, searched and re-ranking a prefetch", async (t) => {
  const { kithUrl, url } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  const created = await client.createCollection({
    name: 'n',
    vector_size: 2,
    distance: 'dot',
    named_vectors: { img: { size: 2, distance: 'euclid' }, col: { size: 2, distance: 'cosine', multivector: true } },
  });
  assert.deepEqual(created.named_vectors, {
    img: { size: 2, distance: 'Euclid', multivector: false },
    col: { size: 2, distance: 'Cosine', multivector: true },
  });
  await client.upsert('n', [
    { id: 'a', vector: [1, 0], named_vectors: { img: [0, 0], col: [[1, 0]] } },
    {
      id: 'b',
      vector: [0, 1],
      named_vectors: {
        img: [3, 4],
        col: [
          [0, 1],
          [1, 1],
        ],
      },
    },
    {
      id: 'c',
      vector: [1, 1],
      named_vectors: {
        col: [
          [1, 0],
          [0, 1],
        ],
      },
    },
  ]);
  const near = await client.search('n', { named_vector: { name: 'img', vector: [3, 4] }, with_payload: false });
  assert.deepEqual(
    near.map((h) => [h.id, h.score]),
    [
      ['b', 0],
      ['a', 5],
    ],
    'Euclid distances, nearest first; c has no img vector',
  );
  const point = await client.getPoint('n', 'b');
  assert.deepEqual(point.named_vectors?.img, [3, 4]);
  assert.equal(point.named_vectors?.col?.length, 2);
  // A multi-vector re-ranking the main vector's prefetch, in both dialects: the same order and scores.
  const kith = await client.query('n', {
    prefetch: [{ vector: [1, 1], limit: 3, params: { exact: true } }],
    named_vector: {
      name: 'col',
      vector: [
        [1, 0],
        [0, 1],
      ],
    },
    limit: 3,
  });
  const qdrant = await http(url, 'POST', '/collections/n/points/query', {
    prefetch: { query: [1, 1], limit: 3, params: { exact: true } },
    query: [
      [1, 0],
      [0, 1],
    ],
    using: 'col',
    limit: 3,
  });
  assert.equal(qdrant.status, 200, qdrant.text);
  assert.deepEqual(
    kith.map((h) => h.id),
    qdrant.body.result.points.map((h: { id: string }) => h.id),
  );
  assert.equal(kith[0]?.id, 'c', 'c holds both query rows exactly: max_sim 2');
  assert.ok(Math.abs((kith[0]?.score ?? 0) - 2) < 1e-6);
  // has_vector on kith's port: the main vector ("") every point, a named one its holders, another name none.
  const holders = async (filter: unknown): Promise<string[]> => {
    const answer = await http(kithUrl, 'POST', '/collections/n/points/scroll', { filter, limit: 10 });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.result.points.map((p: { id: string }) => p.id);
  };
  assert.deepEqual(await holders({ must: [{ has_vector: '' }] }), ['a', 'b', 'c']);
  assert.deepEqual(await holders({ must: [{ has_vector: 'img' }] }), ['a', 'b']);
  assert.deepEqual(await holders({ must_not: [{ has_vector: 'img' }] }), ['c']);
  assert.deepEqual(await holders({ must: [{ has_vector: 'nope' }] }), []);
  const filtered = await client.search('n', { vector: [1, 1], filter: { must_not: [{ has_vector: 'img' }] }, params: { exact: true } });
  assert.deepEqual(
    filtered.map((h) => h.id),
    ['c'],
  );
  const badName = await http(kithUrl, 'POST', '/collections/n/points/scroll', { filter: { must: [{ has_vector: null }] } });
  assert.equal(badName.status, 400, badName.text);
  assert.match(badName.body.status.error, /filter\.must\[0\]/);
});
