/**
 * Aliases on both ports: Qdrant's own test_alias.py cases through the official client and raw
 * HTTP, a blue/green re-index switched by one alias change while searches run through the alias,
 * and kith's port (its shapes, its errors naming the field) through kith's client.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient, KithClientError } from '../../src/api/client/kith-client.js';
import { http, startQdrant } from './qdrant-harness.js';

const POINTS = [
  { id: 1, vector: [0.05, 0.61, 0.76, 0.74], payload: { city: 'Berlin' } },
  { id: 2, vector: [0.19, 0.81, 0.75, 0.11], payload: { city: 'London' } },
  { id: 3, vector: [0.36, 0.55, 0.47, 0.94], payload: { city: 'Moscow' } },
  { id: 4, vector: [0.18, 0.01, 0.85, 0.8], payload: { city: 'New York' } },
];

test("Qdrant's alias cases: 409 over a collection, 400 for a collection over an alias, list, search through it, 404 once deleted", async (t) => {
  const { client, url } = await startQdrant(t);
  for (const name of ['test_alias', 'test_alias_2']) {
    await client.createCollection(name, { vectors: { size: 4, distance: 'Dot' } });
    await client.upsert(name, { wait: true, points: POINTS });
  }
  const change = (actions: unknown[]) => http(url, 'POST', '/collections/aliases', { actions });
  // An alias cannot take a collection's name.
  const clash = await change([{ create_alias: { alias_name: 'test_alias_2', collection_name: 'test_alias' } }]);
  assert.equal(clash.status, 409, clash.text);
  // A collection cannot take an alias's name.
  assert.equal((await change([{ create_alias: { alias_name: 'test_alias_3', collection_name: 'test_alias' } }])).status, 200);
  const over = await http(url, 'PUT', '/collections/test_alias_3', { vectors: { size: 4, distance: 'Dot' } });
  assert.equal(over.status, 400, over.text);
  assert.match(over.body.status.error, /alias/);
  assert.deepEqual((await client.getAliases()).aliases, [{ alias_name: 'test_alias_3', collection_name: 'test_alias' }]);
  assert.equal((await change([{ delete_alias: { alias_name: 'test_alias_3' } }])).status, 200);

  // The client's own calls.
  assert.equal(await client.updateCollectionAliases({ actions: [{ create_alias: { alias_name: 'alias', collection_name: 'test_alias' } }] }), true);
  assert.deepEqual((await client.getAliases()).aliases, [{ alias_name: 'alias', collection_name: 'test_alias' }]);
  assert.deepEqual((await client.getCollectionAliases('test_alias')).aliases, [{ alias_name: 'alias', collection_name: 'test_alias' }]);
  assert.deepEqual((await client.getCollectionAliases('test_alias_2')).aliases, []);
  const direct = await client.search('test_alias', { vector: [0.2, 0.1, 0.9, 0.7], limit: 3 });
  const through = await client.search('alias', { vector: [0.2, 0.1, 0.9, 0.7], limit: 3 });
  assert.equal(through.length, 3);
  assert.deepEqual(through, direct);
  assert.equal((await client.getCollection('alias')).points_count, 4);
  assert.equal((await client.collectionExists('alias')).exists, true);
  // A drop by the alias drops nothing (Qdrant answers false).
  const dropAlias = await http(url, 'DELETE', '/collections/alias');
  assert.deepEqual([dropAlias.status, dropAlias.body.result], [200, false]);
  assert.equal((await client.getCollection('test_alias')).points_count, 4);
  // Renamed, then deleted: the old name and then the new one search nothing.
  assert.equal(await client.updateCollectionAliases({ actions: [{ rename_alias: { old_alias_name: 'alias', new_alias_name: 'renamed' } }] }), true);
  assert.equal((await http(url, 'POST', '/collections/alias/points/search', { vector: [0.2, 0.1, 0.9, 0.7], limit: 3 })).status, 404);
  assert.equal((await client.search('renamed', { vector: [0.2, 0.1, 0.9, 0.7], limit: 3 })).length, 3);
  assert.equal(await client.updateCollectionAliases({ actions: [{ delete_alias: { alias_name: 'renamed' } }] }), true);
  assert.deepEqual((await client.getAliases()).aliases, []);
  const gone = await http(url, 'POST', '/collections/renamed/points/search', { vector: [0.2, 0.1, 0.9, 0.7], limit: 3 });
  assert.equal(gone.status, 404);
  // Renaming a missing alias is a 404 naming it; a wrong shape is a 400 naming Qdrant's path.
  const missing = await change([{ rename_alias: { old_alias_name: 'nope', new_alias_name: 'x' } }]);
  assert.equal(missing.status, 404, missing.text);
  assert.match(missing.body.status.error, /actions\[0\]\.rename_alias\.old_alias_name: alias "nope" does not exist/);
  const shape = await change([{ create_alias: { alias_name: 7, collection_name: 'test_alias' } }]);
  assert.equal(shape.status, 400, shape.text);
  assert.match(shape.body.status.error, /actions\[0\]\.create_alias\.alias_name/);
  // Dropping the collection takes its aliases with it.
  await change([{ create_alias: { alias_name: 'doomed', collection_name: 'test_alias_2' } }]);
  assert.equal(await client.deleteCollection('test_alias_2'), true);
  assert.deepEqual((await client.getAliases()).aliases, []);
});

test('blue/green: searches through the alias never fail while it switches to a rebuilt collection in one change', async (t) => {
  const { client, url } = await startQdrant(t);
  const build = async (name: string, color: string) => {
    await client.createCollection(name, { vectors: { size: 4, distance: 'Cosine' } });
    await client.upsert(name, { wait: true, points: POINTS.map((p) => ({ ...p, payload: { ...p.payload, color } })) });
  };
  await build('docs_v1', 'blue');
  await client.updateCollectionAliases({ actions: [{ create_alias: { alias_name: 'docs', collection_name: 'docs_v1' } }] });
  let searching = true;
  const seen: string[] = [];
  const searches = (async () => {
    while (searching) {
      const r = await http(url, 'POST', '/collections/docs/points/search', { vector: [0.2, 0.1, 0.9, 0.7], limit: 4, with_payload: true });
      assert.equal(r.status, 200, r.text);
      const colors = new Set(r.body.result.map((hit: { payload: { color: string } }) => hit.payload.color));
      assert.equal(colors.size, 1, 'every answer comes from one collection');
      seen.push([...colors][0] as string);
    }
  })();
  await build('docs_v2', 'green');
  const switched = await http(url, 'POST', '/collections/aliases', {
    actions: [{ delete_alias: { alias_name: 'docs' } }, { create_alias: { alias_name: 'docs', collection_name: 'docs_v2' } }],
  });
  assert.equal(switched.status, 200, switched.text);
  const after = seen.length;
  while (seen.length < after + 5) await new Promise((resolve) => setTimeout(resolve, 5));
  await client.deleteCollection('docs_v1');
  searching = false;
  await searches;
  assert.equal(seen[0], 'blue');
  assert.deepEqual(seen.slice(after), Array(seen.length - after).fill('green'), 'after the change, every search reads the new collection');
  assert.deepEqual((await client.getAliases()).aliases, [{ alias_name: 'docs', collection_name: 'docs_v2' }]);
});

test("kith's port: GET/POST /aliases and GET /collections/{name}/aliases in kith's shapes, all or nothing, errors naming the field", async (t) => {
  const { kithUrl } = await startQdrant(t);
  const kith = new KithClient(kithUrl);
  await kith.createCollection({ name: 'blue', vector_size: 4, distance: 'cosine' });
  await kith.createCollection({ name: 'green', vector_size: 4, distance: 'cosine' });
  await kith.upsert('green', [{ id: 'g', vector: [1, 0, 0, 0], payload: { color: 'green' } }]);
  const changed = await kith.changeAliases([{ create: { alias: 'live', collection: 'blue' } }, { create: { alias: 'staged', collection: 'green' } }]);
  assert.deepEqual(changed, {
    operation: 'completed',
    aliases: [
      { alias: 'live', collection: 'blue' },
      { alias: 'staged', collection: 'green' },
    ],
  });
  assert.deepEqual(await kith.collectionAliases('green'), [{ alias: 'staged', collection: 'green' }]);
  // One change: the second action fails, so the first is not applied either.
  await assert.rejects(kith.changeAliases([{ delete: { alias: 'live' } }, { rename: { from: 'nope', to: 'x' } }]), (error: unknown) => {
    assert.ok(error instanceof KithClientError);
    assert.equal(error.code, 'ERR_ALIAS_NOT_FOUND');
    assert.equal(error.status, 404);
    return true;
  });
  assert.deepEqual(
    (await kith.listAliases()).map((a) => a.alias),
    ['live', 'staged'],
  );
  await kith.changeAliases([{ rename: { from: 'staged', to: 'live' } }]);
  assert.deepEqual(await kith.listAliases(), [{ alias: 'live', collection: 'green' }]);
  assert.deepEqual(
    (await kith.search('live', { vector: [1, 0, 0, 0], limit: 1, with_payload: true })).map((h) => h.payload),
    [{ color: 'green' }],
  );
  assert.equal((await kith.getCollection('live')).name, 'green');
  const wrong = await http(kithUrl, 'POST', '/aliases', { actions: [{ create: { alias: 'x', collection: 'blue', extra: 1 } }] });
  assert.equal(wrong.status, 400, wrong.text);
  assert.equal(wrong.body.status.code, 'ERR_BAD_INPUT');
  const clash = await http(kithUrl, 'POST', '/aliases', { actions: [{ create: { alias: 'blue', collection: 'green' } }] });
  assert.equal(clash.status, 409, clash.text);
  assert.match(clash.body.status.error, /actions\[0\]\.create\.alias/);
  const drop = await http(kithUrl, 'DELETE', '/collections/live');
  assert.equal(drop.status, 404, drop.text);
  assert.match(drop.body.status.error, /is an alias of "green"/);
  assert.equal((await http(kithUrl, 'GET', '/collections/nope/aliases')).status, 404);
});
