/**
 * Named dense vectors' own graphs (segment/named-dense-space.ts; one with its own m and
 * ef_construction, one with m 0: none, exact scans beside the graphs) against a brute-force model,
 * after every step of random operations on an HNSW collection: upserts of new points, re-upserts
 * keeping the main vector while the named one changes (the point keeps its segment slot, its
 * named vector takes a new node), re-upserts changing the main vector while the named one stays
 * (the node is kept and follows the point), named vectors dropped, deletes, vector updates,
 * deletes of named vectors by filter, payload updates, restarts (the graphs rebuilt from the
 * records). Every search walks the graph (its explain says so) with an ef above the point count,
 * which visits every reachable node: the answer must then be the exact one, so a node lost,
 * unreachable, stale or mapped to the wrong point shows. Nasty data: duplicates, zero vectors,
 * non-negative vectors under Dot, odd ids.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import type { Filter } from '../../src/payload/filter-types.js';
import { type ModelRows, namedModelSearch, sameSparseHits } from '../helpers/sparse-model.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const NAMED = {
  cos: { size: 4, distance: 'Cosine' as const, multivector: false },
  dot: { size: 3, distance: 'Dot' as const, multivector: false, m: 6, ef_construction: 12 },
  euc: { size: 2, distance: 'Euclid' as const, multivector: false },
  // No graph of its own (Qdrant's per-vector m 0): exact scans beside the graphs.
  off: { size: 3, distance: 'Euclid' as const, multivector: false, m: 0 },
};
type Name = keyof typeof NAMED;
const NAMES = Object.keys(NAMED) as Name[];

interface ModelPoint {
  main: number[];
  g: number;
  named: Map<Name, number[]>;
}

for (const seed of [811, 812, 813]) {
  test(`named vectors' graphs against a model (seed ${seed})`, async (t) => {
    const rng = new SeededRng(seed);
    const path = tempDbPath(t);
    let db = Database.open(path);
    t.after(() => db.close());
    await db.createCollection({ name: 'c', vector_size: 2, distance: 'Cosine', hnsw: true, parameters: { m: 4, ef_construction: 16 }, named_vectors: NAMED });
    const model = new Map<string, ModelPoint>();
    const ids = Array.from({ length: 90 }, (_, i) => (i % 7 === 0 ? `ü-${i}` : i % 5 === 0 ? ` ${i} ` : String(i)));
    const pool = Array.from({ length: 12 }, () => [rng.int(3), rng.int(3)]);
    // A small pool of values: many duplicates and ties; zero vectors; only non-negative under Dot.
    const vectorOf = (name: Name): number[] => {
      const size = NAMED[name].size;
      if (rng.int(10) === 0) return new Array(size).fill(0);
      return Array.from({ length: size }, () => (name === 'dot' ? rng.int(4) : rng.int(7) - 3));
    };
    const namedOf = (): Map<Name, number[]> => {
      const out = new Map<Name, number[]>();
      for (const name of NAMES) if (rng.int(4) !== 0) out.set(name, vectorOf(name));
      return out;
    };
    const input = (named: Map<Name, number[]>): Record<string, number[]> => Object.fromEntries(named);

    const check = async (step: number, op: string): Promise<void> => {
      const c = db.collection('c');
      const context = `seed ${seed}, step ${step} (${op})`;
      assert.equal(c.pointsCount, model.size, context);
      assert.deepEqual(c.checkIntegrity(), [], context);
      for (const name of NAMES) {
        const stored = new Map<string, ModelRows>();
        for (const [id, p] of model) {
          const v = p.named.get(name);
          if (v !== undefined) stored.set(id, [v]);
        }
        const query = vectorOf(name);
        const limit = 1 + rng.int(15);
        const g = rng.int(4);
        // No filter (a graph walk), or a broad one (a filtered walk: ef over the point count forces the graph).
        const filtered = g < 3;
        const answer = await c.searchParallel({
          named_vector: { name, vector: query },
          limit,
          ...(filtered ? { filter: { must_not: [{ key: 'g', match: { value: g } }] } } : {}),
          params: { ef: 1000, explain: true, ...(filtered ? { strategy: 'graph-filtered' as const } : {}) },
          with_payload: false,
        });
        const walks = name === 'off' ? undefined : filtered ? 'graph-filtered' : 'graph';
        if (walks === undefined) assert.ok(!answer.explain.strategy.startsWith('graph'), `${context}: ${name} has no graph`);
        else assert.equal(answer.explain.strategy, walks, `${context}: ${name} walks its graph`);
        sameSparseHits(
          answer.points.map((h) => ({ id: h.id, score: h.score })),
          namedModelSearch(stored, [query], { distance: NAMED[name].distance, limit, ...(filtered ? { accept: (id: string) => model.get(id)?.g !== g } : {}) }),
          `${context}, ${name} ${JSON.stringify(query)}${filtered ? ` g ≠ ${g}` : ''}`,
        );
      }
    };

    for (let step = 0; step < 60; step++) {
      const roll = rng.int(20);
      const c = db.collection('c');
      let op: string;
      if (roll < 9) {
        const batch = [...new Set(Array.from({ length: 1 + rng.int(12) }, () => ids[rng.int(ids.length)] as string))];
        const points = batch.map((id) => {
          const old = model.get(id);
          // The same main vector again (the point keeps its segment slot), or the same named vectors with a new main one.
          const main = old !== undefined && rng.int(2) === 0 ? old.main : (pool[rng.int(pool.length)] as number[]);
          const named = old !== undefined && rng.int(3) === 0 ? new Map(old.named) : namedOf();
          return { id, main, g: rng.int(3), named };
        });
        await c.upsert(points.map((p) => ({ id: p.id, vector: p.main, payload: { g: p.g }, named_vectors: input(p.named) })));
        for (const p of points) model.set(p.id, { main: p.main, g: p.g, named: p.named });
        op = `upsert ${batch.length}`;
      } else if (roll < 12) {
        const gone = [...new Set(Array.from({ length: 1 + rng.int(6) }, () => ids[rng.int(ids.length)] as string))];
        await c.deleteIds(gone);
        for (const id of gone) model.delete(id);
        op = `delete ${gone.length}`;
      } else if (roll < 15 && model.size > 0) {
        const id = [...model.keys()][rng.int(model.size)] as string;
        const p = model.get(id) as ModelPoint;
        let named = namedOf();
        while (named.size === 0) named = namedOf();
        await c.updateVectors([{ id, named_vectors: input(named) }]);
        for (const [name, v] of named) p.named.set(name, v);
        op = `update ${JSON.stringify(id)}'s ${[...named.keys()].join(',')}`;
      } else if (roll < 16 && model.size > 0) {
        const g = rng.int(3);
        const names = NAMES.filter(() => rng.int(2) === 0);
        if (names.length === 0) names.push('cos');
        await c.deleteVectors(parseFilter({ must: [{ key: 'g', match: { value: g } }] }) as Filter, names);
        for (const p of model.values()) if (p.g === g) for (const name of names) p.named.delete(name);
        op = `delete vectors ${names.join(',')} where g = ${g}`;
      } else if (roll < 17 && model.size > 0) {
        const id = [...model.keys()][rng.int(model.size)] as string;
        const p = model.get(id) as ModelPoint;
        p.g = (p.g + 1) % 3;
        await c.updatePayloads([id], () => ({ g: p.g }));
        op = `payload of ${JSON.stringify(id)}`;
      } else if (roll < 19) {
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

test("a named vector's graph: recall against exact search, compaction of replaced vectors, the same answers after a restart", async (t) => {
  const rng = new SeededRng(821);
  const path = tempDbPath(t);
  let db = Database.open(path);
  t.after(() => db.close());
  const size = 24;
  await db.createCollection({
    name: 'c',
    vector_size: 2,
    distance: 'Cosine',
    hnsw: true,
    named_vectors: { e: { size, distance: 'Cosine', multivector: false } },
  });
  // Clustered data, as embeddings are: 40 centres, points spread around them.
  const centres = Array.from({ length: 40 }, () => Array.from({ length: size }, () => rng.next() * 2 - 1));
  const near = (): number[] => (centres[rng.int(centres.length)] as number[]).map((x) => x + (rng.next() - 0.5) * 0.6);
  const n = 3000;
  const points = Array.from({ length: n }, (_, i) => ({ id: `p${i}`, vector: [1, i % 7], payload: { g: i % 10 }, named_vectors: { e: near() } }));
  for (let i = 0; i < n; i += 500) await db.collection('c').upsert(points.slice(i, i + 500));
  const queries = Array.from({ length: 40 }, near);

  const recall = async (label: string): Promise<{ recall: number; answers: string[][] }> => {
    const c = db.collection('c');
    let found = 0;
    const answers: string[][] = [];
    for (const q of queries) {
      const graph = await c.searchParallel({ named_vector: { name: 'e', vector: q }, limit: 10, params: { explain: true }, with_payload: false });
      assert.equal(graph.explain.strategy, 'graph', label);
      const exact = await c.searchParallel({ named_vector: { name: 'e', vector: q }, limit: 10, params: { exact: true, explain: true }, with_payload: false });
      assert.equal(exact.explain.strategy, 'flat-scan', label);
      // The scan scores every vector (and the free named slots among them); the walk a small part of them.
      assert.ok(exact.explain.scored >= n, `${label}: the scan scored ${exact.explain.scored}`);
      assert.ok(graph.explain.scored > 0 && graph.explain.scored < n / 2, `${label}: the walk scored ${graph.explain.scored} of ${n}`);
      const truth = new Set(exact.points.map((p) => p.id));
      found += graph.points.filter((p) => truth.has(p.id)).length;
      answers.push(graph.points.map((p) => p.id));
    }
    return { recall: found / (10 * queries.length), answers };
  };

  const first = await recall('built');
  assert.ok(first.recall >= 0.95, `recall@10 ${first.recall} after the build (seed 821)`);

  // Every point's named vector replaced three times (the main vector kept: same segment slots):
  // the old nodes become tombstones, and compaction must give their slots back.
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < n; i += 500) await db.collection('c').upsert(points.slice(i, i + 500).map((p) => ({ ...p, named_vectors: { e: near() } })));
  }
  const stats = db.collection('c').memoryStats();
  assert.ok(stats.namedGraphNodes < 1.25 * n, `${stats.namedGraphNodes} graph nodes for ${n} vectors after 3 replacements: compaction must drop tombstones`);
  assert.deepEqual(db.collection('c').checkIntegrity(), []);
  const replaced = await recall('replaced');
  assert.ok(replaced.recall >= 0.95, `recall@10 ${replaced.recall} after replacements (seed 821)`);

  // A selective filter on an indexed field (payload indexes are built automatically) is answered exactly from the candidates.
  const filtered = await db.collection('c').searchParallel({
    named_vector: { name: 'e', vector: queries[0] },
    limit: 5,
    filter: { must: [{ key: 'g', match: { value: 3 } }] },
    params: { explain: true },
  });
  assert.equal(filtered.explain.strategy, 'candidates-exact');
  assert.ok(filtered.points.every((p) => (p.payload as { g: number }).g === 3));

  // A restart takes the graph from the snapshot the close saved: every named vector placed at its node, none linked again, the same answers.
  const warnings: string[] = [];
  await db.close();
  db = Database.open(path, { onWarning: (m) => warnings.push(m) });
  const report = db.loadReports.get('c');
  assert.deepEqual({ fromSnapshot: report?.fromSnapshot, namedFromSnapshot: report?.namedFromSnapshot }, { fromSnapshot: n, namedFromSnapshot: n });
  assert.deepEqual(warnings, []);
  const reopened = await recall('reopened');
  assert.deepEqual(reopened.answers, replaced.answers, 'the same answers from the restored graph');
  assert.deepEqual(db.collection('c').checkIntegrity(), []);

  // Points written after the snapshot (a crash before the next one: the close saves none here, as
  // a kill would) are linked at start-up; the snapshot's nodes of replaced vectors are dropped.
  const later = points.slice(0, 200).map((p) => ({ ...p, named_vectors: { e: near() } }));
  await db.collection('c').upsert(later);
  await db.collection('c').deleteIds(points.slice(200, 300).map((p) => p.id));
  const expected = await recall('before the second restart');
  const store = (db as unknown as { store: { close(): Promise<void> } }).store;
  await store.close();
  db = Database.open(path);
  const second = db.loadReports.get('c');
  assert.equal(second?.namedFromSnapshot, n - 300, 'the unchanged points take their snapshot nodes');
  assert.deepEqual(db.collection('c').checkIntegrity(), []);
  assert.equal(db.collection('c').memoryStats().namedGraphNodes, n - 100, 'the replaced and deleted nodes are gone');
  const after = await recall('after the second restart');
  assert.ok(after.recall >= 0.95, `recall@10 ${after.recall} after the second restart (seed 821)`);
  assert.ok(expected.recall >= 0.95);
});

test('a named vector called "" (beside a named main vector): written, searched through its graph, and restored from the snapshot after a restart', async (t) => {
  const path = tempDbPath(t);
  let db = Database.open(path);
  t.after(() => db.close());
  await db.createCollection({
    name: 'c',
    vector_size: 2,
    distance: 'Dot',
    hnsw: true,
    vector_name: 'main',
    named_vectors: { '': { size: 3, distance: 'Euclid' }, m: { size: 2, distance: 'Dot', multivector: true } },
  });
  const points = Array.from({ length: 300 }, (_, i) => ({ id: `p${i}`, vector: [1, i % 7], named_vectors: { '': [i % 11, i % 13, i % 17], m: [[1, i % 5]] } }));
  await db.collection('c').upsert(points);
  const search = async (): Promise<string[]> =>
    (await db.collection('c').searchParallel({ named_vector: { name: '', vector: [3, 4, 5] }, limit: 5, params: { ef: 1000, explain: true } })).points.map(
      (p) => p.id,
    );
  const before = await search();
  assert.equal(before.length, 5);
  assert.equal(await db.collection('c').count({ must: [{ has_vector: '' }] }), 300);
  await db.close();
  db = Database.open(path);
  const report = db.loadReports.get('c');
  assert.equal(report?.namedFromSnapshot, 300, 'the named graph of "" came from the snapshot');
  assert.deepEqual(await search(), before);
  assert.deepEqual(db.collection('c').checkIntegrity(), []);
});
