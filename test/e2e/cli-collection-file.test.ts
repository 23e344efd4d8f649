/**
 * `kith dump-collection` and `kith load-collection`: a collection dumped from one file and loaded
 * into another comes back whole (points with their versions, the applied position, the graph from
 * its snapshot); a dump never overwrites a file; a file that is not a dump loads nothing.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { randomVectors, testSeed } from '../helpers/data.js';
import { kith, ok } from '../helpers/kith-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

test('dump-collection then load-collection into another file gives the same collection', async (t) => {
  const rng = new SeededRng(testSeed(12));
  const dir = tempDir(t);
  const from = join(dir, 'from.db');
  const to = join(dir, 'to.db');
  const dump = join(dir, 'g.kithexp');
  let db = Database.open(from);
  await db.createCollection({ name: 'g', vector_size: 6, distance: 'cosine', hnsw: true });
  await db.collection('g').upsert(
    randomVectors(rng, 700, 6).map((vector, i) => ({ id: i % 3 === 0 ? i : `p-${i}`, vector, payload: { i } })),
    { applied: { stream: 'log', sequence: 41n } },
  );
  const expected = await db.collection('g').retrieve(
    db
      .collection('g')
      .matchingPoints()
      .map((p) => p.id),
    { with_payload: true, with_vector: true },
  );
  await db.close();

  await ok(['dump-collection', 'g', dump, '--db', from]);
  const again = await kith(['dump-collection', 'g', dump, '--db', from]);
  assert.equal(again.code, 2, again.stderr);
  assert.match(again.stderr, /already exists/);
  assert.match(await ok(['load-collection', dump, '--db', to, '--name', 'copy']), /loaded collection "copy": 700 points/);

  db = Database.open(to);
  try {
    const copy = db.collection('copy');
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
    assert.deepEqual(
      (
        await copy.retrieve(
          expected.map((p) => p.id),
          { with_payload: true, with_vector: true },
        )
      ).sort(byId),
      [...expected].sort(byId),
    );
    assert.deepEqual(copy.appliedPosition, { stream: 'log', sequence: 41n });
    assert.equal(db.loadReports.get('copy')?.inserted, 0, 'the graph was rebuilt instead of taken from the dump');
  } finally {
    await db.close();
  }

  const notADump = join(dir, 'points.jsonl');
  writeFileSync(notADump, '{"id": 1, "vector": [1, 2, 3, 4, 5, 6]}\n');
  const refused = await kith(['load-collection', notADump, '--db', to]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /not a whole kith collection export/);
  db = Database.open(to, { readOnly: true });
  assert.deepEqual(
    db.list().map((c) => c.name),
    ['copy'],
  );
  await db.close();
});
