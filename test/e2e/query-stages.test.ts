/**
 * Multi-stage queries on kith's port (POST …/points/query, the client's query) and in the library
 * (Collection.queryStages): random stage trees, written in kith's shape and in Qdrant's, answer
 * alike over one database (the Qdrant port's stages are checked against a model of exact fusion
 * of exact prefetches in qdrant-query-stages.test.ts); RRF of two prefetches equals the formula over
 * two plain exact searches; every refusal names its field.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient, KithClientError } from '../../src/api/client/kith-client.js';
import { SeededRng } from '../../src/core/rng.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: bodies are built field by field in two dialects
type Body = any;
const DIM = 3;

test("kith's query equals the Qdrant port's prefetch over the same points (random trees, three distances)", async (t) => {
  const { url, kithUrl, db } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  for (const seed of [61, 62, 63]) {
    const rng = new SeededRng(seed);
    const distance = ['cosine', 'euclid', 'dot'][seed % 3] as string;
    const name = `s${seed}`;
    await client.createCollection({ name, vector_size: DIM, distance, hnsw: seed % 2 === 0 });
    const vec = (): number[] => Array.from({ length: DIM }, () => rng.int(7) - 3);
    await client.upsert(
      name,
      Array.from({ length: 80 }, (_, i) => ({ id: `p${i}`, vector: vec(), payload: { g: i % 4 } })),
    );
    // One random tree, written twice.
    const tree = (depth: number): { kith: Body; qdrant: Body } => {
      const limit = 1 + rng.int(15);
      const filter = rng.int(3) === 0 ? { must: [{ key: 'g', match: { value: rng.int(4) } }] } : undefined;
      const children = depth < 2 && rng.int(2) === 0 ? Array.from({ length: 1 + rng.int(3) }, () => tree(depth + 1)) : [];
      const fuse = children.length > 0 && rng.int(2) === 0;
      const method = rng.int(2) === 0 ? 'rrf' : 'dbsf';
      const vector = vec();
      const kith: Body = { limit, filter, params: { exact: true } };
      const qdrant: Body = { limit, filter, params: { exact: true } };
      if (children.length > 0) {
        kith.prefetch = children.map((c) => c.kith);
        qdrant.prefetch = children.map((c) => c.qdrant);
      }
      if (fuse) {
        kith.fusion = method;
        qdrant.query = { fusion: method };
      } else {
        kith.vector = vector;
        qdrant.query = vector;
      }
      return { kith, qdrant };
    };
    for (let round = 0; round < 10; round++) {
      const { kith, qdrant } = tree(0);
      const got = await client.query(name, { ...kith, with_payload: false });
      const viaQdrant = await http(url, 'POST', `/collections/${name}/points/query`, qdrant);
      assert.equal(viaQdrant.status, 200, viaQdrant.text);
      const want = viaQdrant.body.result.points as Body[];
      const what = `seed ${seed} round ${round}: ${JSON.stringify(kith)}`;
      assert.deepEqual(
        got.map((h) => h.id),
        want.map((h) => h.id),
        what,
      );
      got.forEach((h, i) => {
        assert.ok(Math.abs(h.score - (want[i] as Body).score) < 1e-5, `${what}: score ${i}`);
      });
      const library = await db.collection(name).queryStages({ ...kith, with_payload: false });
      assert.deepEqual(
        library.map((h) => h.id),
        got.map((h) => h.id),
        `${what}: the library`,
      );
    }
  }
});

test("kith's query: RRF of two prefetches is the formula over two exact searches; refusals name their field", async (t) => {
  const { kithUrl } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  await client.createCollection({ name: 'r', vector_size: 2, distance: 'dot' });
  await client.upsert(
    'r',
    Array.from({ length: 30 }, (_, i) => ({ id: String(i), vector: [Math.cos(i), Math.sin(i * 0.7)], payload: { i } })),
  );
  const [a, b] = [
    [1, 0.2],
    [-0.3, 1],
  ];
  const first = await client.search('r', { vector: a, limit: 10, params: { exact: true }, with_payload: false });
  const second = await client.search('r', { vector: b, limit: 10, params: { exact: true }, with_payload: false });
  const fused = new Map<string, number>();
  for (const [l, list] of [first, second].entries()) {
    const w = [3, 1][l] as number;
    for (const [rank, h] of list.entries()) fused.set(h.id, (fused.get(h.id) ?? 0) + 1 / ((rank + 1) / w + 60 - 1));
  }
  const want = [...fused].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, 5);
  const got = await client.query('r', {
    prefetch: [
      { vector: a, limit: 10, params: { exact: true } },
      { vector: b, limit: 10, params: { exact: true } },
    ],
    fusion: { method: 'rrf', k: 60, weights: [3, 1] },
    limit: 5,
    with_payload: true,
  });
  assert.deepEqual(
    got.map((h) => h.id),
    want.map(([id]) => id),
  );
  got.forEach((h, i) => {
    assert.ok(Math.abs(h.score - (want[i] as [string, number])[1]) < 1e-9);
    assert.equal(typeof (h.payload as { i: number }).i, 'number');
  });
  const refused = async (body: Body, pattern: RegExp): Promise<void> => {
    await assert.rejects(
      () => client.query('r', body),
      (error: unknown) => error instanceof KithClientError && error.status === 400 && pattern.test(error.message),
      JSON.stringify(body),
    );
  };
  await refused({ fusion: 'rrf' }, /vector: required without prefetches/);
  await refused({ prefetch: [{ vector: a }], fusion: 'rrf', vector: a }, /fusion: give either/);
  await refused({ prefetch: [{ vector: a }, { vector: b, limit: 0 }], fusion: 'rrf' }, /prefetch\[1\]\.limit/);
  await refused({ prefetch: [{ vector: a, offset: 3 }], fusion: 'rrf' }, /prefetch\[0\]\.offset: not a field of a prefetch/);
  await refused({ prefetch: [{ vector: a }], fusion: { method: 'rrf', weights: [1, 2] } }, /fusion\.weights: 2 weights for 1 prefetches/);
  await refused({ prefetch: [{ vector: a }] }, /vector: prefetches need a vector/);
  let deep: Body = { vector: a };
  for (let d = 0; d < 9; d++) deep = { prefetch: [deep], fusion: 'rrf' };
  await refused(deep, /nest at most 8 deep/);
  await refused({ prefetch: [{ vector: [1, 2, 3] }], fusion: 'rrf' }, /prefetch\[0\]\.vector|vector/);
});
