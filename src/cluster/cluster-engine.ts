/**
 * The verbs of a sharded collection, as kith's API offers them on a cluster node: writes through
 * the shard logs (cluster-node.ts), reads fanned out to one serving replica per shard and merged.
 *
 * - Which replica: this node's own when it holds a serving one, else a live node holding one, in
 *   random order; a replica that fails (its node died, a timeout) is passed over for the next. A
 *   shard with no replica left is ERR_UNAVAILABLE (503) naming the shard.
 * - Consistency per read: `eventual` (any serving replica, as it is), a session (`after`: the
 *   positions a write answered with; each shard's replica first applies them) or `strong` (a
 *   marker appended to each shard's log, which the replica applies before it reads: every write
 *   acknowledged before the read is in it).
 * - A write answers once its entries are acknowledged by the log (durable on a majority of the
 *   NATS servers) and applied by one replica of each shard it touched, whose count of changed
 *   points it reports; its token names the positions, for session reads through any node.
 */

import type { PointRecord, ScrollPage } from '../collection/collection.js';
import type { PayloadOperation, PointSelection } from '../collection/payload-operations.js';
import { scoresAscend } from '../core/distance.js';
import { badInput, KithError } from '../core/errors.js';
import { compareIds, normalizePointId } from '../core/point-id.js';
import { LIMITS, parseCollectionConfig } from '../segment/collection-config.js';
import type { ClusterCollection, CreateClusterCollection } from './catalog.js';
import { replicaName } from './catalog.js';
import type { ClusterNode, ReplicaState, WriteToken, Written } from './cluster-node.js';
import type { NodeRecord } from './membership.js';
import { mergeHits } from './merge-hits.js';
import { shuffled } from './placement.js';
import { shardOf } from './shard-of.js';
import {
  LocalShardReader,
  PeerError,
  RemoteShardReader,
  type RetrieveBody,
  type ScrollBody,
  type SearchBody,
  type ShardReader,
  type ShardSearchResult,
} from './shard-reads.js';

export type ReadConsistency =
  | { readonly level: 'eventual' }
  | { readonly level: 'strong' }
  /** Read after a write: each shard's replica first applies the positions of `after`. */
  | { readonly level: 'session'; readonly after: WriteToken };

export const EVENTUAL: ReadConsistency = { level: 'eventual' };

/** A change of where a shard's replicas are (Qdrant's replicate_shard, move_shard, drop_replica). */
export type ReplicaChange =
  | { readonly kind: 'replicate'; readonly shard: number; readonly to: string }
  | { readonly kind: 'move'; readonly shard: number; readonly from: string; readonly to: string }
  | { readonly kind: 'drop'; readonly shard: number; readonly node: string };

/** Appends of one entry whose acknowledged position held another entry, before the write fails. */
const REAPPEND_ATTEMPTS = 10;

/** How long a replicate or move waits for the new replica to catch up before it answers. */
const MOVE_WAIT_MS = 120_000;

/** How long a create waits for the nodes to take up their replicas. */
const CREATE_WAIT_MS = 15_000;

/** How long the live-node list is reused before it is read again from the membership bucket. */
const LIVE_NODES_TTL_MS = 500;

export interface ClusterCollectionInfo {
  readonly name: string;
  readonly shard_number: number;
  readonly replication_factor: number;
  /** Per shard, the nodes holding its replicas. */
  readonly placement: readonly (readonly string[])[];
}

/** The token as text (`shard:position,…`), for a header or a query string. */
export function formatWriteToken(token: WriteToken): string {
  return Object.entries(token)
    .map(([shard, position]) => `${shard}:${position}`)
    .join(',');
}

/** `formatWriteToken`'s text back; a 400 naming `path` when it is not one. */
export function parseWriteToken(text: string, path: string): WriteToken {
  const token: WriteToken = {};
  if (text === '') return token;
  for (const part of text.split(',')) {
    const match = /^(\d{1,4}):(\d{1,16})$/.exec(part);
    if (match === null) throw badInput(path, `expected a write token (shard:position,…) as a write answered, got ${JSON.stringify(text.slice(0, 100))}`);
    token[Number(match[1])] = Number(match[2]);
  }
  return token;
}

export class ClusterEngine {
  private readonly local: LocalShardReader;
  private readonly peers = new Map<string, RemoteShardReader>();
  private live: { readonly at: number; readonly nodes: Promise<NodeRecord[]> } | undefined;

  constructor(
    readonly node: ClusterNode,
    private readonly options: { readonly apiKey?: string } = {},
  ) {
    this.local = new LocalShardReader(node.db, (replica, position) => node.waitLocal(replica, position));
  }

  // ---- collections

  /**
   * Creates the collection and answers once every live node it is placed on has taken up its
   * replicas (they look at the catalogue every second), so that a write right after it finds them.
   */
  async createCollection(input: CreateClusterCollection): Promise<ClusterCollectionInfo> {
    const collection = await this.node.createCollection(input);
    const deadline = Date.now() + CREATE_WAIT_MS;
    await Promise.all(
      collection.placement.flatMap((nodes, shard) =>
        nodes.map(async (id) => {
          if (id === this.node.id) {
            // Its own replicas too: the answer describes the collection, counting on them (a
            // collection placed on this node alone was a 503 until its first turn applied nothing).
            while (this.node.localReplica(collection, shard)?.replica.serving !== true) {
              if (Date.now() > deadline) throw new Error(`this node's replica of shard ${shard} did not serve`);
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
            return;
          }
          for (;;) {
            const node = (await this.liveNodes()).find((n) => n.id === id);
            if (node === undefined) return;
            try {
              await this.peer(node).applied(replicaName(collection, shard), 0);
              return;
            } catch (error) {
              if (!(error instanceof PeerError) || Date.now() > deadline) throw error;
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
          }
        }),
      ),
    ).catch((error: unknown) => {
      throw new KithError(
        'ERR_UNAVAILABLE',
        `collection "${collection.config.name}" is created, but not every node took up its replicas within ${CREATE_WAIT_MS} ms: ${String(error)}`,
      );
    });
    return infoOf(collection);
  }

  async list(): Promise<ClusterCollectionInfo[]> {
    return (await this.node.collections()).map(infoOf);
  }

  /** The collection's configuration and placement, with its points counted over every shard. */
  async describe(name: string): Promise<{ info: ClusterCollectionInfo; collection: ClusterCollection; pointsCount: number }> {
    // From the catalogue, not this node's copy: a placement changed through another node shows at once.
    const collection = await this.node.collection(name, { fresh: true });
    return { info: infoOf(collection), collection, pointsCount: await this.count(name, undefined, EVENTUAL) };
  }

  dropCollection(name: string): Promise<void> {
    return this.node.dropCollection(name);
  }

  /** The live nodes and this node's replicas, with their lag behind their logs (GET /cluster). */
  async state() {
    const [nodes, replicas] = await Promise.all([this.node.membership.liveNodes(), this.node.replicaStates()]);
    return {
      node: this.node.id,
      nodes: nodes.map(({ id, advertise, joined }) => ({ id, advertise, joined })),
      replicas: replicas.map((r) => ({
        ...r,
        lag: r.last === null ? null : Math.max(0, r.last - r.applied),
        state: replicaStateName(r),
      })),
    };
  }

  /** Whether every replica this node holds is serving and has caught up with its log as it was at the call (/readyz). */
  async ready(): Promise<{ ready: boolean; behind: string[] }> {
    const behind = (await this.node.replicaStates())
      .filter((r) => r.stopped !== undefined || r.last === null || r.applied < r.last)
      .map((r) => `${r.collection}/${r.shard}`);
    return { ready: behind.length === 0, behind };
  }

  // ---- replicas

  /**
   * Qdrant's shard operations (`POST /collections/{name}/cluster`): add a replica of a shard on a
   * node (`replicate`), move one (`move`: add on `to`, wait until it serves, then drop `from`), or
   * drop one (`drop`, never the last). A new replica is seeded from its shard's log, which holds
   * every entry (docs/cluster.md). Answers once the change is done; a replica that has not caught
   * up within MOVE_WAIT_MS is left placed (it serves once it has) and the call is a 503 saying so.
   */
  async changeReplicas(name: string, change: ReplicaChange): Promise<ClusterCollectionInfo> {
    const collection = await this.node.collection(name);
    const shard = change.shard;
    if (!Number.isInteger(shard) || shard < 0 || shard >= collection.shardNumber)
      throw badInput('shard_id', `expected a shard of "${name}", 0 to ${collection.shardNumber - 1}, got ${shard}`);
    const holders = collection.placement[shard] as readonly string[];
    if (change.kind === 'drop') {
      if (!holders.includes(change.node)) throw badInput('peer_id', `node "${change.node}" holds no replica of shard ${shard}`);
      if (holders.length === 1) throw badInput('peer_id', `node "${change.node}" holds the last replica of shard ${shard}; move it instead`);
      return infoOf(await this.node.changePlacement(name, (current) => withoutNode(current, shard, change.node)));
    }
    if (change.kind === 'move' && !holders.includes(change.from)) throw badInput('from_peer_id', `node "${change.from}" holds no replica of shard ${shard}`);
    if (holders.includes(change.to)) throw badInput('to_peer_id', `node "${change.to}" already holds a replica of shard ${shard}`);
    const target = (await this.liveNodes()).find((n) => n.id === change.to);
    if (target === undefined) throw badInput('to_peer_id', `node "${change.to}" is not a live node of the cluster`);
    const added = await this.node.changePlacement(name, (current) => {
      const placement = current.placement.map((nodes) => [...nodes]);
      if (!(placement[shard] as string[]).includes(change.to)) (placement[shard] as string[]).push(change.to);
      return placement;
    });
    const replica = replicaName(added, shard);
    const deadline = Date.now() + MOVE_WAIT_MS;
    for (;;) {
      const serving = change.to === this.node.id ? this.node.localReplica(added, shard)?.replica.serving === true : await this.peer(target).serves(replica);
      if (serving) break;
      if (Date.now() > deadline)
        throw new KithError(
          'ERR_UNAVAILABLE',
          `the replica of shard ${shard} on "${change.to}" is placed but has not caught up within ${MOVE_WAIT_MS} ms; it serves once it has`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (change.kind === 'replicate') return infoOf(added);
    return infoOf(await this.node.changePlacement(name, (current) => withoutNode(current, shard, change.from)));
  }

  // ---- writes

  async upsert(
    name: string,
    points: Parameters<ClusterNode['upsert']>[1],
    options: Parameters<ClusterNode['upsert']>[2] = {},
  ): Promise<{ upserted: number; token: WriteToken }> {
    const written = await this.node.upsert(name, points, options);
    const applied = await this.settled(written);
    const conditional = (options.mode !== undefined && options.mode !== 'upsert') || options.condition !== undefined;
    // Distinct ids, as one node counts them; a conditional upsert: what the replicas admitted.
    return { upserted: conditional ? applied : new Set(points.map((p, i) => normalizePointId(p.id, `points[${i}].id`))).size, token: tokenOf(written) };
  }

  async deleteIds(name: string, ids: readonly (string | number)[]): Promise<{ deleted: number; token: WriteToken }> {
    const written = await this.node.deleteIds(name, ids);
    return { deleted: await this.settled(written), token: tokenOf(written) };
  }

  async deleteByFilter(name: string, filter: Record<string, unknown>): Promise<{ deleted: number; token: WriteToken }> {
    const written = await this.node.deleteByFilter(name, filter);
    return { deleted: await this.settled(written), token: tokenOf(written) };
  }

  /** New vectors for listed points, which must exist, checked as `changePayloads` checks its ids. */
  async updateVectors(
    name: string,
    points: readonly { id: string | number; vector: readonly number[] }[],
    options: { readonly condition?: Record<string, unknown> } = {},
  ): Promise<{ updated: number; token: WriteToken }> {
    await this.requireIds(
      name,
      points.map((p, i) => normalizePointId(p.id, `points[${i}].id`)),
    );
    const written = await this.node.updateVectors(name, points, options);
    return { updated: await this.settled(written), token: tokenOf(written) };
  }

  /** ERR_POINT_NOT_FOUND for the first listed id no replica holds, by a strong read. */
  private async requireIds(name: string, ids: readonly string[]): Promise<void> {
    const found = new Set((await this.retrieve(name, { ids: [...ids], with_payload: false }, { level: 'strong' })).map((r) => r.id));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(missing)} does not exist in collection "${name}"`);
  }

  /**
   * Listed ids must exist, as on one node (ERR_POINT_NOT_FOUND): checked by a strong read before
   * the change is logged. A point deleted between the check and the change is passed over.
   */
  async changePayloads(name: string, selection: PointSelection, operation: PayloadOperation): Promise<{ updated: number; token: WriteToken }> {
    if (Array.isArray(selection.points))
      await this.requireIds(
        name,
        selection.points.map((id: unknown, i) => normalizePointId(id, `points[${i}]`)),
      );
    const written = await this.node.changePayloads(name, selection, operation);
    return { updated: await this.settled(written), token: tokenOf(written) };
  }

  /**
   * Waits for one replica of each written shard to apply the write; the points it changed there,
   * summed. Each entry's replica also says which entry it applied at the acknowledged position.
   * When that is another write's, the acknowledgement was wrong: the entry is appended again under
   * the same message id, which the stream stores once (or answers with where it already is), and
   * checked again. Its position in the write's token moves with it. (The one wrong acknowledgement
   * the NATS fault test found, a duplicate answered at position 0, shard-log.ts retries itself;
   * this check is what would catch another kind.)
   */
  private async settled(written: Written): Promise<number> {
    const counts = await Promise.all(
      [...written.entries].map(async ([shard, entries]) => {
        let changed = 0;
        for (const entry of entries) {
          for (let attempt = 1; ; attempt++) {
            const outcome = await this.onReplica(written.collection, shard, (reader, replica) => reader.applied(replica, entry.seq), { catchingUp: true });
            if (outcome?.msg === undefined || outcome.msg === entry.msg) {
              changed += outcome?.changed ?? 0;
              break;
            }
            if (attempt === REAPPEND_ATTEMPTS)
              throw new KithError(
                'ERR_UNAVAILABLE',
                `shard ${shard} of "${written.collection.config.name}": the log acknowledged the write at ${entry.seq}, which holds another entry, ${attempt} times; the write may not be stored`,
              );
            // A stale leader keeps answering until it learns it was deposed (seconds): give it that time.
            await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
            this.node.reappends++;
            entry.seq = await this.node.append(written.collection, shard, entry.data, entry.msg);
          }
        }
        return changed;
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  // ---- reads

  async search(name: string, body: SearchBody, read: ReadConsistency): Promise<ShardSearchResult> {
    const collection = await this.node.collection(name);
    const limit = body.limit ?? 10;
    const offset = body.offset ?? 0;
    if (body.mmr !== undefined && body.mmr !== null && collection.shardNumber > 1)
      throw badInput('mmr', 'not supported on a collection of more than one shard yet (docs/cluster.md)');
    // Every shard gives its best offset + limit; the merge keeps what one node would have.
    const perShard: SearchBody = collection.shardNumber === 1 ? body : { ...body, limit: mergedLimit(offset, limit), offset: 0 };
    const waits = await this.waitsFor(collection, read);
    const results = await Promise.all(
      collection.placement.map((_nodes, shard) => this.onReplica(collection, shard, (reader, replica) => reader.search(replica, perShard, waits.get(shard)))),
    );
    // One shard answers as one node does: nothing to merge.
    if (collection.shardNumber === 1) return results[0] as ShardSearchResult;
    const ascending = scoresAscend(parseCollectionConfig(collection.config).distance);
    const points = mergeHits(
      results.map((r) => r.points),
      limit,
      ascending,
      offset,
    );
    const explain = results.find((r) => r.explain !== undefined)?.explain;
    return explain === undefined ? { points } : { points, explain };
  }

  /**
   * A page in id order over every shard: each gives its page from the cursor (its first
   * offset + limit, to skip `offset`), the merge keeps the first `limit` after `offset`.
   */
  async scroll(name: string, body: ScrollBody, read: ReadConsistency): Promise<ScrollPage> {
    const collection = await this.node.collection(name);
    const waits = await this.waitsFor(collection, read);
    const offset = body.offset ?? 0;
    const { offset: _offset, ...rest } = body;
    const perShard: ScrollBody = { ...rest, limit: mergedLimit(offset, body.limit) };
    const pages = await Promise.all(
      collection.placement.map((_nodes, shard) => this.onReplica(collection, shard, (reader, replica) => reader.scroll(replica, perShard, waits.get(shard)))),
    );
    const all = pages.flatMap((page) => page.points).sort((a, b) => compareIds(a.id, b.id));
    const end = offset + body.limit;
    // The next page starts at the first id not returned: the first left over, or a shard's own next, whichever is lower.
    const candidates = [...(all.length > end ? [(all[end] as PointRecord).id] : []), ...pages.flatMap((p) => (p.next === undefined ? [] : [p.next]))];
    const next = candidates.sort(compareIds)[0];
    const points = all.slice(offset, end);
    return next === undefined ? { points } : { points, next };
  }

  async count(name: string, filter: unknown, read: ReadConsistency): Promise<number> {
    const collection = await this.node.collection(name);
    const waits = await this.waitsFor(collection, read);
    const counts = await Promise.all(
      collection.placement.map((_nodes, shard) => this.onReplica(collection, shard, (reader, replica) => reader.count(replica, filter, waits.get(shard)))),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  /** The listed points that exist, in the order listed, each once: each id asked of its own shard. */
  async retrieve(name: string, body: RetrieveBody, read: ReadConsistency): Promise<PointRecord[]> {
    const collection = await this.node.collection(name);
    const ids = [...new Set(body.ids.map((id: unknown, i) => normalizePointId(id, `ids[${i}]`)))];
    const byShard = new Map<number, string[]>();
    for (const id of ids) {
      const shard = shardOf(id, collection.shardNumber);
      const list = byShard.get(shard);
      if (list === undefined) byShard.set(shard, [id]);
      else list.push(id);
    }
    const waits = await this.waitsFor(collection, read);
    const found = new Map<string, PointRecord>();
    await Promise.all(
      [...byShard].map(async ([shard, shardIds]) => {
        const records = await this.onReplica(collection, shard, (reader, replica) => reader.retrieve(replica, { ...body, ids: shardIds }, waits.get(shard)));
        for (const record of records) found.set(record.id, record);
      }),
    );
    return ids.flatMap((id) => {
      const record = found.get(id);
      return record === undefined ? [] : [record];
    });
  }

  /** Per shard, the position its replica must have applied before it reads. */
  private async waitsFor(collection: ClusterCollection, read: ReadConsistency): Promise<Map<number, number>> {
    if (read.level === 'eventual') return new Map();
    if (read.level === 'strong') return this.node.readBarrier(collection);
    const waits = new Map<number, number>();
    for (const [shard, position] of Object.entries(read.after)) {
      if (Number(shard) >= collection.shardNumber)
        throw badInput('consistency', `the write token names shard ${shard}; "${collection.config.name}" has ${collection.shardNumber}`);
      waits.set(Number(shard), position);
    }
    return waits;
  }

  private liveNodes(): Promise<NodeRecord[]> {
    const now = Date.now();
    if (this.live === undefined || now - this.live.at > LIVE_NODES_TTL_MS) {
      const nodes = this.node.membership.liveNodes();
      nodes.catch(() => {
        this.live = undefined;
      });
      this.live = { at: now, nodes };
    }
    return this.live.nodes;
  }

  private peer(node: NodeRecord): RemoteShardReader {
    let reader = this.peers.get(node.advertise);
    if (reader === undefined) {
      reader = new RemoteShardReader(node.advertise, this.options.apiKey);
      this.peers.set(node.advertise, reader);
    }
    return reader;
  }

  /**
   * Runs `read` on one serving replica of `shard`: this node's first, then live peers holding one,
   * in random order; a peer that fails is passed over. ERR_UNAVAILABLE when none answers.
   * `catchingUp`: a replica still catching up will do (a write waiting for its entry to apply).
   */
  private async onReplica<T>(
    collection: ClusterCollection,
    shard: number,
    read: (reader: ShardReader, replica: string) => Promise<T>,
    options: { readonly catchingUp?: boolean; readonly placementRead?: boolean } = {},
  ): Promise<T> {
    const replica = replicaName(collection, shard);
    const holders = collection.placement[shard] ?? [];
    const own = this.node.localReplica(collection, shard);
    const tried: string[] = [];
    if (own !== undefined && (own.replica.serving || (options.catchingUp === true && own.replica.stopped === undefined))) {
      try {
        return await read(this.local, replica);
      } catch (error) {
        // Dropped while the read waited on it (a move away): the shard's other holders answer.
        if (this.node.localReplica(collection, shard) === own) throw error;
      }
    }
    const live = new Map((await this.liveNodes()).map((n) => [n.id, n]));
    const peers = shuffled(holders.filter((id) => id !== this.node.id && live.has(id)));
    for (const id of peers) {
      try {
        return await read(this.peer(live.get(id) as NodeRecord), replica);
      } catch (error) {
        if (!(error instanceof PeerError)) throw error;
        if (error.answered !== undefined) throw error.answered;
        tried.push(`${id} (${error.message})`);
      }
    }
    // The placement read here may be up to a refresh old: a replica moved since is found under the new one.
    if (options.placementRead !== true) {
      const fresh = await this.node.collection(collection.config.name, { fresh: true });
      if (fresh.uid === collection.uid && (fresh.placement[shard] ?? []).join() !== holders.join())
        return this.onReplica(fresh, shard, read, { ...options, placementRead: true });
    }
    const why =
      own === undefined
        ? ''
        : own.replica.stopped !== undefined
          ? `this node's replica stopped: ${own.replica.stopped.message}`
          : "this node's replica is catching up with its log";
    throw new KithError(
      'ERR_UNAVAILABLE',
      `shard ${shard} of "${collection.config.name}" has no serving replica (placed on ${holders.join(', ')}${tried.length > 0 ? `; tried ${tried.join('; ')}` : '; none of them is live'}${why === '' ? '' : `; ${why}`})`,
    );
  }
}

/** The placement without `node`'s replica of `shard`; never a shard without replicas (another change may have run in between). */
/**
 * What each shard is asked for so that the merge holds every hit one node would return: its
 * first offset + limit. A replica returns at most LIMITS.limit.max, hence the bound.
 */
function mergedLimit(offset: number, limit: number): number {
  if (offset + limit > LIMITS.limit.max)
    throw badInput(
      'offset',
      `offset + limit is at most ${LIMITS.limit.max} on a collection of several shards (each shard returns that many for the merge); got ${offset} + ${limit}`,
    );
  return offset + limit;
}

function withoutNode(collection: ClusterCollection, shard: number, node: string): ClusterCollection['placement'] {
  const placement = collection.placement.map((nodes, i) => (i === shard ? nodes.filter((id) => id !== node) : [...nodes]));
  if ((placement[shard] as string[]).length === 0) throw badInput('peer_id', `node "${node}" holds the last replica of shard ${shard}`);
  return placement;
}

function infoOf(collection: ClusterCollection): ClusterCollectionInfo {
  return {
    name: collection.config.name,
    shard_number: collection.shardNumber,
    replication_factor: collection.replicationFactor,
    placement: collection.placement,
  };
}

function tokenOf(written: Written): WriteToken {
  const token: WriteToken = {};
  for (const [shard, entries] of written.entries) token[shard] = Math.max(...entries.map((e) => e.seq));
  return token;
}

/** GET /cluster's `state` of a replica: seeding (imported from a peer), catching_up (following its log, not serving yet), serving, stopped. */
function replicaStateName(r: ReplicaState): 'seeding' | 'catching_up' | 'serving' | 'stopped' {
  if (r.stopped !== undefined) return 'stopped';
  if (r.seedFrom !== undefined) return 'seeding';
  return r.serving ? 'serving' : 'catching_up';
}
