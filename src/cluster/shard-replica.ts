/**
 * One replica of one shard: applies the shard's log (cluster/shard-log.ts) to a local collection,
 * in order, each entry once.
 *
 * - Each entry is one write to the collection, carrying the entry's position as its applied
 *   position: the records and the position are stored in one LMDB transaction, so after a kill -9
 *   the replica resumes exactly after the last entry it stored.
 * - The entry's position is its version (`LogVersions`): every replica of the shard stores the
 *   same version for the same write, whatever its clock says.
 * - A log that no longer holds what follows the applied position is ERR_LOG_REGRESSION: the
 *   replica stops, applies nothing more, and says so (`stopped`).
 */
import type { UpdateMode } from '../collection/collection.js';
import type { PayloadOperation, PointSelection } from '../collection/payload-operations.js';
import type { AppliedPosition } from '../core/applied-position.js';
import { KithError } from '../core/errors.js';
import type { VersionSource } from '../core/version-clock.js';
import type { LogIdentity, ShardLog } from './shard-log.js';
import { decodeShardOperation, type ShardEntry, type ShardOperation, type ShardPoint, type ShardVector } from './shard-operation.js';

/** What a replica writes to: the local collection's write verbs (collection/collection.ts). */
export interface ReplicaTarget {
  readonly appliedPosition: AppliedPosition | undefined;
  upsert(
    points: readonly ShardPoint[],
    options: { readonly applied: AppliedPosition; readonly mode?: UpdateMode; readonly condition?: Record<string, unknown> },
  ): Promise<{ upserted: number }>;
  deleteIds(ids: readonly string[], options: { readonly applied: AppliedPosition }): Promise<{ deleted: number }>;
  deleteByFilter(filter: Record<string, unknown>, options: { readonly applied: AppliedPosition }): Promise<{ deleted: number }>;
  hasPoint(id: string): boolean;
  changePayloads(selection: PointSelection, operation: PayloadOperation, options: { readonly applied: AppliedPosition }): Promise<{ updated: number }>;
  updateVectors(
    points: readonly ShardVector[],
    options: { readonly applied: AppliedPosition; readonly condition?: Record<string, unknown> },
  ): Promise<{ updated: number }>;
}

/** What applying an entry did on this replica: the points it changed (upserted, deleted or updated), and the message id the entry names. */
export interface EntryOutcome {
  readonly changed: number;
  readonly msg?: string;
}

/** Outcomes kept for writers to read back (a writer asks within seconds of its append). */
const OUTCOMES_KEPT = 4096;

/**
 * The versions of a replica's collection: the position of the entry being applied. Positions only
 * grow, so versions do; a position at or below the collection's last version is refused.
 */
export class LogVersions implements VersionSource {
  /** The position of the entry being applied; set before each write. */
  current = 0n;

  next(last: bigint): bigint {
    if (this.current <= last) throw new KithError('ERR_LOG_REGRESSION', `log position ${this.current} is not after the collection's last version ${last}`);
    return this.current;
  }
}

/** `<stream>@<created>` back into its parts. */
export function identityFromLabel(label: string): LogIdentity {
  const at = label.indexOf('@');
  if (at <= 0) throw new KithError('ERR_LOG_REGRESSION', `applied position names log "${label}", not <stream>@<created>`);
  return { stream: label.slice(0, at), created: label.slice(at + 1), label };
}

export interface ApplyOptions {
  /** Entries read from the log at once. */
  readonly batch?: number;
  /** How long one read waits for a new entry, in ms. */
  readonly waitMs?: number;
  /** Return once at least this many entries are applied (a node serving many shards takes turns). */
  readonly maxEntries?: number;
}

export class ShardReplica {
  /** Why the replica stopped applying, once it has. */
  stopped: KithError | undefined;
  /**
   * Whether it has once reached the end of its log since it was opened: until then (a node
   * restarted, a new replica) it may be far behind, and reads go to another replica, as Qdrant
   * serves no reads from a replica in recovery.
   */
  caughtUp = false;
  /** Entries applied since it was opened (metrics: their rate is the apply rate). */
  appliedSinceStart = 0;
  /** The outcome of the entries applied lately, by position (oldest first). */
  private readonly outcomes = new Map<number, EntryOutcome>();
  /** Who waits for a position: woken after each entry and when the replica stops. */
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly log: ShardLog,
    private readonly target: ReplicaTarget,
    private readonly versions: LogVersions,
  ) {}

  /** Serving reads: caught up once and not stopped. */
  get serving(): boolean {
    return this.caughtUp && this.stopped === undefined;
  }

  /**
   * The node no longer holds it (dropped, or to be seeded again): it applies nothing more, and a
   * read waiting for a position is told at once (ERR_UNAVAILABLE) instead of waiting it out.
   */
  retire(why: string): void {
    this.stopped ??= new KithError('ERR_UNAVAILABLE', `the replica is no longer held here: ${why}`);
    this.wakeWaiters();
  }

  /** The last position its log holds now. */
  async logLast(): Promise<number> {
    return (await this.log.state()).last;
  }

  /** The log and position this replica has applied up to: the target's stored one, or the log's start. */
  position(): { identity: LogIdentity; applied: number } {
    const stored = this.target.appliedPosition;
    if (stored === undefined) return { identity: this.log.identity, applied: 0 };
    return { identity: identityFromLabel(stored.stream), applied: Number(stored.sequence) };
  }

  /**
   * Applies what the log holds after the applied position, until a read finds nothing new (or
   * `maxEntries` are applied); returns how many entries were applied. Throws (and sets `stopped`) on a regression.
   */
  async catchUp(options: ApplyOptions = {}): Promise<number> {
    if (this.stopped !== undefined) throw this.stopped;
    const { identity } = this.position();
    let applied = 0;
    for (;;) {
      const { applied: after } = this.position();
      let entries: Awaited<ReturnType<ShardLog['read']>>;
      try {
        entries = await this.log.read(identity, after, { max: options.batch ?? 256, waitMs: options.waitMs ?? 200 });
      } catch (error) {
        if (error instanceof KithError && error.code === 'ERR_LOG_REGRESSION') {
          this.stopped = error;
          this.wakeWaiters();
        }
        throw error;
      }
      if (entries.length === 0) {
        this.caughtUp = true;
        return applied;
      }
      for (const entry of entries) {
        try {
          await this.apply(identity, entry.seq, decodeShardOperation(entry.data, `log ${identity.label} entry ${entry.seq}`));
        } catch (error) {
          // An entry is never skipped: whatever keeps one from applying stops the replica there.
          this.stopped =
            error instanceof KithError ? error : new KithError('ERR_INTERNAL', `log ${identity.label} entry ${entry.seq}: ${String(error)}`, { cause: error });
          this.wakeWaiters();
          throw this.stopped;
        }
        applied++;
      }
      // A read that came back short reached the log's end as it was then.
      if (entries.length < (options.batch ?? 256)) this.caughtUp = true;
      if (applied >= (options.maxEntries ?? Number.POSITIVE_INFINITY)) return applied;
    }
  }

  /**
   * Resolves once this replica has applied `position`, with the entry's outcome when it is still
   * kept (the points it changed here); rejects when the replica stops first or `timeoutMs` passes.
   */
  async whenApplied(position: number, timeoutMs: number): Promise<EntryOutcome | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.position().applied < position) {
      if (this.stopped !== undefined) throw this.stopped;
      const left = deadline - Date.now();
      if (left <= 0) throw new KithError('ERR_UNAVAILABLE', `the replica did not apply log position ${position} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
    return this.outcomes.get(position);
  }

  private wakeWaiters(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private async apply(identity: LogIdentity, seq: number, entry: ShardEntry): Promise<void> {
    const applied: AppliedPosition = { stream: identity.label, sequence: BigInt(seq) };
    this.versions.current = BigInt(seq);
    const changed = await this.applyOperation(entry, applied);
    this.outcomes.set(seq, entry.msg === undefined ? { changed } : { changed, msg: entry.msg });
    this.appliedSinceStart++;
    if (this.outcomes.size > OUTCOMES_KEPT) this.outcomes.delete(this.outcomes.keys().next().value as number);
    this.wakeWaiters();
  }

  private async applyOperation(operation: ShardOperation, applied: AppliedPosition): Promise<number> {
    switch (operation.op) {
      case 'upsert':
        return (
          await this.target.upsert(operation.points, {
            applied,
            ...(operation.mode === undefined ? {} : { mode: operation.mode }),
            ...(operation.condition === undefined ? {} : { condition: operation.condition }),
          })
        ).upserted;
      case 'delete_ids':
        return (await this.target.deleteIds(operation.ids, { applied })).deleted;
      case 'delete_filter':
        return (await this.target.deleteByFilter(operation.filter, { applied })).deleted;
      case 'vectors': {
        // As for payloads: ids this replica does not hold are passed over.
        const held = operation.points.filter((p) => this.target.hasPoint(p.id));
        return (await this.target.updateVectors(held, { applied, ...(operation.condition === undefined ? {} : { condition: operation.condition }) })).updated;
      }
      case 'payload': {
        if (operation.ids === undefined) return (await this.target.changePayloads({ filter: operation.filter }, operation.operation, { applied })).updated;
        // Listed ids this replica does not hold are passed over, not an error that would stop it.
        // Only this replica writes to its collection, one entry at a time: nothing changes between the look and the write.
        const held = operation.ids.filter((id) => this.target.hasPoint(id));
        return (await this.target.changePayloads({ points: held }, operation.operation, { applied })).updated;
      }
    }
  }
}
