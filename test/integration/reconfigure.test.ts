/**
 * Database.reconfigureCollection: the index parameters changed in place, the collection rebuilt
 * from its stored points while writes queued meanwhile run on the rebuilt one and reads go on.
 * Checked against a model of the points after every step (the writes during the rebuild, a
 * restart), with HNSW recall measured against exact search; a graph switched off and on; a
 * second reconfiguration refused while one runs; a drop meanwhile; bad parameters change nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKithError } from '../../src/core/errors.js';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const DIM = 8;

function vector(rng: SeededRng): number[] {
  return Array.from({ length: DIM }, () => rng.next() * 2 - 1);
}

/** Every stored point as id → first component (what the model tracks), read page by page. */
async function stored(db: Database, name: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let from: string | undefined;
  for (;;) {
    const page = await db.collection(name).scroll({ limit: 1000, ...(from === undefined ? {} : { from }), with_payload: false, with_vector: true });
    for (const p of page.points) out.set(p.id, (p.vector as number[])[0] as number);
    if (page.next === undefined) return out;
    from = page.next;
  }
}

async function recallAt10(db: Database, name: string, rng: SeededRng): Promise<number> {
  let found = 0;
  for (let q = 0; q < 20; q++) {
    const query = vector(rng);
    const exact = new Set((await db.collection(name).searchChecked({ vector: query, limit: 10, params: { exact: true } })).points.map((h) => h.id));
    const graph = (await db.collection(name).searchChecked({ vector: query, limit: 10 })).points;
    found += graph.filter((h) => exact.has(h.id)).length;
  }
  return found / 200;
}

test('reconfigure: a new graph from the stored points, writes during the rebuild kept, reads on, durable across a restart', async (t) => {
  const seed = 771;
  const rng = new SeededRng(seed);
  const path = tempDbPath(t);
  let db = Database.open(path, { threads: 2 });
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: DIM, distance: 'euclid', hnsw: true, parameters: { m: 4, ef_construction: 8 } });
  const model = new Map<string, number>();
  const first = Array.from({ length: 3000 }, (_, i) => ({ id: `p${i}`, vector: vector(rng), payload: { i } }));
  await db.collection('c').upsert(first);
  for (const p of first) model.set(p.id, Math.fround(p.vector[0] as number));

  const rebuilt = db.reconfigureCollection('c', { parameters: { m: 16, ef_construction: 64 } });
  // Writes while it runs: they wait in the old collection's queue and run on the rebuilt one.
  const more = Array.from({ length: 200 }, (_, i) => ({ id: `q${i}`, vector: vector(rng), payload: {} }));
  const rewritten = first.slice(0, 100).map((p) => ({ ...p, vector: vector(rng) }));
  const writes = [db.collection('c').upsert(more), db.collection('c').upsert(rewritten), db.collection('c').deleteIds(first.slice(2900).map((p) => p.id))];
  // Reads go on meanwhile, against the collection as it was.
  const during = await db.collection('c').count();
  assert.ok(during >= 3000, `reads answer during the rebuild (${during})`);
  await assert.rejects(
    () => db.reconfigureCollection('c', { parameters: { m: 8 } }),
    (error: unknown) => isKithError(error) && error.code === 'ERR_CONFLICT',
  );
  const info = await rebuilt;
  await Promise.all(writes);
  for (const p of more) model.set(p.id, Math.fround(p.vector[0] as number));
  for (const p of rewritten) model.set(p.id, Math.fround(p.vector[0] as number));
  for (const p of first.slice(2900)) model.delete(p.id);
  assert.equal(info.parameters.m, 16);
  assert.equal(info.parameters.ef_construction, 64);
  assert.deepEqual(await stored(db, 'c'), model, `seed ${seed}: after the rebuild`);
  const recall = await recallAt10(db, 'c', rng);
  assert.ok(recall >= 0.9, `seed ${seed}: recall@10 ${recall} with m 16`);

  await db.close();
  db = Database.open(path, { threads: 2 });
  assert.equal(db.collection('c').describe().parameters.m, 16, 'the new parameters are durable');
  assert.deepEqual(await stored(db, 'c'), model, `seed ${seed}: after a restart`);

  // No graph, then a graph again; exact answers throughout.
  const query = vector(rng);
  const exact = (await db.collection('c').searchChecked({ vector: query, limit: 5, params: { exact: true } })).points.map((h) => h.id);
  const flat = await db.reconfigureCollection('c', { hnsw: false });
  assert.equal(flat.hnsw, false);
  const scanned = await db.collection('c').searchChecked({ vector: query, limit: 5, params: { explain: true } });
  assert.equal(scanned.explain.strategy, 'flat-scan');
  assert.deepEqual(
    scanned.points.map((h) => h.id),
    exact,
  );
  await db.reconfigureCollection('c', { hnsw: true, parameters: { m: 12 } });
  assert.ok((await recallAt10(db, 'c', rng)) >= 0.9, `seed ${seed}: recall with the graph back`);
  assert.deepEqual(await stored(db, 'c'), model);
});

test('reconfigure: bad parameters change nothing; a drop meanwhile wins; a search-time change keeps the graph', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  const rng = new SeededRng(772);
  await db.createCollection({ name: 'd', vector_size: DIM, distance: 'cosine', hnsw: true, parameters: { m: 8 } });
  await db.collection('d').upsert(Array.from({ length: 500 }, (_, i) => ({ id: String(i), vector: vector(rng), payload: {} })));
  await assert.rejects(
    () => db.reconfigureCollection('d', { parameters: { m: 1000 } }),
    (error: unknown) => isKithError(error) && error.code === 'ERR_BAD_INPUT' && /parameters\.m/.test(error.message),
  );
  assert.equal(db.collection('d').describe().parameters.m, 8);
  const search = await db.reconfigureCollection('d', { parameters: { ef_search: 77, k: 5 } });
  assert.equal(search.parameters.ef_search, 77);
  assert.equal((await db.collection('d').searchChecked({ vector: vector(rng) })).points.length, 5, 'k is the default limit now');
  // Dropped while it rebuilds: the drop wins and the rebuilt memory is let go.
  const rebuilding = assert.rejects(
    db.reconfigureCollection('d', { parameters: { m: 16 } }),
    (error: unknown) => isKithError(error) && error.code === 'ERR_COLLECTION_NOT_FOUND',
  );
  await db.dropCollection('d');
  await rebuilding;
  assert.deepEqual(
    db.list().map((c) => c.name),
    [],
  );
});
