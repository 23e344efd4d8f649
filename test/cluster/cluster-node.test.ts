/**
 * Three kith nodes (src/cluster/cluster-node.ts, in process, a database file each) on a real
 * 3-server NATS cluster: a collection created on one is placed on all (3 shards × 2 replicas),
 * random writes through random nodes reach every replica, and after each round the two replicas
 * of each shard are identical (versions included) and the shards together equal the model. One
 * node crashes (its loop stops, its membership entry is left to expire) while writes go on; it
 * comes back on its file under its id and catches up. Replay with KITH_SEED=<seed>.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ClusterNode, type WriteToken } from '../../src/cluster/cluster-node.js';
import { shardOf } from '../../src/cluster/shard-of.js';
import { isKithError } from '../../src/core/errors.js';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { applyToModel, type ModelPoint, ODD_IDS, randomShardOperation } from '../helpers/shard-ops.js';

const SEED = testSeed(0xc1a5);
const IDS = [...Array.from({ length: 24 }, (_, i) => `q${i}`), ...ODD_IDS];
const TTL_MS = 2000;

type Held = Record<string, { payload: unknown; vector: number[]; version: bigint }>;

async function held(node: ClusterNode, local: string): Promise<Held> {
  const records = await node.db.collection(local).retrieve(IDS, { with_vector: true });
  return Object.fromEntries(records.map((r) => [r.id, { payload: r.payload ?? {}, vector: [...(r.vector ?? [])], version: r.version }]));
}

describe(`three nodes serve one sharded, replicated collection (seed ${SEED})`, () => {
  const fx = natsClusterPerSuite('kith-nodes-');

  it('writes through any node reach both replicas of every shard; a crashed node catches up', async () => {
    const rng = new SeededRng(SEED);
    const connections: NatsConnection[] = [];
    const start = async (i: number): Promise<ClusterNode> => {
      // Each node talks to its own NATS server first.
      const urls = fx.cluster.urls;
      const nc = await connect({ servers: [urls[i] as string, ...urls.filter((_, j) => j !== i)], maxReconnectAttempts: -1, reconnectTimeWait: 100 });
      connections.push(nc);
      return ClusterNode.start({
        nc,
        dbPath: join(fx.dir, `node${i + 1}.db`),
        nodeId: `n${i + 1}`,
        advertise: `http://127.0.0.1:0/n${i + 1}`,
        membershipTtlMs: TTL_MS,
      });
    };
    const nodes = [await start(0), await start(1), await start(2)];
    const created = await (nodes[0] as ClusterNode).createCollection({ config: { name: 'docs', vector_size: 3, distance: 'dot' }, replicationFactor: 2 });
    assert.equal(created.shardNumber, 3, 'one shard per live node by default');
    for (const node of nodes) await node.refresh();
    assert.deepEqual(
      nodes.map((n) => n.localShards('docs').size),
      [2, 2, 2],
    );
    await assert.rejects(
      (nodes[1] as ClusterNode).createCollection({ config: { name: 'docs', vector_size: 3, distance: 'dot' } }),
      (e) => isKithError(e) && e.code === 'ERR_COLLECTION_EXISTS',
    );

    // Refused by the node as every replica would refuse it, before anything is appended (an
    // appended one would stop every replica at it; the rounds below would then fail).
    const first = nodes[0] as ClusterNode;
    const refused = (field: string) => (e: unknown) => isKithError(e) && e.code === 'ERR_BAD_INPUT' && e.message.startsWith(field);
    await assert.rejects(first.upsert('docs', [{ id: 'p', vector: [1, 2, 3], payload: { n: Number.NaN } }]), refused('points[0].payload'));
    await assert.rejects(first.upsert('docs', [{ id: 'p', vector: [1, 2] }]), refused('points[0].vector'));
    await assert.rejects(first.deleteByFilter('docs', { must: [{ key: 'g', rnage: { gt: 1 } }] }), refused('filter.must[0]'));

    const model = new Map<string, ModelPoint>();
    const latest: WriteToken = {};
    const write = async (through: ClusterNode[], count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const operation = randomShardOperation(rng, IDS, 3);
        const node = through[rng.nextUint32() % through.length] as ClusterNode;
        const written =
          operation.op === 'upsert'
            ? await node.upsert('docs', operation.points, {
                ...(operation.mode === undefined ? {} : { mode: operation.mode }),
                ...(operation.condition === undefined ? {} : { condition: operation.condition }),
              })
            : operation.op === 'delete_ids'
              ? await node.deleteIds('docs', operation.ids)
              : operation.op === 'delete_filter'
                ? await node.deleteByFilter('docs', operation.filter)
                : operation.op === 'vectors'
                  ? await node.updateVectors('docs', operation.points)
                  : await node.changePayloads(
                      'docs',
                      operation.ids === undefined ? { filter: operation.filter } : { points: operation.ids },
                      operation.operation,
                    );
        applyToModel(model, operation, 0);
        for (const [shard, entries] of written.entries) latest[shard] = Math.max(latest[shard] ?? 0, ...entries.map((e) => e.seq));
      }
    };
    const check = async (alive: ClusterNode[], round: string): Promise<void> => {
      for (const node of alive) await node.waitApplied('docs', latest);
      const union: Record<string, { payload: unknown; vector: number[] }> = {};
      for (let shard = 0; shard < 3; shard++) {
        const copies: Held[] = [];
        for (const node of alive) {
          const local = node.localShards('docs').get(shard);
          if (local !== undefined) copies.push(await held(node, local));
        }
        assert.ok(copies.length >= 1, `${round}: shard ${shard} has no live replica`);
        for (const copy of copies.slice(1)) assert.deepEqual(copy, copies[0], `seed ${SEED} ${round}: the replicas of shard ${shard} differ`);
        for (const [id, p] of Object.entries(copies[0] as Held)) {
          assert.equal(shardOf(id, 3), shard, `${round}: ${id} is held by shard ${shard}, not its own`);
          union[id] = { payload: p.payload, vector: p.vector };
        }
      }
      const expected = Object.fromEntries([...model].map(([id, p]) => [id, { payload: p.payload, vector: p.vector }]));
      assert.deepEqual(union, expected, `seed ${SEED} ${round}: the shards together are not the model`);
    };

    await write(nodes, 40);
    await check(nodes, 'round 1');

    // n3 crashes; writes go on through the others.
    await (nodes[2] as ClusterNode).stop({ crash: true });
    const survivors = nodes.slice(0, 2);
    await write(survivors, 40);
    await check(survivors, 'round 2 (n3 down)');

    // n3 comes back under its id once its entry has expired, on its own file, and catches up.
    let back: ClusterNode | undefined;
    const crashed = performance.now();
    while (back === undefined) {
      try {
        back = await start(2);
      } catch (error) {
        assert.ok(isKithError(error) && error.code === 'ERR_NODE_ID_TAKEN', String(error));
        assert.ok(performance.now() - crashed < TTL_MS + 10_000, 'n3 could not rejoin');
        await sleep(200);
      }
    }
    nodes[2] = back;
    await check(nodes, 'round 3 (n3 back)');
    await write(nodes, 20);
    await check(nodes, 'round 4');
    for (const node of nodes) await node.stop();
    for (const nc of connections) await nc.close();
  });
});
