/**
 * Which nodes are alive: a JetStream key-value bucket (`kith_nodes`) whose entries expire after
 * the membership TTL. A node creates its entry when it joins and rewrites it every heartbeat; a
 * node that dies stops rewriting it, and JetStream removes it within the TTL, so the others stop
 * counting it within a few seconds without any failure detector of ours.
 *
 * - One id, one node: joining creates the entry only if no live node holds the id
 *   (ERR_NODE_ID_TAKEN), and every heartbeat is a compare-and-set on the entry's revision, so a
 *   node that finds its entry taken over (it was gone longer than the TTL and another took the
 *   id) stops and says so (`lost`) instead of fighting for it.
 * - Leaving deletes the entry at once.
 */
import type { KV } from '@nats-io/kv';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { KithError } from '../core/errors.js';
import { kvRecord, kvValue, kvValues } from './kv-values.js';

export const NODES_BUCKET = 'kith_nodes';

export interface NodeRecord {
  readonly id: string;
  /** The URL other nodes and clients reach this node's HTTP API at. */
  readonly advertise: string;
  /** When it joined (RFC 3339). */
  readonly joined: string;
}

export interface MembershipOptions {
  readonly nodeId: string;
  readonly advertise: string;
  /** How long an entry lives without a heartbeat, in ms. */
  readonly ttlMs?: number;
  /** How often the entry is rewritten, in ms (well under the TTL). */
  readonly heartbeatMs?: number;
  /** Copies of the bucket (1, 3 or 5; at most the NATS servers). */
  readonly replicas?: number;
}

const encoder = new TextEncoder();

/** A node id: what a NATS subject token and a KV key allow, and readable in logs. */
const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class Membership {
  /** Why this node stopped being a member (its entry was taken over or could not be rewritten). */
  lost: KithError | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** A beat (with its recovery) is under way: the next one waits its turn. */
  private beating = false;

  private constructor(
    private readonly kv: KV,
    readonly self: NodeRecord,
    private revision: number,
  ) {}

  static async join(nc: NatsConnection, options: MembershipOptions): Promise<Membership> {
    if (!NODE_ID.test(options.nodeId))
      throw new KithError('ERR_BAD_INPUT', `node-id: expected 1 to 64 letters, digits, _ or -, got ${JSON.stringify(options.nodeId)}`);
    const ttlMs = options.ttlMs ?? 5000;
    const heartbeatMs = options.heartbeatMs ?? Math.max(100, Math.floor(ttlMs / 5));
    const kv = await new Kvm(nc).create(NODES_BUCKET, { ttl: ttlMs, history: 1, replicas: options.replicas ?? 3 });
    const self: NodeRecord = { id: options.nodeId, advertise: options.advertise, joined: new Date().toISOString() };
    let revision: number;
    try {
      revision = await kv.create(self.id, encoder.encode(JSON.stringify(self)));
    } catch (error) {
      const other = await kvValue<NodeRecord>(kv, self.id).catch(() => undefined);
      if (other !== undefined) {
        throw new KithError('ERR_NODE_ID_TAKEN', `node id ${self.id} is held by a live node at ${other.advertise} (joined ${other.joined})`, { cause: error });
      }
      throw error;
    }
    const membership = new Membership(kv, self, revision);
    membership.timer = setInterval(() => void membership.beat(), heartbeatMs);
    membership.timer.unref();
    return membership;
  }

  /**
   * Rewrites this node's entry (a compare-and-set on its revision). When that fails:
   * - the bucket does not answer (NATS electing a leader): try again at the next beat;
   * - the entry expired (NATS was away longer than the TTL): create it again, which fails if
   *   another node took the id meanwhile;
   * - the entry holds this node's own record at a newer revision (a rewrite whose answer was
   *   lost): carry on from that revision;
   * - another record holds the id: stop, never overwrite it (`lost`).
   */
  private async beat(): Promise<void> {
    if (this.lost !== undefined || this.beating) return;
    this.beating = true;
    try {
      this.revision = await this.kv.update(this.self.id, encoder.encode(JSON.stringify(this.self)), this.revision);
    } catch (error) {
      await this.recover(error).catch(() => undefined);
    } finally {
      this.beating = false;
    }
  }

  private async recover(cause: unknown): Promise<void> {
    const current = await this.kv.get(this.self.id);
    if (current === null || current.operation !== 'PUT') {
      try {
        this.revision = await this.kv.create(this.self.id, encoder.encode(JSON.stringify(this.self)));
        return;
      } catch (error) {
        if ((await this.kv.get(this.self.id).catch(() => null)) === null) return; // not answering: next beat
        cause = error;
      }
    } else {
      const record = kvRecord<NodeRecord>(current.value);
      if (record.joined === this.self.joined && record.advertise === this.self.advertise) {
        this.revision = current.revision;
        return;
      }
    }
    this.lost = new KithError('ERR_NODE_ID_TAKEN', `node ${this.self.id}'s membership entry was taken by another node (revision ${this.revision})`, { cause });
    this.stopHeartbeat();
  }

  /** The live nodes, by id. */
  async liveNodes(): Promise<NodeRecord[]> {
    return (await kvValues<NodeRecord>(this.kv)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Stops the heartbeat and leaves the entry to expire (what a crash looks like to the others). */
  stopHeartbeat(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Leaves the cluster: the entry goes at once. */
  async leave(): Promise<void> {
    this.stopHeartbeat();
    await this.kv.delete(this.self.id, { previousSeq: this.revision }).catch(() => undefined);
  }
}
