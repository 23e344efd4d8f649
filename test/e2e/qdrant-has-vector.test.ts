/**
 * Qdrant's `has_vector` filter through a real service with two search threads, on a collection of
 * named dense vectors (one a multi-vector), a sparse vector and a keyword index, against a model:
 * counts, scrolls, searches of every vector (graph walks filtered by the holders' bitset, exact
 * candidates, and filters mixed with payload conditions, which the threads answer from the holders'
 * bitset), after
 * the load, after deletes and updates of vectors, and after a restart. A name the collection lacks
 * matches no point, as in Qdrant; a formula's condition may not name one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { type ModelRows, namedModelSearch, nastySparse, type SparseJson, sameSparseHits, sparseModelSearch } from '../helpers/sparse-model.js';
import { httpJson, qdrantUrlOf, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const N = 3000;
const DENSE = 8;

interface ModelPoint {
  dense: number[];
  g: string;
  img?: number[];
  col?: number[][];
  text?: SparseJson;
}

type Name = 'dense' | 'img' | 'col' | 'text';

test('has_vector on the Qdrant port: counts, scrolls and searches of every vector against a model, on search threads and over a restart', async (t) => {
  const seed = testSeed(6060);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const path = tempDbPath(t);
  let server = await startServer(path, ['-qdrant-port', '0', '-threads', '2']);
  t.after(() => server.stop());
  let url = await qdrantUrlOf(server);

  const created = await httpJson(url, 'PUT', '/collections/h', {
    vectors: {
      dense: { size: DENSE, distance: 'Cosine' },
      img: { size: 4, distance: 'Cosine' },
      col: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' } },
    },
    sparse_vectors: { text: {} },
  });
  assert.equal(created.status, 200, created.raw);
  const index = await httpJson(url, 'PUT', '/collections/h/index?wait=true', { field_name: 'g', field_schema: 'keyword' });
  assert.equal(index.status, 200, index.raw);

  const model = new Map<string, ModelPoint>();
  const row = (size: number): number[] => (rng.int(20) === 0 ? new Array(size).fill(0) : Array.from({ length: size }, () => rng.next() * 2 - 1));
  const points = Array.from({ length: N }, (_, i) => {
    const p: ModelPoint = { dense: i % 97 === 0 ? (model.get('0')?.dense ?? row(DENSE)) : row(DENSE), g: ['a', 'b', 'c'][rng.int(3)] as string };
    if (rng.int(5) < 3) p.img = row(4);
    if (rng.int(10) < 3) p.col = Array.from({ length: 1 + rng.int(3) }, () => row(2));
    // Some hold an empty sparse vector: it is held all the same.
    if (rng.int(2) === 0) p.text = nastySparse(rng, 30);
    model.set(String(i), p);
    const vector: Record<string, unknown> = { dense: p.dense };
    if (p.img !== undefined) vector.img = p.img;
    if (p.col !== undefined) vector.col = p.col;
    if (p.text !== undefined) vector.text = p.text;
    return { id: i, vector, payload: { g: p.g } };
  });
  for (let i = 0; i < N; i += 500) {
    const put = await httpJson(url, 'PUT', '/collections/h/points?wait=true', { points: points.slice(i, i + 500) });
    assert.equal(put.status, 200, put.raw);
  }

  const holds = (id: string, name: string): boolean => {
    const p = model.get(id) as ModelPoint;
    return name === 'dense' || (name !== 'g' && (p as unknown as Record<string, unknown>)[name] !== undefined);
  };
  /** A has_vector filter and the model's test for it. */
  const filterOf = (): { filter: unknown; accept: (id: string) => boolean } => {
    // "" is not a name here (the dense vector is named): no point holds it, as in Qdrant.
    const name = rng.pick(['dense', 'img', 'img', 'col', 'text', 'text', '', 'missing']);
    const held = (id: string): boolean => name !== '' && name !== 'missing' && holds(id, name);
    const g = rng.pick(['a', 'b', 'c']);
    const inG = (id: string): boolean => (model.get(id) as ModelPoint).g === g;
    switch (rng.int(5)) {
      case 0:
        return { filter: { must: [{ has_vector: name }] }, accept: held };
      case 1:
        return { filter: { must_not: [{ has_vector: name }] }, accept: (id) => !held(id) };
      case 2:
        // With an indexed condition: the holders' bitset and the keyword's postings, intersected.
        return { filter: { must: [{ has_vector: name }, { key: 'g', match: { value: g } }] }, accept: (id) => held(id) && inG(id) };
      case 3:
        return { filter: { should: [{ has_vector: name }, { key: 'g', match: { value: g } }] }, accept: (id) => held(id) || inG(id) };
      default:
        // Beside a condition no index answers (a search thread could run it, but not has_vector).
        return { filter: { must: [{ has_vector: name }], must_not: [{ is_empty: { key: 'g' } }] }, accept: held };
    }
  };
  const stored = (name: Name): Map<string, ModelRows> => {
    const out = new Map<string, ModelRows>();
    for (const [id, p] of model) {
      if (name === 'dense') out.set(id, [p.dense]);
      else if (name === 'img' && p.img !== undefined) out.set(id, [p.img]);
      else if (name === 'col' && p.col !== undefined) out.set(id, p.col);
    }
    return out;
  };
  type Hit = { id: number; score: number };
  const hitsOf = (result: { points: Hit[] }): { id: string; score: number }[] => result.points.map((h) => ({ id: String(h.id), score: h.score }));

  const check = async (label: string): Promise<void> => {
    const recall = { found: 0, wanted: 0 };
    for (let round = 0; round < 16; round++) {
      const { filter, accept } = filterOf();
      const context = `seed ${seed}, ${label}, ${JSON.stringify(filter)}`;
      const expected = [...model.keys()].filter(accept);
      const count = await httpJson(url, 'POST', '/collections/h/points/count', { filter, exact: true });
      assert.equal(count.status, 200, count.raw);
      assert.equal(count.body.result.count, expected.length, `${context}: count`);
      const page = await httpJson(url, 'POST', '/collections/h/points/scroll', { filter, limit: N, with_payload: false });
      assert.equal(page.status, 200, page.raw);
      assert.deepEqual(page.body.result.points.map((p: { id: number }) => String(p.id)).sort(), expected.sort(), `${context}: scroll`);
      const limit = 1 + rng.int(20);
      for (const [name, size] of [
        ['dense', DENSE],
        ['img', 4],
      ] as const) {
        const query = row(size);
        const truth = namedModelSearch(stored(name), [query], { distance: 'Cosine', limit, accept });
        const exact = await httpJson(url, 'POST', '/collections/h/points/query', { query, using: name, filter, limit, params: { exact: true } });
        assert.equal(exact.status, 200, exact.raw);
        sameSparseHits(hitsOf(exact.body.result), truth, `${context}: ${name} exact`);
        // The graph (a walk filtered by the holders' bitset, on a search thread when it is the whole
        // filter): every hit a match with its true score, and most of the true answer found.
        const walked = await httpJson(url, 'POST', '/collections/h/points/query', { query, using: name, filter, limit });
        assert.equal(walked.status, 200, walked.raw);
        const hits = hitsOf(walked.body.result);
        const scores = new Map(namedModelSearch(stored(name), [query], { distance: 'Cosine', limit: N, accept }).map((h) => [h.id, h.score]));
        for (const hit of hits) {
          const score = scores.get(hit.id);
          assert.ok(score !== undefined && Math.abs(score - hit.score) < 1e-4, `${context}: ${name} graph hit ${hit.id} (${hit.score}) is no match (${score})`);
        }
        // Ties (a zero query scores every point 0) make any of the tied points right: a hit counts when it scores as well as the model's last.
        const last = truth.at(-1)?.score ?? 0;
        recall.found += Math.min(truth.length, hits.filter((h) => h.score >= last - 1e-6).length);
        recall.wanted += truth.length;
      }
      const col = [row(2), row(2)];
      const byCol = await httpJson(url, 'POST', '/collections/h/points/query', { query: col, using: 'col', filter, limit });
      assert.equal(byCol.status, 200, byCol.raw);
      sameSparseHits(hitsOf(byCol.body.result), namedModelSearch(stored('col'), col, { distance: 'Dot', limit, accept }), `${context}: col`);
      const text = nastySparse(rng, 30);
      if (text.indices.length > 0) {
        const byText = await httpJson(url, 'POST', '/collections/h/points/query', { query: text, using: 'text', filter, limit });
        assert.equal(byText.status, 200, byText.raw);
        const texts = new Map<string, SparseJson>();
        for (const [id, p] of model) if (p.text !== undefined) texts.set(id, p.text);
        sameSparseHits(hitsOf(byText.body.result), sparseModelSearch(texts, text, { idf: false, limit, accept }), `${context}: text`);
      }
    }
    assert.ok(recall.found >= 0.95 * recall.wanted, `seed ${seed}, ${label}: the graphs found ${recall.found} of ${recall.wanted} true hits`);
  };

  await check('after the load');

  // Vectors deleted from some points (by filter and by id), others given one they lacked.
  const dropped = await httpJson(url, 'POST', '/collections/h/points/vectors/delete?wait=true', {
    filter: { must: [{ key: 'g', match: { value: 'a' } }] },
    vector: ['img'],
  });
  assert.equal(dropped.status, 200, dropped.raw);
  for (const p of model.values()) if (p.g === 'a') delete p.img;
  const ids = Array.from({ length: 300 }, () => rng.int(N)).filter((v, i, a) => a.indexOf(v) === i);
  const byId = await httpJson(url, 'POST', '/collections/h/points/vectors/delete?wait=true', { points: ids.slice(0, 150), vector: ['text', 'col'] });
  assert.equal(byId.status, 200, byId.raw);
  for (const i of ids.slice(0, 150)) {
    const p = model.get(String(i)) as ModelPoint;
    delete p.text;
    delete p.col;
  }
  const given = ids.slice(150).map((i) => {
    const p = model.get(String(i)) as ModelPoint;
    p.col = [row(2)];
    p.text = nastySparse(rng, 30);
    return { id: i, vector: { col: p.col, text: p.text } };
  });
  const updated = await httpJson(url, 'PUT', '/collections/h/points/vectors?wait=true', { points: given });
  assert.equal(updated.status, 200, updated.raw);
  // A delete selecting the points that hold no `img`, among those of one group.
  const gone = [...model.keys()].filter((id) => (model.get(id) as ModelPoint).g === 'b' && !holds(id, 'img'));
  const deleted = await httpJson(url, 'POST', '/collections/h/points/delete?wait=true', {
    filter: { must: [{ key: 'g', match: { value: 'b' } }], must_not: [{ has_vector: 'img' }] },
  });
  assert.equal(deleted.status, 200, deleted.raw);
  for (const id of gone) model.delete(id);
  assert.ok(gone.length > 100, `${gone.length} deleted`);
  await check('after deletes and updates of vectors');

  await server.stop();
  server = await startServer(path, ['-qdrant-port', '0', '-threads', '2']);
  url = await qdrantUrlOf(server);
  await check('after a restart');

  // A formula's condition is compiled before any segment is at hand: has_vector there is refused, naming the path.
  const formula = await httpJson(url, 'POST', '/collections/h/points/query', {
    prefetch: { query: row(DENSE), using: 'dense', limit: 10 },
    query: { formula: { sum: ['$score', { has_vector: 'img' }] } },
  });
  assert.equal(formula.status, 400, formula.raw);
  assert.match(formula.body.status.error, /query\.formula\.sum\[1\].*has_vector/);
  const wrongType = await httpJson(url, 'POST', '/collections/h/points/count', { filter: { should: [{ has_vector: ['img'] }] } });
  assert.equal(wrongType.status, 400, wrongType.raw);
  assert.match(wrongType.body.status.error, /filter\.should\[0\]\.has_vector/);
});
