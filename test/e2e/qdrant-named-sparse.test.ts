/**
 * Sparse vectors and a named dense vector on the Qdrant port, through the official client and raw
 * HTTP: the collection's config and echo, points with named vectors (points and batch forms), reads
 * showing them by name, sparse queries (idf or not, filtered) against a brute-force model, hybrid
 * queries (dense + sparse prefetches fused by RRF and DBSF) against exact fusion of the two plain
 * queries, vector updates that keep what they do not name, and the errors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { namedModelSearch, nastySparse, type SparseJson, sameSparseHits, sparseModelSearch } from '../helpers/sparse-model.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;

// Named as Python LlamaIndex's hybrid store names them: `text-dense` and `text-sparse`.
test('a named dense vector and sparse vectors: config, writes, reads and sparse queries against the model', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('docs', {
    vectors: { 'text-dense': { size: 3, distance: 'Cosine', on_disk: true } },
    sparse_vectors: { 'text-sparse': { modifier: 'idf', index: { on_disk: false } }, tags: {} },
  });
  const info = await client.getCollection('docs');
  assert.deepEqual(info.config.params.vectors, { 'text-dense': { size: 3, distance: 'Cosine', on_disk: true } });
  assert.deepEqual(info.config.params.sparse_vectors, { 'text-sparse': { modifier: 'idf', index: { on_disk: false } }, tags: {} });

  const seed = 2211;
  const rng = new SeededRng(seed);
  const text = new Map<string, SparseJson>();
  const tags = new Map<string, SparseJson>();
  const points: Body[] = Array.from({ length: 60 }, (_, i) => {
    const vector: Record<string, unknown> = { 'text-dense': [1 + (i % 3), i % 5, 1] };
    if (i % 7 !== 3) {
      const v = nastySparse(rng);
      vector['text-sparse'] = v;
      text.set(String(i), v);
    }
    if (i % 2 === 0) {
      const v = { indices: [i % 4], values: [1] };
      vector.tags = v;
      tags.set(String(i), v);
    }
    return { id: i, vector, payload: { g: i % 3 } };
  });
  await client.upsert('docs', { points: points.slice(0, 40) });
  // The batch form: a column per name, null where a point lacks that vector.
  const rest = points.slice(40);
  await client.upsert('docs', {
    batch: {
      ids: rest.map((p) => p.id),
      vectors: {
        'text-dense': rest.map((p) => p.vector['text-dense'] as number[]),
        'text-sparse': rest.map((p) => (p.vector['text-sparse'] ?? null) as SparseJson),
        tags: rest.map((p) => (p.vector.tags ?? null) as SparseJson),
      },
      payloads: rest.map((p) => p.payload),
    },
  });
  assert.equal((await client.count('docs')).count, 60);

  const [four] = await client.retrieve('docs', { ids: [4], with_vector: true });
  const shown = four?.vector as Body;
  assert.deepEqual(
    Object.keys(shown).sort(),
    ['tags', 'text-dense', 'text-sparse'].filter((n) => n !== 'text-sparse' || text.has('4')),
  );
  assert.deepEqual(shown.tags, { indices: [0], values: [1] });
  const onlyTags = await client.retrieve('docs', { ids: [4, 3], with_vector: ['tags'] });
  assert.deepEqual(
    onlyTags.map((p) => p.vector),
    [{ tags: { indices: [0], values: [1] } }, {}],
  );

  for (let round = 0; round < 25; round++) {
    const query = nastySparse(rng);
    if (query.indices.length === 0) continue;
    const filtered = round % 3 === 0;
    const limit = 1 + rng.int(15);
    const answer = await client.query('docs', {
      query,
      using: 'text-sparse',
      limit,
      ...(filtered ? { filter: { must: [{ key: 'g', match: { value: 1 } }] } } : {}),
    });
    const expected = sparseModelSearch(text, query, { idf: true, limit, ...(filtered ? { accept: (id: string) => Number(id) % 3 === 1 } : {}) });
    sameSparseHits(
      answer.points.map((p) => ({ id: String(p.id), score: p.score })),
      expected,
      `seed ${seed}, round ${round}, query ${JSON.stringify(query)}`,
    );
  }
  // Without idf: plain dot products; the legacy search endpoint's named sparse vector too.
  const plain = await http(url, 'POST', '/collections/docs/points/search', {
    vector: { name: 'tags', vector: { indices: [0, 7], values: [2, 1] } },
    limit: 60,
  });
  assert.equal(plain.status, 200, plain.text);
  sameSparseHits(
    plain.body.result.map((h: Body) => ({ id: String(h.id), score: h.score })),
    sparseModelSearch(tags, { indices: [0, 7], values: [2, 1] }, { idf: false, limit: 60 }),
    'tags',
  );
  assert.equal(plain.body.result.length, 15, 'the points holding index 0 (no point holds 7): no other point is a hit');
});

// Python LangChain's hybrid mode lays a collection out as the unnamed dense vector plus the sparse
// `langchain-sparse`, and queries it as this test does (a prefetch of each, fused); the TypeScript
// stores (@langchain/qdrant, @llamaindex/qdrant 0.1.32) have no sparse mode to drive.
test('hybrid queries: dense and sparse prefetches fused by RRF and DBSF equal the fusion of the two queries', async (t) => {
  const { client } = await startQdrant(t);
  await client.createCollection('h', { vectors: { size: 4, distance: 'Euclid' }, sparse_vectors: { 'langchain-sparse': { modifier: 'idf' } } });
  const rng = new SeededRng(77);
  await client.upsert('h', {
    points: Array.from({ length: 80 }, (_, i) => ({
      id: i + 1,
      vector: { '': [rng.int(4), rng.int(4), rng.int(4), rng.int(4)], 'langchain-sparse': nastySparse(rng, 12) },
      payload: { even: i % 2 === 0 },
    })),
  });
  for (let round = 0; round < 10; round++) {
    const dense = [rng.int(4), rng.int(4), rng.int(4), rng.int(4)];
    const sparse = nastySparse(rng, 12);
    if (sparse.indices.length === 0) continue;
    const filter = round % 2 === 0 ? { must: [{ key: 'even', match: { value: true } }] } : undefined;
    const prefetch = [
      { query: dense, limit: 20, params: { exact: true } },
      { query: sparse, using: 'langchain-sparse', limit: 20 },
    ];
    const lists = [
      (await client.query('h', { query: dense, limit: 20, params: { exact: true }, ...(filter ? { filter } : {}) })).points,
      (await client.query('h', { query: sparse, using: 'langchain-sparse', limit: 20, ...(filter ? { filter } : {}) })).points,
    ];
    const rrf = await client.query('h', { prefetch, query: { fusion: 'rrf' }, limit: 10, ...(filter ? { filter } : {}) });
    const fusedRrf = new Map<string, number>();
    for (const list of lists) {
      list.forEach((p, i) => {
        fusedRrf.set(String(p.id), (fusedRrf.get(String(p.id)) ?? 0) + 1 / (i + 2));
      });
    }
    const expectRrf = [...fusedRrf].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id));
    sameSparseHits(
      rrf.points.map((p) => ({ id: String(p.id), score: p.score })),
      expectRrf.slice(0, 10),
      `rrf round ${round}`,
    );
    // DBSF: the Euclid list's distances rank smaller first, the sparse list's scores larger first.
    const dbsf = await client.query('h', { prefetch, query: { fusion: 'dbsf' }, limit: 10, ...(filter ? { filter } : {}) });
    const fusedDbsf = new Map<string, number>();
    lists.forEach((list, l) => {
      const scores = list.map((p) => (l === 0 ? -p.score : p.score));
      const n = scores.length;
      const mean = scores.reduce((s, x) => s + x, 0) / n;
      const sd = Math.sqrt(scores.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
      const [lo, hi] = [mean - 3 * sd, mean + 3 * sd];
      list.forEach((p, i) => {
        const v = n === 1 || !(hi > lo) ? 0.5 : ((scores[i] as number) - lo) / (hi - lo);
        fusedDbsf.set(String(p.id), (fusedDbsf.get(String(p.id)) ?? 0) + v);
      });
    });
    const expectDbsf = [...fusedDbsf].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id));
    sameSparseHits(
      dbsf.points.map((p) => ({ id: String(p.id), score: p.score })),
      expectDbsf.slice(0, 10),
      `dbsf round ${round}`,
    );
    // A sparse query re-scoring the dense prefetch's candidates: the sparse scores among them.
    const rescored = await client.query('h', { prefetch: prefetch[0], query: sparse, using: 'langchain-sparse', limit: 5, ...(filter ? { filter } : {}) });
    const candidates = new Set(lists[0]?.map((p) => String(p.id)));
    const sparseAll = (await client.query('h', { query: sparse, using: 'langchain-sparse', limit: 80, ...(filter ? { filter } : {}) })).points;
    sameSparseHits(
      rescored.points.map((p) => ({ id: String(p.id), score: p.score })),
      sparseAll
        .filter((p) => candidates.has(String(p.id)))
        .slice(0, 5)
        .map((p) => ({ id: String(p.id), score: p.score })),
      `rescore round ${round}`,
    );
  }
});

test('vector updates keep the vectors they do not name; payload updates keep sparse vectors; errors are 400s naming the field', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('u', { vectors: { size: 2, distance: 'Dot' }, sparse_vectors: { s: {} } });
  await client.upsert('u', { points: [{ id: 1, vector: { '': [1, 0], s: { indices: [5, 1], values: [0.5, 2] } }, payload: { a: 1 } }] });
  await client.updateVectors('u', { points: [{ id: 1, vector: { s: { indices: [3], values: [4] } } }] });
  let [p] = await client.retrieve('u', { ids: [1], with_vector: true, with_payload: true });
  assert.deepEqual(p?.vector, { '': [1, 0], s: { indices: [3], values: [4] } });
  await client.updateVectors('u', { points: [{ id: 1, vector: [0, 1] }] });
  await client.setPayload('u', { points: [1], payload: { b: 2 } });
  [p] = await client.retrieve('u', { ids: [1], with_vector: true, with_payload: true });
  assert.deepEqual(p?.vector, { '': [0, 1], s: { indices: [3], values: [4] } }, 'the dense update and the payload update kept the sparse vector');
  assert.deepEqual(p?.payload, { a: 1, b: 2 });
  // Indices are kept in ascending order, as Qdrant keeps them.
  await client.upsert('u', { points: [{ id: 2, vector: { '': [1, 1], s: { indices: [9, 2, 4], values: [1, 2, 3] } } }] });
  [p] = await client.retrieve('u', { ids: [2], with_vector: ['s'] });
  assert.deepEqual(p?.vector, { s: { indices: [2, 4, 9], values: [2, 3, 1] } });

  // Delete vectors: a sparse vector removed from the points a filter selects; the main vector cannot go.
  await client.upsert('u', { points: [{ id: 3, vector: { '': [1, 2], s: { indices: [2], values: [1] } }, payload: { drop: true } }] });
  await client.deleteVectors('u', { filter: { must: [{ key: 'drop', match: { value: true } }] }, vector: ['s'] });
  const afterDelete = await client.retrieve('u', { ids: [2, 3], with_vector: true });
  assert.deepEqual(
    afterDelete.map((q) => Object.keys(q.vector as Body)),
    [['', 's'], ['']],
    'point 2 keeps its sparse vector, point 3 (selected) lost it',
  );
  const bySparse = await client.query('u', { query: { indices: [2], values: [1] }, using: 's' });
  assert.deepEqual(
    bySparse.points.map((q) => q.id),
    [2],
    'point 3 is no longer found by its removed sparse vector',
  );
  const cases: Array<[string, string, Body, RegExp]> = [
    [
      'PUT',
      '/collections/u/points',
      { points: [{ id: 3, vector: { '': [1, 1], s: { indices: [1, 1], values: [1, 2] } } }] },
      /points\[0\]\.vector\.s\.indices\[1\]: duplicate index 1/,
    ],
    ['PUT', '/collections/u/points', { points: [{ id: 3, vector: { '': [1, 1], s: { indices: [1], values: [1, 2] } } }] }, /points\[0\]\.vector\.s/],
    ['PUT', '/collections/u/points', { points: [{ id: 3, vector: { '': [1, 1], t: { indices: [1], values: [1] } } }] }, /Not existing vector name error: t/],
    ['PUT', '/collections/u/points', { points: [{ id: 3, vector: { s: { indices: [1], values: [1] } } }] }, /every point needs its dense vector/],
    ['POST', '/collections/u/points/query', { query: { indices: [1], values: [1] } }, /needs `using` naming a sparse vector/],
    ['POST', '/collections/u/points/query', { query: [1, 0], using: 's' }, /expected a sparse vector \{indices, values\} for `s`/],
    ['POST', '/collections/u/points/query', { query: { indices: [1], values: [1] }, using: 'nope' }, /Not existing vector name error: nope/],
    ['POST', '/collections/u/points/query', { query: { indices: [-1], values: [1] }, using: 's' }, /query\.indices\[0\]/],
    ['POST', '/collections/u/points', { ids: [1], with_vector: ['x'] }, /Not existing vector name error: x/],
    ['POST', '/collections/u/points/vectors/delete', { points: [1], vector: [''] }, /vector\[0\]: removing the main dense vector/],
    ['POST', '/collections/u/points/vectors/delete', { points: [1], vector: ['t'] }, /Not existing vector name error: t/],
  ];
  for (const [method, path, body, pattern] of cases) {
    const r = await http(url, method, path, body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.body.status.error, pattern, JSON.stringify(body));
  }
  const missing = await http(url, 'POST', '/collections/u/points/vectors/delete', { points: [2, 77], vector: ['s'] });
  assert.equal(missing.status, 404, missing.text);
  assert.equal(Object.keys((await client.retrieve('u', { ids: [2], with_vector: true }))[0]?.vector as Body).length, 2, 'a missing id changed nothing');
  assert.equal((await client.count('u')).count, 3, 'no refused write changed anything');
});

test('several named dense vectors and a multi-vector: writes, reads, exact queries against the model, ColBERT-style re-ranking of a prefetch', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('m', {
    vectors: {
      text: { size: 4, distance: 'Cosine' },
      image: { size: 3, distance: 'Euclid', on_disk: true },
      colbert: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' }, hnsw_config: { m: 0 } },
    },
    sparse_vectors: { words: {} },
  });
  const info = await client.getCollection('m');
  assert.deepEqual(info.config.params.vectors, {
    text: { size: 4, distance: 'Cosine' },
    image: { size: 3, distance: 'Euclid', on_disk: true },
    colbert: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' }, hnsw_config: { m: 0 } },
  });
  const rng = new SeededRng(4040);
  const row = (size: number): number[] => Array.from({ length: size }, () => rng.int(5) - 2);
  const image = new Map<string, number[][]>();
  const colbert = new Map<string, number[][]>();
  const points = Array.from({ length: 40 }, (_, i) => {
    const vector: Record<string, unknown> = { text: [1, i % 3, (i * 7) % 5, 1] };
    if (i % 4 !== 0) {
      const v = row(3);
      vector.image = v;
      image.set(String(i), [v]);
    }
    if (i % 3 !== 0) {
      const rows = Array.from({ length: 1 + rng.int(4) }, () => row(2));
      vector.colbert = rows;
      colbert.set(String(i), rows);
    }
    return { id: i, vector: vector as Body, payload: { odd: i % 2 === 1 } };
  });
  await client.upsert('m', { points });
  const [p5] = await client.retrieve('m', { ids: [5], with_vector: ['image', 'colbert'] });
  assert.deepEqual(p5?.vector, { image: image.get('5')?.[0], colbert: colbert.get('5') });

  for (let round = 0; round < 12; round++) {
    const limit = 1 + rng.int(10);
    const odd = round % 3 === 0;
    const filter = odd ? { must: [{ key: 'odd', match: { value: true } }] } : undefined;
    const accept = odd ? (id: string) => Number(id) % 2 === 1 : undefined;
    const q = row(3);
    const byImage = await client.query('m', { query: q, using: 'image', limit, ...(filter ? { filter } : {}) });
    sameSparseHits(
      byImage.points.map((p) => ({ id: String(p.id), score: p.score })),
      namedModelSearch(image, [q], { distance: 'Euclid', limit, ...(accept ? { accept } : {}) }),
      `image round ${round}`,
    );
    const rows = Array.from({ length: 1 + rng.int(3) }, () => row(2));
    const byColbert = await client.query('m', { query: rows, using: 'colbert', limit, ...(filter ? { filter } : {}) });
    sameSparseHits(
      byColbert.points.map((p) => ({ id: String(p.id), score: p.score })),
      namedModelSearch(colbert, rows, { distance: 'Dot', limit, ...(accept ? { accept } : {}) }),
      `colbert round ${round}`,
    );
    // The ColBERT recipe: a dense prefetch of candidates, re-ranked by the multi-vector.
    const textQuery = [1, rng.int(3), rng.int(5), 1];
    const candidates = (await client.query('m', { query: textQuery, using: 'text', limit: 15, params: { exact: true } })).points.map((p) => String(p.id));
    const reranked = await client.query('m', {
      prefetch: { query: textQuery, using: 'text', limit: 15, params: { exact: true } },
      query: rows,
      using: 'colbert',
      limit: 5,
    });
    const among = new Map([...colbert].filter(([id]) => candidates.includes(id)));
    sameSparseHits(
      reranked.points.map((p) => ({ id: String(p.id), score: p.score })),
      namedModelSearch(among, rows, { distance: 'Dot', limit: 5 }),
      `rerank round ${round}`,
    );
  }
  await client.updateVectors('m', { points: [{ id: 0, vector: { image: [1, 1, 1] } }] });
  const [p0] = await client.retrieve('m', { ids: [0], with_vector: true });
  assert.deepEqual(Object.keys(p0?.vector as Body).sort(), ['image', 'text'], 'the update added image and kept text');
  for (const [body, pattern] of [
    [{ query: { recommend: { positive: [[[1, 2, 3]]] } }, using: 'colbert' }, /positive\[0\]\[0\]: expected 2 numbers, got 3/],
    [{ query: [1, 2], using: 'image' }, /query: expected 3 numbers, got 2/],
    [{ query: [[1, 2, 3]], using: 'image' }, /query: expected a vector of 3 numbers; this vector is not a multi-vector/],
    [{ query: { recommend: { positive: [[1, 2]] } }, using: 'image' }, /positive\[0\]: expected a vector of 3 numbers, got 2/],
  ] as const) {
    const r = await http(url, 'POST', '/collections/m/points/query', body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.body.status.error, pattern);
  }
  const bad = await http(url, 'PUT', '/collections/m/points', { points: [{ id: 99, vector: { text: [1, 1, 1, 1], colbert: [[1, 2, 3]] } }] });
  assert.equal(bad.status, 400, bad.text);
  assert.match(bad.body.status.error, /points\[0\]\.vector\.colbert\[0\]: expected 2 numbers, got 3/);
});
