/**
 * Starting a cluster node for `kith serve -cluster-nats …` (main.ts): the NATS connection
 * (reconnecting for ever: the node's log reads and heartbeats resume when a server comes back),
 * the node (membership, catalogue, replicas in its file) and the engine its routes call.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { KithError } from '../core/errors.js';
import { ClusterEngine } from './cluster-engine.js';
import { ClusterNode } from './cluster-node.js';

/** How long a start waits for its node id's old entry to expire: above the 5 s membership TTL. */
const JOIN_WAIT_MS = 8000;

export interface ClusterStartOptions {
  readonly nats: readonly string[];
  readonly nodeId: string;
  readonly advertise: string;
  readonly logKeep?: number;
  readonly dbPath: string;
  readonly threads: number;
  readonly apiKey?: string;
  readonly warn: (message: string, error?: unknown) => void;
  readonly info?: (message: string) => void;
}

export interface StartedClusterNode {
  readonly engine: ClusterEngine;
  /** Leaves the cluster (the membership entry goes at once), closes the file, drains the connection. */
  stop(): Promise<void>;
}

/**
 * Copies of each shard log and bucket on the NATS servers: three when three or more servers are
 * named (a majority survives one loss), else one.
 */
export function natsReplicasFor(servers: number): number {
  return servers >= 3 ? 3 : 1;
}

/** A start-up failure of NATS's, with what to check (a KithError says it itself). */
function joinFailure(options: ClusterStartOptions, error: unknown): unknown {
  if (error instanceof KithError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new Error(
    `could not join the cluster over ${options.nats.join(',')}: ${reason}. Are the NATS servers up, with JetStream? A new cluster's buckets are made with ${natsReplicasFor(options.nats.length)} copies, so that many servers must answer (docs/cluster.md, "Quick start")`,
    { cause: error },
  );
}

export async function startClusterNode(options: ClusterStartOptions): Promise<StartedClusterNode> {
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: [...options.nats], name: `kith-${options.nodeId}`, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  } catch (error) {
    throw joinFailure(options, error);
  }
  let node: ClusterNode | undefined;
  // A node restarted at once after a crash finds its own entry until it expires (the membership
  // TTL): it waits that long. A node whose id is truly taken keeps it beating, and this still fails.
  const deadline = Date.now() + JOIN_WAIT_MS;
  while (node === undefined) {
    try {
      node = await ClusterNode.start({
        nc,
        dbPath: options.dbPath,
        nodeId: options.nodeId,
        advertise: options.advertise,
        natsReplicas: natsReplicasFor(options.nats.length),
        threads: options.threads,
        warn: options.warn,
        ...(options.logKeep === undefined ? {} : { logKeep: options.logKeep }),
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
        ...(options.info === undefined ? {} : { info: options.info }),
      });
    } catch (error) {
      if (error instanceof KithError && error.code === 'ERR_NODE_ID_TAKEN' && Date.now() < deadline) {
        options.warn(
          `node id "${options.nodeId}" is held by a live entry; waiting for it to expire (a node restarted after a crash), or for ${Math.round((deadline - Date.now()) / 1000)} s more`,
        );
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      await nc.close();
      throw joinFailure(options, error);
    }
  }
  const started = node;
  const engine = new ClusterEngine(started, options.apiKey === undefined ? {} : { apiKey: options.apiKey });
  return {
    engine,
    stop: async () => {
      await started.stop();
      await nc.drain();
    },
  };
}
