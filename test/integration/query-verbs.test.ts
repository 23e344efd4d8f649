/**
 * The engine's query verbs (search/query-verbs.ts) on the embedded API: a search near a stored
 * point leaves that point out and otherwise answers as a search with its stored vector does; a
 * recommendation answers as a search with the examples' average_vector, leaving the examples given
 * by id out (also with a filter, and with duplicates of them in the collection); a missing point
 * is ERR_POINT_NOT_FOUND naming the id as given; the examples' cost is bounded before they are read.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PointNotFoundError } from '../../src/collection/collection.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath } from '../helpers/temp-dir.js';

async function collectionOf(path: string) {
  const db = Database.open(path);
  await db.createCollection({ name: 'q', vector_size: 3, distance: 'Euclid', hnsw: false });
  const c = db.collection('q');
  const points = Array.from({ length: 60 }, (_, i) => ({ id: i, vector: [i % 5, (i * 3) % 7, i % 2], payload: { even: i % 2 === 0 } }));
  // Twins of point 7: the answer must leave out 7 itself, not its duplicates.
  points.push({ id: 100, vector: [2, 0, 1], payload: { even: true } }, { id: 101, vector: [2, 0, 1], payload: { even: false } });
  await c.upsert(points);
  return { db, c };
}

test('a search near a point leaves the point out, and is otherwise a search with its vector', async (t) => {
  const { db, c } = await collectionOf(tempDbPath(t));
  try {
    const near = await c.searchNearPoint({ point: 7, limit: 6, with_payload: false });
    const plain = c.search({ vector: c.getPoint('7').vector, limit: 7, with_payload: false });
    assert.deepEqual(
      near.points.map((h) => [h.id, h.score]),
      plain
        .filter((h) => h.id !== '7')
        .slice(0, 6)
        .map((h) => [h.id, h.score]),
    );
    assert.ok(
      near.points.some((h) => h.id === '100'),
      'a duplicate of the point is still found',
    );
    // With a filter: both the filter and the exclusion hold.
    const filtered = await c.searchNearPoint({ point: '7', limit: 50, filter: { must: [{ key: 'even', match: { value: false } }] }, with_payload: true });
    assert.ok(filtered.points.length > 0 && filtered.points.every((h) => h.id !== '7' && h.payload?.even === false));
    await assert.rejects(
      c.searchNearPoint({ point: 999, limit: 3 }),
      (error: unknown) => error instanceof PointNotFoundError && error.given === 999 && error.code === 'ERR_POINT_NOT_FOUND',
    );
  } finally {
    await db.close();
  }
});

test('a recommendation is a search with the average_vector, its id examples left out', async (t) => {
  const { db, c } = await collectionOf(tempDbPath(t));
  try {
    const a = c.getPoint('7').vector;
    const b = [4, 1, 0];
    const neg = c.getPoint('3').vector;
    const positive = a.map((x, d) => (x + (b[d] as number)) / 2);
    const expectedVector = positive.map((p, d) => p + (p - (neg[d] as number)));
    const got = await c.recommend({ positive: [7, b], negative: ['3'], limit: 10, with_payload: false });
    const plain = c.search({ vector: expectedVector, limit: 12, with_payload: false }).filter((h) => h.id !== '7' && h.id !== '3');
    assert.deepEqual(
      got.points.map((h) => h.id),
      plain.slice(0, 10).map((h) => h.id),
    );
    await assert.rejects(c.recommend({ positive: [7, 12345], limit: 3 }), (error: unknown) => error instanceof PointNotFoundError && error.given === 12345);
    await assert.rejects(c.recommend({ positive: [[1, 2]], limit: 3 }), { code: 'ERR_BAD_INPUT', message: /positive\[0\]: expected a vector of 3 numbers/ });
    await assert.rejects(c.recommend({ positive: [], limit: 3 }), { code: 'ERR_BAD_INPUT', message: /positive: at least one positive example/ });
    // Examples are counted against the request's budget before any is read: far too many ids is 4xx, not a long read.
    await assert.rejects(c.recommend({ positive: Array.from({ length: 6_000_000 }, () => 7), limit: 3 }), { code: 'ERR_OVER_LIMIT' });
  } finally {
    await db.close();
  }
});

test('query runs a mix of vectors, points and recommendations as one batch, naming the failing search', async (t) => {
  const { db, c } = await collectionOf(tempDbPath(t));
  try {
    const outcomes = await c.query([
      { kind: 'vector', search: { vector: [0, 0, 0], limit: 2, with_payload: false } },
      { kind: 'point', search: { point: 7, limit: 2, with_payload: false } },
      { kind: 'recommend', search: { positive: [7], limit: 2, with_payload: false } },
    ]);
    assert.equal(outcomes.length, 3);
    assert.deepEqual(
      outcomes[1]?.points.map((h) => h.id),
      outcomes[2]?.points.map((h) => h.id),
      'one positive example is a search near it',
    );
    await assert.rejects(
      c.query([
        { kind: 'vector', search: { vector: [0, 0, 0], limit: 2 } },
        { kind: 'recommend', search: { positive: [[1]], limit: 2 } },
      ]),
      { message: /searches\[1\]\.positive\[0\]/ },
    );
  } finally {
    await db.close();
  }
});
