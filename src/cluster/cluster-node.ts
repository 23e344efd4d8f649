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
 * - Seeding: a replica placed on this node that it does not hold yet is imported from a serving
 *   replica on another node (its consistent export, with its applied position), then follows its
 *   log from there; with no serving replica elsewhere (a new collection, every other copy down) it
 *   starts empty and replays its log from the start.
 */
import { randomBytes } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { checkSelection, type PayloadOperation, type PointSelection, payloadUpdate } from '../collection/payload-operations.js';
import { preparePoints, prepareVectors } from '../collection/prepare-points.js';
import { badInput, KithError } from '../core/errors.js';
import { normalizePointId } from '../core/point-id.js';
import { Database } from '../db/database.js';
import type { UpdateMode } from '../collection/collection.js';
import { parseFilter } from '../payload/filter-parse.js';
import { RequestCost } from '../search/request-cost.js';
import { parseCollectionConfig } from '../segment/collection-config.js';
import { Catalog, type ClusterCollection, type CreateClusterCollection, replicaName, shardLogSpec } from './catalog.js';
import { AppliedPositions, cutBelow } from './log-truncation.js';
import { Membership } from './membership.js';
import { shuffled } from './placement.js';
import { LogCutBehind, ShardLog } from './shard-log.js';
import { encodeShardOperation, type ShardOperation, type ShardPoint } from './shard-operation.js';
import { RemoteShardReader } from './shard-reads.js';
import { type EntryOutcome, LogVersions, ShardReplica } from './shard-replica.js';
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
  /** Search threads of the node's database (db/database.ts); default 0. */
  readonly threads?: number;
  /** The cluster's API key, sent to peers (seeding a replica reads a peer's export). */
  readonly apiKey?: string;
  /** Told what the node did that an operator may want in its log (a replica seeded). */
  readonly info?: (message: string) => void;
  /** Entries each shard log keeps at least when it is cut (log-truncation.ts); default 100,000. */
  readonly logKeep?: number;
  /** How often applied positions are recorded and logs cut, in ms; default 10 s. */
  readonly truncateMs?: number;
}

/** Per shard written, the log position of its part. */
export type WriteToken = Record<number, number>;

/** One entry of a write: where the log acknowledged it, under which message id, with what bytes. */
export interface WrittenEntry {
  seq: number;
  readonly msg: string;
  readonly data: Uint8Array;
}

/** A write's entries: per shard, its part's entries, in order. */
export interface Written {
  readonly collection: ClusterCollection;
  readonly entries: ReadonlyMap<number, readonly WrittenEntry[]>;
}

export interface ReplicaState {
  readonly collection: string;
  readonly shard: number;
  /** The local collection holding it. */
  readonly local: string;
  readonly applied: number;
  /** Entries applied since the node started. */
  readonly appliedSinceStart: number;
  /** Caught up once and not stopped. */
  readonly serving: boolean;
  /** The shard log's last position; null when the log could not be asked. */
  readonly last: number | null;
  /** Why it stopped applying, when it has (ERR_LOG_REGRESSION, an entry it could not apply). */
  readonly stopped?: string;
  /** Being imported from a peer's replica, not held yet (`seedFrom` names the peer). */
  readonly seedFrom?: string;
}

/** The annotation of a replica's local collection naming the node it belongs to. */
const REPLICA_ANNOTATION = 'cluster';

/** The node a local collection is a replica of, when it is one. */
function nodeOfReplica(db: Database, name: string): string | undefined {
  if (!name.startsWith('shard-')) return undefined;
  const mark = db.collection(name).annotations()[REPLICA_ANNOTATION] as { node?: unknown } | undefined;
  return typeof mark?.node === 'string' ? mark.node : undefined;
}

/**
 * The most one log entry holds: below the stream's 1 MiB `max_msg_size` and NATS's default
 * `max_payload`, with room for the headers. A larger part is split into consecutive entries.
 */
const ENTRY_BYTES = 900 * 1024;

/** `part` as the operations of log entries of at most ENTRY_BYTES: its list halved until each half fits (a filter is one entry, its size bounded by the filter budget). */
function entriesOf(part: ShardOperation): ShardOperation[] {
  if (encodeShardOperation(part).length <= ENTRY_BYTES) return [part];
  switch (part.op) {
    case 'upsert': {
      const mid = Math.ceil(part.points.length / 2);
      if (part.points.length < 2) return [part];
      return [...entriesOf({ ...part, points: part.points.slice(0, mid) }), ...entriesOf({ ...part, points: part.points.slice(mid) })];
    }
    case 'vectors': {
      const mid = Math.ceil(part.points.length / 2);
      if (part.points.length < 2) return [part];
      return [...entriesOf({ ...part, points: part.points.slice(0, mid) }), ...entriesOf({ ...part, points: part.points.slice(mid) })];
    }
    case 'delete_ids': {
      const mid = Math.ceil(part.ids.length / 2);
      if (part.ids.length < 2) return [part];
      return [...entriesOf({ op: 'delete_ids', ids: part.ids.slice(0, mid) }), ...entriesOf({ op: 'delete_ids', ids: part.ids.slice(mid) })];
    }
    case 'payload': {
      const ids = part.ids;
      if (ids === undefined || ids.length < 2) return [part];
      const mid = Math.ceil(ids.length / 2);
      return [...entriesOf({ ...part, ids: ids.slice(0, mid) }), ...entriesOf({ ...part, ids: ids.slice(mid) })];
    }
    case 'delete_filter':
      return [part];
  }
}

export interface LocalReplica {
  readonly collection: string;
  readonly shard: number;
  readonly replica: ShardReplica;
}

const TURN_ENTRIES = 256;
/**
 * How long an idle loop waits before it looks at its logs again, when nothing wakes it: every
 * entry appended to a log it follows wakes it at once (its core NATS subscription to the log's
 * subject), so this bounds only what a missed wake costs. Polling every 20 ms instead kept 0.3–0.5
 * of this machine's two cores busy with no request at all (the cluster benchmark).
 */
const IDLE_WAIT_MS = 250;
/** How often a node re-reads the catalogue for replicas placed on it or dropped. */
const REFRESH_MS = 1000;

export class ClusterNode {
  private readonly replicas = new Map<string, LocalReplica>();
  private readonly logs = new Map<string, Promise<ShardLog>>();
  /** Entries appended again because their acknowledged position held another entry (cluster-engine.ts settled). */
  reappends = 0;
  /** Told how long each log append took to be acknowledged, in seconds (metrics). */
  onAppend: ((seconds: number) => void) | undefined;
  /** Per local replica, its subscription to its log's subject, which wakes the apply loop. */
  private readonly wakers = new Map<string, Subscription>();
  /** An entry was appended since the loop's turn began. */
  private poked = false;
  private wake: (() => void) | undefined;
  /** The catalogue as the last refresh read it. */
  private known = new Map<string, ClusterCollection>();
  /** Replicas being imported from a peer: local name → what and from whom. */
  private readonly seeding = new Map<string, { readonly collection: string; readonly shard: number; readonly from: string }>();
  /** Replicas seeded from a peer's export, and started empty to replay their log, since the node started (metrics). */
  readonly seeded = { fromPeer: 0, fromLog: 0 };
  private running = true;
  private loop: Promise<void> = Promise.resolve();
  private truncation: Promise<void> = Promise.resolve();
  /** Log entries this node removed from the shard logs it cuts, since it started (metrics). */
  truncatedEntries = 0;

  private constructor(
    private readonly options: ClusterNodeOptions,
    readonly db: Database,
    readonly membership: Membership,
    private readonly catalog: Catalog,
    private readonly appliedPositions: AppliedPositions,
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
      ...(options.warn === undefined ? {} : { onLost: (error: KithError) => options.warn?.('this node is no longer a member of the cluster', error) }),
    });
    let db: Database;
    try {
      db = Database.open(options.dbPath, {
        versions: versionsOf,
        threads: options.threads ?? 0,
        ...(options.warn === undefined ? {} : { onWarning: options.warn }),
      });
    } catch (error) {
      await membership.leave();
      throw error;
    }
    // A file holds one node's replicas: under another id, the catalogue would place none of them
    // on it, and the first refresh would drop them all.
    const other = db
      .list()
      .map((c) => nodeOfReplica(db, c.name))
      .find((node) => node !== undefined && node !== options.nodeId);
    if (other !== undefined) {
      await db.close();
      await membership.leave();
      throw new KithError(
        'ERR_BAD_INPUT',
        `${options.dbPath} holds the replicas of node "${other}"; start it as -node-id ${other}, or start node "${options.nodeId}" on a file of its own`,
      );
    }
    // A single node's collections are not a cluster's: joining with them would hide them, or serve them beside the cluster's.
    const own = db.list().filter((c) => !c.name.startsWith('shard-'));
    if (own.length > 0) {
      await db.close();
      await membership.leave();
      throw new KithError(
        'ERR_BAD_INPUT',
        `${options.dbPath} holds single-node collections (${own
          .slice(0, 5)
          .map((c) => c.name)
          .join(
            ', ',
          )}${own.length > 5 ? ', …' : ''}); a cluster node's file holds only its replicas. Start the node on a new file and import the collections through the cluster (kith export, then kith import --url; docs/cluster.md)`,
      );
    }
    const node = new ClusterNode(
      options,
      db,
      membership,
      await Catalog.open(options.nc, options.natsReplicas),
      await AppliedPositions.open(options.nc, options.natsReplicas),
      versionsOf,
    );
    await node.refresh();
    node.loop = node.applyLoop();
    node.truncation = node.truncateLoop();
    return node;
  }

  get id(): string {
    return this.membership.self.id;
  }

  /** Creates a collection for the whole cluster, placed on the live nodes. */
  async createCollection(input: CreateClusterCollection): Promise<ClusterCollection> {
    // Not yet replicated: a shard operation carries one dense vector per point (docs/cluster.md, "Not yet").
    for (const field of ['sparse_vectors', 'named_vectors'] as const) {
      const declared = (input.config as unknown as Record<string, unknown>)[field];
      if (declared !== undefined && declared !== null && Object.keys(declared).length > 0)
        throw badInput(field, `${field.replace('_', ' ')} are not replicated over a cluster yet; create the collection on a single node`);
    }
    const live = (await this.membership.liveNodes()).map((n) => n.id);
    const created = await this.catalog.create(input, live);
    // The collection exists from here on: a refresh that fails now (NATS busy) is the apply loop's
    // to repeat, and the engine's wait for the replicas to serve says whether they came up.
    await this.refresh().catch((error: unknown) =>
      this.options.warn?.(`collection ${created.config.name}: taking up its replicas failed; trying again`, error),
    );
    return created;
  }

  /**
   * Takes up every replica the catalogue places on this node that it does not run yet, and drops
   * the local replicas of collections the catalogue no longer has (dropped on any node). Runs at
   * start, after a create or drop here, and every REFRESH_MS in the apply loop.
   */
  refresh(): Promise<void> {
    // One at a time: the loop's refresh and a create's ran together and both created one replica (ERR_COLLECTION_EXISTS, CI on Node 22 and 26).
    const next = this.refreshing.then(() => this.refreshNow());
    this.refreshing = next.catch(() => undefined);
    return next;
  }

  private refreshing: Promise<void> = Promise.resolve();

  private async refreshNow(): Promise<void> {
    const collections = await this.catalog.list();
    this.known = new Map(collections.map((c) => [c.config.name, c]));
    const placed = new Set<string>();
    for (const collection of collections) {
      for (const [shard, nodes] of collection.placement.entries()) {
        if (!nodes.includes(this.id)) continue;
        const local = replicaName(collection, shard);
        placed.add(local);
        if (this.replicas.has(local) || this.seeding.has(local)) continue;
        const versions = this.versionsOf(local) as LogVersions;
        if (!this.db.list().some((c) => c.name === local)) {
          const source = await this.seedSource(collection, shard);
          if (source !== undefined) {
            this.seed(collection, shard, source);
            continue;
          }
          // No copy to seed from, and the log no longer starts at its first entry: replaying it
          // would miss what was cut. Wait for a holder to serve.
          const log = await this.logOf(collection, shard);
          const { first, last } = await log.state();
          if (first > 1 && last >= first) {
            this.options.warn?.(
              `replica ${collection.config.name}/${shard}: no serving replica to seed it from, and its log starts at ${first}; waiting for one`,
            );
            continue;
          }
          await this.db.createCollection({ ...collection.config, name: local }, { versions });
          await this.db.collection(local).annotate(REPLICA_ANNOTATION, { node: this.id });
          this.seeded.fromLog++;
        }
        await this.takeUp(collection, shard);
      }
    }
    for (const info of this.db.list()) {
      if (!info.name.startsWith('shard-') || placed.has(info.name)) continue;
      this.replicas.get(info.name)?.replica.retire('no longer placed on this node');
      this.replicas.delete(info.name);
      this.wakers.get(info.name)?.unsubscribe();
      this.wakers.delete(info.name);
      await this.db.dropCollection(info.name);
      // Its position no longer holds the log back (a node that stopped holding it).
      await this.appliedPositions.forget(info.name, this.id).catch(() => undefined);
    }
  }

  /** Holds the local collection of `shard`'s replica as a replica: it follows its log from its applied position. */
  private async takeUp(collection: ClusterCollection, shard: number): Promise<void> {
    const local = replicaName(collection, shard);
    const log = await this.logOf(collection, shard);
    if (this.replicas.has(local)) return;
    const versions = this.versionsOf(local) as LogVersions;
    this.replicas.set(local, { collection: collection.config.name, shard, replica: new ShardReplica(log, this.db.collection(local), versions) });
    this.wakers.set(local, this.options.nc.subscribe(log.spec.subject, { callback: () => this.poke() }));
    this.poke();
  }

  /** A live node other than this one whose replica of `shard` serves reads, in random order; undefined when none does. */
  private async seedSource(collection: ClusterCollection, shard: number): Promise<{ readonly id: string; readonly reader: RemoteShardReader } | undefined> {
    const holders = new Set(collection.placement[shard]);
    const candidates = shuffled((await this.membership.liveNodes()).filter((n) => n.id !== this.id && holders.has(n.id)));
    const local = replicaName(collection, shard);
    for (const node of candidates) {
      const reader = new RemoteShardReader(node.advertise, this.options.apiKey);
      if (await reader.serves(local)) return { id: node.id, reader };
    }
    return undefined;
  }

  /**
   * Imports `shard`'s replica from `source`'s export in the background, marked as this node's in
   * the import's commit (a crash mid-way leaves nothing: the next start seeds again), then holds
   * it: it follows its log from the export's applied position. A failed import is logged and
   * tried again at the next refresh.
   */
  private seed(collection: ClusterCollection, shard: number, source: { readonly id: string; readonly reader: RemoteShardReader }): void {
    const local = replicaName(collection, shard);
    this.seeding.set(local, { collection: collection.config.name, shard, from: source.id });
    const started = performance.now();
    void this.db
      .importCollection(source.reader.exportOf(local), {
        name: local,
        annotations: { [REPLICA_ANNOTATION]: { node: this.id } },
        versions: this.versionsOf(local) as LogVersions,
      })
      .then(async (info) => {
        this.seeded.fromPeer++;
        if (!this.running) return;
        // Held at once, so that it is never neither seeding nor held (/readyz would be ready in between).
        await this.takeUp(collection, shard);
        this.options.info?.(
          `replica ${collection.config.name}/${shard} seeded from node ${source.id}: ${info.points_count} points in ${Math.round(performance.now() - started)} ms`,
        );
      })
      .catch((error: unknown) => this.options.warn?.(`replica ${collection.config.name}/${shard}: seeding from node ${source.id} failed; trying again`, error))
      .finally(() => this.seeding.delete(local));
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

  /**
   * `name`'s entry as the last catalogue refresh read it (at most REFRESH_MS old), else from the
   * bucket: a request does not wait on the bucket, which pauses while its NATS leader changes.
   */
  private async collectionOf(name: string): Promise<ClusterCollection> {
    const known = this.known.get(name);
    if (known !== undefined) return known;
    let collection: ClusterCollection | undefined;
    try {
      collection = await this.catalog.get(name);
    } catch (error) {
      throw new KithError('ERR_UNAVAILABLE', `the catalogue did not answer (NATS): ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    if (collection === undefined) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist`);
    return collection;
  }

  /**
   * Checked by the engine's own point check (collection/prepare-points.ts), as the replicas will
   * check each part: an entry every replica refuses would stop them all at it.
   */
  async upsert(
    name: string,
    points: readonly { id: string | number; vector: readonly number[]; payload?: Record<string, unknown> | null }[],
    options: { readonly mode?: UpdateMode; readonly condition?: Record<string, unknown> } = {},
  ): Promise<Written> {
    const collection = await this.collectionOf(name);
    await preparePoints(points, parseCollectionConfig(collection.config));
    // Parsed here as each replica will parse it: a filter they all refuse would stop them all.
    if (options.condition !== undefined) parseFilter(options.condition, 'update_filter');
    const checked: ShardPoint[] = points.map((p, i) => ({
      id: normalizePointId(p.id, `points[${i}].id`),
      vector: [...p.vector],
      ...(p.payload === undefined || p.payload === null ? {} : { payload: p.payload }),
    }));
    return this.publish(collection, {
      op: 'upsert',
      points: checked,
      ...(options.mode === undefined || options.mode === 'upsert' ? {} : { mode: options.mode }),
      ...(options.condition === undefined ? {} : { condition: options.condition }),
    });
  }

  /** New vectors for listed points (checked here as each replica will check them); the engine checks the ids exist. */
  async updateVectors(
    name: string,
    points: readonly { id: string | number; vector: readonly number[] }[],
    options: { readonly condition?: Record<string, unknown> } = {},
  ): Promise<Written> {
    const collection = await this.collectionOf(name);
    await prepareVectors(points, parseCollectionConfig(collection.config));
    // Parsed here as each replica will parse it: a filter they all refuse would stop them all.
    if (options.condition !== undefined) parseFilter(options.condition, 'update_filter');
    return this.publish(collection, {
      op: 'vectors',
      points: points.map((p, i) => ({ id: normalizePointId(p.id, `points[${i}].id`), vector: [...p.vector] })),
      ...(options.condition === undefined ? {} : { condition: options.condition }),
    });
  }

  async deleteIds(name: string, ids: readonly (string | number)[]): Promise<Written> {
    const collection = await this.collectionOf(name);
    new RequestCost().add('ids', ids.length, 'points');
    return this.publish(collection, { op: 'delete_ids', ids: ids.map((id, i) => normalizePointId(id, `points[${i}]`)) });
  }

  async deleteByFilter(name: string, filter: Record<string, unknown>): Promise<Written> {
    const collection = await this.collectionOf(name);
    // Parsed here as each replica will parse it: a filter they all refuse would stop them all.
    parseFilter(filter, 'filter');
    return this.publish(collection, { op: 'delete_filter', filter });
  }

  /**
   * A payload operation on listed ids or on a filter's matches, checked as one node checks it
   * (collection/payload-operations.ts). Whether listed ids exist is the caller's to check: the
   * replicas pass over ids they do not hold.
   */
  async changePayloads(name: string, selection: PointSelection, operation: PayloadOperation): Promise<Written> {
    const collection = await this.collectionOf(name);
    payloadUpdate(operation);
    const checked = await checkSelection(selection);
    if (Array.isArray(checked)) return this.publish(collection, { op: 'payload', ids: checked as readonly string[], operation });
    return this.publish(collection, { op: 'payload', filter: selection.filter as Record<string, unknown>, operation });
  }

  /**
   * Appends each shard's part (split into entries of at most ENTRY_BYTES, in order), all shards
   * at once; answers once every entry is acknowledged.
   */
  private async publish(collection: ClusterCollection, operation: ShardOperation): Promise<Written> {
    const writeId = randomBytes(12).toString('hex');
    const entries = new Map<number, WrittenEntry[]>();
    await Promise.all(
      [...splitByShard(operation, collection.shardNumber)].map(async ([shard, part]) => {
        const written: WrittenEntry[] = [];
        entries.set(shard, written);
        for (const [i, entry] of entriesOf(part).entries()) {
          const msg = `${writeId}-${shard}-${i}`;
          const data = encodeShardOperation(entry, msg);
          written.push({ seq: await this.append(collection, shard, data, msg), msg, data });
        }
      }),
    );
    return { collection, entries };
  }

  /** Appends one entry to `shard`'s log under `msg` (again, when its first acknowledgement proved wrong); its position. */
  async append(collection: ClusterCollection, shard: number, data: Uint8Array, msg: string): Promise<number> {
    const log = await this.logOf(collection, shard);
    const started = performance.now();
    const seq = await log.append(data, msg);
    this.onAppend?.((performance.now() - started) / 1000);
    return seq;
  }

  /**
   * A read barrier: per shard, the position of a marker entry appended now (a delete of no ids,
   * which only moves a replica's applied position). Every write acknowledged before the call is
   * before it in its log, so a replica that has applied the marker holds them all: a strong read.
   * Asking the stream for its last position instead is not enough: a stream leader stopped and
   * resumed answers from its own state until it learns it was deposed (the NATS fault test saw it).
   */
  async readBarrier(collection: ClusterCollection): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    const marker = encodeShardOperation({ op: 'delete_ids', ids: [] });
    const id = randomBytes(12).toString('hex');
    await Promise.all(
      collection.placement.map(async (_nodes, shard) => {
        out.set(shard, await (await this.logOf(collection, shard)).append(marker, `barrier-${id}-${shard}`));
      }),
    );
    return out;
  }

  /** This node's replica of `shard` of `collection`, when it holds one. */
  localReplica(collection: Pick<ClusterCollection, 'uid'>, shard: number): LocalReplica | undefined {
    return this.replicas.get(replicaName(collection, shard));
  }

  /** The replica held in the local collection `local`, when this node holds it. */
  replicaOf(local: string): ShardReplica | undefined {
    return this.replicas.get(local)?.replica;
  }

  /** Waits until this node's replica named `local` has applied `position`; the entry's outcome when still kept. */
  async waitLocal(local: string, position: number, timeoutMs = 30_000): Promise<EntryOutcome | undefined> {
    const replica = this.replicas.get(local);
    if (replica === undefined) throw new KithError('ERR_UNAVAILABLE', `this node holds no replica "${local}"`);
    return replica.replica.whenApplied(position, timeoutMs);
  }

  /** The replicas this node holds, with their state and their log's last position (null when the log does not answer). */
  replicaStates(): Promise<ReplicaState[]> {
    const seeding = [...this.seeding.entries()].map(
      ([local, s]): ReplicaState => ({
        collection: s.collection,
        shard: s.shard,
        local,
        applied: 0,
        appliedSinceStart: 0,
        serving: false,
        last: null,
        seedFrom: s.from,
      }),
    );
    return Promise.all(
      [...this.replicas.entries()].map(async ([local, r]): Promise<ReplicaState> => {
        const { applied } = r.replica.position();
        const last = await r.replica.logLast().catch(() => null);
        return {
          collection: r.collection,
          shard: r.shard,
          local,
          applied,
          appliedSinceStart: r.replica.appliedSinceStart,
          serving: r.replica.serving,
          last,
          ...(r.replica.stopped === undefined ? {} : { stopped: r.replica.stopped.message }),
        };
      }),
    ).then((held) => [...held, ...seeding]);
  }

  /** Removes `name` from the cluster: its catalogue entry, then its logs; each node drops its replicas on its next refresh. */
  async dropCollection(name: string): Promise<void> {
    const collection = await this.collectionOf(name);
    await this.catalog.delete(name);
    await Promise.all(collection.placement.map(async (_nodes, shard) => (await this.logOf(collection, shard)).delete()));
    for (let shard = 0; shard < collection.shardNumber; shard++) this.logs.delete(shardLogSpec(collection, shard, 1).stream);
    await this.refresh();
  }

  /** Rewrites `name`'s placement (catalog.ts, a compare-and-set) and takes up or drops this node's replicas at once. */
  async changePlacement(name: string, change: (current: ClusterCollection) => ClusterCollection['placement']): Promise<ClusterCollection> {
    const changed = await this.catalog.updatePlacement(name, change);
    this.known.set(name, changed);
    await this.refresh();
    return changed;
  }

  /** Sets `key` of `name`'s annotations in the catalogue (what a surface keeps with a collection). */
  async annotate(name: string, key: string, value: unknown): Promise<void> {
    const changed = await this.catalog.annotate(name, key, value);
    this.known.set(name, changed);
  }

  /** The cluster's collections, by name. */
  collections(): Promise<ClusterCollection[]> {
    return this.catalog.list();
  }

  /**
   * `name`'s catalogue entry; ERR_COLLECTION_NOT_FOUND when there is none. As the last refresh
   * read it, or, `fresh`, from the bucket (a placement changed on another node since).
   */
  async collection(name: string, options: { readonly fresh?: boolean } = {}): Promise<ClusterCollection> {
    if (options.fresh === true) this.known.delete(name);
    const collection = await this.collectionOf(name);
    this.known.set(name, collection);
    return collection;
  }

  /** Waits until this node's replicas of `name` have applied `token` (shards it holds no replica of are skipped). */
  async waitApplied(name: string, token: WriteToken, timeoutMs = 30_000): Promise<void> {
    for (const local of this.replicas.values()) {
      const position = token[local.shard];
      if (local.collection === name && position !== undefined) await local.replica.whenApplied(position, timeoutMs);
    }
  }

  /** This node's replicas of `name`: shard → local collection name. */
  localShards(name: string): Map<number, string> {
    const out = new Map<number, string>();
    for (const [local, r] of this.replicas) if (r.collection === name) out.set(r.shard, local);
    return out;
  }

  private async applyLoop(): Promise<void> {
    let refreshed = Date.now();
    while (this.running) {
      if (Date.now() - refreshed >= REFRESH_MS) {
        refreshed = Date.now();
        await this.refresh().catch((error: unknown) => this.options.warn?.('catalogue refresh failed', error));
      }
      let applied = 0;
      this.poked = false;
      for (const [name, local] of [...this.replicas.entries()]) {
        if (!this.running) return;
        if (local.replica.stopped !== undefined) continue;
        try {
          applied += await local.replica.catchUp({ maxEntries: TURN_ENTRIES, waitMs: 0 });
        } catch (error) {
          // catchUp sets `stopped` when the replica cannot go on; other errors (the network) are retried next turn.
          const stopped = local.replica.stopped as KithError | undefined;
          if (stopped instanceof LogCutBehind) {
            await this.dropBehindCut(name, stopped).catch((dropError: unknown) =>
              this.options.warn?.(`replica ${local.collection}/${local.shard}: dropping it to seed it again failed`, dropError),
            );
            continue;
          }
          this.options.warn?.(
            `replica ${local.collection}/${local.shard}${stopped === undefined ? '' : ' stopped'}: ${stopped?.message ?? String(error)}`,
            error,
          );
        }
      }
      if (applied === 0 && !this.poked) await this.idle();
    }
  }

  /**
   * A replica the log was cut ahead of (it was seeded from the log while a cut was made, or it
   * was not yet a placed holder then): its local copy goes, and the next refresh seeds it again
   * from a serving peer.
   */
  private dropBehindCut(local: string, cause: LogCutBehind): Promise<void> {
    // In turn with the refreshes, which take up and drop replicas too.
    const next = this.refreshing.then(async () => {
      this.options.warn?.(`replica ${local} is behind its log's cut (${cause.message}); seeding it again from a peer`);
      this.replicas.get(local)?.replica.retire("behind its log's cut, to be seeded again");
      this.replicas.delete(local);
      this.wakers.get(local)?.unsubscribe();
      this.wakers.delete(local);
      await this.db.dropCollection(local);
    });
    this.refreshing = next.catch(() => undefined);
    return next;
  }

  /** Every `truncateMs`: records this node's applied positions, then cuts the logs it is the first live holder of. */
  private async truncateLoop(): Promise<void> {
    const every = this.options.truncateMs ?? 10_000;
    while (this.running) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, every);
        this.stopTruncation = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (!this.running) return;
      await this.truncateLogs().catch((error: unknown) => this.options.warn?.('recording applied positions or cutting logs failed', error));
    }
  }

  private stopTruncation: (() => void) | undefined;

  private async truncateLogs(): Promise<void> {
    const live = new Set((await this.membership.liveNodes()).map((n) => n.id));
    for (const [local, held] of [...this.replicas]) {
      if (held.replica.stopped !== undefined) continue;
      await this.appliedPositions.record(local, this.id, held.replica.position().applied);
      const collection = this.known.get(held.collection);
      const holders = collection?.placement[held.shard];
      if (collection === undefined || holders === undefined || holders.find((id) => live.has(id)) !== this.id) continue;
      // A shard of one replica keeps its whole log: it is the data's only other copy (a wiped
      // file is replayed from it).
      if (holders.length < 2) continue;
      const positions = await this.appliedPositions.positions(local, holders);
      if (positions === undefined) continue;
      const log = await this.logOf(collection, held.shard);
      const { first, last } = await log.state();
      const cut = cutBelow(positions, last, this.options.logKeep ?? 100_000);
      if (cut >= first) this.truncatedEntries += await log.truncateBefore(cut + 1);
    }
  }

  private poke(): void {
    this.poked = true;
    this.wake?.();
  }

  /** Until an entry is appended to a log this node follows, or IDLE_WAIT_MS. */
  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, IDLE_WAIT_MS);
      this.wake = done;
    });
  }

  /**
   * Stops the node. `crash`: as a kill would look to the others, the membership entry left to
   * expire; otherwise it leaves at once.
   */
  async stop(options: { readonly crash?: boolean } = {}): Promise<void> {
    this.running = false;
    this.wake?.();
    this.stopTruncation?.();
    await this.truncation.catch(() => undefined);
    for (const subscription of this.wakers.values()) subscription.unsubscribe();
    await this.loop.catch(() => undefined);
    if (options.crash === true) this.membership.stopHeartbeat();
    else await this.membership.leave();
    await this.db.close();
  }
}
