/**
 * Qdrant's collection snapshot API on the Qdrant port, through the official client where it has
 * the call (create, list, delete, recover from a file:// location) and multipart/form-data
 * uploads as Qdrant's other clients send them: the recovered collection answers as before (its
 * Qdrant options and payload schema too); a damaged upload or a wrong checksum is a 400 that
 * changes nothing; Qdrant's 404 for escaping names and 403 for a file outside the snapshot
 * directory.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { SeededRng } from '../../src/core/rng.js';
import { http, startQdrant } from './qdrant-harness.js';

async function upload(url: string, collection: string, bytes: Uint8Array, query = ''): Promise<{ status: number; text: string }> {
  const form = new FormData();
  form.append('note', 'a field before the file');
  form.append('snapshot', new Blob([bytes]), 'upload.snapshot');
  const response = await fetch(`${url}/collections/${collection}/snapshots/upload${query}`, { method: 'POST', body: form });
  return { status: response.status, text: await response.text() };
}

test('Qdrant port: snapshots through the official client, recovered by location and by multipart upload', async (t) => {
  const { client, url, db, warnings } = await startQdrant(t);
  await client.createCollection('q', {
    vectors: { dense: { size: 3, distance: 'Dot' } },
    sparse_vectors: { text: {} },
    hnsw_config: { m: 8 },
  });
  await client.createPayloadIndex('q', { field_name: 'tag', field_schema: 'keyword' });
  const rng = new SeededRng(3);
  await client.upsert('q', {
    points: Array.from({ length: 200 }, (_, i) => ({
      id: i,
      vector: {
        dense: [rng.next(), rng.next(), rng.next()],
        ...(i % 3 === 0 ? {} : { text: { indices: [i % 11, 20 + (i % 5)], values: [rng.next(), rng.next()] } }),
      },
      payload: { tag: `t${i % 4}`, i },
    })),
  });
  const look = async () => ({
    info: await client.getCollection('q').then((c) => ({ points: c.points_count, config: c.config, schema: c.payload_schema })),
    page: await client.scroll('q', { limit: 250, with_vector: true, with_payload: true }),
    dense: await client.query('q', { query: [0.3, -0.2, 0.9], using: 'dense', limit: 7, filter: { must: [{ key: 'tag', match: { value: 't1' } }] } }),
    sparse: await client.query('q', { query: { indices: [3, 21], values: [1, 0.5] }, using: 'text', limit: 7 }),
  });
  const before = await look();

  const made = await client.createSnapshot('q', { wait: true });
  assert.ok(made !== null);
  assert.match(made.name, /^q-.*\.snapshot$/);
  assert.deepEqual(await client.listSnapshots('q'), [made]);
  const download = await fetch(`${url}/collections/q/snapshots/${made.name}`);
  assert.equal(download.headers.get('content-type'), 'application/octet-stream');
  const bytes = new Uint8Array(await download.arrayBuffer());
  assert.equal(createHash('sha256').update(bytes).digest('hex'), made.checksum);

  await client.delete('q', { points: [0, 1, 2] });
  await client.deleteCollection('q');
  const location = pathToFileURL(join(`${db.path}.snapshots`, 'q', made.name)).href;
  const wrong = await http(url, 'PUT', '/collections/q/snapshots/recover', { location, checksum: '3'.repeat(64), wait: 'true' });
  assert.equal(wrong.status, 400, wrong.text);
  assert.equal((await http(url, 'GET', '/collections/q/exists')).body.result.exists, false, 'a wrong checksum recovers nothing');
  assert.equal(await client.recoverSnapshot('q', { location, checksum: made.checksum as string, priority: 'snapshot' }), true);
  assert.deepEqual(await look(), before);

  // Changed, then recovered in place from a multipart upload.
  await client.delete('q', { points: [5, 6] });
  await client.upsert('q', { points: [{ id: 7, vector: { dense: [1, 1, 1] }, payload: { tag: 'x' } }] });
  const uploaded = await upload(url, 'q', bytes, `?priority=replica&wait=true&checksum=${made.checksum}`);
  assert.equal(uploaded.status, 200, uploaded.text);
  assert.equal(JSON.parse(uploaded.text).result, true);
  assert.deepEqual(await look(), before);
  // Into a new name.
  assert.equal((await upload(url, 'q2', bytes)).status, 200);
  assert.equal((await client.count('q2')).count, 200);

  // Damaged uploads: nothing changes.
  await client.delete('q', { points: [9] });
  const changed = await look();
  const flipped = Buffer.from(bytes);
  const at = Math.floor(flipped.length * 0.6);
  flipped[at] = (flipped[at] as number) ^ 0x10;
  for (const damaged of [bytes.subarray(0, bytes.length - 1), bytes.subarray(0, 100), flipped]) {
    const answer = await upload(url, 'q', damaged);
    assert.equal(answer.status, 400, answer.text);
    assert.match(JSON.parse(answer.text).status.error, /^Bad request: /);
  }
  assert.equal((await upload(url, 'q', bytes, `?checksum=${'0'.repeat(64)}`)).status, 400);
  assert.equal((await upload(url, 'q', bytes, '?priority=sometimes')).status, 400);
  // A multipart body cut short, or without the field.
  const cut = await fetch(`${url}/collections/q/snapshots/upload`, {
    method: 'POST',
    headers: { 'content-type': 'multipart/form-data; boundary=XyZ' },
    body: `--XyZ\r\ncontent-disposition: form-data; name="snapshot"\r\n\r\n${'a'.repeat(50)}`,
  });
  assert.equal(cut.status, 400, await cut.text());
  const none = await fetch(`${url}/collections/q/snapshots/upload`, {
    method: 'POST',
    headers: { 'content-type': 'multipart/form-data; boundary=XyZ' },
    body: '--XyZ\r\ncontent-disposition: form-data; name="other"\r\n\r\nabc\r\n--XyZ--\r\n',
  });
  assert.match(JSON.parse(await none.text()).status.error, /no "snapshot" field/);
  assert.deepEqual(await look(), changed);

  // Qdrant's refusals.
  for (const name of ['..%2F..%2F..%2Fetc%2Fpasswd', '%2Fetc%2Fpasswd', 'nope.snapshot']) {
    const answer = await http(url, 'GET', `/collections/q/snapshots/${name}`);
    assert.equal(answer.status, 404, answer.text);
    assert.match(answer.body.status.error, /^Not found: /);
  }
  assert.equal((await http(url, 'DELETE', `/collections/q/snapshots/nope.snapshot`)).status, 404);
  const outside = join(dirname(db.path), 'elsewhere.snapshot');
  await writeFile(outside, bytes);
  const forbidden = await http(url, 'PUT', '/collections/q/snapshots/recover', { location: pathToFileURL(outside).href });
  assert.equal(forbidden.status, 403, forbidden.text);
  assert.match(forbidden.body.status.error, /^Forbidden: .*inside the snapshot directory/);
  const remote = await http(url, 'PUT', '/collections/q/snapshots/recover', { location: 'http://localhost:6333/collections/q/snapshots/x' });
  assert.equal(remote.status, 400);
  assert.match(remote.body.status.error, /no outbound downloads/);
  assert.equal((await http(url, 'PUT', '/collections/q/snapshots/recover', { location: 'file://whatever.snapshot' })).status, 400);
  assert.equal((await http(url, 'GET', '/collections/missing/snapshots')).status, 404);
  assert.deepEqual(await look(), changed);

  assert.equal(await client.deleteSnapshot('q', made.name), true);
  assert.deepEqual(await client.listSnapshots('q'), []);
  assert.deepEqual(warnings, []);
});
