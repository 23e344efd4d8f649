/**
 * kith's collection routes on a cluster node (`kith serve -cluster-nats …`), over the cluster's
 * catalogue: create takes Qdrant's `shard_number` and `replication_factor`; list, describe and
 * drop see every node's collections. `GET /cluster` shows the nodes, and this node's replicas
 * with their applied positions (docs/cluster.md).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import type { ClusterCollection } from '../../cluster/catalog.js';
import type { ClusterEngine, ReplicaChange } from '../../cluster/cluster-engine.js';
import type { Database } from '../../db/database.js';
import { type CollectionConfig, configToInfo, parseCollectionConfig, validateCollectionName } from '../../segment/collection-config.js';
import { ok } from '../envelope.js';
import { ClusterCollectionInfo, ClusterPart, ClusterState, CreateClusterCollectionBody, ReplicaChangeBody } from '../schemas/cluster.js';
import { DropCollectionResult } from '../schemas/collections.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';

/** The body as the engine's change; Qdrant's `method` (stream_records, snapshot…) is accepted and ignored: kith seeds from the log. */
function replicaChange(body: Static<typeof ReplicaChangeBody>): ReplicaChange {
  if ('move_shard' in body) return { kind: 'move', shard: body.move_shard.shard_id, from: body.move_shard.from_peer_id, to: body.move_shard.to_peer_id };
  if ('replicate_shard' in body) return { kind: 'replicate', shard: body.replicate_shard.shard_id, to: body.replicate_shard.to_peer_id };
  return { kind: 'drop', shard: body.drop_replica.shard_id, node: body.drop_replica.peer_id };
}

/** A calibration record for a node that holds no replica of the collection: what its configuration says. */
function configuredCalibration(config: CollectionConfig) {
  const p = config.parameters;
  return {
    state: !config.hnsw ? ('flat' as const) : p.efSearchExplicit ? ('fixed' as const) : ('uncalibrated' as const),
    running: false,
    ef: p.efSearch,
    target_recall: p.targetRecall,
    recall: null,
    recall_lower_bound: null,
    reached: null,
    sample: null,
    points_when_calibrated: null,
    duration_ms: null,
  };
}

export const clusterCollectionRoutes: FastifyPluginAsyncTypebox<{ engine: ClusterEngine; db: Database }> = async (app, { engine, db }) => {
  /** The collection as kith describes one, its calibration that of this node's first replica (each shard calibrates its own). */
  const describe = (collection: ClusterCollection, pointsCount: number) => {
    const config = parseCollectionConfig(collection.config);
    const local = collection.placement.findIndex((_nodes, shard) => engine.node.localReplica(collection, shard) !== undefined);
    const calibration =
      local === -1 ? configuredCalibration(config) : db.collection(engine.node.localShards(collection.config.name).get(local) as string).describe().calibration;
    return {
      ...configToInfo(config),
      points_count: pointsCount,
      calibration,
      cluster: {
        shard_number: collection.shardNumber,
        replication_factor: collection.replicationFactor,
        placement: collection.placement.map((nodes) => [...nodes]),
      },
    };
  };

  app.post(
    '/collections',
    {
      schema: {
        summary: 'Create a collection, sharded and replicated over the live nodes',
        tags: ['collections'],
        body: CreateClusterCollectionBody,
        response: {
          200: okEnvelope(Type.Intersect([ClusterCollectionInfo, Type.Object({ operation: Type.Literal('completed') })])),
          ...errorResponses(400, 409, 500),
        },
      },
    },
    async (request, reply) => {
      const { shard_number, replication_factor, ...config } = request.body;
      await engine.createCollection({
        config,
        ...(shard_number === undefined ? {} : { shardNumber: shard_number }),
        ...(replication_factor === undefined ? {} : { replicationFactor: replication_factor }),
      });
      const { collection } = await engine.describe(config.name);
      return ok(reply, { ...describe(collection, 0), operation: 'completed' as const });
    },
  );

  app.get(
    '/collections',
    { schema: { summary: 'List collections, sorted by name', tags: ['collections'], response: { 200: okEnvelope(Type.Array(ClusterCollectionInfo)) } } },
    async (_request, reply) => {
      const out = [];
      for (const info of await engine.list()) {
        const { collection, pointsCount } = await engine.describe(info.name);
        out.push(describe(collection, pointsCount));
      }
      return ok(reply, out);
    },
  );

  app.get(
    '/collections/:name',
    {
      schema: {
        summary: 'Describe a collection (its points counted over every shard)',
        tags: ['collections'],
        params: CollectionNameParams,
        response: { 200: okEnvelope(ClusterCollectionInfo), ...errorResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { collection, pointsCount } = await engine.describe(request.params.name);
      return ok(reply, describe(collection, pointsCount));
    },
  );

  app.delete(
    '/collections/:name',
    {
      schema: {
        summary: 'Drop a collection on every node',
        tags: ['collections'],
        params: CollectionNameParams,
        response: { 200: okEnvelope(DropCollectionResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      await engine.dropCollection(request.params.name);
      return ok(reply, { collection: request.params.name, operation: 'completed' as const });
    },
  );

  app.post(
    '/collections/:name/cluster',
    {
      schema: {
        summary: "Add, move or drop a replica of a shard (Qdrant's replicate_shard, move_shard, drop_replica)",
        tags: ['cluster'],
        params: CollectionNameParams,
        body: ReplicaChangeBody,
        response: {
          200: okEnvelope(Type.Intersect([ClusterPart, Type.Object({ operation: Type.Literal('completed') })])),
          ...errorResponses(400, 404, 500, 503),
        },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const info = await engine.changeReplicas(request.params.name, replicaChange(request.body));
      return ok(reply, { cluster: { ...info, placement: info.placement.map((nodes) => [...nodes]) }, operation: 'completed' as const });
    },
  );

  app.get(
    '/cluster',
    {
      schema: {
        summary: "The cluster's live nodes and this node's replicas",
        tags: ['cluster'],
        response: { 200: okEnvelope(ClusterState), ...errorResponses(500) },
      },
    },
    async (_request, reply) => ok(reply, await engine.state()),
  );
};
