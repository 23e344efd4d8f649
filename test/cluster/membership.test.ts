/**
 * Membership (src/cluster/membership.ts) on a real 3-server NATS cluster: nodes see each other,
 * an id held by a live node is refused, a node that stops beating is dropped within the TTL and
 * its id is free again, a node leaving is gone at once, and a node whose entry was taken over
 * stops instead of fighting for it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kvm } from '@nats-io/kv';
import { Membership, NODES_BUCKET } from '../../src/cluster/membership.js';
import { isKithError } from '../../src/core/errors.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';

const TTL_MS = 3000;

describe('cluster membership', () => {
  const fx = natsClusterPerSuite('kith-members-');
  const join = (nodeId: string) => Membership.join(fx.nc, { nodeId, advertise: `http://127.0.0.1:1/${nodeId}`, ttlMs: TTL_MS, heartbeatMs: 300 });
  const ids = async (m: Membership) => (await m.liveNodes()).map((n) => n.id);

  /** Waits (well under the TTL) until `node` sees exactly `expected`. */
  async function seesExactly(node: Membership, expected: string[], why = 'heard within a heartbeat'): Promise<void> {
    const started = performance.now();
    while (JSON.stringify(await ids(node)) !== JSON.stringify(expected)) {
      assert.ok(performance.now() - started < TTL_MS / 2, `${why}: sees ${JSON.stringify(await ids(node))}, not ${JSON.stringify(expected)}`);
      await sleep(20);
    }
  }

  it('sees every live node, refuses a live id, drops a silent node within the TTL and frees its id', async () => {
    const [n1, n2, n3] = [await join('n1'), await join('n2'), await join('n3')];
    // A node hears another's first heartbeat a moment after it joined (core NATS delivery).
    await seesExactly(n1, ['n1', 'n2', 'n3']);
    await assert.rejects(join('n2'), (e) => isKithError(e) && e.code === 'ERR_NODE_ID_TAKEN' && /n2 is held by a live node/.test(e.message));
    await assert.rejects(join('bad id'), (e) => isKithError(e) && e.code === 'ERR_BAD_INPUT');

    // Heartbeats keep entries alive past the TTL.
    await sleep(TTL_MS + 500);
    assert.deepEqual(await ids(n2), ['n1', 'n2', 'n3']);

    // n3 "crashes": it stops beating; the others drop it within the TTL (plus JetStream's expiry pass).
    n3.stopHeartbeat();
    const crashed = performance.now();
    while ((await ids(n1)).includes('n3')) {
      assert.ok(performance.now() - crashed < TTL_MS + 5000, 'n3 still counted 5 s past the TTL');
      await sleep(100);
    }
    const dropped = performance.now() - crashed;
    assert.ok(dropped >= TTL_MS * 0.5, `dropped after ${Math.round(dropped)} ms, before its entry could have expired`);
    process.stdout.write(`# a silent node was dropped after ${Math.round(dropped)} ms (TTL ${TTL_MS} ms)\n`);

    // Its id is free again; and a node that leaves is gone at once.
    const n3again = await join('n3');
    await n2.leave();
    await seesExactly(n1, ['n1', 'n3'], 'a node that leaves says so: gone well before the TTL');
    await n1.leave();
    await n3again.leave();
  });

  it('a node whose entry was taken over stops beating and says so', async () => {
    const node = await join('taken');
    const kv = await new Kvm(fx.nc).open(NODES_BUCKET);
    await kv.put('taken', new TextEncoder().encode(JSON.stringify({ id: 'taken', advertise: 'http://elsewhere', joined: 'x' })));
    const started = performance.now();
    while (node.lost === undefined) {
      assert.ok(performance.now() - started < 5000, 'the node never noticed');
      await sleep(50);
    }
    assert.equal(node.lost.code, 'ERR_NODE_ID_TAKEN');
    const entry = await kv.get('taken');
    assert.match(new TextDecoder().decode(entry?.value), /elsewhere/, 'the node did not overwrite the entry that took over');
    await kv.delete('taken');
  });
});
