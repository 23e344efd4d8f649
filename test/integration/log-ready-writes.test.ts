/**
 * The write path ready for a log: a collection takes its versions from the source it was given
 * (the clock by default, a log's positions for a replica), and a write can carry an applied
 * position that is stored with its records and read back after a reopen.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AppliedPosition } from '../../src/core/applied-position.js';
import { KithError } from '../../src/core/errors.js';
import { wallClockNs, type VersionSource } from '../../src/core/version-clock.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath } from '../helpers/temp-dir.js';

/** Hands out the listed versions, one per batch, whatever `last` is (the collection checks them). */
function listed(versions: readonly bigint[]): VersionSource & { asked: bigint[] } {
  const asked: bigint[] = [];
  return {
    asked,
    next(last) {
      asked.push(last);
      const version = versions[asked.length - 1];
      if (version === undefined) throw new Error('no version left');
      return version;
    },
  };
}

const point = (id: string | number, x: number) => ({ id, vector: [x, 1, 0], payload: { x } });

test('upserts store exactly the versions the source hands out, in retrieve and search answers, across a reopen', async (t) => {
  const path = tempDbPath(t);
  const source = listed([100n, 205n, 206n, 5000n]);
  let db = Database.open(path);
  await db.createCollection({ name: 'replica', vector_size: 3, distance: 'euclid' }, { versions: source });
  let replica = db.collection('replica');
  await replica.upsert([point('a', 1), point('b', 2)]);
  await replica.upsert([point('b', 3)]);
  await replica.updatePayloads(['a'], () => ({ touched: true }));
  const versions = async () => Object.fromEntries((await replica.retrieve(['a', 'b'])).map((p) => [p.id, p.version]));
  assert.deepEqual(await versions(), { a: 206n, b: 205n });
  const hits = (await replica.searchParallel({ vector: [0, 1, 0], limit: 2 })).points;
  assert.deepEqual(Object.fromEntries(hits.map((h) => [h.id, h.version])), { a: 206n, b: 205n });
  assert.deepEqual(source.asked, [0n, 100n, 205n]);

  // A source that goes back is refused before anything is written.
  await db.close();
  const backwards = listed([206n]);
  db = Database.open(path, { versions: (name) => (name === 'replica' ? backwards : undefined) });
  replica = db.collection('replica');
  await assert.rejects(replica.upsert([point('c', 9)]), (error: unknown) => error instanceof KithError && error.code === 'ERR_INTERNAL');
  assert.deepEqual(await replica.retrieve(['c']), []);
  assert.deepEqual(backwards.asked, [206n], 'the reopened collection continues from its stored last version');
  await db.close();

  db = Database.open(path, { versions: (name) => (name === 'replica' ? listed([207n]) : undefined) });
  replica = db.collection('replica');
  await replica.upsert([point('c', 9)]);
  assert.deepEqual(await versions(), { a: 206n, b: 205n });
  assert.equal((await replica.retrieve(['c']))[0]?.version, 207n);
  await db.close();
});

test('without a source, versions come from the clock', async (t) => {
  const db = Database.open(tempDbPath(t), { versions: () => undefined });
  t.after(() => db.close());
  await db.createCollection({ name: 'clocked', vector_size: 3, distance: 'euclid' });
  const before = wallClockNs();
  await db.collection('clocked').upsert([point(1, 1)]);
  const after = wallClockNs();
  const [stored] = await db.collection('clocked').retrieve([1]);
  assert.ok(stored !== undefined && stored.version >= before && stored.version <= after, `version ${stored?.version} not between ${before} and ${after}`);
});

test('an applied position is stored with the write that carries it, also when it changes no point, and read back after a reopen', async (t) => {
  const path = tempDbPath(t);
  let db = Database.open(path);
  await db.createCollection({ name: 'c', vector_size: 3, distance: 'euclid', hnsw: true });
  await db.createCollection({ name: 'other', vector_size: 3, distance: 'euclid' });
  let c = db.collection('c');
  assert.equal(c.appliedPosition, undefined);
  const at = (sequence: bigint): AppliedPosition => ({ stream: 'orders.log', sequence });
  await c.upsert([point('a', 1), point('b', 2)], { applied: at(1n) });
  await c.upsert([point('c', 3)]);
  assert.deepEqual(c.appliedPosition, at(1n), 'a write without a position leaves it');
  await c.deleteIds(['a'], { applied: at(2n) });
  await c.deleteIds(['nobody'], { applied: at(3n) });
  await c.upsert([], { applied: at(4n) });
  await db.collection('other').upsert([point('z', 1)], { applied: { stream: 'other', sequence: (1n << 64n) - 1n } });
  assert.deepEqual(c.appliedPosition, at(4n));

  // A bad position fails the write, naming the field, and writes nothing.
  await assert.rejects(c.upsert([point('d', 4)], { applied: { stream: 'x', sequence: -1n } }), /applied\.sequence/);
  await assert.rejects(c.deleteIds(['b'], { applied: { stream: '', sequence: 5n } }), /applied\.stream/);
  assert.deepEqual(
    (await c.retrieve(['b', 'd'])).map((p) => p.id),
    ['b'],
  );
  await db.close();

  db = Database.open(path);
  c = db.collection('c');
  assert.deepEqual(c.appliedPosition, at(4n));
  assert.deepEqual(db.collection('other').appliedPosition, { stream: 'other', sequence: (1n << 64n) - 1n });
  assert.deepEqual((await c.retrieve(['a', 'b', 'c'])).map((p) => p.id).sort(), ['b', 'c']);
  // Dropped with its collection: a new one of the same name starts without.
  await db.dropCollection('c');
  await db.createCollection({ name: 'c', vector_size: 3, distance: 'euclid' });
  assert.equal(db.collection('c').appliedPosition, undefined);
  await db.close();
  db = Database.open(path);
  assert.equal(db.collection('c').appliedPosition, undefined);
  await db.close();
});

test('delete by filter and payload operations carry an applied position too, also when they select nothing', async (t) => {
  const path = tempDbPath(t);
  let db = Database.open(path);
  await db.createCollection({ name: 'c', vector_size: 3, distance: 'euclid' });
  let c = db.collection('c');
  const at = (sequence: bigint): AppliedPosition => ({ stream: 'c.log', sequence });
  await c.upsert([point('a', 1), point('b', 2), point('c', 3)], { applied: at(1n) });
  await c.changePayloads({ points: ['a', 'b'] }, { op: 'set', payload: { tag: 'x' } }, { applied: at(2n) });
  assert.deepEqual(c.appliedPosition, at(2n));
  await c.changePayloads({ filter: { must: [{ key: 'tag', match: { value: 'nothing' } }] } }, { op: 'clear' }, { applied: at(3n) });
  assert.deepEqual(c.appliedPosition, at(3n), 'a payload operation that selects no point still stores its position');
  assert.deepEqual(await c.deleteByFilter({ must: [{ key: 'tag', match: { value: 'x' } }] }, { applied: at(4n) }), { deleted: 2 });
  assert.deepEqual(await c.deleteByFilter({ must: [{ key: 'tag', match: { value: 'x' } }] }, { applied: at(5n) }), { deleted: 0 });
  assert.deepEqual(c.appliedPosition, at(5n));
  await assert.rejects(c.deleteByFilter({}, { applied: { stream: 'c.log', sequence: -1n } }), /applied\.sequence/);
  await assert.rejects(c.changePayloads({ points: ['c'] }, { op: 'clear' }, { applied: { stream: '', sequence: 6n } }), /applied\.stream/);
  await db.close();

  db = Database.open(path);
  c = db.collection('c');
  assert.deepEqual(c.appliedPosition, at(5n));
  assert.deepEqual(
    (await c.retrieve(['a', 'b', 'c'])).map((p) => p.id),
    ['c'],
    'the refused writes changed nothing',
  );
  await db.close();
});
