/**
 * kill -9 of a replica while it applies its shard's log: a child process (test/helpers/
 * replica-child.ts) applies, the test appends random writes meanwhile and SIGKILLs the child at
 * random moments, five times, each restart resuming from what the file holds. At the end the
 * killed replica's file equals the model, versions included, and a replica that was never killed;
 * each start resumed at or after the position last reported before the kill. Replay with
 * KITH_SEED=<seed>.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ShardLog, type ShardLogSpec } from '../../src/cluster/shard-log.js';
import { encodeShardOperation } from '../../src/cluster/shard-operation.js';
import { LogVersions, ShardReplica } from '../../src/cluster/shard-replica.js';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { applyToModel, type ModelPoint, ODD_IDS, randomShardOperation } from '../helpers/shard-ops.js';

const SEED = testSeed(0xc4a5);
const CHILD = fileURLToPath(new URL('../helpers/replica-child.js', import.meta.url));
const IDS = [...Array.from({ length: 20 }, (_, i) => `k${i}`), ...ODD_IDS];
const DIM = 3;
const SPEC: ShardLogSpec = { stream: 'killed', subject: 'kith.log.killed', replicas: 3, maxEntryBytes: 1 << 20, duplicateWindowMs: 120_000 };

interface Child {
  readonly process: ChildProcess;
  /** The position the child said it started from, and the last it reported applied. */
  started: Promise<number>;
  applied: number;
}

function startChild(path: string, urls: string[]): Child {
  const child = fork(CHILD, [path, urls.join(','), SPEC.stream, SPEC.subject, String(DIM)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let resolveStarted: (position: number) => void = () => undefined;
  const state: Child = { process: child, started: new Promise((resolve) => (resolveStarted = resolve)), applied: -1 };
  child.on('message', (message: { started?: number; applied?: number }) => {
    if (message.started !== undefined) resolveStarted(message.started);
    if (message.applied !== undefined) state.applied = message.applied;
  });
  return state;
}

async function contents(db: Database): Promise<Record<string, ModelPoint>> {
  const records = await db.collection('shard').retrieve(IDS, { with_vector: true });
  return Object.fromEntries(records.map((r) => [r.id, { vector: [...(r.vector ?? [])], payload: r.payload ?? {}, version: r.version }]));
}

describe(`kill -9 of a replica while it applies (seed ${SEED})`, () => {
  const fx = natsClusterPerSuite('kith-replica-kill-');

  it('resumes exactly where its file left off, five kills later equal to the model and to a replica never killed', async () => {
    const rng = new SeededRng(SEED);
    const log = await ShardLog.open(fx.nc, SPEC);
    const model = new Map<string, ModelPoint>();
    let appended = 0;
    const append = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++, appended++) {
        const operation = randomShardOperation(rng, IDS, DIM);
        applyToModel(model, operation, await log.append(encodeShardOperation(operation), `op-${appended}`));
      }
    };
    const path = join(fx.dir, 'killed.db');
    let lastReported = 0;
    const kills: { started: number; applied: number; appended: number }[] = [];
    for (let kill = 0; kill < 5; kill++) {
      // A backlog first, so that the kill lands while the replica catches up.
      await append(30 + (rng.nextUint32() % 30));
      const child = startChild(path, fx.cluster.urls);
      const started = await child.started;
      assert.ok(started >= lastReported, `seed ${SEED}: restart ${kill} started at ${started}, but ${lastReported} was reported applied before the kill`);
      await sleep(rng.nextUint32() % 60);
      const exited = new Promise((resolve) => child.process.once('exit', resolve));
      child.process.kill('SIGKILL');
      await exited;
      lastReported = Math.max(lastReported, child.applied);
      kills.push({ started, applied: child.applied, appended });
    }
    const shown = kills.map((k) => `${k.started}→${k.applied}/${k.appended}`).join(', ');
    process.stdout.write(`# kills (started→applied/appended): ${shown}\n`);
    // Killed part way at least once, or the kills proved nothing about resuming mid-way.
    assert.ok(
      kills.some((k) => k.applied > k.started && k.applied < k.appended),
      `seed ${SEED}: no kill landed part way through a catch-up (${shown})`,
    );
    const last = startChild(path, fx.cluster.urls);
    assert.ok((await last.started) >= lastReported);
    const finished = new Promise<number | null>((resolve) => last.process.once('exit', resolve));
    last.process.send('finish');
    assert.equal(await finished, 0, 'the last child finished cleanly');

    const versions = new LogVersions();
    const reference = Database.open(join(fx.dir, 'reference.db'), { versions: () => versions });
    await reference.createCollection({ name: 'shard', vector_size: DIM, distance: 'dot' }, { versions });
    await new ShardReplica(log, reference.collection('shard'), versions).catchUp();
    const killed = Database.open(path);
    const expected = Object.fromEntries(model);
    assert.deepEqual(await contents(killed), expected, `seed ${SEED}: the killed replica`);
    assert.deepEqual(await contents(reference), expected, `seed ${SEED}: the reference replica`);
    assert.equal(killed.collection('shard').appliedPosition?.sequence, BigInt(appended));
    await killed.close();
    await reference.close();
  });
});
