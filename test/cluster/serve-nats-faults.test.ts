/**
 * NATS faults under a cluster of three kith processes: the leader of a shard's stream killed -9,
 * then the next leader stopped (SIGSTOP) for a while, both during writes through every node.
 * Writes pause, then go on; no acknowledged write is lost and none is in the log twice. Then the
 * log-regression guard: a shard's stream deleted and made again behind its replicas' positions
 * stops them, and the shard answers 503 instead of serving a log that lost its past.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { ShardLog } from '../../src/cluster/shard-log.js';
import { KithCluster } from '../helpers/kith-cluster.js';
import { natsClusterPerSuite, streamLeader } from '../helpers/nats-cluster.js';
import { httpJson, httpOk as ok } from '../helpers/server-process.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are compared field by field
type Json = any;

/** The stream of shard 0 of `collection`, from the local name of a replica a node reports. */
async function shardStream(url: string, collection: string): Promise<string> {
  const state = await ok(url, 'GET', '/cluster');
  const replica = (state.result.replicas as Json[]).find((r) => r.collection === collection && r.shard === 0);
  assert.ok(replica !== undefined, `${url} holds shard 0 of ${collection}`);
  const uid = /^shard-([0-9a-f]+)-0$/.exec(replica.local)?.[1];
  return `KITH_${uid}_0`;
}

/**
 * Waits until `url` sees all three nodes as members for 2 s on end: entries that expired while
 * NATS was away are made anew by their nodes' heartbeats, which may take a few beats to settle.
 */
async function allMembers(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let since: number | undefined;
  for (;;) {
    const live = (await ok(url, 'GET', '/cluster')).result.nodes as Json[];
    if (live.length !== 3) since = undefined;
    else since ??= Date.now();
    if (since !== undefined && Date.now() - since >= 2000) return;
    assert.ok(Date.now() < deadline, `live nodes after the faults: ${JSON.stringify(live)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('NATS faults under a kith cluster', { timeout: 300_000 }, () => {
  const nats = natsClusterPerSuite('kith-serve-nats-');
  let cluster: KithCluster;
  before(async () => {
    cluster = await KithCluster.start(nats.cluster, nats.dir, 3);
  });
  after(async () => {
    await cluster?.stop();
  });

  test('the stream leader killed -9, then the next one stopped: writes pause and go on, none lost, none twice', async (t) => {
    const first = cluster.nodes[0]?.url as string;
    await ok(first, 'POST', '/collections', { name: 'l', vector_size: 2, distance: 'cosine', shard_number: 1, replication_factor: 3 });
    const stream = await shardStream(first, 'l');
    const jsm = await jetstreamManager(nats.nc);

    const acknowledged = new Set<string>();
    const failures: string[] = [];
    let longestMs = 0;
    let writing = true;
    const writer = async (w: number): Promise<void> => {
      for (let n = 0; writing; n++) {
        const id = `w${w}-${n}`;
        const started = performance.now();
        const answer = await httpJson(cluster.urls[(n + w) % 3] as string, 'PUT', '/collections/l/points', {
          points: [{ id, vector: [1, n % 7], payload: { w } }],
        });
        longestMs = Math.max(longestMs, performance.now() - started);
        if (answer.status === 200) acknowledged.add(id);
        else failures.push(`${id}: ${answer.status} ${answer.raw.slice(0, 300)}`);
      }
    };
    const running = [writer(0), writer(1), writer(2)];
    let killed = -1;
    let afterKill = 0;
    let stoppedName = '';
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      killed = nats.cluster.indexOf(await streamLeader(jsm, stream));
      await nats.cluster.kill(killed);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await nats.cluster.restart(killed);
      afterKill = acknowledged.size;
      stoppedName = await streamLeader(jsm, stream);
      const stopped = nats.cluster.servers[nats.cluster.indexOf(stoppedName)]?.process;
      stopped?.kill('SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 6000));
      stopped?.kill('SIGCONT');
      await new Promise((resolve) => setTimeout(resolve, 2000));
    } finally {
      // Whatever failed above, the writers stop: left running they would keep the file's process alive.
      writing = false;
      await Promise.all(running);
    }
    t.diagnostic(
      `killed ${nats.cluster.servers[killed]?.name}, then stopped ${stoppedName} for 6 s: ${acknowledged.size} writes acknowledged (${acknowledged.size - afterKill} after the kill), longest ${Math.round(longestMs)} ms, ${failures.length} failed`,
    );
    assert.deepEqual(failures, [], 'every write was acknowledged in the end');
    assert.ok(acknowledged.size - afterKill > 0, 'writes went on after the kill');

    // Every node is a member again: entries that expired while NATS was away are made anew.
    await allMembers(first);
    // Every acknowledged write through every node, and each exactly once in the log.
    const counts: string[] = [];
    for (const url of cluster.urls) {
      const count = await ok(url, 'POST', '/collections/l/points/count?consistency=strong', {});
      const missing = (await ok(url, 'POST', '/collections/l/points/retrieve?consistency=strong', { ids: [...acknowledged], with_payload: false })).result.map(
        (r: Json) => r.id,
      );
      const have = new Set(missing);
      counts.push(
        `${url}: ${count.result.count}, missing ${[...acknowledged].filter((id) => !have.has(id)).join(' ')}; ${JSON.stringify((await ok(url, 'GET', '/cluster')).result.replicas)}`,
      );
    }
    t.diagnostic(counts.join('\n'));
    let reappends = 0;
    for (const url of cluster.urls) reappends += Number(/^kith_log_reappends_total (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
    t.diagnostic(`entries appended again after a wrong acknowledgement: ${reappends}`);
    for (const url of cluster.urls) {
      const count = await ok(url, 'POST', '/collections/l/points/count?consistency=strong', {});
      assert.equal(count.result.count, acknowledged.size, `${url}: count`);
    }
    const log = await ShardLog.open(nats.nc, {
      stream,
      subject: `kith.log.${stream.slice(5, -2)}.0`,
      replicas: 3,
      maxEntryBytes: 1 << 20,
      duplicateWindowMs: 120_000,
    });
    const seen = new Map<string, number>();
    for (let after = 0; ; ) {
      const entries = await log.read(log.identity, after, { max: 500, waitMs: 0 });
      if (entries.length === 0) break;
      for (const entry of entries) {
        // Upserts, and the strong reads' barriers (deletes of no ids).
        const operation = JSON.parse(new TextDecoder().decode(entry.data)) as { op: string; points?: { id: string }[] };
        for (const p of operation.points ?? []) seen.set(p.id, (seen.get(p.id) ?? 0) + 1);
        after = entry.seq;
      }
    }
    assert.deepEqual(
      [...seen].filter(([, times]) => times !== 1),
      [],
      'no write is in the log twice',
    );
    assert.deepEqual(
      [...acknowledged].filter((id) => !seen.has(id)),
      [],
      'every acknowledged write is in the log',
    );
  });

  test('a stream made again behind its replicas stops them: the shard answers 503, GET /cluster says why', async () => {
    const first = cluster.nodes[0]?.url as string;
    await allMembers(first);
    await ok(first, 'POST', '/collections', { name: 'r', vector_size: 2, distance: 'cosine', shard_number: 1, replication_factor: 3 });
    const written = await ok(first, 'PUT', '/collections/r/points', { points: [1, 2, 3].map((i) => ({ id: i, vector: [1, i] })) });
    const stream = await shardStream(first, 'r');
    for (const url of cluster.urls) await ok(url, 'POST', `/collections/r/points/count?after=${written.result.write_token}`, {});
    const jsm = await jetstreamManager(nats.nc);
    const { config } = await jsm.streams.info(stream);
    await jsm.streams.delete(stream);
    await jsm.streams.add(config);
    for (const url of cluster.urls) {
      for (let i = 0; ; i++) {
        const state = await ok(url, 'GET', '/cluster');
        const replica = (state.result.replicas as Json[]).find((r) => r.collection === 'r');
        if (replica?.state === 'stopped') {
          assert.match(replica.stopped, /log|position/i);
          break;
        }
        assert.ok(i < 100, `${url}: the replica of r did not stop: ${JSON.stringify(replica)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    // Once every replica has stopped, no node serves the shard.
    for (const url of cluster.urls) {
      const read = await httpJson(url, 'POST', '/collections/r/points/count', {});
      assert.equal(read.status, 503, read.raw);
      assert.equal(read.body.status.code, 'ERR_UNAVAILABLE');
      const ready = await httpJson(url, 'GET', '/readyz');
      assert.equal(ready.status, 503, ready.raw);
    }
  });
});
