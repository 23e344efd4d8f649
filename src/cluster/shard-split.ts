/**
 * A write to a sharded collection as one operation per shard it touches: points, vectors and ids go to the
 * shard of their id (`shardOf`), a delete by filter to every shard (each evaluates it on its own
 * points at its own log position). Each part is appended to its shard's log on its own, so a
 * batch is atomic per shard, not across shards (docs/cluster.md).
 */
import { shardOf } from './shard-of.js';
import type { ShardOperation, ShardPoint, ShardVector } from './shard-operation.js';

/** `items` grouped by the shard of their id. */
function byShard<T>(items: readonly T[], idOf: (item: T) => string, shards: number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const shard = shardOf(idOf(item), shards);
    const group = groups.get(shard);
    if (group === undefined) groups.set(shard, [item]);
    else group.push(item);
  }
  return groups;
}

export function splitByShard(operation: ShardOperation, shards: number): Map<number, ShardOperation> {
  const parts = new Map<number, ShardOperation>();
  switch (operation.op) {
    case 'upsert':
      for (const [shard, points] of byShard<ShardPoint>(operation.points, (p) => p.id, shards)) parts.set(shard, { ...operation, points });
      return parts;
    case 'vectors':
      for (const [shard, points] of byShard<ShardVector>(operation.points, (p) => p.id, shards)) parts.set(shard, { ...operation, points });
      return parts;
    case 'delete_ids':
      for (const [shard, ids] of byShard(operation.ids, (id) => id, shards)) parts.set(shard, { op: 'delete_ids', ids });
      return parts;
    case 'payload':
      if (operation.ids !== undefined) {
        for (const [shard, ids] of byShard(operation.ids, (id) => id, shards)) parts.set(shard, { ...operation, ids });
        return parts;
      }
      for (let shard = 0; shard < shards; shard++) parts.set(shard, operation);
      return parts;
    case 'delete_filter':
      for (let shard = 0; shard < shards; shard++) parts.set(shard, operation);
      return parts;
  }
}
