/**
 * The Qdrant port of a cluster of three kith processes, through Qdrant's official client, against
 * the Qdrant port of one single-node process fed the same requests: create with shard_number and
 * replication_factor, upserts (points and batch), payload changes, deletes, exact searches,
 * queries (a vector, a point id, a recommendation, none with an offset), scroll, count, retrieve,
 * declared payload fields; then Qdrant's cluster routes (peers, the collection's shards, a shard
 * moved by peer id) and read consistency.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { QdrantClient } from '@qdrant/js-client-rest';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { KithCluster } from '../helpers/kith-cluster.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { httpJson, qdrantUrlOf, type ServerProcess, startServer } from '../helpers/server-process.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are compared field by field
type Json = any;

const DIM = 4;

/** Hits and records without their versions, which differ by design (log positions on a cluster). */
function unversioned<T extends { version?: unknown }>(list: readonly T[]): Omit<T, 'version'>[] {
  return list.map(({ version: _version, ...rest }) => rest);
}

describe("a cluster's Qdrant port", { timeout: 300_000 }, () => {
  const nats = natsClusterPerSuite('kith-serve-qdrant-');
  let cluster: KithCluster;
  let single: ServerProcess;
  let clients: QdrantClient[];
  let one: QdrantClient;
  before(async () => {
    cluster = await KithCluster.start(nats.cluster, nats.dir, 3, ['-threads', '0'], { qdrant: true });
    single = await startServer(join(nats.dir, 'single.db'), ['-threads', '0', '-qdrant-port', '0']);
    clients = cluster.nodes.map((n) => new QdrantClient({ url: n.qdrantUrl as string, checkCompatibility: false }));
    one = new QdrantClient({ url: await qdrantUrlOf(single), checkCompatibility: false });
  });
  after(async () => {
    await cluster?.stop();
    await single?.stop();
  });

  test('answers as one node does, through any node', async (t) => {
    const seed = testSeed(2103);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const any = (): QdrantClient => clients[rng.nextUint32() % clients.length] as QdrantClient;
    const vector = (): number[] => Array.from({ length: DIM }, () => rng.nextUint32() % 5);
    await any().createCollection('q', { vectors: { size: DIM, distance: 'Dot' }, shard_number: 3, replication_factor: 2 });
    await one.createCollection('q', { vectors: { size: DIM, distance: 'Dot' } });
    const info = await any().getCollection('q');
    assert.equal(info.config.params.shard_number, 3);
    assert.equal(info.config.params.replication_factor, 2);

    const both = async <T>(run: (c: QdrantClient) => Promise<T>): Promise<[T, T]> => [await run(any()), await run(one)];
    const ids = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? `00000000-0000-0000-0000-${String(i).padStart(12, '0')}` : i * 7));
    const points = ids.map((id, i) => ({ id, vector: vector(), payload: { g: i % 3, s: i % 2 === 0 ? 'even' : 'odd', n: i } }));
    await both((c) => c.upsert('q', { wait: true, points: points.slice(0, 30) }));
    await both((c) =>
      c.upsert('q', {
        wait: true,
        batch: { ids: ids.slice(30), vectors: points.slice(30).map((p) => p.vector), payloads: points.slice(30).map((p) => p.payload) },
      }),
    );
    await both((c) => c.setPayload('q', { wait: true, payload: { tag: 'x' }, filter: { must: [{ key: 'g', match: { value: 1 } }] } }));
    await both((c) => c.delete('q', { wait: true, points: [ids[3] as number | string, ids[4] as number | string] }));
    await both((c) => c.delete('q', { wait: true, filter: { must: [{ key: 'n', range: { gte: 36 } }] } }));
    await both((c) => c.createPayloadIndex('q', { field_name: 's', field_schema: 'keyword', wait: true }));

    const strong = { consistency: 'majority' as const };
    for (let round = 0; round < 3; round++) {
      const [query, second, third] = [vector(), vector(), vector()];
      const filter = { must: [{ key: 's', match: { value: 'even' } }] };
      const pairs: [string, (c: QdrantClient) => Promise<unknown>][] = [
        ['search', (c) => c.search('q', { vector: query, limit: 6, params: { exact: true }, with_payload: true, ...strong })],
        ['search filtered', (c) => c.search('q', { vector: query, limit: 10, offset: 2, filter, params: { exact: true }, with_vector: true, ...strong })],
        ['query vector', (c) => c.query('q', { query, limit: 5, params: { exact: true }, with_payload: true, ...strong }).then((r) => r.points)],
        ['query by id', (c) => c.query('q', { query: ids[7] as number, limit: 5, params: { exact: true }, ...strong }).then((r) => r.points)],
        [
          'recommend',
          (c) =>
            c
              .query('q', {
                query: { recommend: { positive: [ids[8] as number, [1, 0, 2, 1]], negative: [ids[10] as number] } },
                limit: 5,
                params: { exact: true },
                ...strong,
              })
              .then((r) => r.points),
        ],
        ['query without a vector', (c) => c.query('q', { limit: 7, offset: 5, with_payload: true, ...strong }).then((r) => r.points)],
        [
          'prefetches fused, and re-scored',
          (c) =>
            c
              .query('q', {
                prefetch: [
                  { query, limit: 8, params: { exact: true } },
                  { query: second, limit: 8, filter, params: { exact: true } },
                  { prefetch: { limit: 20 }, query: third, limit: 6 },
                ],
                query: { fusion: round === 1 ? 'dbsf' : 'rrf' },
                limit: 10,
                with_payload: true,
                ...strong,
              })
              .then((r) => r.points),
        ],
        ['scroll', (c) => c.scroll('q', { limit: 100, with_payload: true, with_vector: true, ...strong }).then((r) => r.points)],
        ['retrieve', (c) => c.retrieve('q', { ids: [ids[1] as number, ids[0] as string, 999_999], with_vector: true, ...strong })],
      ];
      for (const [label, run] of pairs) {
        const [got, want] = await both(run);
        assert.deepEqual(unversioned(got as Json[]), unversioned(want as Json[]), `${label}, round ${round} (seed ${seed})`);
      }
      const [count, countOne] = await both((c) => c.count('q', { filter, exact: true }));
      assert.equal(count.count, countOne.count);
    }
    const [clustered, alone] = await both((c) => c.getCollection('q'));
    assert.equal(clustered.points_count, alone.points_count);
    assert.deepEqual(clustered.payload_schema, alone.payload_schema);
    const missing = await httpJson(cluster.nodes[0]?.qdrantUrl as string, 'POST', '/collections/q/points/query', { query: 123_456_789 });
    assert.equal(missing.status, 404, missing.raw);
  });

  test("Qdrant's cluster routes: the peers, the collection's shards, a shard moved by peer id", async () => {
    const client = clients[0] as QdrantClient;
    await client.createCollection('m', { vectors: { size: 2, distance: 'Cosine' }, shard_number: 2, replication_factor: 1 });
    await client.upsert('m', { wait: true, points: Array.from({ length: 20 }, (_, i) => ({ id: i + 1, vector: [1, i], payload: { i } })) });
    const state = (await httpJson(cluster.nodes[0]?.qdrantUrl as string, 'GET', '/cluster')).body.result;
    assert.equal(state.status, 'enabled');
    assert.equal(Object.keys(state.peers).length, 3);
    const shards = await Promise.all(cluster.nodes.map(async (n) => (await httpJson(n.qdrantUrl as string, 'GET', '/collections/m/cluster')).body.result));
    const holder = shards.find((s: Json) => s.local_shards.some((l: Json) => l.shard_id === 0));
    assert.ok(holder !== undefined, 'a node holds shard 0');
    assert.equal(holder.local_shards.find((l: Json) => l.shard_id === 0).state, 'Active');
    const target = Object.keys(state.peers)
      .map(Number)
      .find((peer) => peer !== holder.peer_id && !shards.find((s: Json) => s.peer_id === peer)?.local_shards.some((l: Json) => l.shard_id === 0));
    const moved = await httpJson(cluster.nodes[1]?.qdrantUrl as string, 'POST', '/collections/m/cluster', {
      move_shard: { shard_id: 0, from_peer_id: holder.peer_id, to_peer_id: target },
    });
    assert.equal(moved.status, 200, moved.raw);
    const after = (await httpJson(cluster.nodes[2]?.qdrantUrl as string, 'GET', '/collections/m/cluster')).body.result;
    const where = [...after.local_shards.map((l: Json) => ({ ...l, peer_id: after.peer_id })), ...after.remote_shards].filter((s: Json) => s.shard_id === 0);
    assert.deepEqual(
      where.map((s: Json) => s.peer_id),
      [target],
    );
    const count = await client.count('m', { exact: true });
    assert.equal(count.count, 20);
    const bad = await httpJson(cluster.nodes[0]?.qdrantUrl as string, 'POST', '/collections/m/points/count?consistency=some', {});
    assert.equal(bad.status, 400, bad.raw);
  });
});
