/**
 * The schemas of a cluster node's own routes (api/routes/cluster-collections.ts; docs/cluster.md):
 * collections with their shards and placement, replica changes, the node's view of the cluster.
 */
import { Type } from 'typebox';
import { CollectionInfoSchema, CreateCollectionBody } from './collections.js';

export const ClusterPart = Type.Object({
  cluster: Type.Object(
    {
      shard_number: Type.Integer(),
      replication_factor: Type.Integer(),
      placement: Type.Array(Type.Array(Type.String()), { description: 'Per shard, the ids of the nodes holding its replicas.' }),
    },
    { description: 'How the collection is sharded and where its replicas are.' },
  ),
});

export const ClusterCollectionInfo = Type.Intersect([CollectionInfoSchema, ClusterPart]);

const ShardId = Type.Integer({ minimum: 0, maximum: 1023 });
const PeerId = Type.String({ minLength: 1, maxLength: 64, description: 'A node id (kith node ids are strings).' });
export const ReplicaChangeBody = Type.Union([
  Type.Object(
    { move_shard: Type.Object({ shard_id: ShardId, from_peer_id: PeerId, to_peer_id: PeerId }, { additionalProperties: true }) },
    { additionalProperties: false },
  ),
  Type.Object(
    { replicate_shard: Type.Object({ shard_id: ShardId, to_peer_id: PeerId, from_peer_id: Type.Optional(PeerId) }, { additionalProperties: true }) },
    { additionalProperties: false },
  ),
  Type.Object({ drop_replica: Type.Object({ shard_id: ShardId, peer_id: PeerId }, { additionalProperties: false }) }, { additionalProperties: false }),
]);

export const CreateClusterCollectionBody = Type.Object(
  {
    ...CreateCollectionBody.properties,
    shard_number: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024, description: 'Shards; default: the number of live nodes.' })),
    replication_factor: Type.Optional(Type.Integer({ minimum: 1, maximum: 16, description: 'Replicas of each shard, on distinct nodes; default 1.' })),
  },
  { additionalProperties: false },
);

export const ClusterState = Type.Object({
  node: Type.String({ description: "This node's id." }),
  nodes: Type.Array(Type.Object({ id: Type.String(), advertise: Type.String(), joined: Type.String() }), { description: 'The live nodes.' }),
  replicas: Type.Array(
    Type.Object({
      collection: Type.String(),
      shard: Type.Integer(),
      local: Type.String({ description: 'The local collection holding the replica.' }),
      applied: Type.Integer({ description: 'The last log position applied.' }),
      last: Type.Union([Type.Integer(), Type.Null()], { description: "The shard log's last position (null when the log could not be asked)." }),
      lag: Type.Union([Type.Integer(), Type.Null()], { description: 'Entries not applied yet.' }),
      state: Type.Union([Type.Literal('seeding'), Type.Literal('catching_up'), Type.Literal('serving'), Type.Literal('stopped')], {
        description: "seeding: imported from a peer's replica; catching_up: following its log, reads go elsewhere; serving; stopped (see `stopped`).",
      }),
      stopped: Type.Optional(Type.String({ description: 'Why it stopped applying.' })),
      seedFrom: Type.Optional(Type.String({ description: 'While seeding: the node whose replica it is imported from.' })),
    }),
    { description: "This node's replicas." },
  ),
});
