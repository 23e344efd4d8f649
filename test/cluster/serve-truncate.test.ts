/**
 * Shard logs cut below what every replica of the shard applied (src/cluster/log-truncation.ts),
 * on three kith processes over three NATS servers, nodes started with `-cluster-log-keep 0`:
 * the log is cut; a node that is down holds its logs back, and catches up from the log when it
 * returns; a replica moved onto a node that never held it comes from a peer's export, the cut log
 * being no longer enough; every acknowledged point stays; a shard of one replica keeps its log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { KithCluster, replicaRecords, replicaSeeds as seeds } from '../helpers/kith-cluster.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { httpOk as ok } from '../helpers/server-process.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are compared field by field
type Json = any;

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('shard logs cut below what every replica applied', { timeout: 300_000 }, () => {
  const nats = natsClusterPerSuite('kith-serve-truncate-');
  let cluster: KithCluster;
  before(async () => {
    cluster = await KithCluster.start(nats.cluster, nats.dir, 3, ['-threads', '0', '-cluster-log-keep', '0']);
  });
  after(async () => {
    await cluster?.stop();
  });

  test('cut once applied everywhere; held back by a node that is down; a moved replica seeded from a peer', async (t) => {
    const urlOf = (id: string): string => cluster.nodes.find((n) => n.id === id)?.url as string;
    const created = await ok(cluster.urls[0] as string, 'POST', '/collections', {
      name: 't',
      vector_size: 2,
      distance: 'dot',
      shard_number: 1,
      replication_factor: 2,
    });
    const [keeper, downed] = created.result.cluster.placement[0] as [string, string];
    const spare = (['n1', 'n2', 'n3'] as const).find((id) => id !== keeper && id !== downed) as string;
    const local = ((await ok(urlOf(keeper), 'GET', '/cluster')).result.replicas as Json[]).find((r) => r.collection === 't')?.local as string;
    const stream = `KITH_${/^shard-([0-9a-f]+)-0$/.exec(local)?.[1]}_0`;
    const jsm = await jetstreamManager(nats.nc);
    const logState = async () => (await jsm.streams.info(stream)).state;
    const applied = async (id: string): Promise<number> =>
      ((await ok(urlOf(id), 'GET', '/cluster')).result.replicas as Json[]).find((r) => r.local === local)?.applied as number;

    let written = 0;
    const write = async (count: number, through: readonly string[]): Promise<void> => {
      for (let i = 0; i < count; i++, written++) {
        await ok(through[written % through.length] as string, 'PUT', '/collections/t/points', {
          points: [{ id: `p${written}`, vector: [written % 7, 1], payload: { i: written } }],
        });
      }
    };

    // A shard of one replica: its log is its data's only other copy, never cut.
    await ok(cluster.urls[0] as string, 'POST', '/collections', { name: 'one', vector_size: 2, distance: 'dot', shard_number: 1, replication_factor: 1 });
    for (let i = 0; i < 20; i++) await ok(cluster.urls[i % 3] as string, 'PUT', '/collections/one/points', { points: [{ id: `o${i}`, vector: [i, 1] }] });
    const oneLocal = (await Promise.all(cluster.urls.map(async (url) => (await ok(url, 'GET', '/cluster')).result.replicas as Json[])))
      .flat()
      .find((r) => r.collection === 'one')?.local as string;
    const oneStream = `KITH_${/^shard-([0-9a-f]+)-0$/.exec(oneLocal)?.[1]}_0`;

    // 1. Every replica applied them: the log is cut, never past either replica.
    await write(60, cluster.urls);
    await until('the log cut', async () => (await logState()).first_seq > 1);
    const cutAt = (await logState()).first_seq - 1;
    assert.ok(cutAt <= Math.min(await applied(keeper), await applied(downed)), `cut at ${cutAt}, below both replicas`);

    // 2. A holder down: writes go on, and the log is not cut past where it stopped.
    await cluster.kill(cluster.nodes.findIndex((n) => n.id === downed));
    const last = (await logState()).last_seq;
    await write(40, [urlOf(keeper), urlOf(spare)]);
    await new Promise((resolve) => setTimeout(resolve, 25_000)); // two rounds of cutting (every 10 s)
    const heldAt = (await logState()).first_seq;
    assert.ok(heldAt <= last + 1, `with ${downed} down, the log starts at ${heldAt}: not past its last entry before the kill (${last})`);

    // 3. Back: it catches up from the log, not from a peer, to the same records.
    await cluster.startNode(cluster.nodes.findIndex((n) => n.id === downed));
    assert.deepEqual(await seeds(urlOf(downed)), { peer: 0, log: 0 }, `${downed} kept its replica and caught up from the log`);
    const end = (await logState()).last_seq;
    assert.deepEqual(await replicaRecords(urlOf(downed), local, end), await replicaRecords(urlOf(keeper), local, end));
    await until('the log cut past the writes made while a holder was down', async () => (await logState()).first_seq > end - 1);

    // 4. A move onto the node that never held the shard: the cut log cannot seed it; a peer's export does.
    await ok(urlOf(keeper), 'POST', '/collections/t/cluster', { move_shard: { shard_id: 0, from_peer_id: downed, to_peer_id: spare } });
    assert.equal((await seeds(urlOf(spare))).peer, 1, `${spare}'s replica came from a peer's export`);
    const after = (await logState()).last_seq;
    assert.deepEqual(await replicaRecords(urlOf(spare), local, after), await replicaRecords(urlOf(keeper), local, after));
    for (const url of cluster.urls) {
      const count = await ok(url, 'POST', '/collections/t/points/count?consistency=strong', {}).catch(async (error: Error) => {
        const views = await Promise.all(cluster.urls.map(async (u) => JSON.stringify((await ok(u, 'GET', '/cluster')).result.replicas)));
        const logs = cluster.nodes.map((n) => `--- ${n.id}\n${n.server?.output().slice(-3000)}`);
        throw new Error(`${error.message}\n${views.join('\n')}\n${logs.join('\n')}`);
      });
      assert.equal(count.result.count, written, `${url}: every acknowledged point`);
    }
    const one = (await jsm.streams.info(oneStream)).state;
    assert.ok(
      one.first_seq <= 1 && one.last_seq >= 20,
      `the one-replica log keeps every entry: ${JSON.stringify({ first: one.first_seq, last: one.last_seq })}`,
    );
    t.diagnostic(
      `log cut at ${cutAt} after 60 writes; held at ${heldAt} with ${downed} down; starts at ${(await logState()).first_seq} of ${after} at the end`,
    );
  });
});
