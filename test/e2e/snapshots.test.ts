/**
 * Collection snapshots on kith's port, against real listening servers and real files: a snapshot
 * of a collection with sparse and named vectors (records of formats 2 and 3) is recovered after
 * the collection is changed, and after it is dropped, with the same points, versions and search
 * answers; list, download (its SHA-256 is the listed checksum) and delete; a truncated or
 * bit-flipped upload and a wrong checksum change nothing; names that try to leave the snapshot
 * directory are not found; an http location is refused; a crash's leftover temporary is never
 * listed and is swept.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { KithClient, type KithClientError } from '../../src/api/client/kith-client.js';
import { SeededRng } from '../../src/core/rng.js';
import { defaultSnapshotFiles } from '../../src/db/snapshots.js';
import { nastySparse } from '../helpers/sparse-model.js';
import { http, startQdrant } from './qdrant-harness.js';

const POINTS = 400;

async function seed(client: KithClient, rng: SeededRng): Promise<void> {
  await client.createCollection({
    name: 'docs',
    vector_size: 4,
    distance: 'cosine',
    hnsw: true,
    vector_name: 'dense',
    sparse_vectors: { words: { modifier: 'idf' } },
    named_vectors: { img: { size: 3, distance: 'euclid' }, col: { size: 2, distance: 'dot', multivector: true } },
  });
  const v = (n: number) => Array.from({ length: n }, () => Math.round((rng.next() * 2 - 1) * 1000) / 1000);
  for (let start = 0; start < POINTS; start += 100) {
    await client.upsert(
      'docs',
      Array.from({ length: 100 }, (_, k) => {
        const i = start + k;
        return {
          id: i % 3 === 0 ? `s${i}` : i,
          vector: v(4),
          payload: { i, tag: `t${i % 7}`, nested: { deep: [i, String(i)] } },
          ...(i % 5 === 4 ? {} : { sparse_vectors: { words: nastySparse(rng, 20) } }),
          ...(i % 4 === 3 ? {} : { named_vectors: { img: v(3), col: Array.from({ length: 1 + (i % 3) }, () => v(2)) } }),
        };
      }),
    );
  }
}

/** Everything a client can see of the collection: every point with vectors and versions, the info, and searches by each kind of vector. */
async function answers(client: KithClient, rng: SeededRng) {
  const points = [];
  for await (const page of client.scrollAll('docs', { limit: 128, with_vector: true, with_payload: true })) points.push(...page);
  const info = await client.getCollection('docs');
  const searches = [];
  for (let round = 0; round < 5; round++) {
    const dense = Array.from({ length: 4 }, () => rng.next() - 0.5);
    searches.push(await client.search('docs', { vector: dense, limit: 10, params: { exact: true } }));
    searches.push(await client.search('docs', { vector: dense, limit: 10 }));
    searches.push(await client.search('docs', { sparse_vector: { name: 'words', ...nastySparse(rng, 20) }, limit: 10 }));
    searches.push(await client.search('docs', { named_vector: { name: 'img', vector: [rng.next(), rng.next(), rng.next()] }, limit: 10 }));
    searches.push(await client.search('docs', { named_vector: { name: 'col', vector: [[rng.next(), rng.next()]] }, limit: 10 }));
  }
  const { points_count, name, vector_size, distance, sparse_vectors, named_vectors, vector_name } = info;
  return { points, info: { points_count, name, vector_size, distance, sparse_vectors, named_vectors, vector_name }, searches };
}

async function refused(promise: Promise<unknown>): Promise<KithClientError> {
  try {
    await promise;
  } catch (error) {
    return error as KithClientError;
  }
  assert.fail('expected the request to be refused');
}

test("kith's port: snapshot, change, recover by upload; drop, recover from the file; list, download, delete", async (t) => {
  const { kithUrl, db } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  await seed(client, new SeededRng(7));
  const before = await answers(client, new SeededRng(99));
  assert.equal(before.points.length, POINTS);
  assert.ok(before.searches.every((hits) => hits.length > 0));

  const snapshot = await client.createSnapshot('docs');
  assert.match(snapshot.name, /^docs-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-\d{3}\.snapshot$/);
  assert.match(snapshot.creation_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
  const file = await client.downloadSnapshot('docs', snapshot.name);
  assert.equal(file.length, snapshot.size);
  assert.equal(createHash('sha256').update(file).digest('hex'), snapshot.checksum);
  assert.deepEqual(await client.listSnapshots('docs'), [snapshot]);

  // Changed: points deleted, rewritten, added.
  await client.deletePoints('docs', [1, 2, 's3']);
  await client.upsert('docs', [
    { id: 4, vector: [1, 1, 1, 1], payload: { changed: true } },
    { id: 'new', vector: [0, 1, 0, 0] },
  ]);
  assert.notDeepEqual((await answers(client, new SeededRng(99))).points, before.points);

  const recovered = await client.uploadSnapshot('docs', file, { checksum: snapshot.checksum as string });
  assert.equal(recovered.points_count, POINTS);
  assert.deepEqual(await answers(client, new SeededRng(99)), before);

  // Dropped: recovered from the snapshot directory's file, by file:// URL and by absolute path.
  await client.dropCollection('docs');
  const dir = join(`${db.path}.snapshots`, 'docs');
  await client.recoverSnapshot('docs', pathToFileURL(join(dir, snapshot.name)).href, { checksum: snapshot.checksum as string });
  assert.deepEqual(await answers(client, new SeededRng(99)), before);
  await client.upsert('docs', [{ id: 'later', vector: [0, 0, 1, 0] }]);
  await client.recoverSnapshot('docs', join(dir, snapshot.name));
  assert.deepEqual(await answers(client, new SeededRng(99)), before);
  // Under another name: a new collection.
  await client.recoverSnapshot('copy', join(dir, snapshot.name));
  assert.equal((await client.getCollection('copy')).points_count, POINTS);

  // A second snapshot lists after the first; delete one, then the other.
  const second = await client.createSnapshot('docs');
  assert.notEqual(second.name, snapshot.name);
  assert.equal(second.checksum, snapshot.checksum, 'the same commit exports the same bytes');
  assert.deepEqual(
    (await client.listSnapshots('docs')).map((s) => s.name),
    [snapshot.name, second.name],
  );
  assert.deepEqual(await client.deleteSnapshot('docs', snapshot.name), { snapshot: snapshot.name, operation: 'completed' });
  assert.deepEqual(
    (await client.listSnapshots('docs')).map((s) => s.name),
    [second.name],
  );
  assert.equal((await refused(client.deleteSnapshot('docs', snapshot.name))).code, 'ERR_SNAPSHOT_NOT_FOUND');
  assert.equal((await refused(client.downloadSnapshot('docs', snapshot.name))).code, 'ERR_SNAPSHOT_NOT_FOUND');
  await client.deleteSnapshot('docs', second.name);
  assert.deepEqual(await client.listSnapshots('docs'), []);
  assert.deepEqual((await readdir(dir)).sort(), [], 'no checksum file left behind');
  assert.equal((await refused(client.listSnapshots('missing'))).code, 'ERR_COLLECTION_NOT_FOUND');
  assert.equal((await refused(client.createSnapshot('missing'))).code, 'ERR_COLLECTION_NOT_FOUND');
});

test("kith's port: a damaged upload, a wrong checksum, escaping names and remote locations change nothing", async (t) => {
  const { kithUrl, db } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  await seed(client, new SeededRng(8));
  const snapshot = await client.createSnapshot('docs');
  const file = await client.downloadSnapshot('docs', snapshot.name);
  await client.deletePoints('docs', [1]);
  const changed = await answers(client, new SeededRng(5));

  const rng = new SeededRng(11);
  const damaged: [string, Uint8Array][] = [
    ['empty', new Uint8Array(0)],
    ['cut to its header', file.subarray(0, 40)],
    ['cut in the middle', file.subarray(0, Math.floor(file.length / 2))],
    ['cut before its end frame', file.subarray(0, file.length - 5)],
    ['bytes after its end', Buffer.concat([file, Buffer.from([0])])],
  ];
  for (let k = 0; k < 4; k++) {
    const flipped = Buffer.from(file);
    const at = Math.floor(rng.next() * flipped.length);
    flipped[at] = (flipped[at] as number) ^ (1 << Math.floor(rng.next() * 8));
    damaged.push([`bit flipped at ${at}`, flipped]);
  }
  for (const [what, bytes] of damaged) {
    const error = await refused(client.uploadSnapshot('docs', bytes));
    assert.equal(error.status, 400, `${what}: ${error.message}`);
    assert.equal(error.code, 'ERR_BAD_INPUT', what);
  }
  const wrong = await refused(client.uploadSnapshot('docs', file, { checksum: '3'.repeat(64) }));
  assert.equal(wrong.status, 400);
  assert.match(wrong.message, /checksum mismatch/);
  assert.equal((await refused(client.uploadSnapshot('docs', file, { checksum: 'abc' }))).status, 400);
  // Nothing changed, and no upload left in the snapshot directory.
  assert.deepEqual(await answers(client, new SeededRng(5)), changed);
  assert.deepEqual(
    (await readdir(`${db.path}.snapshots`)).filter((n) => n !== 'docs'),
    [],
  );

  // Names that are no snapshot's: never a file outside the collection's snapshot directory.
  for (const name of ['..%2F..%2F..%2Fetc%2Fpasswd', '%2Fetc%2Fpasswd', '...', '.hidden.snapshot', 'docs.snapshot%00', 'x.txt']) {
    const answer = await http(kithUrl, 'GET', `/collections/docs/snapshots/${name}`);
    assert.equal(answer.status, 404, `${name}: ${answer.text}`);
    assert.equal(answer.body.status.code, 'ERR_SNAPSHOT_NOT_FOUND', name);
    assert.equal((await http(kithUrl, 'DELETE', `/collections/docs/snapshots/${name}`)).status, 404, name);
  }
  const traversal = await http(kithUrl, 'GET', '/collections/docs/snapshots/../../../etc/passwd');
  assert.equal(traversal.status, 404);

  // Locations: no downloads; nothing outside the snapshot directory; what does not exist.
  const remote = await refused(client.recoverSnapshot('docs', 'https://example.com/docs.snapshot'));
  assert.equal(remote.status, 400);
  assert.match(remote.message, /no outbound downloads/);
  const outside = join(db.path.slice(0, db.path.lastIndexOf('/')), 'outside.snapshot');
  await writeFile(outside, file);
  const forbidden = await refused(client.recoverSnapshot('docs', pathToFileURL(outside).href));
  assert.equal(forbidden.status, 400);
  assert.match(forbidden.message, /inside the snapshot directory/);
  const climbed = await refused(client.recoverSnapshot('docs', join(`${db.path}.snapshots`, 'docs', '..', '..', 'outside.snapshot')));
  assert.match(climbed.message, /inside the snapshot directory/);
  assert.match((await refused(client.recoverSnapshot('docs', '/nonexistent/x.snapshot'))).message, /does not exist/);
  assert.match((await refused(client.recoverSnapshot('docs', 'file://host/x.snapshot'))).message, /absolute or on localhost/);
  assert.deepEqual(await answers(client, new SeededRng(5)), changed);
});

test('a leftover temporary of a crashed snapshot or upload is never listed, and the sweep removes it', async (t) => {
  const { kithUrl, db } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  await client.createCollection({ name: 'c', vector_size: 2, distance: 'cosine', hnsw: false });
  await client.upsert('c', [{ id: 1, vector: [1, 0] }]);
  const made = await client.createSnapshot('c');
  const root = `${db.path}.snapshots`;
  const dir = join(root, 'c');
  // As a crash mid-write leaves them: the export half-written under its hidden name, an upload half-received.
  const whole = await readFile(join(dir, made.name));
  await writeFile(join(dir, `.c-2030-01-01-00-00-00-000.snapshot.3f1e.partial`), whole.subarray(0, 10));
  await writeFile(join(dir, `.c-2030-01-01-00-00-00-000.snapshot.3f1e.partial.checksum`), 'x');
  await writeFile(join(root, '.upload-1234.partial'), 'partial');
  assert.deepEqual(
    (await client.listSnapshots('c')).map((s) => s.name),
    [made.name],
  );
  const files = defaultSnapshotFiles(db.path);
  assert.equal(await files.sweep(), 3);
  assert.deepEqual((await readdir(dir)).sort(), [made.name, `${made.name}.checksum`]);
  assert.deepEqual(await readdir(root), ['c']);
  assert.deepEqual(
    (await client.listSnapshots('c')).map((s) => s.name),
    [made.name],
  );
});
