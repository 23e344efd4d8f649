/**
 * One kith node of a cluster, in process: its membership, the catalogue, the replicas placed on it
 * (each a local collection in the node's one database file, fed by its shard's log), and the
 * write verbs any node offers for any collection.
 *
 * - Writes: checked here as a single node checks them, split by shard, each part appended to its
 *   shard's log; the answer, once every part is acknowledged, is a token of the positions written
 *   (`WriteToken`), with which a read can wait for the write (`waitApplied`).
 * - Replicas: one loop takes turns over the node's replicas, each applying up to 256 entries per
 *   turn. A replica that stops (shard-replica.ts) stays stopped and is reported through `warn`.
 *
 * Not yet here (docs/cluster.md, "Still to build"): reads fanned out to other nodes, the HTTP
 * surfaces, moving replicas.
 */
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { preparePoints } from '../collection/prepare-points.js';
import { KithError } from '../core/errors.js';
import { normalizePointId } from '../core/point-id.js';
import { Database } from '../db/database.js';
import { parseFilter } from '../payload/filter-parse.js';
import { parseCollectionConfig } from '../segment/collection-config.js';
import { Catalog, type ClusterCollection, type CreateClusterCollection, replicaName, shardLogSpec } from './catalog.js';
import { Membership } from './membership.js';
import { ShardLog } from './shard-log.js';
import { encodeShardOperation, type ShardOperation, type ShardPoint } from './shard-operation.js';
import { LogVersions, ShardReplica } from './shard-replica.js';
import { splitByShard } from './shard-split.js';

export interface ClusterNodeOptions {
  readonly nc: NatsConnection;
  readonly dbPath: string;
  readonly nodeId: string;
  readonly advertise: string;
  /** Membership TTL, in ms (membership.ts). */
  readonly membershipTtlMs?: number;
  /** Copies of each log and bucket on the NATS servers (1, 3 or 5). */
  readonly natsReplicas?: number;
  readonly warn?: (message: string, error?: unknown) => void;
}

/** Per shard written, the log position of its part. */
export type WriteToken = Record<number, number>;

interface LocalReplica {
  readonly collection: string;
  readonly shard: number;
  readonly replica: ShardReplica;
}

const TURN_ENTRIES = 256;
const IDLE_WAIT_MS = 20;

export class ClusterNode {
  private readonly replicas = new Map<string, LocalReplica>();
  private readonly logs = new Map<string, Promise<ShardLog>>();
  private running = true;
  private loop: Promise<void> = Promise.resolve();

  private constructor(
    private readonly options: ClusterNodeOptions,
    readonly db: Database,
    readonly membership: Membership,
    private readonly catalog: Catalog,
    /** The log versions of each local replica's collection (the database asks for them by name). */
    private readonly versionsOf: (name: string) => LogVersions | undefined,
  ) {}

  static async start(options: ClusterNodeOptions): Promise<ClusterNode> {
    const versions = new Map<string, LogVersions>();
    const versionsOf = (name: string): LogVersions | undefined => {
      if (!name.startsWith('shard-')) return undefined;
      const known = versions.get(name);
      if (known !== undefined) return known;
      const source = new LogVersions();
      versions.set(name, source);
      return source;
    };
    const membership = await Membership.join(options.nc, {
      nodeId: options.nodeId,
      advertise: options.advertise,
      ttlMs: options.membershipTtlMs,
      replicas: options.natsReplicas,
    });
    let db: Database;
    try {
      db = Database.open(options.dbPath, { versions: versionsOf });
    } catch (error) {
      await membership.leave();
      throw error;
    }
    const node = new ClusterNode(options, db, membership, await Catalog.open(options.nc, options.natsReplicas), versionsOf);
    await node.refresh();
    node.loop = node.applyLoop();
    return node;
  }

  get id(): string {
    return this.membership.self.id;
  }

  /** Creates a collection for the whole cluster, placed on the live nodes. */
  async createCollection(input: CreateClusterCollection): Promise<ClusterCollection> {
    const live = (await this.membership.liveNodes()).map((n) => n.id);
    const created = await this.catalog.create(input, live);
    await this.refresh();
    return created;
  }

  /** Takes up every replica the catalogue places on this node that it does not run yet. */
  async refresh(): Promise<void> {
    for (const collection of await this.catalog.list()) {
      for (const [shard, nodes] of collection.placement.entries()) {
        if (!nodes.includes(this.id)) continue;
        const local = replicaName(collection, shard);
        if (this.replicas.has(local)) continue;
        const versions = this.versionsOf(local) as LogVersions;
        if (!this.db.list().some((c) => c.name === local)) await this.db.createCollection({ ...collection.config, name: local }, { versions });
        const log = await this.logOf(collection, shard);
        this.replicas.set(local, { collection: collection.config.name, shard, replica: new ShardReplica(log, this.db.collection(local), versions) });
      }
    }
  }

  private logOf(collection: ClusterCollection, shard: number): Promise<ShardLog> {
    const spec = shardLogSpec(collection, shard, this.options.natsReplicas ?? 3);
    let log = this.logs.get(spec.stream);
    if (log === undefined) {
      log = ShardLog.open(this.options.nc, spec);
      log.catch(() => this.logs.delete(spec.stream));
      this.logs.set(spec.stream, log);
    }
    return log;
  }

  private async collectionOf(name: string): Promise<ClusterCollection> {
    const collection = await this.catalog.get(name);
    if (collection === undefined) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist`);
    return collection;
  }

  /**
   * Checked by the engine's own point check (collection/prepare-points.ts), as the replicas will
   * check each part: an entry every replica refuses would stop them all at it.
   */
  async upsert(name: string, points: readonly { id: string | number; vector: readonly number[]; payload?: Record<string, unknown> }[]): Promise<WriteToken> {
    const collection = await this.collectionOf(name);
    await preparePoints(points, parseCollectionConfig(collection.config));
    const checked: ShardPoint[] = points.map((p, i) => ({
      id: normalizePointId(p.id, `points[${i}].id`),
      vector: [...p.vector],
      ...(p.payload === undefined ? {} : { payload: p.payload }),
    }));
    return this.publish(collection, { op: 'upsert', points: checked });
  }

  async deleteIds(name: string, ids: readonly (string | number)[]): Promise<WriteToken> {
    const collection = await this.collectionOf(name);
    return this.publish(collection, { op: 'delete_ids', ids: ids.map((id, i) => normalizePointId(id, `ids[${i}]`)) });
  }

  async deleteByFilter(name: string, filter: Record<string, unknown>): Promise<WriteToken> {
    const collection = await this.collectionOf(name);
    // Parsed here as each replica will parse it: a filter they all refuse would stop them all.
    parseFilter(filter, 'filter');
    return this.publish(collection, { op: 'delete_filter', filter });
  }

  /** Appends each shard's part; answers once all are acknowledged. */
  private async publish(collection: ClusterCollection, operation: ShardOperation): Promise<WriteToken> {
    const writeId = randomBytes(12).toString('hex');
    const token: WriteToken = {};
    await Promise.all(
      [...splitByShard(operation, collection.shardNumber)].map(async ([shard, part]) => {
        const log = await this.logOf(collection, shard);
        token[shard] = await log.append(encodeShardOperation(part), `${writeId}-${shard}`);
      }),
    );
    return token;
  }

  /** Waits until this node's replicas of `name` have applied `token` (shards it holds no replica of are skipped). */
  async waitApplied(name: string, token: WriteToken, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const local of this.replicas.values()) {
      if (local.collection !== name || token[local.shard] === undefined) continue;
      while (local.replica.position().applied < (token[local.shard] as number)) {
        if (local.replica.stopped !== undefined) throw local.replica.stopped;
        if (Date.now() > deadline)
          throw new KithError('ERR_INTERNAL', `shard ${local.shard} of "${name}" did not apply position ${token[local.shard]} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }

  /** This node's replicas of `name`: shard → local collection name. */
  localShards(name: string): Map<number, string> {
    const out = new Map<number, string>();
    for (const [local, r] of this.replicas) if (r.collection === name) out.set(r.shard, local);
    return out;
  }

  private async applyLoop(): Promise<void> {
    while (this.running) {
      let applied = 0;
      for (const local of [...this.replicas.values()]) {
        if (!this.running) return;
        if (local.replica.stopped !== undefined) continue;
        try {
          applied += await local.replica.catchUp({ maxEntries: TURN_ENTRIES, waitMs: 0 });
        } catch (error) {
          // catchUp sets `stopped` when the replica cannot go on; other errors (the network) are retried next turn.
          const stopped = local.replica.stopped as KithError | undefined;
          this.options.warn?.(
            `replica ${local.collection}/${local.shard}${stopped === undefined ? '' : ' stopped'}: ${stopped?.message ?? String(error)}`,
            error,
          );
        }
      }
      if (applied === 0) await new Promise((resolve) => setTimeout(resolve, IDLE_WAIT_MS));
    }
  }

  /**
   * Stops the node. `crash`: as a kill would look to the others, the membership entry left to
   * expire; otherwise it leaves at once.
   */
  async stop(options: { readonly crash?: boolean } = {}): Promise<void> {
    this.running = false;
    await this.loop.catch(() => undefined);
    if (options.crash === true) this.membership.stopHeartbeat();
    else await this.membership.leave();
    await this.db.close();
  }
}
