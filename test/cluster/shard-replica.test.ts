/**
 * Replicas applying a shard's log (src/cluster/shard-replica.ts) on a real 3-server NATS cluster,
 * against a plain in-memory model: random upserts, re-upserts, deletes by id and by filter, over
 * odd ids, zero and duplicate vectors and payloads of every JSON type. Two replicas, one closed
 * and reopened half way, end with the same records and the same versions as the model, each
 * version the position of the entry that wrote it; a replica ahead of its log stops and applies
 * nothing. Replay with KITH_SEED=<seed>.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { ShardLog, type ShardLogSpec } from '../../src/cluster/shard-log.js';
import { encodeShardOperation } from '../../src/cluster/shard-operation.js';
import { LogVersions, ShardReplica } from '../../src/cluster/shard-replica.js';
import { isKithError } from '../../src/core/errors.js';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { applyToModel, type ModelPoint, ODD_IDS, randomShardOperation } from '../helpers/shard-ops.js';

const SEED = testSeed(0x5a1ce);
const IDS = ['a', 'b', 'c', ...ODD_IDS];

function spec(stream: string): ShardLogSpec {
  return { stream, subject: `kith.log.${stream}`, replicas: 3, maxEntryBytes: 1 << 20, duplicateWindowMs: 120_000 };
}

/** Every id of the pool a collection holds, with its version, payload and vector. */
async function contents(db: Database): Promise<Record<string, ModelPoint>> {
  const records = await db.collection('shard').retrieve(IDS, { with_vector: true });
  return Object.fromEntries(records.map((r) => [r.id, { vector: [...(r.vector ?? [])], payload: r.payload ?? {}, version: r.version }]));
}

/** Opens (creating when new) the replica's file with the log's versions for its collection. */
async function openReplica(path: string, log: ShardLog): Promise<{ db: Database; replica: ShardReplica }> {
  const versions = new LogVersions();
  const db = Database.open(path, { versions: (name) => (name === 'shard' ? versions : undefined) });
  if (!db.list().some((c) => c.name === 'shard')) await db.createCollection({ name: 'shard', vector_size: 3, distance: 'dot' }, { versions });
  return { db, replica: new ShardReplica(log, db.collection('shard'), versions) };
}

describe(`replicas applying a shard log (seed ${SEED})`, () => {
  const fx = natsClusterPerSuite('kith-replica-');

  it('two replicas, one reopened half way, end equal to the model, versions from the log', async () => {
    const rng = new SeededRng(SEED);
    const log = await ShardLog.open(fx.nc, spec('model'));
    const model = new Map<string, ModelPoint>();
    const append = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const operation = randomShardOperation(rng, IDS, 3);
        const seq = await log.append(encodeShardOperation(operation), `op-${SEED}-${model.size}-${rng.nextUint32()}`);
        applyToModel(model, operation, seq);
      }
    };
    const expected = (): Record<string, ModelPoint> => Object.fromEntries([...model].map(([id, p]) => [id, p]));

    await append(30);
    const a = await openReplica(join(fx.dir, 'a.db'), log);
    let b = await openReplica(join(fx.dir, 'b.db'), log);
    assert.equal(await a.replica.catchUp(), 30);
    assert.equal(await b.replica.catchUp(), 30);
    assert.deepEqual(await contents(b.db), expected(), `seed ${SEED}: b after 30 entries`);

    // b goes down; the log moves on; b comes back on its file and resumes after entry 30.
    await b.db.close();
    await append(45);
    b = await openReplica(join(fx.dir, 'b.db'), log);
    assert.equal(b.replica.position().applied, 30);
    assert.equal(await b.replica.catchUp(), 45);
    assert.equal(await a.replica.catchUp(), 45);
    assert.equal(await a.replica.catchUp(), 0, 'nothing new: nothing applied');

    assert.deepEqual(await contents(a.db), expected(), `seed ${SEED}: a`);
    assert.deepEqual(await contents(b.db), expected(), `seed ${SEED}: b`);
    assert.equal(a.db.collection('shard').appliedPosition?.sequence, 75n);
    assert.equal(b.db.collection('shard').appliedPosition?.sequence, 75n);
    await a.db.close();
    await b.db.close();
  });

  it('a replica whose log was made again stops, and applies nothing of the new one', async () => {
    const log = await ShardLog.open(fx.nc, spec('remade'));
    for (let i = 0; i < 4; i++) await log.append(encodeShardOperation({ op: 'upsert', points: [{ id: `p${i}`, vector: [1, 0, 0] }] }), `r${i}`);
    const replica = await openReplica(join(fx.dir, 'c.db'), log);
    assert.equal(await replica.replica.catchUp(), 4);

    await (await jetstreamManager(fx.nc)).streams.delete('remade');
    const remade = await ShardLog.open(fx.nc, spec('remade'));
    for (let i = 0; i < 6; i++) await remade.append(encodeShardOperation({ op: 'delete_ids', ids: [`p${i % 4}`] }), `d${i}`);
    const again = new ShardReplica(remade, replica.db.collection('shard'), new LogVersions());
    await assert.rejects(again.catchUp(), (error) => isKithError(error) && error.code === 'ERR_LOG_REGRESSION');
    assert.ok(again.stopped !== undefined, 'the replica says why it stopped');
    await assert.rejects(again.catchUp(), (error) => error === again.stopped);
    assert.equal((await replica.db.collection('shard').retrieve(['p0', 'p1', 'p2', 'p3'])).length, 4, 'nothing of the new log was applied');
    await replica.db.close();
  });
});
