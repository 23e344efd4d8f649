/**
 * Faults of a cluster of three kith processes over three NATS servers: a node killed -9 during
 * writes and searches (no acknowledged write lost; searches keep their full answer from the
 * other replicas; the node catches up after its restart with records identical to its peers',
 * versions included), and the starts a node refuses.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { KithCluster } from '../helpers/kith-cluster.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { httpJson, startServer } from '../helpers/server-process.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are compared field by field
type Json = any;

async function ok(base: string, method: string, path: string, body?: unknown): Promise<Json> {
  const answer = await httpJson(base, method, path, body);
  assert.equal(answer.status, 200, `${method} ${base}${path}: ${answer.raw}`);
  return answer.body;
}

/** Every record of a replica, read through its node's replica routes, in id order. */
async function replicaRecords(node: string, replica: string): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const page: Json = await ok(node, 'POST', `/cluster/local/collections/${replica}/points/scroll`, { limit: 500, cursor, with_vector: true });
    out.push(...page.result.points);
    cursor = page.result.next_cursor;
  } while (cursor !== null);
  return out;
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
          // The node died under the request: not acknowledged, so not counted.
          writeErrors++;
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
        }
      }
    };
    const running = [writer(0), writer(1), searcher()];
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await cluster.kill(1);
    const killedAt = acknowledged.size;
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const whileDown = acknowledged.size - killedAt;
    await cluster.startNode(1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    writing = false;
    searching = false;
    await Promise.all(running);
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
    const state = await ok(cluster.nodes[1]?.url as string, 'GET', '/cluster');
    const info = await ok(first, 'GET', '/collections/f');
    for (const replica of state.result.replicas as Json[]) {
      assert.equal(replica.state, 'serving');
      const peers = (info.result.cluster.placement[replica.shard] as string[]).filter((id) => id !== 'n2');
      const peer = cluster.nodes.find((n) => n.id === peers[0]);
      // Both replicas have applied the log's end before they are compared.
      const last = replica.last as number;
      for (const url of [cluster.nodes[1]?.url, peer?.url] as string[])
        await ok(url, 'POST', `/cluster/local/replicas/${replica.local}/applied`, { position: last });
      assert.deepEqual(
        await replicaRecords(cluster.nodes[1]?.url as string, replica.local),
        await replicaRecords(peer?.url as string, replica.local),
        `shard ${replica.shard}`,
      );
    }
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
