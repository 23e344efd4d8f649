/**
 * Faults of a cluster of three kith processes over three NATS servers: a node killed -9 during
 * writes and searches (no acknowledged write lost; searches keep their full answer from the
 * other replicas; the node catches up after its restart with records identical to its peers',
 * versions included), and the starts a node refuses.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { KithCluster, replicaRecords, replicaSeeds as seeds } from '../helpers/kith-cluster.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { httpJson, httpOk as ok, startServer } from '../helpers/server-process.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are compared field by field
type Json = any;

/**
 * Each replica of `collection` on node `index` holds exactly what another holder of its shard
 * holds, versions included, once both have applied their log's end.
 */
async function assertReplicasMatchPeers(cluster: KithCluster, index: number, collection: string): Promise<void> {
  const self = cluster.nodes[index] as { id: string; url: string };
  const state = await ok(self.url, 'GET', '/cluster');
  const info = await ok(self.url, 'GET', `/collections/${collection}`);
  const held = (state.result.replicas as Json[]).filter((r) => r.collection === collection);
  assert.ok(held.length > 0, `${self.id} holds replicas of ${collection}`);
  for (const replica of held) {
    assert.equal(replica.state, 'serving');
    const peerId = (info.result.cluster.placement[replica.shard] as string[]).find((id) => id !== self.id);
    const peer = cluster.nodes.find((n) => n.id === peerId) as { url: string };
    for (const url of [self.url, peer.url]) await ok(url, 'POST', `/cluster/local/replicas/${replica.local}/applied`, { position: replica.last });
    const mine = await replicaRecords(self.url, replica.local);
    assert.ok(mine.length > 0, `shard ${replica.shard} holds points`);
    assert.deepEqual(mine, await replicaRecords(peer.url, replica.local), `shard ${replica.shard} of ${collection} on ${self.id} and ${peerId}`);
  }
}

describe('faults of a three-node kith cluster', { timeout: 300_000 }, () => {
  const nats = natsClusterPerSuite('kith-serve-faults-');
  let cluster: KithCluster;
  before(async () => {
    cluster = await KithCluster.start(nats.cluster, nats.dir, 3);
  });
  after(async () => {
    await cluster?.stop();
  });

  test('kill -9 of a node during writes and searches: nothing acknowledged lost, full answers, identical after catch-up', async (t) => {
    const seed = testSeed(2102);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const first = cluster.nodes[0]?.url as string;
    await ok(first, 'POST', '/collections', { name: 'f', vector_size: 4, distance: 'euclid', shard_number: 3, replication_factor: 2 });
    const vector = () => Array.from({ length: 4 }, () => rng.nextUint32() % 7);
    // Points written before the kill: every search during the fault must find all of them.
    const before = Array.from({ length: 60 }, (_, i) => ({ id: `b${i}`, vector: vector(), payload: { phase: 'before', i } }));
    for (let i = 0; i < before.length; i += 20)
      await ok(cluster.nodes[i % 3]?.url as string, 'PUT', '/collections/f/points', { points: before.slice(i, i + 20) });

    const acknowledged = new Set<string>(before.map((p) => p.id));
    let writing = true;
    let writeErrors = 0;
    const writer = async (w: number): Promise<void> => {
      for (let n = 0; writing; n++) {
        const alive = cluster.urls;
        const through = alive[(n + w) % alive.length] as string;
        const points = Array.from({ length: 3 }, (_, k) => ({ id: `w${w}-${n}-${k}`, vector: vector(), payload: { phase: 'during' } }));
        try {
          const answer = await httpJson(through, 'PUT', '/collections/f/points', { points });
          if (answer.status === 200) for (const p of points) acknowledged.add(p.id);
          else writeErrors++;
        } catch {
          // The node died under the request: not acknowledged, so not counted. A pause, so that a
          // run of refused connections (every node gone, the suite failing) cannot starve the event loop.
          writeErrors++;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    };
    let searching = true;
    let searches = 0;
    const short: string[] = [];
    const searcher = async (): Promise<void> => {
      while (searching) {
        const alive = cluster.urls;
        const through = alive[searches % alive.length] as string;
        try {
          const answer = await httpJson(through, 'POST', '/collections/f/points/search', {
            vector: [0, 0, 0, 0],
            limit: 100,
            filter: { must: [{ key: 'phase', match: { value: 'before' } }] },
            params: { exact: true },
          });
          searches++;
          if (answer.status !== 200 || answer.body.result.length !== before.length)
            short.push(`${through}: ${answer.status} ${answer.body?.result?.length ?? answer.raw.slice(0, 200)}`);
        } catch {
          // The request went to the node being killed.
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    };
    const running = [writer(0), writer(1), searcher()];
    let killedAt = 0;
    let whileDown = 0;
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await cluster.kill(1);
      killedAt = acknowledged.size;
      await new Promise((resolve) => setTimeout(resolve, 4000));
      whileDown = acknowledged.size - killedAt;
      await cluster.startNode(1);
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      // Whatever failed above, the loops stop: left running they would keep the file's process alive.
      writing = false;
      searching = false;
      await Promise.all(running);
    }
    t.diagnostic(`${acknowledged.size} points acknowledged (${whileDown} while n2 was down), ${writeErrors} writes refused or cut, ${searches} searches`);
    assert.ok(whileDown > 0, 'writes went on while a node was down');
    assert.deepEqual(short, [], 'every search during the fault found every point written before it');

    // Nothing acknowledged is lost, through every node.
    for (const url of cluster.urls) {
      const count = await ok(url, 'POST', '/collections/f/points/count?consistency=strong', {});
      const found = await ok(url, 'POST', '/collections/f/points/retrieve?consistency=strong', { ids: [...acknowledged], with_payload: false });
      assert.equal(found.result.length, acknowledged.size, `${url}: every acknowledged point`);
      assert.ok(count.result.count >= acknowledged.size, `${url}: count ${count.result.count}`);
    }
    // The restarted node's replicas equal their peers', versions included.
    await assertReplicasMatchPeers(cluster, 1, 'f');
  });

  test('a shard moved to another node under writes; a replica added and dropped; the last one kept', async () => {
    const first = cluster.nodes[0]?.url as string;
    const created = await ok(first, 'POST', '/collections', { name: 'mv', vector_size: 2, distance: 'dot', shard_number: 2, replication_factor: 1 });
    const placement = created.result.cluster.placement as string[][];
    const from = placement[0]?.[0] as string;
    const to = (['n1', 'n2', 'n3'] as const).find((id) => id !== from && !placement[1]?.includes(id)) as string;
    const acknowledged = new Set<string>();
    let writing = true;
    const writer = async (): Promise<void> => {
      for (let n = 0; writing; n++) {
        const points = [{ id: `m${n}`, vector: [n % 5, 1], payload: { n } }];
        const answer = await httpJson(cluster.urls[n % 3] as string, 'PUT', '/collections/mv/points', { points });
        assert.equal(answer.status, 200, answer.raw);
        acknowledged.add(`m${n}`);
      }
    };
    const running = writer();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const toUrl = cluster.nodes.find((n) => n.id === to)?.url as string;
    const seededBefore = await seeds(toUrl);
    const moved = await ok(first, 'POST', '/collections/mv/cluster', { move_shard: { shard_id: 0, from_peer_id: from, to_peer_id: to } });
    assert.deepEqual(moved.result.cluster.placement[0], [to]);
    assert.equal((await seeds(toUrl)).peer, seededBefore.peer + 1, `the moved replica on ${to} was seeded from ${from}'s export`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    writing = false;
    await running;
    // The old holder lets its replica go on its next look at the catalogue (every second).
    const fromUrl = cluster.nodes.find((n) => n.id === from)?.url as string;
    for (let i = 0; ; i++) {
      const state = await ok(fromUrl, 'GET', '/cluster');
      if (!(state.result.replicas as Json[]).some((r) => r.collection === 'mv' && r.shard === 0)) break;
      assert.ok(i < 50, `${from} still holds shard 0 of mv`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const url of cluster.urls) {
      const found = await ok(url, 'POST', '/collections/mv/points/retrieve?consistency=strong', { ids: [...acknowledged], with_payload: false });
      assert.equal(found.result.length, acknowledged.size, `${url}: every point written before, during and after the move`);
    }
    const last = await httpJson(first, 'POST', '/collections/mv/cluster', { drop_replica: { shard_id: 0, peer_id: to } });
    assert.equal(last.status, 400, last.raw);
    assert.match(last.body.status.error, /last replica/);
    const holder1 = placement[1]?.[0] as string;
    const other = (['n1', 'n2', 'n3'] as const).find((id) => id !== holder1) as string;
    const replicated = await ok(first, 'POST', '/collections/mv/cluster', { replicate_shard: { shard_id: 1, to_peer_id: other } });
    assert.deepEqual([...replicated.result.cluster.placement[1]].sort(), [holder1, other].sort());
    const dropped = await ok(first, 'POST', '/collections/mv/cluster', { drop_replica: { shard_id: 1, peer_id: holder1 } });
    assert.deepEqual(dropped.result.cluster.placement[1], [other]);
    const count = await ok(cluster.urls[2] as string, 'POST', '/collections/mv/points/count?consistency=strong', {});
    assert.equal(count.result.count, acknowledged.size);
    for (const bad of [{ move_shard: { shard_id: 5, from_peer_id: 'n1', to_peer_id: 'n2' } }, { replicate_shard: { shard_id: 0, to_peer_id: 'nobody' } }]) {
      const refused = await httpJson(first, 'POST', '/collections/mv/cluster', bad);
      assert.equal(refused.status, 400, refused.raw);
    }
  });

  test("a file refuses another node id; a node whose file is wiped comes back with its replicas seeded from its peers' exports", async () => {
    const node = cluster.nodes[2] as { dbPath: string };
    assert.equal((cluster.nodes[2] as { id: string }).id, 'n3');
    await cluster.stopNode(2);
    // Under another id, the file's replicas would all be dropped: the node refuses it.
    const other = await startServer(
      node.dbPath,
      ['-cluster-nats', nats.cluster.urls.join(','), '-node-id', 'n7', '-advertise', 'http://127.0.0.1:9'],
      {},
      { listeningOnly: true },
    ).then(
      () => 'it started',
      (error: Error) => error.message,
    );
    assert.match(other, /holds the replicas of node "n3"/);
    for (const path of [node.dbPath, `${node.dbPath}-lock`]) rmSync(path, { force: true });
    await cluster.startNode(2);
    // Ready (/readyz) once every replica it holds serves: seeded, then caught up with its log.
    const started = (cluster.nodes[2] as { server: { output(): string } | null }).server;
    const replicasOfF = ((await ok(cluster.urls[2] as string, 'GET', '/cluster')).result.replicas as Json[]).filter((r) => r.collection === 'f');
    assert.ok(
      replicasOfF.length > 0 && replicasOfF.every((r) => r.state === 'serving'),
      `n3's replicas of f when ready: ${JSON.stringify(replicasOfF)}\n${started?.output().slice(-4000)}`,
    );
    await assertReplicasMatchPeers(cluster, 2, 'f');
    // Every replica of f held there (each has a serving copy elsewhere) came from a peer's export, versions and applied position included.
    const held = ((await ok(cluster.urls[2] as string, 'GET', '/cluster')).result.replicas as Json[]).filter((r) => r.collection === 'f');
    const seeded = await seeds(cluster.urls[2] as string);
    assert.ok(seeded.peer >= held.length, `seeded from peers: ${JSON.stringify(seeded)}, replicas of f held: ${held.length}`);
  });

  test('a node refuses a file with single-node collections, and an id a live node holds', async () => {
    const file = join(nats.dir, 'single-node.db');
    const db = Database.open(file);
    await db.createCollection({ name: 'mine', vector_size: 2, distance: 'cosine' });
    await db.close();
    const refused = await startServer(
      file,
      ['-cluster-nats', nats.cluster.urls.join(','), '-node-id', 'n9', '-advertise', 'http://127.0.0.1:9'],
      {},
      { listeningOnly: true },
    ).then(
      () => undefined,
      (error: Error) => error.message,
    );
    assert.match(refused ?? 'it started', /holds single-node collections \(mine\)/);

    const taken = await startServer(
      join(nats.dir, 'other.db'),
      ['-cluster-nats', nats.cluster.urls.join(','), '-node-id', 'n1', '-advertise', 'http://127.0.0.1:9'],
      {},
      { listeningOnly: true },
    ).then(
      () => undefined,
      (error: Error) => error.message,
    );
    assert.match(taken ?? 'it started', /n1/);
    assert.match(taken ?? '', /already|taken|live/i);
  });
});
