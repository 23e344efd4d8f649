/**
 * Qdrant's cluster routes on a cluster node's Qdrant port: GET /cluster (the peers), GET
 * /collections/{name}/cluster (this node's shards and where the others are) and POST
 * /collections/{name}/cluster (move_shard, replicate_shard, drop_replica), over the cluster's
 * engine (docs/cluster.md). Qdrant's peer ids are numbers and kith's node ids are text: a node id
 * of digits is its own number, any other is its 32-bit FNV-1a hash; a body's peer id may be either.
 */
import type { FastifyInstance } from 'fastify';
import type { ClusterEngine, ReplicaChange } from '../../cluster/cluster-engine.js';
import { replicaName } from '../../cluster/catalog.js';
import { fnv1a32 } from '../../cluster/shard-of.js';
import { ok } from '../envelope.js';
import { collectionOf } from './collections.js';
import { asObject, formatError, optionalInteger } from './errors.js';
import type { QdrantStore } from './store.js';

/** The number Qdrant's clients see for a node id. */
export function peerIdOf(nodeId: string): number {
  return /^\d{1,15}$/.test(nodeId) ? Number(nodeId) : fnv1a32(nodeId);
}

export async function qdrantClusterRoutes(app: FastifyInstance, { engine, store }: { engine: ClusterEngine; store: QdrantStore }): Promise<void> {
  /** A body's peer id (a number, or a kith node id) as the live node's id. */
  const nodeOf = async (raw: unknown, path: string): Promise<string> => {
    const live = (await engine.state()).nodes;
    const found = live.find((n) => n.id === raw || (typeof raw === 'number' && peerIdOf(n.id) === raw));
    if (found === undefined)
      throw formatError(path, `no live peer ${JSON.stringify(raw)} (peers: ${live.map((n) => `${peerIdOf(n.id)} (${n.id})`).join(', ')})`);
    return found.id;
  };

  app.get('/cluster', async (_request, reply) => {
    const state = await engine.state();
    return ok(reply, {
      status: 'enabled',
      peer_id: peerIdOf(state.node),
      peers: Object.fromEntries(state.nodes.map((n) => [String(peerIdOf(n.id)), { uri: n.advertise, kith_node_id: n.id }])),
      // Consensus is JetStream's (docs/cluster.md): kith runs no Raft of its own to report.
      raft_info: { term: 0, commit: 0, pending_operations: 0, leader: null, role: null, is_voter: false },
      consensus_thread_status: { consensus_thread_status: 'working', last_update: new Date().toISOString() },
      message_send_failures: {},
    });
  });

  app.get<{ Params: { name: string } }>('/collections/:name/cluster', async (request, reply) => {
    await collectionOf(store, request.params.name);
    // Read from the catalogue, not this node's copy of it: a move through another node shows at once.
    const collection = await engine.node.collection(request.params.name, { fresh: true });
    const state = await engine.state();
    const self = state.node;
    const held = new Map(state.replicas.filter((r) => r.collection === collection.config.name).map((r) => [r.shard, r]));
    const local: Record<string, unknown>[] = [];
    const remote: Record<string, unknown>[] = [];
    for (const [shard, nodes] of collection.placement.entries()) {
      for (const node of nodes) {
        if (node !== self) {
          remote.push({ shard_id: shard, peer_id: peerIdOf(node), state: 'Active' });
          continue;
        }
        const replica = held.get(shard);
        const imported = replica !== undefined && replica.state !== 'seeding';
        const points = imported ? engine.node.db.collection(replicaName(collection, shard)).pointsCount : 0;
        local.push({ shard_id: shard, points_count: points, state: qdrantReplicaState(replica?.state) });
      }
    }
    return ok(reply, { peer_id: peerIdOf(self), shard_count: collection.shardNumber, local_shards: local, remote_shards: remote, shard_transfers: [] });
  });

  app.post<{ Params: { name: string } }>('/collections/:name/cluster', async (request, reply) => {
    await collectionOf(store, request.params.name);
    const body = asObject(request.body, 'body');
    let change: ReplicaChange;
    if (body.move_shard !== undefined) {
      const move = asObject(body.move_shard, 'move_shard');
      change = {
        kind: 'move',
        shard: optionalInteger(move.shard_id, 'move_shard.shard_id', 0, 0, 1023),
        from: await nodeOf(move.from_peer_id, 'move_shard.from_peer_id'),
        to: await nodeOf(move.to_peer_id, 'move_shard.to_peer_id'),
      };
    } else if (body.replicate_shard !== undefined) {
      const replicate = asObject(body.replicate_shard, 'replicate_shard');
      change = {
        kind: 'replicate',
        shard: optionalInteger(replicate.shard_id, 'replicate_shard.shard_id', 0, 0, 1023),
        to: await nodeOf(replicate.to_peer_id, 'replicate_shard.to_peer_id'),
      };
    } else if (body.drop_replica !== undefined) {
      const drop = asObject(body.drop_replica, 'drop_replica');
      change = {
        kind: 'drop',
        shard: optionalInteger(drop.shard_id, 'drop_replica.shard_id', 0, 0, 1023),
        node: await nodeOf(drop.peer_id, 'drop_replica.peer_id'),
      };
    } else {
      throw formatError('', 'expected move_shard, replicate_shard or drop_replica (abort_transfer, create_sharding_key and the like are not supported)');
    }
    await engine.changeReplicas(request.params.name, change);
    return ok(reply, true);
  });
}

/** Qdrant's name for a replica's state: Partial while it is seeded or catches up, as Qdrant's shard in transfer. */
function qdrantReplicaState(state: 'seeding' | 'catching_up' | 'serving' | 'stopped' | undefined): string {
  switch (state) {
    case undefined:
      return 'Initializing';
    case 'serving':
      return 'Active';
    case 'stopped':
      return 'Dead';
    default:
      return 'Partial';
  }
}
