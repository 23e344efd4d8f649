/**
 * Queries by stored points and by examples of a named vector on the Qdrant port (`using` a named
 * dense, multi- or sparse vector): a point id as the query (in /points/query, its batch, a
 * prefetch and /points/query/groups), recommendations (average_vector, best_score, sum_scores),
 * discovery and context searches, and the distance matrix by a named vector, all against a
 * brute-force model over nasty data (zero vectors,
 * duplicates, points that lack the vector, Dot over non-negative vectors); Qdrant 1.18's 404 for a
 * point that lacks the vector, and 400s that name the field for what stays refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { namedModelSearch, nastySparse, type SparseHit, type SparseJson, sameSparseHits, sparseModelSearch, storedSparse } from '../helpers/sparse-model.js';
import { matrixRow } from '../helpers/matrix-answer.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;
type Distance = 'Dot' | 'Cosine' | 'Euclid';

const SEED = Number(process.env.KITH_SEED ?? 5150);

/** The collection's vectors: `img` Dot over non-negative vectors, `euc` Euclid, `cos` Cosine, a multi-vector and a sparse one. */
const SPECS: Record<'img' | 'euc' | 'cos', { size: number; distance: Distance }> = {
  img: { size: 3, distance: 'Dot' },
  euc: { size: 3, distance: 'Euclid' },
  cos: { size: 4, distance: 'Cosine' },
};

function unit(v: readonly number[]): number[] {
  const n = Math.hypot(...v);
  return n === 0 ? [...v] : v.map((x) => x / n);
}

/** A vector as the engine scores it: float32, unit length under Cosine. */
function asStored(v: readonly number[], distance: Distance): number[] {
  return (distance === 'Cosine' ? unit(v) : [...v]).map(Math.fround);
}

/** The kernels' similarity: a dot product, or −‖a − b‖² under Euclid (inputs already as stored). */
function similarity(a: readonly number[], b: readonly number[], distance: Distance): number {
  if (distance === 'Euclid') return -a.reduce((s, x, i) => s + (x - (b[i] as number)) ** 2, 0);
  return a.reduce((s, x, i) => s + x * (b[i] as number), 0);
}

const fastSigmoid = (x: number): number => x / (1 + Math.abs(x));
const scaledSigmoid = (x: number): number => 0.5 * (fastSigmoid(x) + 1);

interface Data {
  readonly vectors: Record<'img' | 'euc' | 'cos', Map<string, number[]>>;
  readonly multi: Map<string, number[][]>;
  readonly words: Map<string, SparseJson>;
}

async function setUp(t: Parameters<typeof startQdrant>[0]) {
  const harness = await startQdrant(t);
  const { client } = harness;
  await client.createCollection('e', {
    vectors: {
      text: { size: 2, distance: 'Cosine' },
      img: SPECS.img,
      euc: SPECS.euc,
      cos: SPECS.cos,
      multi: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' } },
    },
    sparse_vectors: { words: {} },
  });
  const rng = new SeededRng(SEED);
  const data: Data = { vectors: { img: new Map(), euc: new Map(), cos: new Map() }, multi: new Map(), words: new Map() };
  const nonNegative = (n: number): number[] => (rng.int(6) === 0 ? new Array(n).fill(0) : Array.from({ length: n }, () => rng.int(4)));
  const signed = (n: number): number[] => Array.from({ length: n }, () => rng.int(5) - 2);
  const points = Array.from({ length: 60 }, (_, i) => {
    const id = String(i);
    const vector: Record<string, unknown> = { text: [1, i % 4] };
    if (i % 5 !== 0) {
      // Every seventh point duplicates an earlier one's vector.
      const earlier = data.vectors.img.get(String(i - 7));
      const v = i % 7 === 3 && earlier !== undefined ? [...earlier] : nonNegative(3);
      vector.img = v;
      data.vectors.img.set(id, v);
    }
    if (i % 4 !== 1) {
      const v = signed(3);
      vector.euc = v;
      data.vectors.euc.set(id, v);
    }
    if (i % 6 !== 2) {
      const v = nonNegative(4);
      vector.cos = v;
      data.vectors.cos.set(id, v);
    }
    if (i % 3 !== 0) {
      const rows = Array.from({ length: 1 + rng.int(3) }, () => signed(2));
      vector.multi = rows;
      data.multi.set(id, rows);
    }
    const point: Body = { id: i, vector, payload: { g: i % 3 } };
    if (i % 5 !== 4) {
      const words = nastySparse(rng, 10);
      point.vector.words = words;
      data.words.set(id, storedSparse(words));
    }
    return point;
  });
  await client.upsert('e', { points });
  return { ...harness, rng, data };
}

/** Each query on collection `e` answers with its status and an error text matching its pattern. */
async function refusals(url: string, cases: readonly (readonly [Body, number, RegExp])[]): Promise<void> {
  for (const [body, status, pattern] of cases) {
    const r = await http(url, 'POST', '/collections/e/points/query', body);
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.body.status.error, pattern, JSON.stringify(body));
  }
}

/** The hits of a search on collection `e` (a 200 asserted) by `…/points/<path>`. */
async function hitsAt(url: string, path: string, body: Body): Promise<SparseHit[]> {
  const r = await http(url, 'POST', `/collections/e/points/${path}`, body);
  assert.equal(r.status, 200, `seed ${SEED}: ${JSON.stringify(body)}: ${r.text}`);
  return hitsOf(path === 'query' ? r.body.result.points : r.body.result);
}

/** Hits of a Qdrant answer as the model gives them. */
function hitsOf(points: readonly { id: unknown; score: number }[]): SparseHit[] {
  return points.map((p) => ({ id: String(p.id), score: p.score }));
}

/** One-row vectors as the model takes them: each a list of one row. */
function rowsOf(map: ReadonlyMap<string, number[]>): Map<string, number[][]> {
  return new Map([...map].map(([id, v]) => [id, [v]]));
}

function without<V>(map: ReadonlyMap<string, V>, ids: readonly string[]): Map<string, V> {
  return new Map([...map].filter(([id]) => !ids.includes(id)));
}

test('a point id as the query of a named dense, multi- or sparse vector, against the model', async (t) => {
  const { client, url, rng, data } = await setUp(t);
  const query = async (body: Body): Promise<Body> => {
    const r = await http(url, 'POST', '/collections/e/points/query', body);
    assert.equal(r.status, 200, `seed ${SEED}: ${JSON.stringify(body)}: ${r.text}`);
    return r.body.result.points;
  };
  for (let round = 0; round < 10; round++) {
    const limit = 1 + rng.int(12);
    const context = `seed ${SEED} round ${round}`;
    for (const name of ['img', 'euc', 'cos'] as const) {
      const ids = [...data.vectors[name].keys()];
      const p = ids[rng.int(ids.length)] as string;
      const stored = data.vectors[name].get(p) as number[];
      const expected = namedModelSearch(rowsOf(without(data.vectors[name], [p])), [stored], { distance: SPECS[name].distance, limit }).map((h) => ({ ...h }));
      const wrapped = rng.int(2) === 0;
      const hits = await query({ query: wrapped ? { nearest: Number(p) } : Number(p), using: name, limit });
      sameSparseHits(hitsOf(hits), expected, `${context}: ${name} near point ${p}`);
    }
    const multiIds = [...data.multi.keys()];
    const m = multiIds[rng.int(multiIds.length)] as string;
    const multiHits = await query({ query: Number(m), using: 'multi', limit });
    const multiModel = new Map([...without(data.multi, [m])]);
    sameSparseHits(hitsOf(multiHits), namedModelSearch(multiModel, data.multi.get(m) as number[][], { distance: 'Dot', limit }), `${context}: multi near ${m}`);
    const wordIds = [...data.words].filter(([, v]) => v.indices.length > 0).map(([id]) => id);
    const w = wordIds[rng.int(wordIds.length)] as string;
    const wordHits = await query({ query: { nearest: Number(w) }, using: 'words', limit });
    sameSparseHits(
      hitsOf(wordHits),
      sparseModelSearch(without(data.words, [w]), data.words.get(w) as SparseJson, { idf: false, limit }),
      `${context}: words near ${w}`,
    );
  }

  // In a batch, the same answers as alone.
  const imgIds = [...data.vectors.img.keys()];
  const [a, b] = [imgIds[3] as string, imgIds[11] as string];
  const batch = await http(url, 'POST', '/collections/e/points/query/batch', {
    searches: [
      { query: Number(a), using: 'img', limit: 5 },
      { query: Number(b), using: 'euc', limit: 4, filter: { must: [{ key: 'g', match: { value: 1 } }] } },
    ],
  });
  assert.equal(batch.status, 200, batch.text);
  sameSparseHits(
    hitsOf(batch.body.result[0].points),
    namedModelSearch(rowsOf(without(data.vectors.img, [a])), [data.vectors.img.get(a) as number[]], { distance: 'Dot', limit: 5 }),
    `seed ${SEED}: batch[0]`,
  );
  if (data.vectors.euc.has(b)) {
    sameSparseHits(
      hitsOf(batch.body.result[1].points),
      namedModelSearch(rowsOf(without(data.vectors.euc, [b])), [data.vectors.euc.get(b) as number[]], {
        distance: 'Euclid',
        limit: 4,
        accept: (id) => Number(id) % 3 === 1,
      }),
      `seed ${SEED}: batch[1]`,
    );
  }

  // A prefetch by a point's img, re-scored by the same point's euc: the candidates are every other point with img.
  const e = [...data.vectors.img.keys()].find((id) => data.vectors.euc.has(id)) as string;
  const staged = await query({ prefetch: { query: Number(e), using: 'img', limit: 100 }, query: Number(e), using: 'euc', limit: 8 });
  const among = new Map([...data.vectors.euc].filter(([id]) => id !== e && data.vectors.img.has(id)));
  sameSparseHits(
    hitsOf(staged),
    namedModelSearch(rowsOf(among), [data.vectors.euc.get(e) as number[]], { distance: 'Euclid', limit: 8 }),
    `seed ${SEED}: prefetch`,
  );

  // Grouped by g: each group's best two, from the model's ranking of every other point.
  const groups = await http(url, 'POST', '/collections/e/points/query/groups', { query: Number(a), using: 'img', group_by: 'g', limit: 3, group_size: 2 });
  assert.equal(groups.status, 200, groups.text);
  const ranking = namedModelSearch(rowsOf(without(data.vectors.img, [a])), [data.vectors.img.get(a) as number[]], { distance: 'Dot', limit: 100 });
  const modelGroups = [0, 1, 2].map((g) => ranking.filter((h) => Number(h.id) % 3 === g).slice(0, 2));
  const scoresOf = (list: readonly SparseHit[][]): string =>
    JSON.stringify(list.map((hits) => hits.map((h) => Math.round(h.score * 1e4) / 1e4)).sort((x, y) => (y[0] ?? 0) - (x[0] ?? 0) || x.length - y.length));
  assert.equal(scoresOf(groups.body.result.groups.map((g: Body) => hitsOf(g.hits))), scoresOf(modelGroups), `seed ${SEED}: groups`);
  for (const group of groups.body.result.groups as Body[])
    for (const hit of group.hits as Body[]) {
      assert.notEqual(String(hit.id), a, 'the query point is left out');
      assert.equal(Number(hit.id) % 3, group.id, 'a hit is in its group');
    }

  // Qdrant's answers for a point without the vector, and for no such point; nothing changes.
  await refusals(url, [
    [{ query: 0, using: 'img' }, 404, /Vector with name "img" for point/],
    [{ query: { nearest: 2 }, using: 'cos' }, 404, /Vector with name "cos" for point/],
    [{ query: 3, using: 'multi' }, 404, /Vector with name "multi" for point/],
    [{ query: 4, using: 'words' }, 404, /Vector with name "words" for point/],
    [{ prefetch: { query: 5, using: 'img' }, query: 1, using: 'euc' }, 404, /Vector with name "(img|euc)" for point/],
    [{ query: 999, using: 'img' }, 404, /No point with id 999 found/],
    [{ query: 1, using: 'nope' }, 400, /Not existing vector name error: nope/],
  ]);
  assert.equal((await client.count('e')).count, 60);
});

/** The model's score of one point by examples (already as stored) under a strategy. */
type Strategy = 'best_score' | 'sum_scores' | 'discover' | 'context';

interface ExampleCase {
  strategy: Strategy;
  positive: number[][];
  negative: number[][];
  target?: number[];
  pairs: { positive: number[]; negative: number[] }[];
}

function exampleModel(c: ExampleCase, v: number[], distance: Distance): number {
  return exampleModelBy(c, (e) => similarity(v, e, distance));
}

/** The model's score by examples of any kind, from a point's similarity to each example. */
function exampleModelBy<V>(
  c: { strategy: Strategy; positive: V[]; negative: V[]; target?: V; pairs: { positive: V; negative: V }[] },
  sim: (example: V) => number,
): number {
  switch (c.strategy) {
    case 'best_score': {
      const bp = Math.max(Number.NEGATIVE_INFINITY, ...c.positive.map(sim));
      const bn = Math.max(Number.NEGATIVE_INFINITY, ...c.negative.map(sim));
      return bp > bn ? scaledSigmoid(bp) : -scaledSigmoid(bn);
    }
    case 'sum_scores':
      return c.positive.reduce((s, e) => s + sim(e), 0) - c.negative.reduce((s, e) => s + sim(e), 0);
    case 'discover':
      return c.pairs.reduce((s, p) => s + Math.sign(sim(p.positive) - sim(p.negative)), 0) + scaledSigmoid(sim(c.target as V));
    case 'context':
      return c.pairs.reduce((s, p) => s + fastSigmoid(Math.min(sim(p.positive) - sim(p.negative) - 2 ** -23, 0)), 0);
  }
}

test('recommendations, discovery and context searches by a named vector, against the model', async (t) => {
  const { client, url, rng, data } = await setUp(t);
  const run = (path: string, body: Body): Promise<SparseHit[]> => hitsAt(url, path, body);
  const ids = [...Array(60).keys()].map(String);
  for (let round = 0; round < 16; round++) {
    const limit = 1 + rng.int(10);
    const names = ['img', 'euc', 'cos'] as const;
    const name = names[round % 3] as (typeof names)[number];
    const { size, distance } = SPECS[name];
    const stored = data.vectors[name];
    const context = `seed ${SEED} round ${round} (${name})`;
    // An example: any point's id (it may lack the vector) or a vector (non-negative for img).
    const given: string[] = [];
    const example = (mayLack: boolean): { wire: number | number[]; model: number[] | undefined } => {
      if (rng.int(3) === 0) {
        const v = Array.from({ length: size }, () => (name === 'img' ? rng.int(4) : rng.int(5) - 2));
        return { wire: v, model: v };
      }
      const pool = mayLack ? ids : [...stored.keys()];
      const id = pool[rng.int(pool.length)] as string;
      given.push(id);
      return { wire: Number(id), model: stored.get(id) };
    };
    const asModel = (v: number[] | undefined): number[] | undefined => (v === undefined ? undefined : asStored(v, distance));

    // best_score and sum_scores: examples that lack the vector are left out, as Qdrant leaves them out.
    for (const strategy of ['best_score', 'sum_scores'] as const) {
      given.length = 0;
      const pos = Array.from({ length: 1 + rng.int(3) }, () => example(true));
      const neg = Array.from({ length: rng.int(3) }, () => example(true));
      // One given vector at least: best_score of no examples at all has no meaning.
      pos.push({ wire: Array(size).fill(1), model: Array(size).fill(1) });
      const c: ExampleCase = {
        strategy,
        positive: pos.map((e) => asModel(e.model)).filter((v): v is number[] => v !== undefined),
        negative: neg.map((e) => asModel(e.model)).filter((v): v is number[] => v !== undefined),
        pairs: [],
      };
      const expected = [...without(stored, given)]
        .map(([id, v]) => ({ id, score: exampleModel(c, asStored(v, distance), distance) }))
        .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1))
        .slice(0, limit);
      const body = { positive: pos.map((e) => e.wire), negative: neg.map((e) => e.wire), strategy };
      sameSparseHits(await run('query', { query: { recommend: body }, using: name, limit }), expected, `${context} ${strategy}`);
      sameSparseHits(await run('recommend', { ...body, using: name, limit }), expected, `${context} ${strategy} on /points/recommend`);
    }

    // average_vector: a search near p̄ + (p̄ − n̄) of the stored (unit under Cosine) and given vectors.
    given.length = 0;
    const pos = Array.from({ length: 1 + rng.int(3) }, () => example(true));
    pos.push(example(false));
    const neg = Array.from({ length: rng.int(3) }, () => example(true));
    const side = (list: { wire: number | number[]; model: number[] | undefined }[]): number[][] =>
      list.filter((e) => e.model !== undefined).map((e) => (typeof e.wire === 'number' ? asStored(e.model as number[], distance) : (e.model as number[])));
    const mean = (vs: number[][]): number[] => Array.from({ length: size }, (_, d) => vs.reduce((s, v) => s + (v[d] as number), 0) / vs.length);
    const [p, n] = [side(pos), side(neg)];
    const target = p.length === 0 ? undefined : n.length === 0 ? mean(p) : mean(p).map((x, d) => x + (x - (mean(n)[d] as number)));
    const body = { query: { recommend: { positive: pos.map((e) => e.wire), negative: neg.map((e) => e.wire) } }, using: name, limit };
    if (target === undefined) {
      const r = await http(url, 'POST', '/collections/e/points/query', body);
      assert.equal(r.status, 400, `${context}: every positive lacks the vector: ${r.text}`);
    } else {
      const model = namedModelSearch(new Map([...without(stored, given)].map(([id, v]) => [id, [v]])), [target], { distance, limit });
      sameSparseHits(await run('query', body), model, `${context} average_vector`);
    }

    // Discovery and context searches: exact similarities (integers) under Dot and Euclid only, so that their signs are exact.
    if (name === 'cos') continue;
    given.length = 0;
    const targetExample = example(false);
    const pairs = Array.from({ length: 1 + rng.int(3) }, () => ({ positive: example(false), negative: example(false) }));
    const modelPairs = pairs.map((pair) => ({ positive: pair.positive.model as number[], negative: pair.negative.model as number[] }));
    for (const strategy of ['discover', 'context'] as const) {
      const c: ExampleCase = { strategy, positive: [], negative: [], target: targetExample.model as number[], pairs: modelPairs };
      const excluded = strategy === 'discover' ? given : given.slice(typeof targetExample.wire === 'number' ? 1 : 0);
      const expected = [...without(stored, excluded)]
        .map(([id, v]) => ({ id, score: exampleModel(c, v, distance) }))
        .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1))
        .slice(0, limit);
      const wirePairs = pairs.map((pair) => ({ positive: pair.positive.wire, negative: pair.negative.wire }));
      const query = strategy === 'discover' ? { discover: { target: targetExample.wire, context: wirePairs } } : { context: wirePairs };
      sameSparseHits(await run('query', { query, using: name, limit }), expected, `${context} ${strategy}`);
      if (strategy === 'discover')
        sameSparseHits(
          await run('discover', { target: targetExample.wire, context: wirePairs, using: name, limit }),
          expected,
          `${context} discover on /points/discover`,
        );
    }
  }

  // Qdrant's 404 for a discovery's or context pair's point that lacks the vector; 400s naming the field for what stays refused.
  await refusals(url, [
    [{ query: { discover: { target: 0, context: [{ positive: 1, negative: 2 }] } }, using: 'img' }, 404, /Vector with name "img" for point/],
    [{ query: { context: [{ positive: 1, negative: 5 }] }, using: 'euc' }, 404, /Vector with name "euc" for point/],
    [{ query: { recommend: { positive: [0, 5] } }, using: 'img' }, 400, /positive/],
    [{ query: { recommend: { positive: [[1, 1]] } }, using: 'img' }, 400, /positive\[0\]: expected a vector of 3 numbers, got 2/],
  ]);
  assert.equal((await client.count('e')).count, 60, 'no refused query changed anything');
});

test('the distance matrix by a named vector: every holder sampled, each row its nearest others, against the model', async (t) => {
  const { client, url, data } = await setUp(t);
  const cases = [
    { using: 'img', stored: rowsOf(data.vectors.img), distance: 'Dot' as Distance },
    { using: 'euc', stored: rowsOf(data.vectors.euc), distance: 'Euclid' as Distance },
    { using: 'cos', stored: rowsOf(data.vectors.cos), distance: 'Cosine' as Distance },
    { using: 'multi', stored: data.multi, distance: 'Dot' as Distance },
  ];
  for (const { using, stored, distance } of cases) {
    for (const g of [undefined, 1]) {
      const limit = g === undefined ? 4 : 2;
      const filter = g === undefined ? undefined : { must: [{ key: 'g', match: { value: g } }] };
      const holders = new Map([...stored].filter(([id]) => g === undefined || Number(id) % 3 === g));
      const ids = [...holders.keys()].map(Number).sort((x, y) => x - y);
      const context = `seed ${SEED}: matrix by ${using}${g === undefined ? '' : ` among g = ${g}`}`;
      const offsets = await http(url, 'POST', '/collections/e/points/search/matrix/offsets', { using, sample: 100, limit, ...(filter ? { filter } : {}) });
      assert.equal(offsets.status, 200, `${context}: ${offsets.text}`);
      const result = offsets.body.result;
      assert.deepEqual(result.ids, ids, `${context}: the sample is every point holding the vector`);
      const pairs = await http(url, 'POST', '/collections/e/points/search/matrix/pairs', { using, sample: 100, limit, ...(filter ? { filter } : {}) });
      assert.equal(pairs.status, 200, `${context}: ${pairs.text}`);
      ids.forEach((a, row) => {
        const expected = namedModelSearch(without(holders, [String(a)]), holders.get(String(a)) as number[][], { distance, limit });
        const { fromOffsets, fromPairs } = matrixRow(result, pairs.body.result, a, row);
        sameSparseHits(fromOffsets, expected, `${context}: offsets row of ${a}`);
        sameSparseHits(fromPairs, expected, `${context}: pairs of ${a}`);
      });
    }
  }
  for (const [body, pattern] of [[{ using: 'nope' }, /Not existing vector name error: nope/]] as const) {
    const r = await http(url, 'POST', '/collections/e/points/search/matrix/pairs', body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.body.status.error, pattern);
  }
  assert.equal((await client.count('e')).count, 60);
});

test("a recommendation's examples of a named vector are counted at that vector's size before any is read", async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('b', { vectors: { text: { size: 2, distance: 'Cosine' }, big: { size: 65536, distance: 'Dot' } } });
  const big = (x: number): number[] => new Array(65536).fill(x);
  await client.upsert('b', {
    points: [
      { id: 0, vector: { text: [1, 0], big: big(1) } },
      { id: 1, vector: { text: [0, 1], big: big(0.5) } },
      { id: 2, vector: { text: [1, 1] } },
    ],
  });
  // 300 examples: 600 components of the main vector, 19,660,800 of `big` (the bound is 16,777,216).
  const positive = new Array(300).fill(1);
  const byMain = await http(url, 'POST', '/collections/b/points/query', {
    query: { recommend: { positive, strategy: 'sum_scores' } },
    using: 'text',
    limit: 3,
  });
  assert.equal(byMain.status, 200, byMain.text);
  for (const body of [
    { query: { recommend: { positive, strategy: 'sum_scores' } }, using: 'big' },
    { query: { recommend: { positive } }, using: 'big' },
    { query: { context: positive.slice(0, 150).map(() => ({ positive: 0, negative: 1 })) }, using: 'big' },
  ]) {
    const r = await http(url, 'POST', '/collections/b/points/query', body);
    // The port answers kith's request bounds as Qdrant answers its own limits: 422, a validation error.
    assert.equal(r.status, 422, `${JSON.stringify(body).slice(0, 80)}: ${r.text}`);
    assert.match(r.body.status.error, /(positive|context): the request asks for 19,660,800 example vector components.*16,777,216/);
  }
  // Within the bound, by `big`: point 0 (the example) left out, point 2 (no `big`) not scored.
  const within = await http(url, 'POST', '/collections/b/points/query', { query: { recommend: { positive: [0], strategy: 'sum_scores' } }, using: 'big' });
  assert.equal(within.status, 200, within.text);
  assert.deepEqual(
    within.body.result.points.map((p: Body) => [p.id, p.score]),
    [[1, 32768]],
  );
  assert.equal((await client.count('b')).count, 3);
});

/** Max-sim of dot products: Σ over the query's rows of the best dot product with a stored row. */
function maxSim(query: readonly number[][], stored: readonly number[][]): number {
  return query.reduce((sum, q) => sum + Math.max(...stored.map((row) => q.reduce((s, x, i) => s + x * (row[i] as number), 0))), 0);
}

/** A sparse dot product (exact here: the values are multiples of 1/4). */
function sparseDotModel(a: SparseJson, b: SparseJson): number {
  const at = new Map(b.indices.map((index, i) => [index, b.values[i] as number]));
  return a.indices.reduce((s, index, i) => s + (a.values[i] as number) * (at.get(index) ?? 0), 0);
}

/** Qdrant's average of sparse examples: per index the positives' mean, pushed from the negatives' (2·p − n); float32 values. */
function sparseAverage(positive: SparseJson[], negative: SparseJson[]): SparseJson {
  const mean = (side: SparseJson[]): Map<number, number> => {
    const sums = new Map<number, number>();
    for (const v of side)
      for (let i = 0; i < v.indices.length; i++) sums.set(v.indices[i] as number, (sums.get(v.indices[i] as number) ?? 0) + (v.values[i] as number));
    return new Map([...sums].map(([index, sum]) => [index, sum / side.length]));
  };
  const p = mean(positive);
  const n = negative.length === 0 ? undefined : mean(negative);
  const indices = [...new Set([...p.keys(), ...(n?.keys() ?? [])])].sort((a, b) => a - b);
  return { indices, values: indices.map((index) => Math.fround(n === undefined ? (p.get(index) as number) : 2 * (p.get(index) ?? 0) - (n.get(index) ?? 0))) };
}

test('recommendations, discovery and context searches by a multi-vector and by a sparse vector, against the model', async (t) => {
  const { client, url, rng, data } = await setUp(t);
  const run = (path: string, body: Body): Promise<SparseHit[]> => hitsAt(url, path, body);
  const ids = [...Array(60).keys()].map(String);
  const signed = (): number[] => [rng.int(5) - 2, rng.int(5) - 2];
  for (const kind of ['multi', 'words'] as const) {
    for (let round = 0; round < 10; round++) {
      const limit = 1 + rng.int(10);
      const context = `seed ${SEED} ${kind} round ${round}`;
      type V = number[][] | SparseJson;
      const stored: ReadonlyMap<string, V> = kind === 'multi' ? data.multi : data.words;
      const sim =
        (v: V) =>
        (e: V): number =>
          kind === 'multi' ? maxSim(e as number[][], v as number[][]) : sparseDotModel(e as SparseJson, v as SparseJson);
      // An example: any point's id (it may lack the vector) or a vector (a multi-vector's rows, or a sparse vector).
      const given: string[] = [];
      const example = (mayLack: boolean): { wire: Body; model: V | undefined } => {
        if (rng.int(3) === 0) {
          if (kind === 'multi') {
            const rows = Array.from({ length: 1 + rng.int(3) }, signed);
            return { wire: rows, model: rows };
          }
          const v = nastySparse(rng, 10);
          return { wire: v, model: storedSparse(v) };
        }
        const pool = mayLack ? ids : [...stored.keys()];
        const id = pool[rng.int(pool.length)] as string;
        given.push(id);
        return { wire: Number(id), model: stored.get(id) };
      };
      const models = (list: { model: V | undefined }[]): V[] => list.map((e) => e.model).filter((v): v is V => v !== undefined);
      const expectedBy = (c: Parameters<typeof exampleModelBy<V>>[0], excluded: string[]): SparseHit[] =>
        [...without(stored, excluded)]
          .map(([id, v]) => ({ id, score: exampleModelBy(c, sim(v)) }))
          .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1))
          .slice(0, limit);

      for (const strategy of ['best_score', 'sum_scores'] as const) {
        given.length = 0;
        const pos = Array.from({ length: 1 + rng.int(3) }, () => example(true));
        const neg = Array.from({ length: rng.int(3) }, () => example(true));
        const expected = expectedBy({ strategy, positive: models(pos), negative: models(neg), pairs: [] }, given);
        const body = { positive: pos.map((e) => e.wire), negative: neg.map((e) => e.wire), strategy };
        if (models(pos).length + models(neg).length === 0) continue;
        sameSparseHits(await run('query', { query: { recommend: body }, using: kind, limit }), expected, `${context} ${strategy}`);
        sameSparseHits(await run('recommend', { ...body, using: kind, limit }), expected, `${context} ${strategy} on /points/recommend`);
      }

      // average_vector: a multi-vector's rows and the negatives' rows negated; a sparse vector's mean pushed from the negatives'.
      given.length = 0;
      const pos = Array.from({ length: 1 + rng.int(3) }, () => example(true));
      const neg = Array.from({ length: rng.int(3) }, () => example(true));
      const body = { query: { recommend: { positive: pos.map((e) => e.wire), negative: neg.map((e) => e.wire) } }, using: kind, limit };
      if (models(pos).length === 0) {
        const r = await http(url, 'POST', '/collections/e/points/query', body);
        assert.equal(r.status, 400, `${context}: every positive lacks the vector: ${r.text}`);
        assert.match(r.body.status.error, /positive/);
      } else if (kind === 'multi') {
        const rows = [...(models(pos) as number[][][]).flat(), ...(models(neg) as number[][][]).flat().map((row) => row.map((x) => -x))];
        const expected = namedModelSearch(without(data.multi, given), rows, { distance: 'Dot', limit });
        sameSparseHits(await run('query', body), expected, `${context} average_vector`);
      } else {
        const average = sparseAverage(models(pos) as SparseJson[], models(neg) as SparseJson[]);
        const expected = sparseModelSearch(without(data.words, given), average, { idf: false, limit });
        sameSparseHits(await run('query', body), expected, `${context} average_vector ${JSON.stringify(average)}`);
      }

      given.length = 0;
      const target = example(false);
      const pairs = Array.from({ length: 1 + rng.int(3) }, () => ({ positive: example(false), negative: example(false) }));
      const modelPairs = pairs.map((pair) => ({ positive: pair.positive.model as V, negative: pair.negative.model as V }));
      const wirePairs = pairs.map((pair) => ({ positive: pair.positive.wire, negative: pair.negative.wire }));
      for (const strategy of ['discover', 'context'] as const) {
        const excluded = strategy === 'discover' ? given : given.slice(typeof target.wire === 'number' ? 1 : 0);
        const expected = expectedBy({ strategy, positive: [], negative: [], target: target.model as V, pairs: modelPairs }, excluded);
        const query = strategy === 'discover' ? { discover: { target: target.wire, context: wirePairs } } : { context: wirePairs };
        sameSparseHits(await run('query', { query, using: kind, limit }), expected, `${context} ${strategy}`);
      }
    }
  }

  // Examples of the wrong kind are 400s naming the field; a point that lacks the vector as a discovery's target, Qdrant's 404.
  const lacking = ids.find((id) => !data.words.has(id)) as string;
  await refusals(url, [
    [{ query: { recommend: { positive: [[1, 1, 1]] } }, using: 'words' }, 400, /positive\[0\].*sparse vector/],
    [{ query: { recommend: { positive: [{ indices: [1, 1], values: [1, 2] }] } }, using: 'words' }, 400, /positive\[0\]\.indices\[1\]: duplicate index/],
    [{ query: { recommend: { positive: [[[1, 2, 3]]] } }, using: 'multi' }, 400, /positive\[0\]/],
    [{ query: { discover: { target: Number(lacking), context: [] } }, using: 'words' }, 404, /Vector with name "words" for point/],
  ]);
  assert.equal((await client.count('e')).count, 60, 'no refused query changed anything');
});

test('searches by examples of a sparse vector with the idf modifier weight every example by idf, as a sparse query is weighted', async (t) => {
  const { url } = await startQdrant(t);
  const rng = new SeededRng(SEED + 7);
  const created = await http(url, 'PUT', '/collections/i', { vectors: { size: 2, distance: 'Dot' }, sparse_vectors: { t: { modifier: 'idf' } } });
  assert.equal(created.status, 200, created.text);
  const words = new Map<string, SparseJson>();
  const points = Array.from({ length: 40 }, (_, i) => {
    const v = nastySparse(rng, 8);
    words.set(String(i), storedSparse(v));
    return { id: i, vector: { '': [1, i], t: v } };
  });
  const put = await http(url, 'PUT', '/collections/i/points?wait=true', { points });
  assert.equal(put.status, 200, put.text);
  // Qdrant's idf: ln(1 + (N − df + 0.5) / (df + 0.5)), N the points holding a non-empty vector, df those holding the index.
  const nonEmpty = [...words.values()].filter((v) => v.indices.length > 0);
  const idfOf = (index: number): number => {
    const df = nonEmpty.filter((v) => v.indices.includes(index)).length;
    return Math.log(1 + (nonEmpty.length - df + 0.5) / (df + 0.5));
  };
  const weighted = (v: SparseJson): SparseJson => ({ indices: v.indices, values: v.values.map((x, i) => x * idfOf(v.indices[i] as number)) });
  for (let round = 0; round < 8; round++) {
    const positive = [nastySparse(rng, 8), nastySparse(rng, 8)];
    const negative = [nastySparse(rng, 8)];
    const limit = 1 + rng.int(8);
    for (const strategy of ['best_score', 'sum_scores'] as const) {
      const expected = [...words]
        .map(([id, v]) => ({ id, score: exampleModelBy({ strategy, positive, negative, pairs: [] }, (e) => sparseDotModel(weighted(storedSparse(e)), v)) }))
        .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1))
        .slice(0, limit);
      const r = await http(url, 'POST', '/collections/i/points/query', { query: { recommend: { positive, negative, strategy } }, using: 't', limit });
      assert.equal(r.status, 200, r.text);
      sameSparseHits(hitsOf(r.body.result.points), expected, `seed ${SEED + 7} round ${round} ${strategy}`, 1e-3);
    }
  }
});
