/** Replica placement (src/cluster/placement.ts) on every small cluster shape. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { placeReplicas } from '../../../src/cluster/placement.js';
import { isKithError } from '../../../src/core/errors.js';

test('the replicas of a shard are on distinct nodes, and every node holds its share, give or take one', () => {
  for (let nodes = 1; nodes <= 7; nodes++) {
    const ids = Array.from({ length: nodes }, (_, i) => `n${(i * 5) % 11}`);
    for (let shards = 1; shards <= 12; shards++) {
      for (let rf = 1; rf <= nodes; rf++) {
        const placement = placeReplicas(ids, shards, rf);
        assert.equal(placement.length, shards);
        const load = new Map(ids.map((id) => [id, 0]));
        for (const replicas of placement) {
          assert.equal(new Set(replicas).size, rf, `${nodes} nodes, ${shards} shards, rf ${rf}: ${JSON.stringify(placement)}`);
          for (const node of replicas) load.set(node, (load.get(node) ?? Number.NaN) + 1);
        }
        const counts = [...load.values()];
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `${nodes} nodes, ${shards} shards, rf ${rf}: loads ${counts}`);
        assert.deepEqual(placeReplicas([...ids].reverse(), shards, rf), placement, 'the order nodes are listed in does not matter');
      }
    }
  }
});

test('more replicas than live nodes, or no shard, is a 400 naming the field', () => {
  assert.throws(
    () => placeReplicas(['a', 'b'], 3, 3),
    (e) => isKithError(e) && e.code === 'ERR_BAD_INPUT' && e.message.startsWith('replication_factor:'),
  );
  assert.throws(
    () => placeReplicas(['a', 'a'], 1, 2),
    (e) => isKithError(e) && /has 1 live/.test(e.message),
  );
  assert.throws(
    () => placeReplicas(['a'], 0, 1),
    (e) => isKithError(e) && e.message.startsWith('shard_number:'),
  );
});
