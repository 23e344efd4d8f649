/**
 * A restore (Database.beginRestore, what `kith import --db` of an export uses) writes each point's
 * sparse vectors with its version: read back as given (sorted by index), searchable through the
 * inverted index once the restore finishes, and the same after a restart. A batch with a bad
 * sparse vector (an unknown name, a repeated index) is refused whole, naming the point and field.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { nastySparse, type SparseJson, sameSparseHits, sparseModelSearch, storedSparse } from '../helpers/sparse-model.js';
import { tempDbPath } from '../helpers/temp-dir.js';

test('a restore writes sparse vectors with the versions; a bad one refuses its whole batch', async (t) => {
  const seed = testSeed(611);
  const rng = new SeededRng(seed);
  const path = tempDbPath(t);
  let db = Database.open(path);
  t.after(() => db.close());
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'Dot', sparse_vectors: { text: { modifier: 'idf' }, tags: {} } });
  const points = Array.from({ length: 40 }, (_, i) => {
    const sparse: Record<string, SparseJson> = {};
    if (i % 4 !== 0) sparse.text = nastySparse(rng, 12);
    if (i % 3 === 0) sparse.tags = nastySparse(rng, 5);
    return { id: i % 5 === 0 ? `doc-${i}` : i, version: BigInt(1000 + i), vector: [i, 1], payload: { i }, sparse_vectors: sparse };
  });
  const session = await db.beginRestore('c');
  assert.equal(await session.write(points.slice(0, 25)), 25);
  assert.equal(await session.write(points.slice(25)), 15);

  // Refused whole: nothing of these batches is written (the good point first in each).
  const good = { id: 'extra', version: 5000n, vector: [1, 1], sparse_vectors: { text: { indices: [1], values: [1] } } };
  const refused: [unknown, RegExp][] = [
    [
      { nope: { indices: [1], values: [1] } },
      /^points\[1\]\.sparse_vectors\.nope: the collection has no sparse vector named "nope" \(it has "text", "tags"\)$/,
    ],
    [{ text: { indices: [3, 3], values: [1, 2] } }, /^points\[1\]\.sparse_vectors\.text\.indices\[1\]: duplicate index 3/],
    [{ tags: { indices: [4294967296], values: [1] } }, /^points\[1\]\.sparse_vectors\.tags\.indices\[0\]: must be an integer from 0 to 4294967295/],
    [[1], /^points\[1\]\.sparse_vectors: expected an object of sparse vectors by name$/],
  ];
  for (const [sparse, message] of refused) {
    await assert.rejects(session.write([good, { id: 'bad', version: 5001n, vector: [1, 1], sparse_vectors: sparse }]), (error: Error) => {
      assert.match(error.message, message);
      return true;
    });
  }
  await session.finish();

  const check = (when: string): void => {
    const c = db.collection('c');
    assert.equal(c.pointsCount, points.length, when);
    for (const p of points) {
      const stored = c.getPoint(p.id);
      assert.equal(stored.version, p.version, `${when}: ${p.id}`);
      const expected = Object.fromEntries(Object.entries(p.sparse_vectors).map(([name, v]) => [name, storedSparse(v)]));
      assert.deepEqual(stored.sparse_vectors ?? {}, expected, `${when}: ${p.id}`);
    }
    const stored = new Map(points.flatMap((p) => (p.sparse_vectors.text === undefined ? [] : [[String(p.id), storedSparse(p.sparse_vectors.text)] as const])));
    const query = { indices: [0, 1, 2, 3, 4294967295], values: [1, 0.5, -1, 2, 1] };
    const expected = sparseModelSearch(stored, query, { idf: true, limit: 10 });
    const hits = c.search({ sparse_vector: { name: 'text', ...query }, limit: 10 });
    assert.ok(expected.length > 3, `${when}: the query should find points`);
    sameSparseHits(
      hits.map((h) => ({ id: String(h.id), score: h.score })),
      expected,
      `${when} [seed ${seed}]`,
    );
  };
  check('after the restore');
  await db.close();
  db = Database.open(path);
  check('after a restart');
});
