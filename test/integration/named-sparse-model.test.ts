/**
 * Sparse vectors and named dense vectors in the engine against a plain model, after every step of random operations:
 * upserts with and without sparse vectors, re-upserts (same dense vector, changed one: a graph
 * point moves to a new slot and must take its sparse vectors along), deletes, sparse-only and
 * dense-only vector updates, payload updates, restarts (records decoded again, graph snapshots
 * reused), on Flat and HNSW collections, idf on and off. Nasty data: empty sparse vectors,
 * duplicate vectors, zero and negative values, indices near 2^32, points without any sparse
 * vector, zero dense vectors; filters selective (the exact candidates path) and broad (the
 * postings walk testing each point). The named dense vectors beside the main one (a plain Euclid
 * vector, a multi-vector scored by max_sim) go through the same steps against the same model, and
 * so do `has_vector` filters of every kind of name (in counts, scrolls, deletes and searches).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import type { Filter } from '../../src/payload/filter-types.js';
import type { FilterJson } from '../../src/search/embedded-input.js';
import { type ModelRows, namedModelSearch, nastySparse, type SparseJson, sameSparseHits, sparseModelSearch } from '../helpers/sparse-model.js';
import { tempDbPath } from '../helpers/temp-dir.js';

interface ModelPoint {
  dense: number[];
  payload: { g: number; rare: boolean };
  sparse: Map<string, SparseJson>;
  named: Map<string, ModelRows>;
}

/** Named dense vectors beside the main one: a plain Euclid vector and a multi-vector (max_sim over dot products). */
const NAMED = { img: { size: 3, distance: 'Euclid' as const, multivector: false }, col: { size: 2, distance: 'Dot' as const, multivector: true } };

const NAMES = ['a', 'b'] as const;

for (const { hnsw, seed } of [
  { hnsw: false, seed: 501 },
  { hnsw: true, seed: 502 },
  { hnsw: true, seed: 503 },
]) {
  test(`sparse and named vectors against a model (${hnsw ? 'HNSW' : 'Flat'}, seed ${seed})`, async (t) => {
    const rng = new SeededRng(seed);
    const path = tempDbPath(t);
    let db = Database.open(path);
    t.after(() => db.close());
    await db.createCollection({
      name: 'c',
      vector_size: 3,
      distance: 'Cosine',
      hnsw,
      parameters: { m: 4, ef_construction: 16 },
      sparse_vectors: { a: { modifier: 'idf' }, b: {} },
      named_vectors: NAMED,
    });
    const model = new Map<string, ModelPoint>();
    const ids = Array.from({ length: 24 }, (_, i) => (i % 5 === 0 ? `doc-${i}` : String(i)));
    const dense = (): number[] => (rng.int(8) === 0 ? [0, 0, 0] : [rng.int(3), rng.int(3), 1]);
    const sparseOf = (): Map<string, SparseJson> => {
      const out = new Map<string, SparseJson>();
      for (const name of NAMES) if (rng.int(4) !== 0) out.set(name, nastySparse(rng, 10));
      return out;
    };
    const asInput = (sparse: Map<string, SparseJson>): Record<string, SparseJson> => Object.fromEntries(sparse);
    const rowsOf = (size: number, count: number): ModelRows => Array.from({ length: count }, () => Array.from({ length: size }, () => rng.int(5) - 2));
    const namedOf = (): Map<string, ModelRows> => {
      const out = new Map<string, ModelRows>();
      if (rng.int(3) !== 0) out.set('img', rowsOf(3, 1));
      if (rng.int(3) !== 0) out.set('col', rowsOf(2, 1 + rng.int(4)));
      return out;
    };
    const namedInput = (named: Map<string, ModelRows>): Record<string, number[] | number[][]> =>
      Object.fromEntries([...named].map(([name, rows]) => [name, name === 'img' ? (rows[0] as number[]) : rows]));

    const holds = (id: string, name: string): boolean => {
      const p = model.get(id) as ModelPoint;
      return name === '' || p.sparse.has(name) || p.named.has(name);
    };
    // `has_vector` of each kind of name (the main vector's "", sparse, named, multi, one the
    // collection lacks), alone, negated and beside a payload condition: in counts, scrolls, a
    // delete's selection and searches of every vector, against the model.
    const hasVectorFilter = (): { filter: FilterJson; accept: (id: string) => boolean; shown: string } => {
      const name = rng.pick(['', 'a', 'b', 'img', 'col', 'none']);
      const g = rng.int(3);
      const form = rng.int(4);
      const filter =
        form === 0
          ? { must: [{ has_vector: name }] }
          : form === 1
            ? { must_not: [{ has_vector: name }] }
            : form === 2
              ? { must: [{ has_vector: name }, { key: 'g', match: { value: g } }] }
              : { should: [{ has_vector: name }, { key: 'g', match: { value: g } }] };
      const accept = (id: string): boolean => {
        const held = holds(id, name);
        const inG = (model.get(id) as ModelPoint).payload.g === g;
        return form === 0 ? held : form === 1 ? !held : form === 2 ? held && inG : held || inG;
      };
      return { filter, accept, shown: JSON.stringify(filter) };
    };
    const checkHasVector = async (c: ReturnType<Database['collection']>, context: string): Promise<void> => {
      for (let round = 0; round < 3; round++) {
        const { filter, accept, shown } = hasVectorFilter();
        const expected = [...model.keys()].filter(accept).sort();
        assert.equal(await c.count(filter), expected.length, `${context}: count ${shown}`);
        const page = await c.scroll({ filter, limit: 100, with_payload: false });
        assert.deepEqual(page.points.map((p) => p.id).sort(), expected, `${context}: scroll ${shown}`);
        const main = new Map<string, ModelRows>([...model].map(([id, p]) => [id, [p.dense]]));
        const query = dense();
        const limit = 1 + rng.int(12);
        for (const exact of [true, false]) {
          const answer = await c.searchParallel({ vector: query, limit, filter, params: { exact, ef: 1000 }, with_payload: false });
          sameSparseHits(
            answer.points.map((h) => ({ id: h.id, score: h.score })),
            namedModelSearch(main, [query], { distance: 'Cosine', limit, accept }),
            `${context}: main vector ${JSON.stringify(query)} exact ${exact} ${shown}`,
          );
        }
        const sparse = new Map<string, SparseJson>();
        for (const [id, p] of model) {
          const v = p.sparse.get('b');
          if (v !== undefined) sparse.set(id, v);
        }
        const sparseQuery = nastySparse(rng, 10);
        if (sparseQuery.indices.length > 0) {
          const answer = await c.searchParallel({ sparse_vector: { name: 'b', ...sparseQuery }, limit, filter, with_payload: false });
          sameSparseHits(
            answer.points.map((h) => ({ id: h.id, score: h.score })),
            sparseModelSearch(sparse, sparseQuery, { idf: false, limit, accept }),
            `${context}: sparse b ${JSON.stringify(sparseQuery)} ${shown}`,
          );
        }
        const img = new Map<string, ModelRows>();
        for (const [id, p] of model) {
          const v = p.named.get('img');
          if (v !== undefined) img.set(id, v);
        }
        const imgQuery = rowsOf(3, 1);
        const answer = await c.searchParallel({ named_vector: { name: 'img', vector: imgQuery[0] }, limit, filter, with_payload: false });
        sameSparseHits(
          answer.points.map((h) => ({ id: h.id, score: h.score })),
          namedModelSearch(img, imgQuery, { distance: 'Euclid', limit, accept }),
          `${context}: named img ${JSON.stringify(imgQuery)} ${shown}`,
        );
      }
    };

    const check = async (step: number, op: string): Promise<void> => {
      const c = db.collection('c');
      const context = `seed ${seed}, step ${step} (${op})`;
      assert.equal(c.pointsCount, model.size, context);
      for (const name of NAMES) {
        const stored = new Map<string, SparseJson>();
        for (const [id, p] of model) {
          const v = p.sparse.get(name);
          if (v !== undefined) stored.set(id, v);
        }
        const query = nastySparse(rng, 10);
        if (query.indices.length === 0) continue;
        const limit = 1 + rng.int(12);
        const filterKind = rng.int(3);
        const filter =
          filterKind === 0 ? undefined : filterKind === 1 ? { must: [{ key: 'g', match: { value: 1 } }] } : { must: [{ key: 'rare', match: { value: true } }] };
        const accept =
          filter === undefined ? undefined : (id: string) => (filterKind === 1 ? model.get(id)?.payload.g === 1 : model.get(id)?.payload.rare === true);
        const answer = await c.searchParallel({
          sparse_vector: { name, ...query },
          limit,
          ...(filter === undefined ? {} : { filter }),
          with_payload: false,
        });
        sameSparseHits(
          answer.points.map((h) => ({ id: h.id, score: h.score })),
          sparseModelSearch(stored, query, { idf: name === 'a', limit, ...(accept === undefined ? {} : { accept }) }),
          `${context}, ${name} ${JSON.stringify(query)} ${JSON.stringify(filter)}`,
        );
      }
      for (const [name, spec] of Object.entries(NAMED)) {
        const stored = new Map<string, ModelRows>();
        for (const [id, p] of model) {
          const v = p.named.get(name);
          if (v !== undefined) stored.set(id, v);
        }
        const query = rowsOf(spec.size, spec.multivector ? 1 + rng.int(3) : 1);
        const limit = 1 + rng.int(12);
        // No filter; a selective one (its few matches scored one by one); a broad one (every point tested as it is scored).
        const filterKind = rng.int(3);
        const rare = filterKind === 1 ? true : filterKind === 2 ? false : undefined;
        const answer = await c.searchParallel({
          named_vector: { name, vector: spec.multivector ? query : query[0] },
          limit,
          ...(rare === undefined ? {} : { filter: { must: [{ key: 'rare', match: { value: rare } }] } }),
          with_payload: false,
        });
        sameSparseHits(
          answer.points.map((h) => ({ id: h.id, score: h.score })),
          namedModelSearch(stored, query, {
            distance: spec.distance,
            limit,
            ...(rare === undefined ? {} : { accept: (id: string) => model.get(id)?.payload.rare === rare }),
          }),
          `${context}, ${name} ${JSON.stringify(query)} rare ${rare}`,
        );
      }
      await checkHasVector(c, context);
      // Every point's vectors as stored: the dense one, and exactly the sparse ones it has (indices ascending).
      const some = [...model.keys()].slice(0, 6);
      for (const record of await c.retrieve(some, { with_vector: true, with_payload: false })) {
        const expected = model.get(record.id) as ModelPoint;
        const shown = record.sparse_vectors ?? {};
        assert.deepEqual(Object.keys(shown).sort(), [...expected.sparse.keys()].sort(), `${context}: ${record.id}'s sparse names`);
        const named = record.named_vectors ?? {};
        assert.deepEqual(Object.keys(named).sort(), [...expected.named.keys()].sort(), `${context}: ${record.id}'s named vectors`);
        for (const [name, rows] of expected.named) assert.deepEqual(named[name], name === 'img' ? rows[0] : rows, `${context}: ${record.id}'s ${name}`);
        for (const [name, v] of expected.sparse) {
          const order = v.indices.map((_, i) => i).sort((x, y) => (v.indices[x] as number) - (v.indices[y] as number));
          assert.deepEqual(shown[name], { indices: order.map((i) => v.indices[i]), values: order.map((i) => Math.fround(v.values[i] as number)) }, context);
        }
      }
    };

    for (let step = 0; step < 70; step++) {
      const roll = rng.int(20);
      const c = db.collection('c');
      let op: string;
      if (roll < 8) {
        const batch = Array.from({ length: 1 + rng.int(5) }, () => ids[rng.int(ids.length)] as string);
        const points = batch.map((id) => {
          // Sometimes the same dense vector again (the point keeps its graph node), sometimes a new one.
          const old = model.get(id);
          const vector = old !== undefined && rng.int(2) === 0 ? old.dense : dense();
          return { id, dense: vector, payload: { g: rng.int(3), rare: rng.int(6) === 0 }, sparse: sparseOf(), named: namedOf() };
        });
        await c.upsert(
          points.map((p) => ({ id: p.id, vector: p.dense, payload: p.payload, sparse_vectors: asInput(p.sparse), named_vectors: namedInput(p.named) })),
        );
        for (const p of points) model.set(p.id, { dense: p.dense, payload: p.payload, sparse: p.sparse, named: p.named });
        op = `upsert ${batch.join(',')}`;
      } else if (roll < 11) {
        const gone = Array.from({ length: 1 + rng.int(3) }, () => ids[rng.int(ids.length)] as string);
        await c.deleteIds(gone);
        for (const id of gone) model.delete(id);
        op = `delete ${gone.join(',')}`;
      } else if (roll < 14 && model.size > 0) {
        const id = [...model.keys()][rng.int(model.size)] as string;
        const p = model.get(id) as ModelPoint;
        const name = NAMES[rng.int(2)] as string;
        const v = nastySparse(rng, 10);
        const kind = rng.int(3);
        if (kind === 0) {
          await c.updateVectors([{ id, sparse_vectors: { [name]: v } }]);
          p.sparse.set(name, v);
          op = `update ${id}'s ${name}`;
        } else if (kind === 1) {
          let named = namedOf();
          while (named.size === 0) named = namedOf();
          await c.updateVectors([{ id, named_vectors: namedInput(named) }]);
          for (const [n, rows] of named) p.named.set(n, rows);
          op = `update ${id}'s named vectors ${[...named.keys()].join(',')}`;
        } else {
          const d = dense();
          await c.updateVectors([{ id, vector: d }]);
          p.dense = d;
          op = `update ${id}'s dense vector`;
        }
      } else if (roll < 15 && model.size > 0) {
        // Delete vectors: some names removed from the points of one payload group.
        const g = rng.int(3);
        const names = [...NAMES, ...Object.keys(NAMED)].filter(() => rng.int(2) === 0);
        if (names.length === 0) names.push('a');
        await c.deleteVectors(parseFilter({ must: [{ key: 'g', match: { value: g } }] }) as Filter, names);
        for (const p of model.values()) {
          if (p.payload.g !== g) continue;
          for (const name of names) {
            p.sparse.delete(name);
            p.named.delete(name);
          }
        }
        op = `delete vectors ${names.join(',')} where g = ${g}`;
      } else if (roll === 15 && model.size > 0 && rng.int(2) === 0) {
        // A delete selecting by which vectors the points hold.
        const { filter, accept, shown } = hasVectorFilter();
        const gone = [...model.keys()].filter(accept);
        const { deleted } = await c.deleteByFilter(filter);
        assert.equal(deleted, gone.length, `seed ${seed}, step ${step}: delete ${shown}`);
        for (const id of gone) model.delete(id);
        op = `delete where ${shown}`;
      } else if (roll < 16 && model.size > 0) {
        const id = [...model.keys()][rng.int(model.size)] as string;
        const p = model.get(id) as ModelPoint;
        await c.updatePayloads([id], (payload) => ({ ...payload, g: (p.payload.g + 1) % 3 }));
        p.payload = { ...p.payload, g: (p.payload.g + 1) % 3 };
        op = `payload of ${id}`;
      } else if (roll < 18) {
        await db.close();
        db = Database.open(path);
        op = 'restart';
      } else {
        op = 'search only';
      }
      await check(step, op);
    }
  });
}

test('sparse searches: the postings walked are bounded before the search runs; unknown names and bad vectors are 400s that change nothing', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({
    name: 'c',
    vector_size: 2,
    distance: 'Dot',
    sparse_vectors: { s: {} },
    named_vectors: { n: { size: 2, distance: 'dot' }, m: { size: 2, distance: 'cosine', multivector: true } },
  });
  const c = db.collection('c');
  await c.upsert([{ id: 1, vector: [1, 0], sparse_vectors: { s: { indices: [1, 2], values: [1, 1] } } }]);
  const refusals: Array<[() => Promise<unknown>, RegExp]> = [
    [
      () => c.searchChecked({ sparse_vector: { name: 't', indices: [1], values: [1] } }),
      /sparse_vector\.name: the collection has no sparse vector named "t" \(it has "s"\)/,
    ],
    [() => c.searchChecked({ sparse_vector: { name: 's', indices: [1, 1], values: [1, 1] } }), /sparse_vector\.indices\[1\]: duplicate index 1/],
    [
      () => c.upsert([{ id: 2, vector: [1, 0], sparse_vectors: { t: { indices: [1], values: [1] } } }]),
      /points\[0\]\.sparse_vectors\.t: the collection has no sparse vector/,
    ],
    [() => c.upsert([{ id: 2, vector: [1, 0], sparse_vectors: { s: { indices: [1], values: [Number.NaN] } } }]), /points\[0\]\.sparse_vectors\.s\.values/],
    [() => c.upsert([{ id: 2, vector: [1, 0], named_vectors: { n: [1, 2, 3] } }]), /points\[0\]\.named_vectors\.n: expected 2 numbers, got 3/],
    [
      () => c.upsert([{ id: 2, vector: [1, 0], named_vectors: { n: [[1, 2]] } }]),
      /points\[0\]\.named_vectors\.n: expected a vector of 2 numbers; this vector is not a multi-vector/,
    ],
    [() => c.upsert([{ id: 2, vector: [1, 0], named_vectors: { m: [] } }]), /points\[0\]\.named_vectors\.m: a multi-vector holds 1 to 1024 vectors, got 0/],
    [
      () => c.upsert([{ id: 2, vector: [1, 0], named_vectors: { x: [1, 2] } }]),
      /points\[0\]\.named_vectors\.x: the collection has no named vector "x" \(it has "n", "m"\)/,
    ],
    [
      () =>
        c.searchChecked({
          named_vector: {
            name: 'm',
            vector: [
              [1, 0],
              [0, Number.POSITIVE_INFINITY],
            ],
          },
        }),
      /named_vector\.vector\[1\]\[1\]/,
    ],
    [() => c.updateVectors([{ id: 1 }]), /points\[0\]\.vector: expected a vector \(or sparse_vectors, named_vectors\)/],
    [
      () => c.searchChecked({ sparse_vector: { name: 's', indices: Array.from({ length: 70_000 }, (_, i) => i), values: new Array(70_000).fill(1) } }),
      /sparse_vector\.indices: the request asks for 70,000 sparse query indices; the limit is 65,536/,
    ],
  ];
  for (const [run, pattern] of refusals) await assert.rejects(run, (e: Error & { code?: string }) => e.code !== undefined && pattern.test(e.message));
  assert.equal(c.pointsCount, 1);
  const hits = await c.searchChecked({ sparse_vector: { name: 's', indices: [2], values: [3] }, params: { explain: true } });
  assert.deepEqual(
    hits.points.map((h) => [h.id, h.score]),
    [['1', 3]],
  );
  assert.equal(hits.explain.strategy, 'sparse-index');
});

test('a reopened collection keeps its posting lists without the slack they grew by doubling', async (t) => {
  const path = tempDbPath(t);
  let db = Database.open(path);
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'dot', sparse_vectors: { s: {} } });
  // 10 terms of 300 postings each, appended one at a time: every list grew 4, 8, …, 512.
  const points = Array.from({ length: 3000 }, (_, i) => ({ id: i, vector: [1, 0], sparse_vectors: { s: { indices: [i % 10], values: [1 + (i % 7)] } } }));
  for (let i = 0; i < points.length; i += 100) await db.collection('c').upsert(points.slice(i, i + 100));
  const query = { sparse_vector: { name: 's', indices: [3, 4], values: [1, 2] }, limit: 20 };
  const before = db.collection('c').memoryStats().sparseBytes;
  const hits = await db.collection('c').searchChecked(query);
  await db.close();
  db = Database.open(path);
  t.after(() => db.close());
  const after = db.collection('c').memoryStats().sparseBytes;
  // Each list's arrays (4 + 4 bytes a posting) shrink from 512 postings to 300.
  assert.equal(before - after, 10 * (512 - 300) * 8, `sparse bytes ${before} before the restart, ${after} after`);
  const again = await db.collection('c').searchChecked(query);
  assert.equal(again.points.length, 20);
  assert.deepEqual(again, hits, 'the same hits from the trimmed lists');
});

test("a query's searches by examples are bounded together before any runs: two stages each within the scoring budget, together over it", async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  // 2,000 points of 1,024 dimensions: 80 examples score 2,000 × 80 × 1,024 = 163,840,000 components, the budget being 268,435,456.
  await db.createCollection({ name: 'c', vector_size: 1024, distance: 'dot' });
  const rng = new SeededRng(9);
  const c = db.collection('c');
  for (let from = 0; from < 2000; from += 500)
    await c.upsert(Array.from({ length: 500 }, (_, i) => ({ id: from + i, vector: Array.from({ length: 1024 }, () => rng.next() - 0.5) })));
  const byExamples = (first: number) => ({
    recommend: { positive: Array.from({ length: 80 }, (_, i) => first + i), strategy: 'best_score' as const },
    limit: 5,
  });
  // One stage alone runs.
  assert.equal((await c.queryStages({ ...byExamples(0), with_payload: false })).length, 5);
  // Two such stages under a fusion: refused as a whole, naming the stage that went over.
  await assert.rejects(c.queryStages({ prefetch: [byExamples(0), byExamples(100)], fusion: 'rrf', limit: 5 }), (error: unknown) => {
    const e = error as { code?: string; message?: string };
    assert.equal(e.code, 'ERR_OVER_LIMIT', String(error));
    assert.match(e.message ?? '', /^prefetch\[1\].*components scored by examples/);
    return true;
  });
});
