/**
 * The distance matrix (`…/search/matrix/pairs` and `…/offsets`) on the Qdrant port `using` a
 * sparse vector, plain and with `modifier: idf`, against a brute-force model: only points holding
 * the vector are sampled (Qdrant adds `has_vector`; an empty vector is held), each row is the
 * sampled point's sparse search among the sample (itself left out; points sharing no index are no
 * hits, so an empty vector's row is empty), scores the dot product (idf over the whole collection
 * under the modifier). Nasty data: duplicates, empty vectors, points lacking the vector, zero and
 * negative weights. Work over the bound and bad input are refused before anything is sampled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { nastySparse, type SparseJson, sameSparseHits, sparseModelSearch, storedSparse } from '../helpers/sparse-model.js';
import { matrixRow } from '../helpers/matrix-answer.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;

const SEED = Number(process.env.KITH_SEED ?? 3131);
const N = 70;

async function setUp(t: Parameters<typeof startQdrant>[0]) {
  const harness = await startQdrant(t);
  const { client } = harness;
  await client.createCollection('s', { vectors: { size: 2, distance: 'Dot' }, sparse_vectors: { words: {}, idfw: { modifier: 'idf' } } });
  const rng = new SeededRng(SEED);
  const stored: Record<'words' | 'idfw', Map<string, SparseJson>> = { words: new Map(), idfw: new Map() };
  const points: Body[] = Array.from({ length: N }, (_, i) => {
    const vector: Record<string, unknown> = { '': [1, i % 4] };
    for (const name of ['words', 'idfw'] as const) {
      if ((i + name.length) % 6 === 0) continue; // lacks it
      // Every eighth point copies the previous holder's vector.
      const previous = [...stored[name].values()].at(-1);
      const v = i % 8 === 3 && previous !== undefined ? previous : nastySparse(rng, 15);
      vector[name] = v;
      stored[name].set(String(i), storedSparse(v));
    }
    return { id: i, vector, payload: { g: i % 3 } };
  });
  await client.upsert('s', { points });
  return { ...harness, stored };
}

test('the distance matrix by a sparse vector: every holder sampled, each row its nearest others, against the model', async (t) => {
  const { url, client, stored } = await setUp(t);
  for (const [using, idf] of [
    ['words', false],
    ['idfw', true],
  ] as const) {
    for (const g of [undefined, 2]) {
      const limit = g === undefined ? 5 : 2;
      const filter = g === undefined ? undefined : { must: [{ key: 'g', match: { value: g } }] };
      const inFilter = (id: string): boolean => g === undefined || Number(id) % 3 === g;
      const ids = [...stored[using].keys()]
        .filter(inFilter)
        .map(Number)
        .sort((x, y) => x - y);
      const context = `seed ${SEED}: matrix by ${using}${g === undefined ? '' : ` among g = ${g}`}`;
      const body = { using, sample: 1000, limit, ...(filter ? { filter } : {}) };
      const offsets = await http(url, 'POST', '/collections/s/points/search/matrix/offsets', body);
      assert.equal(offsets.status, 200, `${context}: ${offsets.text}`);
      const result = offsets.body.result;
      assert.deepEqual(result.ids, ids, `${context}: the sample is every matching point holding the vector`);
      const pairs = await http(url, 'POST', '/collections/s/points/search/matrix/pairs', body);
      assert.equal(pairs.status, 200, `${context}: ${pairs.text}`);
      ids.forEach((a, row) => {
        const own = stored[using].get(String(a)) as SparseJson;
        // idf counts the whole collection; the hits are the other sampled points.
        const expected = sparseModelSearch(stored[using], own, { idf, limit, accept: (id) => id !== String(a) && inFilter(id) });
        const { fromOffsets, fromPairs } = matrixRow(result, pairs.body.result, a, row);
        sameSparseHits(fromOffsets, expected, `${context}: offsets row of ${a}`);
        sameSparseHits(fromPairs, expected, `${context}: pairs of ${a}`);
      });
    }
  }

  // A smaller sample: that many distinct holders, each row among them only.
  const small = await http(url, 'POST', '/collections/s/points/search/matrix/offsets', { using: 'words', sample: 7, limit: 3 });
  assert.equal(small.status, 200, small.text);
  const sampled: number[] = small.body.result.ids;
  assert.equal(new Set(sampled).size, 7, `seed ${SEED}: seven distinct points`);
  for (const id of sampled) assert.ok(stored.words.has(String(id)), `seed ${SEED}: ${id} holds words`);
  assert.ok(
    (small.body.result.offsets_col as number[]).every((col, i) => col !== small.body.result.offsets_row[i]),
    'no point is its own neighbour',
  );
  assert.equal((await client.count('s')).count, N);
});

test('the sparse matrix: work over the bound and bad input are refused, naming the field, before anything is sampled', async (t) => {
  const { url, client } = await startQdrant(t);
  await client.createCollection('w', { vectors: { size: 2, distance: 'Dot' }, sparse_vectors: { words: {} } });
  // One vector of 4,000 indices: a row may merge it with every sampled point's.
  const wide = { indices: Array.from({ length: 4000 }, (_, i) => i), values: new Array(4000).fill(0.5) };
  await client.upsert('w', {
    points: [
      { id: 1, vector: { '': [1, 0], words: wide } },
      { id: 2, vector: { '': [0, 1], words: { indices: [1], values: [1] } } },
      { id: 3, vector: { '': [1, 1] } },
    ],
  });
  const over = await http(url, 'POST', '/collections/w/points/search/matrix/pairs', { using: 'words', sample: 100, limit: 3 });
  assert.equal(over.status, 422, over.text);
  assert.match(over.body.status.error, /sample.*sparse postings/, over.text);
  const fine = await http(url, 'POST', '/collections/w/points/search/matrix/pairs', { using: 'words', sample: 10, limit: 3 });
  assert.equal(fine.status, 200, fine.text);
  assert.deepEqual(fine.body.result.pairs, [
    { a: 1, b: 2, score: 0.5 },
    { a: 2, b: 1, score: 0.5 },
  ]);
  for (const [body, status, pattern] of [
    [{ using: 'nope' }, 400, /Not existing vector name error: nope/],
    [{ using: 'words', sample: 1 }, 422, /sample/],
    [{ using: 'words', limit: 0 }, 422, /limit/],
    [{ using: 'words', filter: { must: [{ key: 'g', match: {} }] } }, 400, /filter/],
  ] as const) {
    const r = await http(url, 'POST', '/collections/w/points/search/matrix/offsets', body);
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.body.status.error, pattern, JSON.stringify(body));
  }
  assert.equal((await client.count('w')).count, 3);
});

test('a sparse matrix over a common index is counted by its sample, not by the postings of the whole collection', async (t) => {
  const { url, client } = await startQdrant(t);
  await client.createCollection('c', { vectors: { size: 2, distance: 'Dot' }, sparse_vectors: { words: {} } });
  // 20,000 points share index 0: 1,000 rows walking its postings would be 20,000,000, over the bound;
  // each row scores only the sample (a has_id), 1,000 points of one index.
  for (let from = 0; from < 20_000; from += 5_000) {
    const points = Array.from({ length: 5_000 }, (_, i) => ({ id: from + i, vector: { '': [1, 0], words: { indices: [0], values: [1 + ((from + i) % 3)] } } }));
    await client.upsert('c', { points });
  }
  const r = await http(url, 'POST', '/collections/c/points/search/matrix/offsets', { using: 'words', sample: 1000, limit: 2 });
  assert.equal(r.status, 200, r.text);
  const { ids, scores, offsets_row: rows } = r.body.result;
  assert.equal(ids.length, 1000);
  assert.equal(rows.length, 2000, 'two neighbours a row');
  // Each row's best others have the largest weight (3), so score 3 × own weight.
  rows.forEach((row: number, i: number) => {
    const own = 1 + ((ids[row] as number) % 3);
    assert.equal(scores[i], 3 * own, `row of ${ids[row]}`);
  });
});
