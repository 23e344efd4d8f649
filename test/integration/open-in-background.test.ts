/**
 * Database.openInBackground: the file opens at once and the collections load in slices between
 * other work; until every one is loaded, whatever reads or changes collections is ERR_LOADING,
 * and afterwards the data equals a plain `Database.open`'s. The load is told per collection
 * (start, done). Closing while it loads stops it and frees the file; a record that does not
 * decode fails the load, and nothing is served from the collections loaded before it.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { open } from 'lmdb';
import { SeededRng } from '../../src/core/rng.js';
import { Database, type LoadEvent } from '../../src/db/database.js';
import { randomVectors } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const DIM = 8;
/** Enough points that a load takes several slices of 20 ms. */
const FLAT_POINTS = 30_000;
const GRAPH_POINTS = 1_500;

/** One file for every test, built once; each test opens a copy. */
let built: { readonly path: string; readonly queries: number[][] };

const buildDir = mkdtempSync(join(tmpdir(), 'kith-test-'));
after(() => rmSync(buildDir, { recursive: true, force: true }));

before(async () => {
  const path = join(buildDir, 'built.db');
  built = { path, queries: await build(path) };
});

function copyOfBuilt(t: Parameters<typeof tempDbPath>[0]): string {
  const path = tempDbPath(t);
  copyFileSync(built.path, path);
  return path;
}

async function build(path: string): Promise<number[][]> {
  const rng = new SeededRng(91);
  const db = Database.open(path);
  await db.createCollection({ name: 'flat', vector_size: DIM, distance: 'euclid' });
  await db.createCollection({ name: 'graph', vector_size: DIM, distance: 'cosine', hnsw: true });
  for (let start = 0; start < FLAT_POINTS; start += 5000) {
    await db.collection('flat').upsert(randomVectors(rng, 5000, DIM).map((vector, i) => ({ id: start + i, vector, payload: { n: start + i } })));
  }
  await db.collection('graph').upsert(randomVectors(rng, GRAPH_POINTS, DIM).map((vector, i) => ({ id: `g${i}`, vector })));
  const queries = randomVectors(rng, 10, DIM);
  await db.close();
  return queries;
}

/** The answers a database gives: every collection's count and the ids of a few searches in each. */
function answers(db: Database, queries: readonly number[][]): unknown {
  return db.list().map((info) => ({
    name: info.name,
    points: info.points_count,
    hits: queries.map((vector) =>
      db
        .collection(info.name)
        .search({ vector, limit: 5 })
        .map((hit) => hit.id),
    ),
  }));
}

test('ERR_LOADING until every collection is loaded, turns of the event loop meanwhile, then the same data as Database.open', async (t) => {
  const path = copyOfBuilt(t);
  const queries = built.queries;
  const reference = Database.open(path);
  const expected = answers(reference, queries);
  await reference.close();

  const events: LoadEvent[] = [];
  const db = Database.openInBackground(path, { onLoad: (event) => events.push(event) });
  t.after(() => db.close());
  assert.equal(db.loading, true);
  for (const call of [
    () => db.list(),
    () => db.collection('flat'),
    () => db.createCollection({ name: 'x', vector_size: 2, distance: 'dot' }),
    () => db.backup(`${path}.copy`),
  ]) {
    await assert.rejects(async () => call(), { code: 'ERR_LOADING' });
  }
  let turns = 0;
  const ticking = setInterval(() => turns++, 1);
  await db.loaded;
  clearInterval(ticking);
  assert.equal(db.loading, false);
  assert.ok(turns >= 2, `${turns} timer turns ran while ${FLAT_POINTS + GRAPH_POINTS} points loaded`);
  assert.deepEqual(answers(db, queries), expected);

  assert.deepEqual(
    events.map((e) => `${e.kind} ${e.collection}`).filter((line) => !line.startsWith('progress')),
    ['start flat', 'done flat', 'start graph', 'done graph'],
  );
  const done = events.filter((e) => e.kind === 'done');
  assert.deepEqual(
    done.map((e) => [e.collection, e.report.points, e.report.fromSnapshot]),
    [
      ['flat', FLAT_POINTS, 0],
      ['graph', GRAPH_POINTS, GRAPH_POINTS],
    ],
  );
  for (const e of done) assert.deepEqual(e.report, db.loadReports.get(e.collection));
});

test('close() while loading stops the load, rejects `loaded` and frees the file', async (t) => {
  const path = copyOfBuilt(t);
  const db = Database.openInBackground(path);
  assert.equal(db.loading, true);
  await db.close();
  await assert.rejects(db.loaded, { code: 'ERR_SHUTTING_DOWN' });
  const again = Database.open(path);
  t.after(() => again.close());
  assert.deepEqual(
    again.list().map((info) => [info.name, info.points_count]),
    [
      ['flat', FLAT_POINTS],
      ['graph', GRAPH_POINTS],
    ],
  );
});

test('a point record that does not decode fails the load; nothing is served, not even the collections loaded before it', async (t) => {
  const path = copyOfBuilt(t);
  // The last record of the file (a point of "graph", loaded after "flat"), cut short.
  const raw = open({ path, noSubdir: true });
  const records = raw.openDB<Buffer, Buffer>({ name: 'point_records', encoding: 'binary', keyEncoding: 'binary' });
  const last = [...records.getRange({ reverse: true, limit: 1 })][0];
  assert.ok(last !== undefined);
  await records.put(last.key, last.value.subarray(0, 3));
  await raw.close();

  const db = Database.openInBackground(path);
  t.after(() => db.close());
  await assert.rejects(db.loaded, { code: 'ERR_STORAGE_CORRUPTED', message: /point record graph\// });
  assert.equal(db.loading, false);
  assert.throws(() => db.collection('flat'), { code: 'ERR_STORAGE_CORRUPTED', message: /^the database did not load: point record graph\// });
  assert.throws(() => db.list(), { code: 'ERR_STORAGE_CORRUPTED' });
  // The embedded open reports the same record, by throwing.
  await db.close();
  assert.throws(() => Database.open(path), { code: 'ERR_STORAGE_CORRUPTED', message: /point record graph\// });
});
