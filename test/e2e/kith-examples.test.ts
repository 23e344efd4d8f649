/**
 * Searches by stored points and examples on kith's own port: POST …/points/recommend (every
 * strategy), …/recommend/batch, …/points/discover (discovery and context search) and the query
 * stages `point`, `recommend`, `discover`, `context`, `formula`. Seeded random examples (ids and
 * vectors) on Cosine, Dot and Euclid collections are compared with a brute-force model of the
 * scores; the same requests through /points/query's stages and through the Qdrant port over the
 * same database must answer alike (ids, scores, order); then the refusals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient, KithClientError } from '../../src/api/client/kith-client.js';
import type { ContextPair, Example, ScoredPoint } from '../../src/api/client/kith-client.js';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { sameSparseHits } from '../helpers/sparse-model.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: bodies are built field by field in two dialects
type Body = any;

const DIM = 3;
const POINTS = 60;
const sigmoid = (x: number): number => x / (1 + Math.abs(x));
const scaled = (x: number): number => 0.5 * (sigmoid(x) + 1);
const dot = (a: readonly number[], b: readonly number[]): number => a.reduce((s, x, i) => s + x * (b[i] as number), 0);
const unit = (v: readonly number[]): number[] => {
  const n = Math.hypot(...v);
  return v.map((x) => Math.fround(x / n));
};

/** The hits as the model lists them: ids as strings. */
function hitsOf(points: readonly { id: string | number; score: number }[]): { id: string; score: number }[] {
  return points.map((p) => ({ id: String(p.id), score: p.score }));
}

/** Two answers to the same request: the same ids in the same order, the same scores (the Qdrant port's are float32). */
function sameAnswer(got: readonly { id: string | number; score: number }[], want: readonly { id: string | number; score: number }[], what: string): void {
  assert.deepEqual(
    got.map((h) => String(h.id)),
    want.map((h) => String(h.id)),
    what,
  );
  got.forEach((h, i) => {
    const other = (want[i] as { score: number }).score;
    assert.ok(Math.abs(h.score - other) <= 1e-6 * Math.max(1, Math.abs(other)), `${what}: score at ${i}: ${h.score} and ${other}`);
  });
}

for (const distance of ['cosine', 'dot', 'euclid'] as const) {
  test(`recommend (three strategies), discover and context on kith's port equal a brute-force model and the Qdrant port (${distance})`, async (t) => {
    const { url, kithUrl } = await startQdrant(t);
    const client = new KithClient(kithUrl);
    const seed = testSeed({ cosine: 4401, dot: 4402, euclid: 4403 }[distance]);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const nonZero = (): number[] => Array.from({ length: DIM }, () => (rng.int(6) - 3 || 1) as number);
    const vectors = new Map<number, number[]>();
    for (let i = 0; i < POINTS; i++) vectors.set(i, i % 11 === 10 ? (vectors.get(i - 1) as number[]) : nonZero());
    await client.createCollection({ name: 'e', vector_size: DIM, distance, hnsw: seed % 2 === 0 });
    await client.upsert(
      'e',
      [...vectors].map(([id, vector]) => ({ id, vector, payload: { even: id % 2 === 0 } })),
    );
    const stored = (v: number[]): number[] => (distance === 'cosine' ? unit(v) : v);
    // The similarity examples are scored by (Qdrant's): Euclid's is the negated squared distance.
    const sim = (a: number[], b: number[]): number => (distance === 'euclid' ? -a.reduce((s, x, i) => s + (x - (b[i] as number)) ** 2, 0) : dot(a, b));

    for (let round = 0; round < 30; round++) {
      const what = `seed ${seed}, round ${round}`;
      const used = new Set<number>();
      const example = (): Example => {
        if (rng.int(2) === 0) {
          const id = rng.int(POINTS);
          used.add(id);
          return id;
        }
        return nonZero();
      };
      // Examples are scored as the collection stores vectors (unit length under Cosine)...
      const vectorOf = (e: Example): number[] => stored(typeof e === 'number' ? (vectors.get(e) as number[]) : (e as number[]));
      // ...but average_vector sums the given vectors as they are, beside the stored ones.
      const summandOf = (e: Example): number[] => (typeof e === 'number' ? stored(vectors.get(e) as number[]) : (e as number[]));
      // The model scores in float64, the engine in float32: a point within rounding of a step (a
      // context pair's boundary, best_score's positive-or-negative choice) could land on either side.
      const nearStep = (gaps: (v: number[]) => number[]): boolean => [...vectors.values()].some((v) => gaps(stored(v)).some((x) => Math.abs(x) < 1e-5));
      const kind = (['average_vector', 'best_score', 'sum_scores', 'discover', 'context'] as const)[round % 5];
      const limit = 1 + rng.int(12);
      const filter = round % 3 === 0 ? { must: [{ key: 'even', match: { value: true } }] } : undefined;
      const common = { limit, ...(filter === undefined ? {} : { filter }), params: { exact: true } };
      let viaRoute: ScoredPoint[];
      let stage: Body;
      let qdrantQuery: Body;
      let score: (v: number[]) => number;
      let ascending = false;
      if (kind === 'average_vector' || kind === 'best_score' || kind === 'sum_scores') {
        let positive: Example[];
        let negative: Example[];
        let mean: number[];
        do {
          used.clear();
          positive = Array.from({ length: kind === 'average_vector' ? 1 + rng.int(3) : rng.int(3) }, example);
          negative = Array.from({ length: kind !== 'average_vector' && positive.length === 0 ? 1 + rng.int(2) : rng.int(3) }, example);
          const avg = (list: Example[]): number[] => list.map(summandOf).reduce((s, v) => s.map((x, d) => x + (v[d] as number) / list.length), [0, 0, 0]);
          const p = avg(positive);
          mean = negative.length === 0 ? p : p.map((x, d) => x + (x - (avg(negative)[d] as number)));
          // A zero mean has no direction under Cosine: draw again.
        } while (
          (kind === 'average_vector' && mean.every((x) => Math.abs(x) < 1e-9)) ||
          (kind === 'best_score' &&
            positive.length * negative.length > 0 &&
            nearStep((v) => [Math.max(...positive.map((e) => sim(vectorOf(e), v))) - Math.max(...negative.map((e) => sim(vectorOf(e), v)))]))
        );
        const request = { positive, negative, strategy: kind };
        viaRoute = await client.recommend('e', { ...request, ...common, with_payload: false });
        stage = { recommend: request };
        qdrantQuery = { recommend: request };
        if (kind === 'average_vector') {
          ascending = distance === 'euclid';
          score = (v) => (distance === 'cosine' ? dot(unit(mean), v) : distance === 'dot' ? dot(mean, v) : Math.sqrt(-sim(mean, v)));
        } else {
          score = (v) => {
            const ps = positive.map((e) => sim(vectorOf(e), v));
            const ns = negative.map((e) => sim(vectorOf(e), v));
            if (kind === 'sum_scores') return ps.reduce((s, x) => s + x, 0) - ns.reduce((s, x) => s + x, 0);
            const [bp, bn] = [Math.max(Number.NEGATIVE_INFINITY, ...ps), Math.max(Number.NEGATIVE_INFINITY, ...ns)];
            return bp > bn ? scaled(bp) : -scaled(bn);
          };
        }
      } else {
        const gapsOf = (list: ContextPair[], v: number[]): number[] => list.map((p) => sim(vectorOf(p.positive), v) - sim(vectorOf(p.negative), v));
        let pairs: ContextPair[];
        do {
          used.clear();
          pairs = Array.from({ length: 1 + rng.int(3) }, () => ({ positive: example(), negative: example() }));
        } while (kind === 'discover' && nearStep((v) => gapsOf(pairs, v)));
        const zones = (v: number[]): number[] => gapsOf(pairs, v);
        if (kind === 'discover') {
          const target = example();
          viaRoute = await client.discover('e', { target, context: pairs, ...common, with_payload: false });
          stage = { discover: { target, context: pairs } };
          qdrantQuery = { discover: { target, context: pairs } };
          score = (v) => zones(v).reduce((s, x) => s + Math.sign(x), 0) + scaled(sim(vectorOf(target), v));
        } else {
          viaRoute = await client.discover('e', { context: pairs, ...common, with_payload: false });
          stage = { context: pairs };
          qdrantQuery = { context: pairs };
          score = (v) => zones(v).reduce((s, x) => s + sigmoid(Math.min(x - 2 ** -23, 0)), 0);
        }
      }
      const expected = [...vectors]
        .filter(([id]) => !used.has(id) && (filter === undefined || id % 2 === 0))
        .map(([id, v]) => ({ id: String(id), score: score(stored(v)) }))
        .sort((a, b) => (ascending ? a.score - b.score : b.score - a.score) || Number(a.id) - Number(b.id))
        .slice(0, limit);
      sameSparseHits(hitsOf(viaRoute), expected, `${what}: ${kind} ${JSON.stringify(stage)}`);
      const viaStage = await client.query('e', { ...stage, ...common, with_payload: false });
      sameAnswer(viaStage, viaRoute, `${what}: the query stage ${JSON.stringify(stage)}`);
      const viaQdrant = await http(url, 'POST', '/collections/e/points/query', { query: qdrantQuery, ...common });
      assert.equal(viaQdrant.status, 200, `${what}: ${viaQdrant.text}`);
      sameAnswer(viaQdrant.body.result.points, viaRoute, `${what}: the Qdrant port's ${JSON.stringify(qdrantQuery)}`);
    }
  });
}

test("kith's stage trees with points, examples and formulas answer as the Qdrant port's (random trees)", async (t) => {
  const { url, kithUrl, db } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  const seed = testSeed(4410);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const vec = (): number[] => Array.from({ length: DIM }, () => rng.int(7) - 3 || 1);
  await client.createCollection({ name: 'tree', vector_size: DIM, distance: 'dot' });
  await client.upsert(
    'tree',
    Array.from({ length: 80 }, (_, i) => ({ id: i, vector: vec(), payload: { g: i % 4 } })),
  );
  const id = (): number => rng.int(80);
  const example = (): Example => (rng.int(2) === 0 ? id() : vec());
  const pair = (): ContextPair => ({ positive: example(), negative: example() });
  /** One query, in both dialects: kith's stage fields and Qdrant's `query`. */
  const query = (): { kith: Body; qdrant: Body } => {
    switch (rng.int(6)) {
      case 0: {
        const v = vec();
        return { kith: { vector: v }, qdrant: v };
      }
      case 1: {
        const p = id();
        return { kith: { point: p }, qdrant: p };
      }
      case 2: {
        const recommend = { positive: [example(), example()], negative: [example()], strategy: ['average_vector', 'best_score', 'sum_scores'][rng.int(3)] };
        return { kith: { recommend }, qdrant: { recommend } };
      }
      case 3: {
        const discover = { target: example(), context: [pair(), pair()] };
        return { kith: { discover }, qdrant: { discover } };
      }
      case 4: {
        const context = [pair()];
        return { kith: { context }, qdrant: { context } };
      }
      default:
        return { kith: {}, qdrant: undefined };
    }
  };
  const formulas = [
    { formula: '$score' },
    { formula: { sum: ['$score', { mult: [0.5, '$score[1]'] }, { key: 'g', match: { value: 1 } }] }, defaults: { '$score[1]': -2 } },
    { formula: { mult: [{ sum: [1, 'g'] }, { exp_decay: { x: '$score', scale: 10 } }] } },
  ];
  const tree = (depth: number): { kith: Body; qdrant: Body } => {
    const limit = 1 + rng.int(15);
    const filter = rng.int(3) === 0 ? { must: [{ key: 'g', match: { value: rng.int(4) } }] } : undefined;
    const children = depth < 2 && rng.int(2) === 0 ? Array.from({ length: 1 + rng.int(3) }, () => tree(depth + 1)) : [];
    const kith: Body = { limit, filter, params: { exact: true } };
    const qdrant: Body = { limit, filter, params: { exact: true } };
    if (children.length > 0) {
      kith.prefetch = children.map((c) => c.kith);
      qdrant.prefetch = children.map((c) => c.qdrant);
    }
    const mode = children.length > 0 ? rng.int(3) : 2;
    if (mode === 0) {
      kith.fusion = 'rrf';
      qdrant.query = { fusion: 'rrf' };
    } else if (mode === 1) {
      const formula = formulas[rng.int(formulas.length)] as Body;
      Object.assign(kith, formula);
      qdrant.query = formula;
    } else {
      let q = query();
      // Prefetches need a query to re-score them, and so does the request; a prefetch without one is a page in id order.
      while ((children.length > 0 || depth === 0) && q.qdrant === undefined) q = query();
      Object.assign(kith, q.kith);
      if (q.qdrant !== undefined) qdrant.query = q.qdrant;
    }
    return { kith, qdrant };
  };
  let compared = 0;
  for (let round = 0; round < 40; round++) {
    const { kith, qdrant } = tree(0);
    const what = `seed ${seed}, round ${round}: ${JSON.stringify(kith)}`;
    const viaQdrant = await http(url, 'POST', '/collections/tree/points/query', qdrant);
    const viaKith = await http(kithUrl, 'POST', '/collections/tree/points/query', { ...kith, with_payload: false });
    assert.equal(viaKith.status, viaQdrant.status, `${what}: ${viaKith.text} / ${viaQdrant.text}`);
    if (viaKith.status !== 200) continue;
    compared++;
    sameAnswer(viaKith.body.result, viaQdrant.body.result.points, what);
    const library = await db.collection('tree').queryStages({ ...kith, with_payload: false });
    sameAnswer(library, viaKith.body.result, `${what}: the library`);
  }
  assert.ok(compared >= 30, `only ${compared} of 40 trees were answered by both ports (seed ${seed})`);
});

test("a formula over two prefetches on kith's port equals the model over two exact searches", async (t) => {
  const { kithUrl } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  const seed = testSeed(4420);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  await client.createCollection({ name: 'f', vector_size: 2, distance: 'cosine' });
  await client.upsert(
    'f',
    Array.from({ length: 50 }, (_, i) => ({ id: `p${i}`, vector: [Math.cos(i + rng.int(5)), Math.sin(i * 0.7) + 0.1], payload: { g: i % 4 } })),
  );
  const [a, b] = [
    [1, 0.2],
    [-0.3, 1],
  ];
  const first = await client.search('f', { vector: a, limit: 12, params: { exact: true }, with_payload: false });
  const second = await client.search('f', { vector: b, limit: 12, params: { exact: true }, with_payload: false });
  const [s0, s1] = [new Map(first.map((h) => [h.id, h.score])), new Map(second.map((h) => [h.id, h.score]))];
  const g = (id: string): number => Number(id.slice(1)) % 4;
  const expected = [...new Set([...s0.keys(), ...s1.keys()])]
    .map((id) => ({ id, score: (s0.get(id) ?? 0) + 0.5 * (s1.get(id) ?? -2) + (g(id) === 1 ? 1 : 0) + 0.25 * g(id) }))
    .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1))
    .slice(0, 7);
  const got = await client.query('f', {
    prefetch: [
      { vector: a, limit: 12, params: { exact: true } },
      { vector: b, limit: 12, params: { exact: true } },
    ],
    formula: { sum: ['$score', { mult: [0.5, '$score[1]'] }, { key: 'g', match: { value: 1 } }, { mult: [0.25, 'g'] }] },
    defaults: { '$score[1]': -2 },
    limit: 7,
    with_payload: true,
  });
  sameSparseHits(hitsOf(got), expected, `seed ${seed}`, 1e-6);
  for (const hit of got) assert.equal((hit.payload as { g: number }).g, g(hit.id), 'the payload comes with the formula’s hits');
});

test("refusals on kith's port: missing points 404, bad shapes and budgets 400 naming the field, nothing changed", async (t) => {
  const { kithUrl } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  await client.createCollection({ name: 'r', vector_size: DIM, distance: 'cosine' });
  await client.upsert(
    'r',
    Array.from({ length: 10 }, (_, i) => ({ id: i, vector: [1, i, 2], payload: { i } })),
  );
  const before = await client.scroll('r', { limit: 100, with_vector: true });
  const refused = async (path: string, body: Body, status: number, code: string, pattern: RegExp): Promise<void> => {
    const r = await http(kithUrl, 'POST', `/collections/r/points/${path}`, body);
    assert.equal(r.status, status, `${path} ${JSON.stringify(body).slice(0, 200)}: ${r.text}`);
    assert.equal(r.body.status.code, code, r.text);
    assert.match(r.body.status.error, pattern, JSON.stringify(body).slice(0, 200));
  };
  // Missing points: as kith's port words a missing point elsewhere.
  await refused('recommend', { positive: [1, 99] }, 404, 'ERR_POINT_NOT_FOUND', /point 99 does not exist in collection "r"/);
  await refused('recommend', { negative: ['nope'], strategy: 'best_score' }, 404, 'ERR_POINT_NOT_FOUND', /point "nope" does not exist/);
  await refused('recommend/batch', { searches: [{ positive: [1] }, { positive: [77] }] }, 404, 'ERR_POINT_NOT_FOUND', /point 77/);
  await refused('discover', { target: 42, context: [{ positive: 1, negative: 2 }] }, 404, 'ERR_POINT_NOT_FOUND', /point 42/);
  await refused('discover', { context: [{ positive: 1, negative: 43 }] }, 404, 'ERR_POINT_NOT_FOUND', /point 43/);
  await refused('query', { point: 44 }, 404, 'ERR_POINT_NOT_FOUND', /point 44/);
  await refused('query', { prefetch: [{ recommend: { positive: [1, 45] } }], fusion: 'rrf' }, 404, 'ERR_POINT_NOT_FOUND', /point 45/);
  // Bad shapes, each named by its field.
  await refused('recommend', { positive: [1, [1, 2]] }, 400, 'ERR_BAD_INPUT', /^positive\[1\]: expected a vector of 3 numbers, got 2/);
  await refused('recommend', { positive: [1, 2, -3] }, 400, 'ERR_BAD_INPUT', /^positive\[2\]/);
  await refused('recommend', { negative: [1] }, 400, 'ERR_BAD_INPUT', /^positive: average_vector needs at least one positive example/);
  await refused('recommend', { positive: [], strategy: 'sum_scores' }, 400, 'ERR_BAD_INPUT', /sum_scores needs at least one positive or negative example/);
  await refused('recommend', { positive: [1], strategy: 'best' }, 400, 'ERR_BAD_INPUT', /^strategy/);
  await refused('recommend', { positive: [1], using: 'other' }, 400, 'ERR_BAD_INPUT', /^using: the collection has no named or sparse vector "other"/);
  await refused('recommend', { positive: [{ indices: [1], values: [1] }] }, 400, 'ERR_BAD_INPUT', /^positive\[0\]: expected a point id or a vector/);
  await refused('query', { vector: [1, 2, 3], using: 'other' }, 400, 'ERR_BAD_INPUT', /^using: names the vector of point, recommend, discover, context/);
  await refused('query', { prefetch: [{ vector: [1, 2, 3] }], fusion: 'rrf', using: 'x' }, 400, 'ERR_BAD_INPUT', /^using: .*this stage has none/);
  await refused('recommend', { positive: [1], vector: [1, 2, 3] }, 400, 'ERR_BAD_INPUT', /vector/);
  await refused('recommend', { positive: [1], filter: { must: [{ key: 'i', match: {} }] } }, 400, 'ERR_BAD_INPUT', /^filter\.must\[0\]/);
  await refused('recommend/batch', { searches: [{ positive: [1] }, { positive: [2, [1]] }] }, 400, 'ERR_BAD_INPUT', /^searches\[1\]\.positive\[1\]/);
  await refused('discover', {}, 400, 'ERR_BAD_INPUT', /^context: a context search needs at least one/);
  await refused('discover', { context: [{ positive: 1 }] }, 400, 'ERR_BAD_INPUT', /^context\[0\]/);
  await refused('discover', { target: [1, 2, 3, 4] }, 400, 'ERR_BAD_INPUT', /^target: expected a vector of 3 numbers, got 4/);
  await refused(
    'query',
    { prefetch: [{ recommend: { positive: [[1, 2]] } }], fusion: 'rrf' },
    400,
    'ERR_BAD_INPUT',
    /^prefetch\[0\]\.recommend\.positive\[0\]/,
  );
  await refused(
    'query',
    { prefetch: [{ discover: { context: [{ positive: 1, negative: 'x', extra: 1 }] } }], fusion: 'rrf' },
    400,
    'ERR_BAD_INPUT',
    /^prefetch\[0\]\.discover\.context\[0\]\.extra/,
  );
  await refused('query', { point: 1, vector: [1, 2, 3] }, 400, 'ERR_BAD_INPUT', /give one of/);
  await refused('query', { formula: '$score' }, 400, 'ERR_BAD_INPUT', /^formula: a formula re-scores prefetches/);
  await refused(
    'query',
    { prefetch: [{ point: 1 }], formula: '$score', point: 2 },
    400,
    'ERR_BAD_INPUT',
    /^formula: give either a formula or a query \(point\)/,
  );
  await refused('query', { prefetch: [{ point: 1 }], fusion: 'rrf', defaults: { x: 1 } }, 400, 'ERR_BAD_INPUT', /^defaults: defaults are a formula/);
  await refused('query', { prefetch: [{ point: 1 }], formula: { sum: [1, { pow: 3 }] } }, 400, 'ERR_BAD_INPUT', /^formula\.sum\[1\]\.pow: expected an object/);
  await refused('query', { prefetch: [{ point: 1 }], formula: '$nope' }, 400, 'ERR_BAD_INPUT', /^formula: invalid reserved variable/);
  await refused('query', { prefetch: [{ point: 1 }], formula: 'missing' }, 400, 'ERR_BAD_INPUT', /no value at `missing`/);
  // The client throws the same refusals.
  await assert.rejects(
    () => client.recommend('r', { positive: [123] }),
    (error: unknown) => error instanceof KithClientError && error.status === 404 && error.code === 'ERR_POINT_NOT_FOUND',
  );

  // Budgets: every example counted before any is read, across all stages of a query.
  const wide = 4096;
  await client.createCollection({ name: 'wide', vector_size: wide, distance: 'dot' });
  await client.upsert(
    'wide',
    Array.from({ length: 4 }, (_, i) => ({ id: i, vector: Array.from({ length: wide }, (_, d) => ((d + i) % 7) / 7) })),
  );
  // exampleComponents is 16,777,216: 4,096 examples of 4,096 components.
  const ids = (count: number): number[] => Array.from({ length: count }, (_, i) => i % 4);
  const wideRefused = async (path: string, body: Body, pattern: RegExp): Promise<void> => {
    const r = await http(kithUrl, 'POST', `/collections/wide/points/${path}`, body);
    assert.equal(r.status, 400, r.text.slice(0, 300));
    assert.equal(r.body.status.code, 'ERR_OVER_LIMIT', r.text.slice(0, 300));
    assert.match(r.body.status.error, pattern);
  };
  await wideRefused('recommend', { positive: ids(4097) }, /^positive: .*example/);
  await wideRefused('discover', { context: Array.from({ length: 2049 }, (_, i) => ({ positive: i % 4, negative: (i + 1) % 4 })) }, /^context/);
  await wideRefused(
    'query',
    {
      prefetch: [{ recommend: { positive: ids(2100) } }, { recommend: { positive: ids(2100), strategy: 'best_score' } }],
      fusion: 'rrf',
    },
    /^prefetch\[1\]/,
  );
  const under = await http(kithUrl, 'POST', '/collections/wide/points/recommend', { positive: ids(4096), limit: 2 });
  assert.equal(under.status, 200, `4,096 examples are within the budget: ${under.text.slice(0, 300)}`);

  // Nothing changed: every point as it was.
  assert.deepEqual(await client.scroll('r', { limit: 100, with_vector: true }), before);
});
