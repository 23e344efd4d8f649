/**
 * A named vector's own graph parameters, on both ports: Qdrant's per-vector `hnsw_config` (`m`,
 * `ef_construct`; `m: 0` for no graph) at create and in PATCH, kith's `named_vectors.<name>.m` /
 * `ef_construction` at create and in PATCH. Each is applied (kith's port's `explain` shows the
 * strategy: a graph walk, or an exact scan for `m: 0`), shown by both GETs, kept over a restart,
 * and the answers stay those of a brute-force model; bad values are 4xx naming the field and
 * change nothing. A sparse vector's modifier changes the same ways.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { nastySparse, type SparseJson, sameSparseHits, sparseModelSearch } from '../helpers/sparse-model.js';
import { http, startQdrant } from './qdrant-harness.js';

const SIZE = 6;

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

test("named vectors' own graph parameters: Qdrant's per-vector hnsw_config and kith's m / ef_construction, at create and in PATCH", async (t) => {
  const { kithUrl, url } = await startQdrant(t);
  const rng = new SeededRng(4242);
  const created = await http(url, 'PUT', '/collections/g', {
    vectors: {
      main: { size: 2, distance: 'Cosine' },
      exact: { size: SIZE, distance: 'Dot', hnsw_config: { m: 0 } },
      tuned: { size: SIZE, distance: 'Dot', hnsw_config: { m: 8, ef_construct: 40 }, on_disk: true },
      plain: { size: SIZE, distance: 'Dot' },
    },
  });
  assert.equal(created.status, 200, created.text);
  const n = 300;
  // Non-negative under Dot, duplicates and zero vectors among them.
  const vectorOf = (): number[] => (rng.int(12) === 0 ? new Array(SIZE).fill(0) : Array.from({ length: SIZE }, () => rng.int(4)));
  const points = Array.from({ length: n }, (_, i) => ({ id: i, vector: { main: [1, i % 5], exact: vectorOf(), tuned: vectorOf(), plain: vectorOf() } }));
  const upserted = await http(url, 'PUT', '/collections/g/points?wait=true', { points });
  assert.equal(upserted.status, 200, upserted.text);

  const kithInfo = async (): Promise<Record<string, { m?: number; ef_construction?: number }>> => {
    const got = await http(kithUrl, 'GET', '/collections/g');
    assert.equal(got.status, 200, got.text);
    return got.body.result.named_vectors;
  };
  const qdrantVectors = async (): Promise<Record<string, { hnsw_config?: { m?: number; ef_construct?: number }; on_disk?: boolean }>> => {
    const got = await http(url, 'GET', '/collections/g');
    assert.equal(got.status, 200, got.text);
    return got.body.result.config.params.vectors;
  };
  const strategyOf = async (name: string): Promise<string> => {
    const answer = await http(kithUrl, 'POST', '/collections/g/points/search', {
      named_vector: { name, vector: vectorOf() },
      limit: 5,
      params: { explain: true },
    });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.explain.strategy;
  };
  // Through the Qdrant port with a large hnsw_ef (a walk then visits every node): the model's answer.
  const checkAnswers = async (label: string): Promise<void> => {
    for (const name of ['exact', 'tuned', 'plain'] as const) {
      for (let q = 0; q < 5; q++) {
        const query = vectorOf();
        const answer = await http(url, 'POST', '/collections/g/points/query', { query, using: name, limit: 8, params: { hnsw_ef: 1000 } });
        assert.equal(answer.status, 200, answer.text);
        const expected = points
          .map((p) => dot(query, p.vector[name]))
          .sort((a, b) => b - a)
          .slice(0, 8);
        const hits: Array<{ id: number; score: number }> = answer.body.result.points;
        const context = `${label}: ${name} ${JSON.stringify(query)} (seed 4242)`;
        // The best scores, in order, each hit holding its score (ties may come in either id order).
        assert.deepEqual(
          hits.map((h) => h.score),
          expected,
          context,
        );
        for (const h of hits) assert.equal(dot(query, (points[h.id] as (typeof points)[number]).vector[name]), h.score, context);
        assert.equal(new Set(hits.map((h) => h.id)).size, hits.length, context);
      }
    }
  };

  assert.deepEqual(await kithInfo(), {
    exact: { size: SIZE, distance: 'Dot', multivector: false, m: 0 },
    tuned: { size: SIZE, distance: 'Dot', multivector: false, m: 8, ef_construction: 40 },
    plain: { size: SIZE, distance: 'Dot', multivector: false },
  });
  const echoed = await qdrantVectors();
  assert.deepEqual(echoed.exact?.hnsw_config, { m: 0 });
  assert.deepEqual(echoed.tuned?.hnsw_config, { m: 8, ef_construct: 40 });
  assert.equal(echoed.tuned?.on_disk, true);
  assert.equal(await strategyOf('exact'), 'flat-scan', 'm 0: no graph');
  assert.equal(await strategyOf('tuned'), 'graph');
  assert.equal(await strategyOf('plain'), 'graph');
  await checkAnswers('created');

  // Bad PATCHes: 4xx naming the field, nothing changed.
  for (const [body, status, pattern] of [
    [{ vectors: { tuned: { hnsw_config: { m: 1 } } } }, 422, /vectors\.tuned\.hnsw_config\.m/],
    [{ vectors: { tuned: { hnsw_config: { ef_construct: 2 } } } }, 422, /vectors\.tuned\.hnsw_config\.ef_construct/],
    [{ vectors: { tuned: { size: 9 } } }, 400, /vectors\.tuned\.size/],
    [{ vectors: { nope: { hnsw_config: { m: 4 } } } }, 400, /Not existing vector name error: nope/],
  ] as const) {
    const refused = await http(url, 'PATCH', '/collections/g', body);
    assert.equal(refused.status, status, `${JSON.stringify(body)}: ${refused.text}`);
    assert.match(refused.text, pattern);
  }
  assert.deepEqual((await kithInfo()).tuned, { size: SIZE, distance: 'Dot', multivector: false, m: 8, ef_construction: 40 });

  // Qdrant's PATCH: the exact one gets a graph, the tuned one none; the rest of hnsw_config is merged into the echo.
  const patched = await http(url, 'PATCH', '/collections/g', {
    vectors: { exact: { hnsw_config: { m: 12, ef_construct: 64, payload_m: 4 } }, tuned: { hnsw_config: { m: 0 } } },
  });
  assert.equal(patched.status, 200, patched.text);
  const afterPatch = await kithInfo();
  assert.deepEqual(afterPatch.exact, { size: SIZE, distance: 'Dot', multivector: false, m: 12, ef_construction: 64 });
  assert.deepEqual(afterPatch.tuned, { size: SIZE, distance: 'Dot', multivector: false, m: 0, ef_construction: 40 });
  const echoedAfter = await qdrantVectors();
  assert.deepEqual(echoedAfter.exact?.hnsw_config, { m: 12, ef_construct: 64, payload_m: 4 });
  assert.deepEqual(echoedAfter.tuned?.hnsw_config, { m: 0, ef_construct: 40 });
  assert.equal(await strategyOf('exact'), 'graph');
  assert.equal(await strategyOf('tuned'), 'flat-scan');
  await checkAnswers('after the Qdrant PATCH');

  // kith's PATCH: back to the collection's m for one (null), a bad name refused naming it.
  const badName = await http(kithUrl, 'PATCH', '/collections/g', { named_vectors: { nope: { m: 4 } } });
  assert.equal(badName.status, 400, badName.text);
  assert.match(badName.text, /named_vectors\.nope/);
  const badM = await http(kithUrl, 'PATCH', '/collections/g', { named_vectors: { tuned: { m: 1 } } });
  assert.equal(badM.status, 400, badM.text);
  assert.match(badM.text, /named_vectors\.tuned\.m/);
  const kithPatched = await http(kithUrl, 'PATCH', '/collections/g', { named_vectors: { tuned: { m: null, ef_construction: null } } });
  assert.equal(kithPatched.status, 200, kithPatched.text);
  assert.deepEqual(kithPatched.body.result.named_vectors.tuned, { size: SIZE, distance: 'Dot', multivector: false });
  assert.equal(await strategyOf('tuned'), 'graph');
  await checkAnswers('after the kith PATCH');

  // A named graph's inserts are bounded as the main graph's: m × ef_construction × size.
  const tooCostly = await http(kithUrl, 'POST', '/collections', {
    name: 'big',
    vector_size: 2,
    distance: 'cosine',
    hnsw: true,
    named_vectors: { wide: { size: 65536, distance: 'dot', m: 64, ef_construction: 200 } },
  });
  assert.equal(tooCostly.status, 400, tooCostly.text);
  assert.match(tooCostly.text, /named_vectors\.wide: m × ef_construction × size is 838860800/);
  assert.equal((await http(kithUrl, 'GET', '/collections/big')).status, 404);
});

test("a sparse vector's modifier in PATCH, on both ports: answers follow it (idf on, then off), index options echoed", async (t) => {
  const { kithUrl, url } = await startQdrant(t);
  const rng = new SeededRng(4343);
  const created = await http(url, 'PUT', '/collections/s', { vectors: { size: 2, distance: 'Dot' }, sparse_vectors: { text: { index: { on_disk: false } } } });
  assert.equal(created.status, 200, created.text);
  const stored = new Map<string, SparseJson>();
  const points = Array.from({ length: 90 }, (_, i) => {
    const text = nastySparse(rng, 10);
    stored.set(String(i), text);
    return { id: i, vector: { '': [1, i % 3], text } };
  });
  assert.equal((await http(url, 'PUT', '/collections/s/points?wait=true', { points })).status, 200);
  const check = async (idf: boolean, label: string): Promise<void> => {
    for (let q = 0; q < 10; q++) {
      const query = nastySparse(rng, 10);
      const answer = await http(url, 'POST', '/collections/s/points/query', { query, using: 'text', limit: 7 });
      assert.equal(answer.status, 200, answer.text);
      sameSparseHits(
        answer.body.result.points.map((h: { id: number; score: number }) => ({ id: String(h.id), score: h.score })),
        sparseModelSearch(stored, query, { idf, limit: 7 }),
        `${label}: ${JSON.stringify(query)} (seed 4343)`,
      );
    }
  };
  await check(false, 'created without a modifier');
  for (const [body, pattern] of [
    [{ sparse_vectors: { nope: { modifier: 'idf' } } }, /Not existing vector name error: nope/],
    [{ sparse_vectors: { text: { modifier: 'bm25' } } }, /sparse_vectors\.text\.modifier: unknown variant/],
    [{ sparse_vectors: { text: { size: 3 } } }, /sparse_vectors\.text\.size: unknown field/],
  ] as const) {
    const refused = await http(url, 'PATCH', '/collections/s', body);
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.text, pattern);
  }
  const patched = await http(url, 'PATCH', '/collections/s', {
    sparse_vectors: { text: { modifier: 'idf', index: { on_disk: true, full_scan_threshold: 100 } } },
  });
  assert.equal(patched.status, 200, patched.text);
  const echoed = (await http(url, 'GET', '/collections/s')).body.result.config.params.sparse_vectors.text;
  assert.deepEqual(echoed, { index: { on_disk: true, full_scan_threshold: 100 }, modifier: 'idf' });
  assert.deepEqual((await http(kithUrl, 'GET', '/collections/s')).body.result.sparse_vectors, { text: { modifier: 'idf' } });
  await check(true, 'after the Qdrant PATCH');
  const badKith = await http(kithUrl, 'PATCH', '/collections/s', { sparse_vectors: { nope: { modifier: 'none' } } });
  assert.equal(badKith.status, 400, badKith.text);
  assert.match(badKith.text, /sparse_vectors\.nope/);
  const kithPatched = await http(kithUrl, 'PATCH', '/collections/s', { sparse_vectors: { text: { modifier: 'none' } } });
  assert.equal(kithPatched.status, 200, kithPatched.text);
  await check(false, 'after the kith PATCH');
});
