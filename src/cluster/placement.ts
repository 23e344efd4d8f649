/**
 * Where a new collection's replicas go: the replicas, shard by shard, dealt to the nodes in id
 * order, round and round (shard s's replica r on node (s·replicas + r) mod nodes). The replicas of
 * one shard are consecutive deals, so on distinct nodes (a node's loss costs a shard at most one
 * replica), and every node holds ⌊shards·replicas/nodes⌋ or one more.
 */
import { badInput } from '../core/errors.js';

export function placeReplicas(nodeIds: readonly string[], shards: number, replicationFactor: number): string[][] {
  if (!Number.isInteger(shards) || shards < 1) throw badInput('shard_number', `expected an integer >= 1, got ${shards}`);
  if (!Number.isInteger(replicationFactor) || replicationFactor < 1) throw badInput('replication_factor', `expected an integer >= 1, got ${replicationFactor}`);
  const nodes = [...new Set(nodeIds)].sort();
  if (replicationFactor > nodes.length)
    throw badInput('replication_factor', `${replicationFactor} replicas of a shard need ${replicationFactor} nodes; the cluster has ${nodes.length} live`);
  return Array.from({ length: shards }, (_, shard) =>
    Array.from({ length: replicationFactor }, (_, r) => nodes[(shard * replicationFactor + r) % nodes.length] as string),
  );
}

/** A copy of `items` in random order (Fisher–Yates): peers are tried so, to spread the load. */
export function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
