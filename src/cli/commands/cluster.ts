/**
 * `kith cluster`: a cluster node's view (`status`: the live nodes and the node's replicas with
 * their lag) and Qdrant's replica operations (`move`, `replicate`, `drop`), against a running
 * cluster node (--url or KITH_URL; docs/cluster.md). A database file has no cluster: --db is refused.
 */
import type { Command } from 'commander';
import { type ClusterState, KithClient, type ReplicaChangeRequest } from '../../api/client/kith-client.js';
import { resolveWhere, type TargetOptions } from '../context.js';
import { UsageError } from '../errors.js';
import { table, toJson } from '../output.js';
import { cannotReach } from '../target-remote.js';

function urlOption(command: Command): Command {
  return command
    .option('--url <url>', 'a running cluster node, e.g. http://localhost:18080 (env KITH_URL)')
    .option('--api-key <key>', 'API key for --url (env KITH_API_KEY)')
    .option('--db <file>', 'refused: a database file has no cluster');
}

/** Runs `run` with a client of the node named by --url or KITH_URL; a node that does not answer is "cannot reach URL". */
async function reach<T>(options: TargetOptions, run: (client: KithClient) => Promise<T>): Promise<T> {
  const where = resolveWhere(options);
  if (!('url' in where)) throw new UsageError('cluster: give --url (or KITH_URL) of a running cluster node; a database file has no cluster');
  const reaching: typeof fetch = async (input, init) => {
    try {
      return await fetch(input, init);
    } catch (error) {
      throw cannotReach(where.url, error);
    }
  };
  return run(new KithClient(where.url, { fetch: reaching, ...(where.apiKey === undefined ? {} : { apiKey: where.apiKey }) }));
}

function shardOf(text: string): number {
  const shard = Number(text);
  if (!/^\d{1,4}$/.test(text) || shard > 1023) throw new UsageError(`shard: expected a shard number 0–1023, got ${JSON.stringify(text)}`);
  return shard;
}

function printStatus(state: ClusterState): void {
  process.stdout.write(
    `node ${state.node}\n\n${table(
      ['NODE', 'ADVERTISE', 'JOINED'],
      state.nodes.map((n) => [n.id, n.advertise, n.joined]),
    )}\n\n`,
  );
  if (state.replicas.length === 0) {
    process.stdout.write('this node holds no replicas\n');
    return;
  }
  const rows = state.replicas.map((r) => [
    r.collection,
    String(r.shard),
    r.state,
    String(r.applied),
    r.last === null ? '?' : String(r.last),
    r.lag === null ? '?' : String(r.lag),
    r.stopped ?? '',
  ]);
  process.stdout.write(`${table(['COLLECTION', 'SHARD', 'STATE', 'APPLIED', 'LOG', 'LAG', 'WHY'], rows)}\n`);
}

export function registerClusterCommands(program: Command): void {
  const cluster = program.command('cluster').description("a cluster node's view and replica moves (docs/cluster.md); needs --url");

  urlOption(cluster.command('status').description("the live nodes, and this node's replicas with their lag"))
    .option('--json', 'print JSON instead of tables')
    .action(async (options: TargetOptions & { json?: boolean }) => {
      const state = await reach(options, (client) => client.clusterState());
      if (options.json === true) process.stdout.write(`${toJson(state, 2)}\n`);
      else printStatus(state);
    });

  const change = async (name: string, body: ReplicaChangeRequest, options: TargetOptions): Promise<void> => {
    const placement = await reach(options, (client) => client.changeReplicas(name, body));
    const rows = placement.placement.map((nodes, shard) => [String(shard), nodes.join(', ')]);
    process.stdout.write(`${name}: ${placement.shard_number} shards\n${table(['SHARD', 'REPLICAS ON'], rows)}\n`);
  };

  urlOption(
    cluster
      .command('move')
      .description('move a replica of a shard to another node: added there, then dropped here once it serves')
      .argument('<collection>')
      .argument('<shard>')
      .argument('<from-node>')
      .argument('<to-node>'),
  ).action(async (name: string, shard: string, from: string, to: string, options: TargetOptions) =>
    change(name, { move_shard: { shard_id: shardOf(shard), from_peer_id: from, to_peer_id: to } }, options),
  );

  urlOption(
    cluster.command('replicate').description('add a replica of a shard on a node').argument('<collection>').argument('<shard>').argument('<to-node>'),
  ).action(async (name: string, shard: string, to: string, options: TargetOptions) =>
    change(name, { replicate_shard: { shard_id: shardOf(shard), to_peer_id: to } }, options),
  );

  urlOption(
    cluster.command('drop').description("drop a node's replica of a shard (never the last)").argument('<collection>').argument('<shard>').argument('<node>'),
  ).action(async (name: string, shard: string, node: string, options: TargetOptions) =>
    change(name, { drop_replica: { shard_id: shardOf(shard), peer_id: node } }, options),
  );
}
