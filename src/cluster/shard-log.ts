/**
 * One shard's ordered log, a JetStream stream (docs/cluster.md): the writer side appends a batch
 * and returns its position once the stream has it; replicas read it in order from their applied
 * position.
 *
 * - **Exactly once.** Every append carries a message id. JetStream drops a message whose id it saw
 *   within the stream's duplicate window and answers with the first one's position, so an append
 *   retried after a lost answer, a timeout or a leader change lands once.
 * - **Positions name their log.** A position is the stream's sequence number together with the
 *   stream's identity (its name and creation time): a stream deleted and created again restarts
 *   at 1, and a replica that applied position 500 of the old one must not take entry 500 of the
 *   new one as its next. `LogIdentity.label` is what a replica stores as its applied position's
 *   `stream` (core/applied-position.ts).
 * - **Never behind, never a gap.** Reading after a position the log does not hold (its last entry
 *   is before it, it was recreated, or its entries after it were removed) is an
 *   ERR_LOG_REGRESSION: the replica stops that shard instead of skipping or re-applying.
 */
import {
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamInfo,
} from '@nats-io/jetstream';
import { type NatsConnection, NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { KithError } from '../core/errors.js';

export interface ShardLogSpec {
  /** The stream's name (JetStream: no spaces, dots, `*`, `>`). */
  readonly stream: string;
  /** The one subject its entries are published on. */
  readonly subject: string;
  /** Servers holding a copy (1–5); a write is acknowledged once a majority has it. */
  readonly replicas: number;
  /** The largest entry, in bytes (JetStream's default limit is 1 MiB). */
  readonly maxEntryBytes: number;
  /** How long a message id is remembered for deduplication, in ms. */
  readonly duplicateWindowMs: number;
}

/** Which log a position belongs to. */
export interface LogIdentity {
  readonly stream: string;
  /** The stream's creation time, as JetStream reports it (RFC 3339). */
  readonly created: string;
  /** `<stream>@<created>`: the applied position's `stream`. */
  readonly label: string;
}

export interface LogEntry {
  /** The entry's position: 1 for the first. */
  readonly seq: number;
  readonly data: Uint8Array;
}

export interface AppendOptions {
  /** Attempts before giving up (a leader election takes a few seconds). */
  readonly attempts?: number;
  /** How long one attempt waits for the acknowledgement, in ms. */
  readonly timeoutMs?: number;
  /** How long a message id answered at position 0 is asked again before the entry is looked for and appended anew (ms). */
  readonly stagedGiveUpMs?: number;
}

export interface ReadOptions {
  /** At most this many entries. */
  readonly max: number;
  /** How long to wait when no entry is there yet, in ms (short: see `read`). */
  readonly waitMs: number;
}

const NS_PER_MS = 1_000_000;
/** How long `ShardLog.open` asks again while JetStream settles (an election takes a few seconds). */
const OPEN_SETTLE_MS = 15_000;
/** How far the NATS servers' clocks may be behind this node's, for `find` (ms). */
const CLOCK_MARGIN_MS = 10_000;

function identityOf(info: StreamInfo): LogIdentity {
  return { stream: info.config.name, created: info.created, label: `${info.config.name}@${info.created}` };
}

function regression(identity: LogIdentity, problem: FollowProblem): KithError {
  const message = `log ${identity.label}: ${problem.message}`;
  return problem.cut ? new LogCutBehind(message) : new KithError('ERR_LOG_REGRESSION', message);
}

/**
 * The entries after a replica's position were removed from the front of its log: the log was cut
 * (log-truncation.ts) below a position the replica had not reached. Nothing is lost (every entry
 * cut was applied by the shard's other replicas); the replica is seeded again from one of them.
 */
export class LogCutBehind extends KithError {
  constructor(message: string) {
    super('ERR_LOG_REGRESSION', message);
    this.name = 'LogCutBehind';
  }
}

export class ShardLog {
  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly spec: ShardLogSpec,
    /** The stream as this handle found or made it. */
    readonly identity: LogIdentity,
  ) {}

  /**
   * The stream for `spec`, created when missing. An existing stream on other subjects is refused.
   * What JetStream answers while its cluster settles — a timeout, no responders, "no suitable
   * peers for placement" while a server is briefly thought away, "temporarily unavailable" — is
   * asked again for up to `settleMs`; then it is ERR_UNAVAILABLE (503) with NATS's words, not an
   * internal error. (The NATS fault test's collection create met such an answer once on a busy
   * machine, 0.4 s after the cluster was ready, and got a 500.) Other errors are final at once.
   */
  static async open(nc: NatsConnection, spec: ShardLogSpec, settleMs = OPEN_SETTLE_MS): Promise<ShardLog> {
    const js = jetstream(nc);
    const deadline = Date.now() + settleMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const jsm = await jetstreamManager(nc);
        const info = await ShardLog.findOrAdd(jsm, spec);
        if (info.config.subjects?.length !== 1 || info.config.subjects[0] !== spec.subject) {
          throw new KithError('ERR_INTERNAL', `stream ${spec.stream} exists on subjects ${JSON.stringify(info.config.subjects)}, not ${spec.subject}`);
        }
        return new ShardLog(js, jsm, spec, identityOf(info));
      } catch (error) {
        if (!isSettling(error)) throw error;
        if (Date.now() >= deadline)
          throw new KithError('ERR_UNAVAILABLE', `log ${spec.stream}: NATS did not make or find the stream within ${settleMs} ms: ${String(error)}`, {
            cause: error,
          });
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 100 * attempt)));
      }
    }
  }

  private static async findOrAdd(jsm: JetStreamManager, spec: ShardLogSpec): Promise<StreamInfo> {
    try {
      return await jsm.streams.info(spec.stream);
    } catch (error) {
      if (!isStreamNotFound(error)) throw error;
      return jsm.streams.add({
        name: spec.stream,
        subjects: [spec.subject],
        num_replicas: spec.replicas,
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.New,
        max_msg_size: spec.maxEntryBytes,
        duplicate_window: spec.duplicateWindowMs * NS_PER_MS,
      });
    }
  }

  /**
   * Appends `data` and returns its position once the stream acknowledged it (with
   * `sync_interval: always`, once a majority fsynced it). Retried with the same message id until
   * acknowledged; a duplicate's answer is the first append's position.
   *
   * A duplicate answered at position 0 is not an acknowledgement. A stream leader stages a message
   * id at 0 while its message is proposed and not yet stored; nats-server 2.10 answers a retry that
   * meets it with `{seq: 0, duplicate: true}` (later versions with an error). The NATS fault test
   * lost a write so: its third attempt met its second's proposal, which a stopped leader never
   * committed; and the id stayed staged at 0 for as long as the test looked (the duplicate window,
   * two minutes, is when the leader forgets it). So an answer at 0 is asked again for
   * `stagedGiveUpMs`; then the log is searched for the entry (its bytes, appended since the first
   * attempt), and if it is not there it is appended under a new message id (`<id>~2`, …). Should
   * the staged proposal still be alive (a quorum stalled for longer than that), it commits before
   * the new append, as a stream commits in order: the entry is then in the log twice in a row, the
   * same change applied again before the write is answered, never after.
   */
  async append(data: Uint8Array, messageId: string, options: AppendOptions = {}): Promise<number> {
    // A retry cannot make an entry smaller: refuse it at once (the writer splits its parts below this).
    if (data.length > this.spec.maxEntryBytes)
      throw new KithError('ERR_OVER_LIMIT', `log ${this.spec.stream}: an entry of ${data.length} bytes; the limit is ${this.spec.maxEntryBytes}`);
    const attempts = options.attempts ?? 30;
    const timeout = options.timeoutMs ?? 2000;
    const stagedGiveUpMs = options.stagedGiveUpMs ?? 2000;
    const started = Date.now();
    let id = messageId;
    let generation = 1;
    let stagedSince: number | undefined;
    let last: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const ack = await this.js.publish(this.spec.subject, data, { msgID: id, timeout, expect: { streamName: this.spec.stream } });
        if (Number.isSafeInteger(ack.seq) && ack.seq >= 1) return ack.seq;
        last = new Error(`message id ${id} answered at position ${ack.seq}: staged by a proposal, not stored`);
        stagedSince ??= Date.now();
        if (Date.now() - stagedSince >= stagedGiveUpMs) {
          const found = await this.find(data, started - CLOCK_MARGIN_MS);
          if (found !== undefined) return found;
          generation++;
          id = `${messageId}~${generation}`;
          stagedSince = undefined;
          continue;
        }
      } catch (error) {
        last = error;
      }
      // No leader yet, a timeout, no responders, a proposal not stored yet: the same message id makes the retry safe.
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * attempt)));
    }
    throw new KithError('ERR_STORAGE', `log ${this.spec.stream}: not acknowledged after ${attempts} attempts: ${String(last)}`, { cause: last });
  }

  /**
   * The position of an entry holding exactly `data`, searched from the log's end back to the
   * entries stored before `since` (ms since the epoch); undefined when there is none.
   */
  private async find(data: Uint8Array, since: number): Promise<number | undefined> {
    const { first, last } = await this.state();
    for (let seq = last; seq >= Math.max(first, 1); seq--) {
      const stored = await this.jsm.streams.getMessage(this.spec.stream, { seq });
      if (stored === null) continue;
      if (Buffer.from(stored.data.buffer, stored.data.byteOffset, stored.data.byteLength).equals(data)) return seq;
      if (stored.time.getTime() < since) return undefined;
    }
    return undefined;
  }

  /** The stream's identity and its first and last positions now. */
  /** Deletes the stream and every entry (the collection was dropped). */
  async delete(): Promise<void> {
    try {
      await this.jsm.streams.delete(this.spec.stream);
    } catch (error) {
      if (!isStreamNotFound(error)) throw error;
    }
  }

  /**
   * Removes the entries before `seq` (log-truncation.ts decides where: below what every replica
   * has applied). The stream's first position becomes `seq`.
   */
  async truncateBefore(seq: number): Promise<number> {
    return (await this.jsm.streams.purge(this.spec.stream, { seq })).purged;
  }

  async state(): Promise<{ identity: LogIdentity; first: number; last: number }> {
    const info = await this.jsm.streams.info(this.spec.stream);
    return { identity: identityOf(info), first: info.state.first_seq, last: info.state.last_seq };
  }

  /**
   * Checks that the log still holds everything after `after` (a replica's applied position in
   * `identity`'s log, 0 for none): the same stream, not behind, nothing after it removed.
   *
   * A stopped shard stays stopped, so a regression is confirmed before it is reported: the state
   * is asked again REGRESSION_CHECKS times, a second apart. The shard log test once read a last
   * position of 45 of a 163-entry stream right after its killed leader restarted: a server that
   * had not caught up yet answered. A log that lost its tail still has lost it seconds later.
   */
  async checkFollows(identity: LogIdentity, after: number): Promise<{ identity: LogIdentity; first: number; last: number }> {
    for (let check = 1; ; check++) {
      const now = await this.state();
      const problem = followProblem(now, identity, after);
      if (problem === undefined) return now;
      if (check >= REGRESSION_CHECKS) throw regression(identity, problem);
      await new Promise((resolve) => setTimeout(resolve, REGRESSION_RECHECK_MS));
    }
  }

  /**
   * Up to `max` entries after `after`, in order, waiting at most `waitMs` when there is none yet.
   * Checks first that the log follows `after` (`checkFollows`). A replica calls it in a loop from
   * its applied position.
   *
   * Each entry is asked of the stream's leader by its position (a get by sequence, which a
   * follower never answers stale). An ordered consumer was tried first: after a leader's kill and
   * restart one started at position 121 of a 120-entry log delivered entry 41, which the gap check
   * below caught; a get by position has no cursor to go wrong.
   */
  async read(identity: LogIdentity, after: number, options: ReadOptions): Promise<LogEntry[]> {
    let last = (await this.checkFollows(identity, after)).last;
    const deadline = Date.now() + options.waitMs;
    while (last <= after && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(100, Math.max(1, deadline - Date.now()))));
      last = (await this.state()).last;
    }
    const out: LogEntry[] = [];
    for (let seq = after + 1; seq <= last && out.length < options.max; seq++) {
      const stored = await this.entryAt(identity, seq);
      if (stored === undefined) return out;
      out.push(stored);
    }
    return out;
  }

  /**
   * The entry at `seq`, which the log's state said it holds. Limits retention never deletes inside
   * the log, so a hole means entries were removed; confirmed as `checkFollows` confirms. Undefined
   * when the state said too much (a stale answer): the caller reads on from there later.
   */
  private async entryAt(identity: LogIdentity, seq: number): Promise<LogEntry | undefined> {
    for (let check = 1; ; check++) {
      const stored = await this.jsm.streams.getMessage(this.spec.stream, { seq });
      if (stored !== null && stored.seq === seq) return { seq, data: stored.data };
      const now = await this.state();
      if (now.last < seq && followProblem(now, identity, seq - 1) === undefined) return undefined;
      if (check >= REGRESSION_CHECKS) throw regression(identity, { message: `entry ${seq} is missing`, cut: now.first > seq });
      await new Promise((resolve) => setTimeout(resolve, REGRESSION_RECHECK_MS));
    }
  }
}

/** How many times a regression is seen before it is reported, and how long apart (ms). */
const REGRESSION_CHECKS = 5;
const REGRESSION_RECHECK_MS = 1000;

/** What keeps `now` from following position `after` of `identity`'s log; undefined when it follows. */
interface FollowProblem {
  readonly message: string;
  /** Entries were removed from the log's front (a cut), rather than the log lost or replaced. */
  readonly cut: boolean;
}

function followProblem(now: { identity: LogIdentity; first: number; last: number }, identity: LogIdentity, after: number): FollowProblem | undefined {
  if (now.identity.label !== identity.label) return { message: `the stream is now ${now.identity.label}: it was deleted and made again`, cut: false };
  if (now.last < after) return { message: `its last entry is ${now.last}, behind the applied position ${after}: the log lost its tail`, cut: false };
  if (now.first > after + 1) return { message: `its first entry is ${now.first}: entries after ${after} were removed`, cut: true };
  return undefined;
}

function isStreamNotFound(error: unknown): boolean {
  return error instanceof Error && /stream not found/i.test(error.message);
}

/** JetStream's "no suitable peers for placement": a 400, though it passes once its servers see each other again. */
const NO_PEERS_FOR_PLACEMENT = 10005;

/**
 * What passes once JetStream settles: no answer in time, no responder yet, a JetStream API error
 * of the server's own (5xx: "temporarily unavailable", no leader yet) or its placement. Anything
 * else — a name the client refuses, a 4xx refusal of the request — is final.
 */
function isSettling(error: unknown): boolean {
  if (error instanceof JetStreamApiError) return error.status >= 500 || error.code === NO_PEERS_FOR_PLACEMENT;
  return error instanceof TimeoutError || error instanceof NoRespondersError || error instanceof RequestError;
}
