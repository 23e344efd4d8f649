/**
 * Collection export and import (storage/collection-export.ts, db/collection-import.ts): a
 * round trip keeps everything (ids, versions, vectors, payloads of nasty data, the applied
 * position, search answers, the graph from its snapshot without a rebuild); an export taken
 * while writes go on is one commit's state; a broken stream imports nothing; and a process killed
 * in the middle of an import leaves nothing of it.
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { createWriteStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KithError } from '../../src/core/errors.js';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { LmdbStore } from '../../src/storage/lmdb-store.js';
import { testSeed } from '../helpers/data.js';
import { drawPayload, drawVector, idPool, vectorGen } from '../helpers/nasty-data.js';
import { tempDbPath, tempDir } from '../helpers/temp-dir.js';

const NONE = new Set<string>();
const KINDS = new Set(['numeric', 'plain', 'control', 'long-unicode', 'lookalike', 'uuid'] as const);
const CHILD = fileURLToPath(new URL('../helpers/import-child.js', import.meta.url));

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

async function* from(bytes: Buffer, piece = 4096): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece);
}

/** Every point of a collection with everything, sorted by id. */
async function everything(db: Database, name: string) {
  const c = db.collection(name);
  const ids = c.matchingPoints().map((p) => p.id);
  const records = await c.retrieve(ids, { with_payload: true, with_vector: true });
  return records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

test('export then import into another database keeps ids, versions, vectors, payloads, position, answers and the graph', async (t) => {
  const seed = testSeed(31);
  const rng = new SeededRng(seed);
  const sourcePath = tempDbPath(t);
  let source = Database.open(sourcePath);
  t.after(() => source.close());
  const specs = [
    { name: 'graph', vector_size: 5, distance: 'cosine', hnsw: true },
    { name: 'dot8', vector_size: 3, distance: 'dot', hnsw: true, quantization: 'sq8' },
    { name: 'flat', vector_size: 2, distance: 'euclid' },
  ] as const;
  for (const spec of specs) {
    await source.createCollection(spec);
    const c = source.collection(spec.name);
    const gen = vectorGen(rng, spec.distance === 'dot' ? 'nonneg' : 'nasty', spec.vector_size, NONE);
    const ids = idPool(rng, 400, KINDS);
    for (let batch = 0; batch < 4; batch++) {
      const points = ids
        .slice(batch * 100, batch * 100 + 130)
        .map((id) => ({ id: id.raws[0] as string | number, vector: drawVector(rng, gen), payload: drawPayload(rng, NONE) }));
      await c.upsert(points, { applied: { stream: `log-${spec.name}`, sequence: BigInt(batch) } });
    }
    await c.deleteIds(ids.slice(0, 20).map((id) => id.raws[0] as string | number));
    await c.annotate('note', { kept: [1, 'x'] });
  }
  // Reopened, the source's graphs are their snapshots' (deleted nodes compacted away), as the
  // imports' will be: the same graphs, so the same answers, ties and all.
  await source.close();
  source = Database.open(sourcePath);
  const target = Database.open(tempDbPath(t));
  t.after(() => target.close());
  for (const spec of specs) {
    const bytes = await collect(source.exportCollection(spec.name));
    const info = await target.importCollection(from(bytes, 1 + rng.int(9000)));
    assert.equal(info.points_count, source.collection(spec.name).pointsCount);
    assert.deepEqual(await everything(target, spec.name), await everything(source, spec.name), `[seed ${seed}] ${spec.name}`);
    assert.deepEqual(target.collection(spec.name).appliedPosition, { stream: `log-${spec.name}`, sequence: 3n });
    assert.deepEqual(target.collection(spec.name).annotations().note, { kept: [1, 'x'] });
    const report = target.loadReports.get(spec.name);
    if ('hnsw' in spec) {
      assert.equal(report?.snapshotRejected, undefined);
      assert.equal(report?.inserted, 0, `[seed ${seed}] ${spec.name}: the graph was rebuilt instead of taken from the snapshot`);
      assert.equal(report?.fromSnapshot, info.points_count);
    }
    const gen = vectorGen(rng, 'real', spec.vector_size, NONE);
    for (let q = 0; q < 20; q++) {
      const request = { vector: drawVector(rng, gen), limit: 10, with_payload: true };
      const [a, b] = await Promise.all([source.collection(spec.name).searchParallel(request), target.collection(spec.name).searchParallel(request)]);
      assert.deepEqual(b.points, a.points, `[seed ${seed}] ${spec.name}: query ${q}`);
    }
  }
  // A second import of one name is refused; under another name it is a collection of its own.
  const again = await collect(source.exportCollection('flat'));
  await assert.rejects(target.importCollection(from(again)), (e: unknown) => e instanceof KithError && e.code === 'ERR_COLLECTION_EXISTS');
  await target.importCollection(from(again), { name: 'flat-copy' });
  assert.deepEqual(await everything(target, 'flat-copy'), await everything(source, 'flat'));
});

test('an export taken while writes go on holds one commit: whole batches, each at or below its applied position', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({ name: 'busy', vector_size: 4, distance: 'euclid', hnsw: true });
  const busy = db.collection('busy');
  const rng = new SeededRng(testSeed(5));
  let sequence = 0;
  const writeBatch = async () => {
    sequence++;
    const s = sequence;
    await busy.upsert(
      Array.from({ length: 300 }, (_, i) => ({ id: `s${s}-${i}`, vector: [rng.gaussian(), rng.gaussian(), s, i], payload: { s } })),
      { applied: { stream: 'w', sequence: BigInt(s) } },
    );
  };
  for (let i = 0; i < 5; i++) await writeBatch();
  // The export is read slowly while batches keep being written: each piece waits for a write.
  const pieces: Buffer[] = [];
  for await (const piece of db.exportCollection('busy')) {
    pieces.push(piece);
    await writeBatch();
  }
  await writeBatch();
  const target = Database.open(tempDbPath(t));
  t.after(() => target.close());
  await target.importCollection(from(Buffer.concat(pieces)));
  const copy = target.collection('busy');
  const at = copy.appliedPosition?.sequence;
  assert.ok(at !== undefined && at >= 5n && at < BigInt(sequence), `applied ${at}, ${sequence} batches written`);
  const perBatch = new Map<number, number>();
  for (const { payload } of copy.matchingPoints()) perBatch.set(payload.s as number, (perBatch.get(payload.s as number) ?? 0) + 1);
  assert.deepEqual(
    [...perBatch].sort((a, b) => a[0] - b[0]),
    Array.from({ length: Number(at) }, (_, i) => [i + 1, 300]),
  );
  const versions = (await copy.retrieve(copy.matchingPoints().map((p) => p.id))).map((p) => p.version);
  const newest = versions.reduce((a, b) => (a > b ? a : b));
  assert.ok(newest <= ((await busy.retrieve([`s${Number(at)}-0`]))[0]?.version ?? 0n));
  assert.ok(((await busy.retrieve([`s${Number(at) + 1}-0`]))[0]?.version ?? 0n) > newest);
});

test('a stream cut short, changed or of another kind imports nothing', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'euclid' });
  await db.collection('c').upsert(Array.from({ length: 5000 }, (_, i) => ({ id: i, vector: [i, 1], payload: { i } })));
  const bytes = await collect(db.exportCollection('c'));
  const flipped = Buffer.from(bytes);
  flipped[Math.floor(bytes.length / 2)] = (flipped[Math.floor(bytes.length / 2)] as number) ^ 1;
  for (const [what, broken] of [
    ['cut short', bytes.subarray(0, bytes.length - 3)],
    ['cut in half', bytes.subarray(0, bytes.length >> 1)],
    ['a flipped byte', flipped],
    ['not an export', Buffer.from('{"points": []}\n')],
    ['trailing bytes', Buffer.concat([bytes, Buffer.from('x')])],
  ] as const) {
    await assert.rejects(db.importCollection(from(broken), { name: 'copy' }), (e: unknown) => e instanceof KithError && e.code === 'ERR_BAD_INPUT', what);
    assert.deepEqual(
      db.list().map((c) => c.name),
      ['c'],
      what,
    );
  }
  const path = db.path;
  await db.close();
  assertNoStrayRecords(path, 1);
});

/** Every point record and snapshot in the file belongs to one of the collections (uids up to `maxUid` checked). */
function assertNoStrayRecords(path: string, expectedCollections: number, maxUid = 50): void {
  const store = LmdbStore.open(path);
  try {
    const live = new Set(store.loadCollections().map((c) => c.uid));
    assert.equal(live.size, expectedCollections);
    for (let uid = 1; uid <= maxUid; uid++) {
      if (live.has(uid)) continue;
      assert.equal(store.countPoints(uid), 0, `points left under uid ${uid}`);
      assert.equal(store.readSnapshot(uid), undefined, `a snapshot left under uid ${uid}`);
    }
  } finally {
    void store.close();
  }
}

test('SIGKILL in the middle of an import: after a reopen the collection is wholly there or not at all', async (t) => {
  const seed = testSeed(77);
  const rng = new SeededRng(seed);
  const dir = tempDir(t);
  const sourcePath = join(dir, 'source.db');
  const exportPath = join(dir, 'big.export');
  const source = Database.open(sourcePath);
  await source.createCollection({ name: 'big', vector_size: 16, distance: 'euclid', hnsw: true });
  for (let batch = 0; batch < 4; batch++) {
    await source
      .collection('big')
      .upsert(
        Array.from({ length: 2500 }, (_, i) => ({ id: `p${batch}-${i}`, vector: Array.from({ length: 16 }, () => rng.gaussian()), payload: { batch, i } })),
      );
  }
  await pipeline(Readable.from(source.exportCollection('big')), createWriteStream(exportPath));
  const expected = await everything(source, 'big');
  await source.close();
  const pieces = Math.ceil(statSync(exportPath).size / 65536);
  const outcomes = { absent: 0, whole: 0 };
  for (let round = 0; round < 4; round++) {
    const target = join(dir, `target-${round}.db`);
    // A collection already there must come through untouched.
    const before = Database.open(target);
    await before.createCollection({ name: 'other', vector_size: 2, distance: 'euclid' });
    await before.collection('other').upsert([{ id: 1, vector: [1, 2] }]);
    await before.close();
    const killAt = round === 3 ? pieces + 5 : 1 + rng.int(pieces);
    const child = fork(CHILD, [target, exportPath], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    t.after(() => child.kill('SIGKILL'));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let told = 0;
    await new Promise<void>((resolve) => {
      child.on('message', (message) => {
        told++;
        if (message === 'done' || told >= killAt) resolve();
      });
      void exited.then(resolve);
    });
    child.kill('SIGKILL');
    await exited;
    const db = Database.open(target);
    let collections = 0;
    try {
      const names = db.list().map((c) => c.name);
      collections = names.length;
      assert.ok(names.includes('other'), `[seed ${seed}] round ${round}`);
      if (names.includes('big')) {
        outcomes.whole++;
        assert.deepEqual(await everything(db, 'big'), expected, `[seed ${seed}] round ${round}: killed after piece ${killAt}`);
      } else {
        outcomes.absent++;
      }
    } finally {
      await db.close();
    }
    assertNoStrayRecords(target, collections);
  }
  assert.ok(outcomes.absent > 0, `[seed ${seed}] no kill landed before the commit: ${JSON.stringify(outcomes)}`);
  assert.ok(outcomes.whole > 0, `[seed ${seed}] no import finished: ${JSON.stringify(outcomes)}`);
});
