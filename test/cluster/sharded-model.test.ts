/**
 * A sharded collection against one node: the same random writes go to a single-node collection
 * and, split by shard (src/cluster/shard-split.ts), to three shard logs on a real 3-server NATS
 * cluster, each applied by two replicas. After every round, each shard's two replicas hold the
 * same points, the shards together hold exactly the single node's points (payloads and vectors),
 * and exact searches fanned out to a random replica per shard and merged (merge-hits.ts) answer
 * the single node's ids and scores in its order, with and without a filter. Dot over
 * non-negative vectors with zero and repeated vectors makes many ties, which break by id. Replay
 * with KITH_SEED=<seed>.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { mergeHits } from '../../src/cluster/merge-hits.js';
import { ShardLog } from '../../src/cluster/shard-log.js';
import { encodeShardOperation, type ShardOperation } from '../../src/cluster/shard-operation.js';
import { LogVersions, ShardReplica } from '../../src/cluster/shard-replica.js';
import { splitByShard } from '../../src/cluster/shard-split.js';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { ODD_IDS, randomShardOperation } from '../helpers/shard-ops.js';

const SEED = testSeed(0x5a4d);
const SHARDS = 3;
const IDS = [...Array.from({ length: 34 }, (_, i) => `p${i}`), ...ODD_IDS];

async function applyDirectly(db: Database, operation: ShardOperation): Promise<void> {
  const c = db.collection('c');
  if (operation.op === 'upsert')
    await c.upsert(operation.points, {
      ...(operation.mode === undefined ? {} : { mode: operation.mode }),
      ...(operation.condition === undefined ? {} : { condition: operation.condition }),
    });
  else if (operation.op === 'delete_ids') await c.deleteIds(operation.ids);
  else if (operation.op === 'delete_filter') await c.deleteByFilter(operation.filter);
  else if (operation.op === 'vectors') await c.updateVectors(operation.points.filter((p) => c.hasPoint(p.id)));
  else if (operation.ids !== undefined) await c.changePayloads({ points: operation.ids.filter((id) => c.hasPoint(id)) }, operation.operation);
  else await c.changePayloads({ filter: operation.filter }, operation.operation);
}

type Held = Record<string, { payload: unknown; vector: number[] }>;

async function held(db: Database): Promise<Held> {
  const records = await db.collection('c').retrieve(IDS, { with_vector: true });
  return Object.fromEntries(records.map((r) => [r.id, { payload: r.payload ?? {}, vector: [...(r.vector ?? [])] }]));
}

describe(`a collection in ${SHARDS} shards of 2 replicas answers as one node (seed ${SEED})`, () => {
  const fx = natsClusterPerSuite('kith-sharded-');

  it('same points, same exact answers, after every round of random writes', async () => {
    const rng = new SeededRng(SEED);
    const single = Database.open(join(fx.dir, 'single.db'));
    await single.createCollection({ name: 'c', vector_size: 4, distance: 'dot' });
    const logs: ShardLog[] = [];
    const replicas: { db: Database; replica: ShardReplica }[][] = [];
    for (let shard = 0; shard < SHARDS; shard++) {
      const log = await ShardLog.open(fx.nc, {
        stream: `c_${shard}`,
        subject: `kith.c.${shard}`,
        replicas: 3,
        maxEntryBytes: 1 << 20,
        duplicateWindowMs: 120_000,
      });
      logs.push(log);
      const pair: { db: Database; replica: ShardReplica }[] = [];
      for (const name of ['r1', 'r2']) {
        const versions = new LogVersions();
        const db = Database.open(join(fx.dir, `${shard}-${name}.db`), { versions: () => versions });
        await db.createCollection({ name: 'c', vector_size: 4, distance: 'dot' }, { versions });
        pair.push({ db, replica: new ShardReplica(log, db.collection('c'), versions) });
      }
      replicas.push(pair);
    }

    let written = 0;
    for (let round = 1; round <= 3; round++) {
      for (let i = 0; i < 40; i++, written++) {
        const operation = randomShardOperation(rng, IDS, 4);
        for (const [shard, part] of splitByShard(operation, SHARDS)) await (logs[shard] as ShardLog).append(encodeShardOperation(part), `${written}-${shard}`);
        await applyDirectly(single, operation);
      }
      for (const pair of replicas) for (const { replica } of pair) await replica.catchUp();

      const expected = await held(single);
      const union: Held = {};
      for (const [shard, pair] of replicas.entries()) {
        const [first, second] = [await held((pair[0] as { db: Database }).db), await held((pair[1] as { db: Database }).db)];
        assert.deepEqual(second, first, `seed ${SEED} round ${round}: shard ${shard}'s replicas differ`);
        Object.assign(union, first);
      }
      assert.deepEqual(union, expected, `seed ${SEED} round ${round}: the shards together are not the single node`);

      for (let q = 0; q < 6; q++) {
        const vector = Array.from({ length: 4 }, () => rng.nextUint32() % 3);
        const filter = q % 2 === 0 ? undefined : { must_not: [{ key: 'g', match: { value: q % 3 } }] };
        const request = { vector, limit: 7, params: { exact: true }, ...(filter === undefined ? {} : { filter }) };
        const want = (await single.collection('c').searchParallel(request)).points.map((h) => ({ id: h.id, score: h.score }));
        const lists = [];
        for (const pair of replicas) {
          const { db } = pair[rng.nextUint32() % 2] as { db: Database };
          lists.push((await db.collection('c').searchParallel(request)).points.map((h) => ({ id: h.id, score: h.score })));
        }
        assert.deepEqual(mergeHits(lists, 7, false), want, `seed ${SEED} round ${round} query ${JSON.stringify(request)}`);
      }
    }
    await single.close();
    for (const pair of replicas) for (const { db } of pair) await db.close();
  });
});
