/**
 * Qdrant collections without a plain dense vector: sparse vectors only (`vectors` left out, as
 * Qdrant's default), and multi-vectors only. kith's points always hold a main vector, so such a
 * collection's is a placeholder (vector-layout.ts, NO_DENSE_VECTOR) that no request may name and
 * no answer shows. Against a brute-force model on nasty data (empty sparse vectors, points with no
 * vector at all, duplicates), through writes, updates, deletes of vectors and reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { nastySparse, type SparseJson, sameSparseHits, sparseModelSearch, storedSparse } from '../helpers/sparse-model.js';
import { http, startQdrant } from './qdrant-harness.js';

const PLACEHOLDER = 'kith:no-dense-vector';

test('a collection of sparse vectors only: created without `vectors`, written, searched against the model, never showing a dense vector', async (t) => {
  const { url, kithUrl } = await startQdrant(t);
  const rng = new SeededRng(7301);
  const created = await http(url, 'PUT', '/collections/s', { sparse_vectors: { text: { modifier: 'idf' }, tags: {} } });
  assert.equal(created.status, 200, created.text);
  const info = await http(url, 'GET', '/collections/s');
  assert.equal(info.status, 200, info.text);
  assert.deepEqual(info.body.result.config.params.vectors, {});
  assert.deepEqual(Object.keys(info.body.result.config.params.sparse_vectors).sort(), ['tags', 'text']);

  const model = new Map<string, { text?: SparseJson; tags?: SparseJson }>();
  const points = Array.from({ length: 120 }, (_, i) => {
    const vector: Record<string, SparseJson> = {};
    if (i % 7 !== 0) vector.text = nastySparse(rng, 12);
    if (i % 3 === 0) vector.tags = nastySparse(rng, 5);
    model.set(String(i), vector);
    // Some points carry no vector at all.
    return { id: i, vector, payload: { i } };
  });
  const upserted = await http(url, 'PUT', '/collections/s/points?wait=true', { points });
  assert.equal(upserted.status, 200, upserted.text);

  const check = async (label: string): Promise<void> => {
    for (let q = 0; q < 15; q++) {
      const query = nastySparse(rng, 12);
      for (const name of ['text', 'tags'] as const) {
        const stored = new Map<string, SparseJson>();
        for (const [id, p] of model) if (p[name] !== undefined) stored.set(id, p[name] as SparseJson);
        const answer = await http(url, 'POST', '/collections/s/points/query', { query, using: name, limit: 9 });
        assert.equal(answer.status, 200, answer.text);
        sameSparseHits(
          answer.body.result.points.map((h: { id: number; score: number }) => ({ id: String(h.id), score: h.score })),
          sparseModelSearch(stored, query, { idf: name === 'text', limit: 9 }),
          `${label}: ${name} ${JSON.stringify(query)} (seed 7301)`,
        );
      }
    }
  };
  await check('written');
  // has_vector: the sparse vectors' holders; the placeholder is no vector on this port, so no point holds it.
  for (const [name, expected] of [
    ['text', [...model.values()].filter((p) => p.text !== undefined).length],
    ['tags', [...model.values()].filter((p) => p.tags !== undefined).length],
    [PLACEHOLDER, 0],
    ['', 0],
  ] as const) {
    const counted = await http(url, 'POST', '/collections/s/points/count', { filter: { must: [{ has_vector: name }] }, exact: true });
    assert.equal(counted.status, 200, counted.text);
    assert.equal(counted.body.result.count, expected, `has_vector ${JSON.stringify(name)}`);
  }

  // Reads show the sparse vectors a point has, and nothing else: no placeholder.
  const read = await http(url, 'POST', '/collections/s/points', { ids: [0, 1, 3], with_vector: true });
  assert.equal(read.status, 200, read.text);
  for (const p of read.body.result as Array<{ id: number; vector: Record<string, unknown> }>) {
    const expected = model.get(String(p.id)) ?? {};
    assert.deepEqual(Object.keys(p.vector).sort(), Object.keys(expected).sort(), `point ${p.id}'s vectors`);
    for (const [name, v] of Object.entries(expected)) assert.deepEqual(p.vector[name], storedSparse(v), `point ${p.id}'s ${name}`);
  }
  const scrolled = await http(url, 'POST', '/collections/s/points/scroll', { limit: 200, with_vector: true });
  assert.equal(scrolled.status, 200, scrolled.text);
  assert.ok(
    scrolled.body.result.points.every((p: { vector: Record<string, unknown> }) => !Object.hasOwn(p.vector, PLACEHOLDER)),
    'no point shows the placeholder',
  );

  // Updates and deletes of sparse vectors; the model follows.
  const update = nastySparse(rng, 12);
  const updated = await http(url, 'PUT', '/collections/s/points/vectors?wait=true', { points: [{ id: 7, vector: { text: update } }] });
  assert.equal(updated.status, 200, updated.text);
  (model.get('7') as { text?: SparseJson }).text = update;
  const deleted = await http(url, 'POST', '/collections/s/points/vectors/delete?wait=true', { points: [3, 6], vector: ['tags'] });
  assert.equal(deleted.status, 200, deleted.text);
  for (const id of ['3', '6']) delete (model.get(id) as { tags?: SparseJson }).tags;
  await check('after updates');

  // The unnamed vector and the placeholder are no vectors of this collection, anywhere.
  const before = await http(url, 'POST', '/collections/s/points/count', { exact: true });
  for (const [method, path, body] of [
    ['POST', '/collections/s/points/query', { query: [1], limit: 3 }],
    ['POST', '/collections/s/points/query', { query: [1], using: PLACEHOLDER, limit: 3 }],
    ['POST', '/collections/s/points/search', { vector: [1], limit: 3 }],
    ['POST', '/collections/s/points', { ids: [1], with_vector: [PLACEHOLDER] }],
    ['PUT', '/collections/s/points?wait=true', { points: [{ id: 500, vector: [1] }] }],
    ['PUT', '/collections/s/points?wait=true', { points: [{ id: 500, vector: { [PLACEHOLDER]: [1] } }] }],
    ['POST', '/collections/s/points/search/matrix/pairs', { sample: 5, limit: 2 }],
  ] as const) {
    const refused = await http(url, method, path, body);
    assert.equal(refused.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${refused.text}`);
    assert.match(refused.text, /Not existing vector name error/, `${method} ${path}`);
  }
  assert.deepEqual((await http(url, 'POST', '/collections/s/points/count', { exact: true })).body.result, before.body.result, 'nothing written');
  // A vector of the collection's own may not take the placeholder's name.
  const reserved = await http(url, 'PUT', '/collections/r', { vectors: { [PLACEHOLDER]: { size: 2, distance: 'Dot' } } });
  assert.equal(reserved.status, 400, reserved.text);
  assert.match(reserved.text, /reserved/);
  // kith's own port shows what kith holds: the placeholder as the main vector, one component.
  const kith = await http(kithUrl, 'GET', '/collections/s');
  assert.equal(kith.body.result.vector_name, PLACEHOLDER);
  assert.equal(kith.body.result.vector_size, 1);
  assert.equal(kith.body.result.hnsw, false);
});

test('a collection of multi-vectors only: late-interaction search against the model; GET shows the multi-vector alone', async (t) => {
  const { url } = await startQdrant(t);
  const rng = new SeededRng(7302);
  const created = await http(url, 'PUT', '/collections/m', {
    vectors: { colbert: { size: 3, distance: 'Dot', multivector_config: { comparator: 'max_sim' } } },
  });
  assert.equal(created.status, 200, created.text);
  const info = await http(url, 'GET', '/collections/m');
  assert.deepEqual(info.body.result.config.params.vectors, { colbert: { size: 3, distance: 'Dot', multivector_config: { comparator: 'max_sim' } } });
  const rows = (): number[][] => Array.from({ length: 1 + rng.int(4) }, () => Array.from({ length: 3 }, () => rng.int(5) - 2));
  const model = new Map<number, number[][]>();
  const points = Array.from({ length: 80 }, (_, i) => {
    const v = rows();
    model.set(i, v);
    return { id: i, vector: { colbert: v } };
  });
  assert.equal((await http(url, 'PUT', '/collections/m/points?wait=true', { points })).status, 200);
  const maxSim = (q: number[][], d: number[][]): number =>
    q.reduce((sum, qr) => sum + Math.max(...d.map((dr) => qr.reduce((s, x, i) => s + x * (dr[i] as number), 0))), 0);
  for (let round = 0; round < 20; round++) {
    const query = rows();
    const answer = await http(url, 'POST', '/collections/m/points/query', { query, using: 'colbert', limit: 6, with_vector: true });
    assert.equal(answer.status, 200, answer.text);
    const hits: Array<{ id: number; score: number; vector: Record<string, unknown> }> = answer.body.result.points;
    const expected = [...model.values()].map((d) => maxSim(query, d)).sort((a, b) => b - a);
    assert.deepEqual(
      hits.map((h) => h.score),
      expected.slice(0, 6),
      `round ${round} (seed 7302)`,
    );
    for (const h of hits) {
      assert.equal(maxSim(query, model.get(h.id) as number[][]), h.score);
      assert.deepEqual(Object.keys(h.vector), ['colbert'], 'only the multi-vector is shown');
    }
  }
  const unnamed = await http(url, 'POST', '/collections/m/points/query', { query: [1, 2, 3], limit: 3 });
  assert.equal(unnamed.status, 400, unnamed.text);
});

test("the unnamed vector as a multi-vector (Qdrant's multivector docs): written, read bare, searched without `using`, against the model", async (t) => {
  const { url, client, db } = await startQdrant(t);
  const rng = new SeededRng(7303);
  // As Qdrant's documentation creates one, through the official client.
  await client.createCollection('u', { vectors: { size: 3, distance: 'Dot', multivector_config: { comparator: 'max_sim' } } });
  const info = await client.getCollection('u');
  assert.deepEqual(info.config.params.vectors, { size: 3, distance: 'Dot', multivector_config: { comparator: 'max_sim' } });
  const rows = (): number[][] => Array.from({ length: 1 + rng.int(4) }, () => Array.from({ length: 3 }, () => rng.int(5) - 2));
  const model = new Map<number, number[][]>();
  const points = Array.from({ length: 60 }, (_, i) => {
    const v = rows();
    model.set(i, v);
    return { id: i, vector: v, payload: { i } };
  });
  await client.upsert('u', { wait: true, points });
  // The batch form (a column of multi-vectors) too.
  const extra = [rows(), rows()];
  await client.upsert('u', { wait: true, batch: { ids: [60, 61], vectors: extra } });
  model.set(60, extra[0] as number[][]);
  model.set(61, extra[1] as number[][]);
  const [read] = await client.retrieve('u', { ids: [3], with_vector: true });
  assert.deepEqual(read?.vector, model.get(3), 'read back bare, as Qdrant shows the unnamed vector');
  const maxSim = (q: number[][], d: number[][]): number =>
    q.reduce((sum, qr) => sum + Math.max(...d.map((dr) => qr.reduce((s, x, i) => s + x * (dr[i] as number), 0))), 0);
  const expectedFor = (query: number[][], limit: number, without: number[] = []): number[] =>
    [...model]
      .filter(([id]) => !without.includes(id))
      .map(([, d]) => maxSim(query, d))
      .sort((a, b) => b - a)
      .slice(0, limit);
  for (let round = 0; round < 12; round++) {
    const query = rows();
    const answer = await client.query('u', { query, limit: 5, with_vector: true });
    assert.deepEqual(
      answer.points.map((h) => h.score),
      expectedFor(query, 5),
      `round ${round} (seed 7303)`,
    );
    for (const h of answer.points) assert.deepEqual(h.vector, model.get(Number(h.id)));
    // A point id as the query: its own rows, the point left out.
    const near = await client.query('u', { query: round, limit: 4 });
    assert.deepEqual(
      near.points.map((h) => h.score),
      expectedFor(model.get(round) as number[][], 4, [round]),
      `near ${round}`,
    );
  }
  // has_vector of the unnamed vector: every point holds it.
  assert.equal((await client.count('u', { filter: { must: [{ has_vector: '' }] }, exact: true })).count, 62);
  // A plain vector is not this collection's vector.
  const flat = await http(url, 'POST', '/collections/u/points/query', { query: [[1, 2]] });
  assert.equal(flat.status, 400, flat.text);
  assert.match(flat.body.status.error, /query\[0\]: expected 3 numbers, got 2/);
  // kith's port shows it as kith holds it: the named vector "" beside the placeholder.
  assert.deepEqual(db.collection('u').config.namedVectors.get('')?.multivector, true);
});
