/**
 * Searches by stored points and by examples `using` a named dense vector, a multi-vector or a
 * sparse vector on kith's own port (POST …/points/recommend, …/recommend/batch, …/points/discover
 * and the /points/query stages `point`, `recommend`, `discover`, `context` with `using`), and
 * through the library's `Collection.query`: each must answer as the Qdrant port does over the
 * same database (ids, order, scores), whose answers the model tests check
 * (qdrant-named-examples.test.ts). Nasty data: points lacking each vector, duplicates, zero and
 * empty vectors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { nastySparse } from '../helpers/sparse-model.js';
import { sameHits } from '../helpers/same-hits.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: bodies are built field by field in two dialects
type Body = any;

type Hit = { id: string; score: number };

test("kith's port and the library search by points and examples of named, multi- and sparse vectors as the Qdrant port does", async (t) => {
  const { url, kithUrl, db } = await startQdrant(t);
  const seed = testSeed(8181);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const created = await http(kithUrl, 'POST', '/collections', {
    name: 'u',
    vector_size: 2,
    distance: 'dot',
    hnsw: true,
    named_vectors: { img: { size: 3, distance: 'euclid' }, col: { size: 2, distance: 'dot', multivector: true } },
    sparse_vectors: { s: { modifier: 'idf' } },
  });
  assert.equal(created.status, 200, created.text);
  const row = (n: number): number[] => (rng.int(8) === 0 ? new Array(n).fill(0) : Array.from({ length: n }, () => rng.int(5) - 2));
  const points = Array.from({ length: 50 }, (_, i) => {
    const named: Record<string, unknown> = {};
    if (i % 4 !== 0) named.img = row(3);
    if (i % 3 !== 1) named.col = Array.from({ length: 1 + rng.int(3) }, () => row(2));
    return { id: i, vector: [1, i % 5], named_vectors: named, ...(i % 5 !== 2 ? { sparse_vectors: { s: nastySparse(rng, 8) } } : {}) };
  });
  const put = await http(kithUrl, 'PUT', '/collections/u/points', { points });
  assert.equal(put.status, 200, put.text);
  const holders = (name: 'img' | 'col' | 's'): number[] =>
    points.filter((p) => (name === 's' ? p.sparse_vectors !== undefined : p.named_vectors[name] !== undefined)).map((p) => p.id);

  const kithHits = async (path: string, body: Body): Promise<Hit[]> => {
    const r = await http(kithUrl, 'POST', `/collections/u/points/${path}`, body);
    assert.equal(r.status, 200, `seed ${seed}: kith ${path} ${JSON.stringify(body)}: ${r.text}`);
    return (r.body.result as Hit[]).map((h) => ({ id: String(h.id), score: h.score }));
  };
  const qdrantHits = async (body: Body): Promise<Hit[]> => {
    const r = await http(url, 'POST', '/collections/u/points/query', body);
    assert.equal(r.status, 200, `seed ${seed}: qdrant ${JSON.stringify(body)}: ${r.text}`);
    return (r.body.result.points as Hit[]).map((h) => ({ id: String(h.id), score: h.score }));
  };

  for (const name of ['img', 'col', 's'] as const) {
    const held = holders(name);
    const given = (): unknown => (name === 'img' ? row(3) : name === 'col' ? [row(2), row(2)] : nastySparse(rng, 8));
    // An example: a holder's id, any point's id (a recommendation drops one that lacks the vector), or a vector.
    const example = (anyId: boolean): unknown => (rng.int(3) === 0 ? given() : anyId ? rng.int(50) : (held[rng.int(held.length)] as number));
    for (let round = 0; round < 6; round++) {
      const limit = 1 + rng.int(8);
      const what = `seed ${seed}, ${name} round ${round}`;
      const strategy = (['average_vector', 'best_score', 'sum_scores'] as const)[round % 3];
      const positive = [held[rng.int(held.length)] as number, ...Array.from({ length: rng.int(3) }, () => example(true))];
      const negative = Array.from({ length: rng.int(3) }, () => example(true));
      const recommend = { positive, negative, strategy };
      const want = await qdrantHits({ query: { recommend }, using: name, limit });
      sameHits(await kithHits('recommend', { ...recommend, using: name, limit, with_payload: false }), want, `${what}: /points/recommend ${strategy}`);
      sameHits(await kithHits('query', { recommend, using: name, limit }), want, `${what}: query stage recommend ${strategy}`);
      const [batch] = await (async () => {
        const r = await http(kithUrl, 'POST', '/collections/u/points/recommend/batch', { searches: [{ ...recommend, using: name, limit }] });
        assert.equal(r.status, 200, r.text);
        return (r.body.result as Hit[][]).map((list) => list.map((h) => ({ id: String(h.id), score: h.score })));
      })();
      sameHits(batch as Hit[], want, `${what}: recommend/batch`);
      const [library] = await db
        .collection('u')
        .query([
          strategy === 'average_vector'
            ? { kind: 'recommend', search: { positive, negative, using: name, limit } as Body }
            : { kind: 'examples', search: { examples: { strategy, positive, negative }, using: name, limit } as Body },
        ]);
      sameHits(
        (library?.points ?? []).map((h) => ({ id: h.id, score: h.score })),
        want,
        `${what}: Collection.query ${strategy}`,
      );

      const target = example(false);
      const context = Array.from({ length: 1 + rng.int(2) }, () => ({ positive: example(false), negative: example(false) }));
      const discovered = await qdrantHits({ query: { discover: { target, context } }, using: name, limit });
      sameHits(await kithHits('discover', { target, context, using: name, limit }), discovered, `${what}: /points/discover`);
      sameHits(await kithHits('query', { discover: { target, context }, using: name, limit }), discovered, `${what}: query stage discover`);
      const contexts = await qdrantHits({ query: { context }, using: name, limit });
      sameHits(await kithHits('query', { context, using: name, limit }), contexts, `${what}: query stage context`);
      const point = held[rng.int(held.length)] as number;
      const near = await qdrantHits({ query: point, using: name, limit });
      sameHits(await kithHits('query', { point, using: name, limit }), near, `${what}: query stage point`);
      // A prefetch by examples, fused with the main vector's search.
      const fused = await qdrantHits({
        prefetch: [
          { query: { recommend }, using: name, limit: 20 },
          { query: [1, 1], limit: 20 },
        ],
        query: { fusion: 'rrf' },
        limit,
      });
      sameHits(
        await kithHits('query', {
          prefetch: [
            { recommend, using: name, limit: 20 },
            { vector: [1, 1], limit: 20 },
          ],
          fusion: 'rrf',
          limit,
        }),
        fused,
        `${what}: a prefetch by examples, fused`,
      );
    }
  }
  // The distance matrix `using` each vector: every holder sampled (the sample is larger), the same pairs as the Qdrant port's.
  for (const name of ['img', 'col', 's'] as const) {
    const kith = await http(kithUrl, 'POST', '/collections/u/points/search/matrix', { sample: 60, limit: 3, using: name });
    assert.equal(kith.status, 200, kith.text);
    const qdrant = await http(url, 'POST', '/collections/u/points/search/matrix/pairs', { sample: 60, limit: 3, using: name });
    assert.equal(qdrant.status, 200, qdrant.text);
    assert.deepEqual([...kith.body.result.ids].sort(), holders(name).map(String).sort(), `matrix ${name}: every holder sampled`);
    const pairsOf = (pairs: { a: unknown; b: unknown; score: number }[]): string[] =>
      pairs.map((p) => `${String(p.a)}>${String(p.b)}:${Math.fround(p.score).toPrecision(6)}`).sort();
    assert.deepEqual(pairsOf(kith.body.result.pairs), pairsOf(qdrant.body.result.pairs), `matrix ${name}: the pairs`);
  }
  const badMatrix = await http(kithUrl, 'POST', '/collections/u/points/search/matrix', { using: 'nope' });
  assert.equal(badMatrix.status, 400, badMatrix.text);
  assert.match(badMatrix.body.status.error, /^using: /);

  // A point that lacks the vector as a discovery's target: kith's 404 on its port.
  const lacking = points.find((p) => p.named_vectors.img === undefined)?.id as number;
  const r = await http(kithUrl, 'POST', '/collections/u/points/discover', { target: lacking, context: [], using: 'img' });
  assert.equal(r.status, 404, r.text);
  assert.match(r.body.status.error, /has no vector named "img"/);
  const wrongSize = await http(kithUrl, 'POST', '/collections/u/points/recommend', { positive: [[1, 2]], using: 'img' });
  assert.equal(wrongSize.status, 400, wrongSize.text);
  assert.match(wrongSize.body.status.error, /^positive\[0\]/);
});
