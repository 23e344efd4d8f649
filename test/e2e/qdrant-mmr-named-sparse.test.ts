/**
 * MMR (`query: {nearest, mmr}`) on the Qdrant port `using` a named dense vector (one row, each
 * distance), a multi-vector (max_sim) and a sparse vector (plain and idf), against a brute-force
 * model of Qdrant 1.18's MMR: the `candidates_limit` nearest by the search's score, then the most
 * relevant first and greedily (1 − diversity)·relevance − diversity·(highest similarity to those
 * picked), relevance and similarities Qdrant's raw ones (−‖a − b‖² under Euclid, max_sim of the
 * candidate's rows against the picked one's, the sparse dot product without idf); hits keep their
 * search score. Nasty data: duplicates, zero vectors, empty sparse vectors, points lacking the
 * vector. Also filters, offsets, thresholds, a point id as the query, a prefetch, and bad input.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { nastySparse, type SparseJson, sparseModelSearch } from '../helpers/sparse-model.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;
type Distance = 'Dot' | 'Cosine' | 'Euclid';

const SEED = Number(process.env.KITH_SEED ?? 7171);
const N = 120;

const DENSE: Record<'img' | 'euc' | 'cos' | 'multi', { size: number; distance: Distance; multi?: true }> = {
  img: { size: 3, distance: 'Dot' },
  euc: { size: 3, distance: 'Euclid' },
  cos: { size: 4, distance: 'Cosine' },
  multi: { size: 2, distance: 'Dot', multi: true },
};
type DenseName = keyof typeof DENSE;
const SPARSE = { words: false, idfw: true } as const;
type SparseName = keyof typeof SPARSE;

/** Each vector as kith stores it (read back), by name and point id: dense ones as rows. */
interface Stored {
  readonly dense: Record<DenseName, Map<string, number[][]>>;
  readonly sparse: Record<SparseName, Map<string, SparseJson>>;
}

async function setUp(t: Parameters<typeof startQdrant>[0]) {
  const harness = await startQdrant(t);
  const { client, url } = harness;
  const vectors: Record<string, unknown> = { text: { size: 2, distance: 'Cosine' } };
  for (const [name, spec] of Object.entries(DENSE))
    vectors[name] = { size: spec.size, distance: spec.distance, ...(spec.multi ? { multivector_config: { comparator: 'max_sim' } } : {}) };
  await client.createCollection('m', { vectors: vectors as never, sparse_vectors: { words: {}, idfw: { modifier: 'idf' } } });
  const rng = new SeededRng(SEED);
  // Few distinct small integers: duplicates, zero vectors and exact ties.
  const small = (n: number, signed: boolean): number[] =>
    rng.int(7) === 0 ? new Array(n).fill(0) : Array.from({ length: n }, () => (signed ? rng.int(5) - 2 : rng.int(3)));
  const earlier = new Map<string, unknown>();
  const points: Body[] = Array.from({ length: N }, (_, i) => {
    const vector: Record<string, unknown> = { text: [1, i % 3] };
    for (const [name, spec] of Object.entries(DENSE)) {
      if ((i + name.length) % 5 === 0) continue; // lacks it
      const copy = earlier.get(name);
      const fresh = spec.multi ? Array.from({ length: 1 + rng.int(3) }, () => small(spec.size, true)) : small(spec.size, spec.distance === 'Euclid');
      const v = i % 6 === 1 && copy !== undefined ? copy : fresh;
      vector[name] = v;
      earlier.set(name, v);
    }
    for (const name of Object.keys(SPARSE)) if ((i + name.length) % 4 !== 0) vector[name] = nastySparse(rng, 12);
    return { id: i, vector, payload: { g: i % 3 } };
  });
  await client.upsert('m', { points });
  const read = await http(url, 'POST', '/collections/m/points', { ids: points.map((p) => p.id), with_vector: true });
  assert.equal(read.status, 200, read.text);
  const stored: Stored = {
    dense: { img: new Map(), euc: new Map(), cos: new Map(), multi: new Map() },
    sparse: { words: new Map(), idfw: new Map() },
  };
  for (const record of read.body.result as Body[]) {
    const id = String(record.id);
    for (const name of Object.keys(DENSE) as DenseName[]) {
      const v = record.vector[name];
      // The answer's shortest text of each float32 is read back as that float32.
      const rows: number[][] | undefined = v === undefined ? undefined : DENSE[name].multi ? v : [v];
      if (rows !== undefined)
        stored.dense[name].set(
          id,
          rows.map((r) => r.map(Math.fround)),
        );
    }
    for (const name of Object.keys(SPARSE) as SparseName[]) if (record.vector[name] !== undefined) stored.sparse[name].set(id, record.vector[name]);
  }
  return { ...harness, rng, stored };
}

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** Qdrant's raw similarity of a query's rows to stored rows: −‖a − b‖² (Euclid) or the dot product, max_sim summed over the query's rows. */
function rawSimilarity(query: readonly number[][], stored: readonly number[][], distance: Distance): number {
  let total = 0;
  for (const q of query) {
    let best = Number.NEGATIVE_INFINITY;
    for (const r of stored) {
      const s = distance === 'Euclid' ? -q.reduce((sum, x, i) => sum + (x - (r[i] as number)) ** 2, 0) : dot(q, r);
      if (s > best) best = s;
    }
    total += best;
  }
  return total;
}

/** The plain sparse dot product (no idf), over shared indices in ascending order. */
function sparseDot(a: SparseJson, b: SparseJson): number {
  const weights = new Map(b.indices.map((index, i) => [index, b.values[i] as number]));
  let s = 0;
  a.indices.forEach((index, i) => {
    const w = weights.get(index);
    if (w !== undefined) s += (a.values[i] as number) * w;
  });
  return s;
}

interface Candidate {
  readonly id: string;
  /** The search's score, as the answer gives it. */
  readonly score: number;
  readonly relevance: number;
}

/** Ties by id as kith's exact named and sparse searches break them (as text, as the model helpers do). */
function byScore(ascending: boolean) {
  return (a: Candidate, b: Candidate): number => (ascending ? a.score - b.score : b.score - a.score) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The greedy pick over candidates (in their search order): the most relevant first, then by the MMR value; the earlier wins ties. */
function greedy(candidates: readonly Candidate[], similarity: (candidate: string, picked: string) => number, diversity: number, picks: number): Candidate[] {
  const free = [...candidates];
  const closest = new Map<string, number>(free.map((c) => [c.id, Number.NEGATIVE_INFINITY]));
  const out: Candidate[] = [];
  while (out.length < picks && free.length > 0) {
    let best = 0;
    let bestValue = Number.NEGATIVE_INFINITY;
    free.forEach((c, i) => {
      const value = out.length === 0 ? c.relevance : (1 - diversity) * c.relevance - diversity * (closest.get(c.id) as number);
      if (i === 0 || value > bestValue) {
        bestValue = value;
        best = i;
      }
    });
    const chosen = free.splice(best, 1)[0] as Candidate;
    out.push(chosen);
    for (const c of free) closest.set(c.id, Math.max(closest.get(c.id) as number, similarity(c.id, chosen.id)));
  }
  return out;
}

interface Ask {
  readonly limit: number;
  readonly offset: number;
  readonly candidates: number;
  readonly diversity: number;
  readonly accept: (id: string) => boolean;
}

/**
 * The model's MMR answer over a dense (or multi-) vector. `searched`, when given, is kith's own
 * exact search (no MMR) in its order: under Cosine the kernels' last bits can order near-equal
 * scores otherwise than the model, so the candidates are taken in that order, their scores checked
 * against the model's.
 */
function denseModel(stored: ReadonlyMap<string, number[][]>, query: number[][], name: DenseName, ask: Ask, searched?: readonly Body[]): Candidate[] {
  const { distance } = DENSE[name];
  const euclid = distance === 'Euclid' && DENSE[name].multi !== true;
  const modelled = (id: string): Candidate => {
    const relevance = rawSimilarity(query, stored.get(id) as number[][], distance);
    return { id, relevance, score: euclid ? Math.sqrt(Math.max(0, -relevance)) : relevance };
  };
  const all = [...stored.keys()]
    .filter((id) => ask.accept(id))
    .map(modelled)
    .sort(byScore(euclid));
  const wanted = Math.max(ask.candidates, ask.offset + ask.limit);
  let candidates = all.slice(0, wanted);
  if (searched !== undefined) {
    candidates = searched.map((p) => ({ ...modelled(`${p.id}`), score: p.score as number }));
    sameScores(candidates, all.slice(0, wanted), `${name}: the candidates' search`);
  }
  const similarity = (c: string, p: string): number => rawSimilarity(stored.get(c) as number[][], stored.get(p) as number[][], distance);
  return greedy(candidates, similarity, ask.diversity, ask.offset + ask.limit).slice(ask.offset);
}

/** Scores equal within float32 rounding, place by place. */
function sameScores(actual: readonly { score: number }[], expected: readonly { score: number }[], context: string): void {
  assert.equal(actual.length, expected.length, `${context}: ${actual.length} hits, the model ${expected.length}`);
  actual.forEach((a, i) => {
    const e = (expected[i] as { score: number }).score;
    assert.ok(Math.abs(a.score - e) <= 1e-4 * Math.max(1, Math.abs(e)), `${context}: place ${i} scores ${a.score}, the model ${e}`);
  });
}

/**
 * The model's MMR answer over a sparse vector: candidates by the search's score (idf under the
 * modifier), relevance the plain dot product. `searched` as for `denseModel` (idf's float32
 * weights can order near-equal scores otherwise than the model).
 */
function sparseModel(stored: ReadonlyMap<string, SparseJson>, query: SparseJson, name: SparseName, ask: Ask, searched?: readonly Body[]): Candidate[] {
  const sorted = { indices: [...query.indices].sort((a, b) => a - b), values: [] as number[] };
  sorted.values = sorted.indices.map((index) => Math.fround(query.values[query.indices.indexOf(index)] as number));
  const hits = sparseModelSearch(stored, sorted, { idf: SPARSE[name], limit: stored.size, accept: ask.accept });
  const modelled = (id: string, score: number): Candidate => ({ id, score, relevance: sparseDot(sorted, stored.get(id) as SparseJson) });
  const all = hits.map((h) => modelled(h.id, h.score)).sort(byScore(false));
  const wanted = Math.max(ask.candidates, ask.offset + ask.limit);
  let candidates = all.slice(0, wanted);
  if (searched !== undefined) {
    candidates = searched.map((p) => modelled(`${p.id}`, p.score as number));
    sameScores(candidates, all.slice(0, wanted), `${name}: the candidates' search`);
  }
  const similarity = (c: string, p: string): number => sparseDot(stored.get(c) as SparseJson, stored.get(p) as SparseJson);
  return greedy(candidates, similarity, ask.diversity, ask.offset + ask.limit).slice(ask.offset);
}

/** Same ids in the same order, scores within float32 rounding. */
function sameMmr(actual: readonly Body[], expected: readonly Candidate[], context: string): void {
  const got = actual.map((p) => `${p.id}`);
  const want = expected.map((c) => c.id);
  assert.deepEqual(got, want, `${context}: ids ${JSON.stringify(got)}, the model ${JSON.stringify(want)}`);
  sameScores(actual, expected, context);
}

const DIVERSITIES = [0, 0.25, 0.5, 0.7, 1];

test('MMR using a named dense vector, a multi-vector and a sparse vector matches the model', async (t) => {
  const { url, rng, stored, client } = await setUp(t);
  const query = async (body: Body, context: string): Promise<Body[]> => {
    const r = await http(url, 'POST', '/collections/m/points/query', body);
    assert.equal(r.status, 200, `${context}: ${JSON.stringify(body)}: ${r.text}`);
    return r.body.result.points;
  };
  for (let round = 0; round < 12; round++) {
    const filtered = rng.int(3) === 0;
    const ask: Ask = {
      limit: 1 + rng.int(8),
      offset: rng.int(4) === 0 ? rng.int(3) : 0,
      candidates: rng.pick([1, 5, 20, 60, 200]),
      diversity: rng.int(2) === 0 ? (rng.pick(DIVERSITIES) as number) : rng.int(100) / 100,
      accept: filtered ? (id) => Number(id) % 3 === 1 : () => true,
    };
    const common = {
      limit: ask.limit,
      ...(ask.offset > 0 ? { offset: ask.offset } : {}),
      ...(filtered ? { filter: { must: [{ key: 'g', match: { value: 1 } }] } } : {}),
      params: { exact: true },
    };
    const mmr = { diversity: ask.diversity, candidates_limit: ask.candidates };
    for (const name of Object.keys(DENSE) as DenseName[]) {
      const context = `seed ${SEED} round ${round} ${name} ${JSON.stringify({ ...ask, accept: filtered })}`;
      const spec = DENSE[name];
      const rows = Array.from({ length: spec.multi ? 1 + rng.int(2) : 1 }, () => Array.from({ length: spec.size }, () => rng.int(5) - 2));
      // The query as the engine scores it: under Cosine, float32 rows times 1 / their norm (core/vector-math.ts).
      const scored = rows.map((r) => {
        const sum = r.reduce((s, x) => s + x * x, 0);
        return spec.distance === 'Cosine' && sum > 0 ? r.map((x) => Math.fround(x * (1 / Math.sqrt(sum)))) : r;
      });
      const wire = spec.multi ? rows : rows[0];
      const hits = await query({ query: { nearest: wire, mmr }, using: name, ...common }, context);
      const wanted = Math.max(ask.candidates, ask.offset + ask.limit);
      const searched = spec.distance === 'Cosine' ? await query({ query: wire, using: name, ...common, limit: wanted, offset: 0 }, context) : undefined;
      sameMmr(hits, denseModel(stored.dense[name], scored, name, ask, searched), context);
    }
    for (const name of Object.keys(SPARSE) as SparseName[]) {
      const context = `seed ${SEED} round ${round} ${name} ${JSON.stringify({ ...ask, accept: filtered })}`;
      const q = nastySparse(rng, 12);
      const hits = await query({ query: { nearest: q, mmr }, using: name, ...common }, context);
      const searched = SPARSE[name]
        ? await query({ query: q, using: name, ...common, limit: Math.max(ask.candidates, ask.offset + ask.limit), offset: 0 }, context)
        : undefined;
      sameMmr(hits, sparseModel(stored.sparse[name], q, name, ask, searched), context);
    }
  }

  // A point id as the query: that point's vector, the point left out of the candidates.
  const ask: Ask = { limit: 5, offset: 0, candidates: 30, diversity: 0.6, accept: (id) => id !== '7' };
  for (const name of ['img', 'multi'] as const) {
    const own = stored.dense[name].get('7');
    if (own === undefined) continue;
    const hits = await query({ query: { nearest: 7, mmr: { diversity: 0.6, candidates_limit: 30 } }, using: name, limit: 5, params: { exact: true } }, name);
    sameMmr(hits, denseModel(stored.dense[name], own, name, ask), `seed ${SEED}: ${name} near point 7`);
  }
  const ownWords = stored.sparse.words.get('7');
  if (ownWords !== undefined) {
    const hits = await query({ query: { nearest: 7, mmr: { diversity: 0.6, candidates_limit: 30 } }, using: 'words', limit: 5 }, 'words near 7');
    sameMmr(hits, sparseModel(stored.sparse.words, ownWords, 'words', ask), `seed ${SEED}: words near point 7`);
  }

  // Within a prefetch's candidates (a has_id search), and in a batch, the same picks.
  const q = [1, 0, 2];
  const prefetched = await query({ query: q, using: 'img', limit: 40, params: { exact: true } }, 'prefetch alone');
  const among = new Set(prefetched.map((p) => `${p.id}`));
  const staged = await query(
    {
      prefetch: { query: q, using: 'img', limit: 40, params: { exact: true } },
      query: { nearest: [0, 2, 1], mmr: { diversity: 0.5, candidates_limit: 40 } },
      using: 'euc',
      limit: 6,
    },
    'staged',
  );
  const stagedAsk: Ask = { limit: 6, offset: 0, candidates: 40, diversity: 0.5, accept: (id) => among.has(id) };
  sameMmr(staged, denseModel(stored.dense.euc, [[0, 2, 1]], 'euc', stagedAsk), `seed ${SEED}: MMR over a prefetch`);
  const batch = await http(url, 'POST', '/collections/m/points/query/batch', {
    searches: [
      { query: { nearest: [0, 2, 1], mmr: { diversity: 0.5, candidates_limit: 40 } }, using: 'euc', limit: 6, params: { exact: true } },
      { query: { nearest: { indices: [1, 3], values: [1, 2] }, mmr: { diversity: 0.9 } }, using: 'idfw', limit: 4 },
    ],
  });
  assert.equal(batch.status, 200, batch.text);
  const all = () => true;
  sameMmr(batch.body.result[0].points, denseModel(stored.dense.euc, [[0, 2, 1]], 'euc', { ...stagedAsk, accept: all }), `seed ${SEED}: batch[0]`);
  sameMmr(
    batch.body.result[1].points,
    sparseModel(stored.sparse.idfw, { indices: [1, 3], values: [1, 2] }, 'idfw', { limit: 4, offset: 0, candidates: 4, diversity: 0.9, accept: all }),
    `seed ${SEED}: batch[1] (candidates_limit defaults to limit)`,
  );

  // A threshold skips the picks that fail it and keeps the later ones, in MMR order.
  const wide = await query(
    { query: { nearest: { indices: [2, 5, 7], values: [1, 1, 1] }, mmr: { diversity: 0.8, candidates_limit: 50 } }, using: 'words', limit: 10 },
    'wide',
  );
  const threshold = (wide[Math.floor(wide.length / 2)]?.score ?? 0) as number;
  const cut = await query(
    {
      query: { nearest: { indices: [2, 5, 7], values: [1, 1, 1] }, mmr: { diversity: 0.8, candidates_limit: 50 } },
      using: 'words',
      limit: 10,
      score_threshold: threshold,
    },
    'cut',
  );
  assert.deepEqual(
    cut.map((p) => p.id),
    wide.filter((p) => p.score >= threshold).map((p) => p.id),
    `seed ${SEED}: the threshold keeps MMR's order`,
  );

  // Without `exact`: a graph's candidates, distinct points holding the vector.
  const approximate = await query({ query: { nearest: [1, 1, 0], mmr: { diversity: 0.5, candidates_limit: 50 } }, using: 'img', limit: 10 }, 'graph');
  assert.equal(new Set(approximate.map((p) => p.id)).size, approximate.length);
  for (const p of approximate) assert.ok(stored.dense.img.has(`${p.id}`), `${p.id} holds img`);
  assert.equal((await client.count('m')).count, N);
});

test('MMR over a named or sparse vector: bad input and work over the bound are refused, naming the field, changing nothing', async (t) => {
  const { url, client } = await setUp(t);
  const cases: [Body, number, RegExp][] = [
    [{ query: { nearest: [1, 0, 0], mmr: { diversity: 1.5 } }, using: 'img' }, 422, /query\.mmr\.diversity/],
    [{ query: { nearest: { indices: [1], values: [1] }, mmr: { candidates_limit: -1 } }, using: 'words' }, 422, /candidates_limit/],
    [{ query: { nearest: { indices: [1], values: [1] }, mmr: { candidates_limit: 16385 } }, using: 'words' }, 422, /candidates_limit/],
    [{ query: { nearest: [1, 0], mmr: {} }, using: 'img' }, 400, /query: expected 3 numbers/],
    [{ query: { nearest: { indices: [1, 1], values: [1, 2] }, mmr: {} }, using: 'words' }, 400, /indices/],
    [{ query: { nearest: 9999, mmr: {} }, using: 'words' }, 404, /9999/],
  ];
  for (const [body, status, pattern] of cases) {
    const r = await http(url, 'POST', '/collections/m/points/query', body);
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.body.status.error, pattern, JSON.stringify(body));
  }

  // A multi-vector of many rows: picks × candidates × rows² × size over the named budget, refused before any search.
  await client.createCollection('big', {
    vectors: { text: { size: 2, distance: 'Cosine' }, colbert: { size: 128, distance: 'Dot', multivector_config: { comparator: 'max_sim' } } },
    sparse_vectors: { words: {} },
  });
  const rows = Array.from({ length: 64 }, (_, r) => Array.from({ length: 128 }, (_, i) => ((r + i) % 5) - 2));
  const wide = { indices: Array.from({ length: 2000 }, (_, i) => i), values: new Array(2000).fill(1) };
  await client.upsert('big', { points: [0, 1, 2].map((id) => ({ id, vector: { text: [1, id], colbert: rows, words: wide } })) });
  for (const [body, budget] of [
    [{ query: { nearest: rows, mmr: { candidates_limit: 16384 } }, using: 'colbert', limit: 100 }, /named vector components/],
    [{ query: { nearest: wide, mmr: { candidates_limit: 16384 } }, using: 'words', limit: 100 }, /sparse postings/],
  ] as const) {
    const r = await http(url, 'POST', '/collections/big/points/query', body);
    // kith's request bound, as the main vector's MMR bound answers on this port.
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.status.error, /mmr\.candidates/, r.text);
    assert.match(r.body.status.error, budget, r.text);
  }
  assert.equal((await client.count('big')).count, 3);
  assert.equal((await client.count('m')).count, N);
});
