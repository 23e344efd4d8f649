/**
 * Which nodes are alive, and which node holds which id.
 *
 * - Alive: every heartbeat a node publishes its record on the core NATS subject
 *   `kith.members.beat` (no stream, no leader: it goes on while JetStream elects one), and each
 *   node keeps the records it heard; a node not heard from for the membership TTL is no longer
 *   live. `liveNodes()` answers from memory, without a request. A benchmark found reading the
 *   bucket's keys on every request costs a consumer each, which times out half the time while a
 *   NATS server is down (nats-io/nats-server#3791), and the tests found the bucket unanswering
 *   for tens of seconds after a leader was stopped and resumed.
 * - The id: a JetStream key-value bucket (`kith_nodes`) whose entries expire after the TTL. A node
 *   creates its entry when it joins and rewrites it every heartbeat; one that dies stops, and
 *   JetStream removes its entry within the TTL, freeing the id.
 *
 * - One id, one node: joining creates the entry only if no live node holds the id
 *   (ERR_NODE_ID_TAKEN), and every heartbeat is a compare-and-set on the entry's revision, so a
 *   node that finds its entry taken over (it was gone longer than the TTL and another took the
 *   id) stops and says so (`lost`) instead of fighting for it.
 * - Leaving deletes the entry at once.
 */
import type { KV } from '@nats-io/kv';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { KithError } from '../core/errors.js';
import { kvRecord, kvValue, kvValues } from './kv-values.js';

export const NODES_BUCKET = 'kith_nodes';
/** Where nodes publish their heartbeats. */
export const BEAT_SUBJECT = 'kith.members.beat';

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
  /** Told once when this node stops being a member (`lost`), for the node's log. */
  readonly onLost?: (error: KithError) => void;
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

  /** The records heard on BEAT_SUBJECT, with when (Date.now()); a leaving node's goes at once. */
  private readonly heard = new Map<string, { record: NodeRecord; at: number }>();
  private subscription: Subscription | undefined;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly kv: KV,
    readonly self: NodeRecord,
    private revision: number,
    private readonly ttlMs: number,
    private readonly onLost: ((error: KithError) => void) | undefined,
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
    const membership = new Membership(nc, kv, self, revision, ttlMs, options.onLost);
    membership.listen();
    // The members already there, until their next beats are heard.
    for (const record of await kvValues<NodeRecord>(kv).catch(() => [])) membership.heard.set(record.id, { record, at: Date.now() });
    membership.publish();
    membership.timer = setInterval(() => {
      membership.publish();
      void membership.beat();
    }, heartbeatMs);
    membership.timer.unref();
    return membership;
  }

  private listen(): void {
    this.subscription = this.nc.subscribe(BEAT_SUBJECT, {
      callback: (error, message) => {
        if (error !== null) return;
        try {
          const beat = kvRecord<NodeRecord & { leaving?: boolean }>(message.data);
          if (typeof beat.id !== 'string' || typeof beat.advertise !== 'string') return;
          if (beat.leaving === true) this.heard.delete(beat.id);
          else this.heard.set(beat.id, { record: { id: beat.id, advertise: beat.advertise, joined: String(beat.joined) }, at: Date.now() });
        } catch {
          // Not a beat of ours: ignored.
        }
      },
    });
  }

  private publish(leaving = false): void {
    if (this.lost !== undefined) return;
    try {
      this.nc.publish(BEAT_SUBJECT, encoder.encode(JSON.stringify(leaving ? { ...this.self, leaving } : this.self)));
    } catch {
      // A closed connection: the node is stopping.
    }
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
    let current = await this.kv.get(this.self.id);
    if (current === null || current.operation !== 'PUT') {
      try {
        this.revision = await this.kv.create(this.self.id, encoder.encode(JSON.stringify(this.self)));
        return;
      } catch (error) {
        // Either another node created it, or this create was stored and its answer lost (a
        // leader change): the entry says which.
        current = await this.kv.get(this.self.id).catch(() => null);
        if (current === null || current.operation !== 'PUT') return; // not answering: next beat
        cause = error;
      }
    }
    const record = kvRecord<NodeRecord>(current.value);
    if (record.joined === this.self.joined && record.advertise === this.self.advertise) {
      this.revision = current.revision;
      return;
    }
    this.lost = new KithError('ERR_NODE_ID_TAKEN', `node ${this.self.id}'s membership entry was taken by another node (revision ${this.revision})`, { cause });
    this.stopHeartbeat();
    this.onLost?.(this.lost);
  }

  /** The live nodes, by id. */
  async liveNodes(): Promise<NodeRecord[]> {
    const now = Date.now();
    const live = [...this.heard.values()].filter((h) => now - h.at <= this.ttlMs).map((h) => h.record);
    if (this.lost === undefined && this.timer !== undefined && !live.some((r) => r.id === this.self.id)) live.push(this.self);
    return live.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Stops the heartbeat and leaves the entry to expire (what a crash looks like to the others). */
  stopHeartbeat(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.subscription?.unsubscribe();
  }

  /** Leaves the cluster: the entry goes at once. */
  async leave(): Promise<void> {
    this.publish(true);
    this.stopHeartbeat();
    await this.kv.delete(this.self.id, { previousSeq: this.revision }).catch(() => undefined);
  }
}
