/**
 * The database file: one LMDB environment at the `-db` path (plus LMDB's `-lock` file beside it).
 * The key layout is documented in docs/storage.md:
 *
 *   sub-database   key               value
 *   meta           "format"          { magic: "kith", version }          (msgpack)
 *                  "next_uid"        the next collection uid             (msgpack number)
 *   collections    name              { uid, config }                     (msgpack)
 *   last_versions  uid               highest version handed out          (decimal string)
 *   points         [uid, pointId]    point record (point-record.ts)      (raw bytes)
 *   snapshots      [uid, chunk]      index snapshot, in 16 MiB chunks    (raw bytes)
 *
 * Collections are keyed by a uid, never reused, so a dropped collection's keys can never be
 * mistaken for those of a new collection with the same name.
 *
 * Durability: `overlappingSync` is off, so every write transaction is fsynced before its promise
 * resolves; callers acknowledge only after awaiting it.
 */
import { type Database, open, type RootDatabase } from 'lmdb';
import { KithError } from '../core/errors.js';

export const STORAGE_FORMAT_VERSION = 1;
const SNAPSHOT_CHUNK_BYTES = 16 * 1048576;
const MAGIC = 'kith';

type PointKey = [number, string];
interface CollectionEntry {
  uid: number;
  config: unknown;
}

export interface StoredCollection {
  readonly uid: number;
  readonly name: string;
  /** The collection's configuration as written by `createCollection`; the db layer validates it. */
  readonly config: unknown;
  readonly lastVersion: bigint;
}

export interface PointWrite {
  readonly id: string;
  readonly record: Buffer;
}

export class LmdbStore {
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly root: RootDatabase,
    private readonly meta: Database<unknown, string>,
    private readonly collections: Database<CollectionEntry, string>,
    private readonly lastVersions: Database<string, number>,
    private readonly points: Database<Buffer, PointKey>,
    private readonly snapshots: Database<Buffer, [number, number]>,
  ) {}

  /** Opens (or creates) the database file and checks its format. */
  static open(path: string): LmdbStore {
    let root: RootDatabase;
    try {
      root = open({ path, overlappingSync: false, noSubdir: true, cache: false });
    } catch (error) {
      throw new KithError('ERR_STORAGE', `cannot open database file ${path}: ${messageOf(error)}`, { cause: error });
    }
    const meta = root.openDB<unknown, string>({ name: 'meta' });
    const collections = root.openDB<CollectionEntry, string>({ name: 'collections' });
    const lastVersions = root.openDB<string, number>({ name: 'last_versions', encoding: 'string' });
    const points = root.openDB<Buffer, PointKey>({ name: 'points', encoding: 'binary' });
    const snapshots = root.openDB<Buffer, [number, number]>({ name: 'snapshots', encoding: 'binary' });
    const store = new LmdbStore(path, root, meta, collections, lastVersions, points, snapshots);
    store.checkFormat();
    return store;
  }

  private checkFormat(): void {
    const format = this.meta.get('format') as { magic?: unknown; version?: unknown } | undefined;
    if (format === undefined) {
      this.meta.putSync('format', { magic: MAGIC, version: STORAGE_FORMAT_VERSION });
      return;
    }
    if (format.magic !== MAGIC) {
      throw new KithError('ERR_STORAGE_CORRUPTED', `${this.path} is an LMDB file but not a kith database`);
    }
    if (typeof format.version !== 'number' || format.version > STORAGE_FORMAT_VERSION) {
      throw new KithError(
        'ERR_STORAGE_CORRUPTED',
        `${this.path} has storage format ${String(format.version)}; this build reads up to ${STORAGE_FORMAT_VERSION}`,
      );
    }
  }

  /** Every collection in the file, by name. */
  loadCollections(): StoredCollection[] {
    const out: StoredCollection[] = [];
    for (const { key: name, value: entry } of this.collections.getRange()) {
      if (typeof name !== 'string' || typeof entry?.uid !== 'number') {
        throw new KithError('ERR_STORAGE_CORRUPTED', `collection entry ${JSON.stringify(name)} does not decode`);
      }
      const last = this.lastVersions.get(entry.uid);
      out.push({ uid: entry.uid, name, config: entry.config, lastVersion: typeof last === 'string' ? BigInt(last) : 0n });
    }
    return out;
  }

  /** The stored points of a collection, in key order. */
  *scanPoints(uid: number): IterableIterator<PointWrite> {
    for (const { key, value } of this.points.getRange({ start: [uid], end: [uid + 1] })) {
      yield { id: key[1], record: value };
    }
  }

  /** How many points a collection has stored (counted by LMDB without decoding values). */
  countPoints(uid: number): number {
    return this.points.getKeysCount({ start: [uid], end: [uid + 1] });
  }

  getPoint(uid: number, id: string): Buffer | undefined {
    return this.points.get([uid, id]);
  }

  /** Writes the collection entry; resolves with its new uid once durable. */
  async createCollection(name: string, config: unknown): Promise<number> {
    return this.write(() => {
      const next = this.meta.get('next_uid');
      const uid = typeof next === 'number' ? next : 1;
      this.meta.putSync('next_uid', uid + 1);
      this.collections.putSync(name, { uid, config });
      return uid;
    });
  }

  /** Removes the collection entry and every point of it in one transaction. */
  async dropCollection(uid: number, name: string): Promise<void> {
    await this.write(() => {
      this.collections.removeSync(name);
      this.lastVersions.removeSync(uid);
      removeCollectionKeys(this.points, uid);
      removeCollectionKeys(this.snapshots, uid);
    });
  }

  /** Replaces the collection's snapshot with the concatenation of `parts`, atomically. */
  async writeSnapshot(uid: number, parts: readonly Uint8Array[]): Promise<void> {
    const chunks: Uint8Array[] = [];
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const flushChunk = (): void => {
      chunks.push(pending.length === 1 ? (pending[0] as Uint8Array) : Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
    };
    for (const part of parts) {
      for (let at = 0; at < part.length; ) {
        const take = Math.min(SNAPSHOT_CHUNK_BYTES - pendingBytes, part.length - at);
        pending.push(part.subarray(at, at + take));
        pendingBytes += take;
        at += take;
        if (pendingBytes === SNAPSHOT_CHUNK_BYTES) flushChunk();
      }
    }
    if (pendingBytes > 0 || chunks.length === 0) flushChunk();
    await this.write(() => {
      removeCollectionKeys(this.snapshots, uid);
      chunks.forEach((chunk, i) => {
        this.snapshots.putSync([uid, i], Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      });
    });
  }

  /** The collection's snapshot bytes, or undefined when it has none. */
  readSnapshot(uid: number): Buffer | undefined {
    const chunks: Buffer[] = [];
    for (const { value } of this.snapshots.getRange({ start: [uid], end: [uid + 1] })) chunks.push(value);
    return chunks.length === 0 ? undefined : Buffer.concat(chunks);
  }

  /** Applies removes, then puts, of one collection atomically (and its last version); resolves once durable. */
  async writePoints(uid: number, puts: readonly PointWrite[], removes: readonly string[], lastVersion?: bigint): Promise<void> {
    await this.write(() => {
      for (const id of removes) this.points.removeSync([uid, id]);
      for (const { id, record } of puts) this.points.putSync([uid, id], record);
      if (lastVersion !== undefined) this.lastVersions.putSync(uid, lastVersion.toString());
    });
  }

  /** Resolves once everything written so far is on disk. */
  async flush(): Promise<void> {
    await this.root.flushed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.root.close();
  }

  /** Runs `body` in one write transaction; resolves after the commit is durable. */
  private async write<T>(body: () => T): Promise<T> {
    if (this.closed) throw new KithError('ERR_SHUTTING_DOWN', 'the database is closed');
    try {
      return (await this.root.transaction(body)) as T;
    } catch (error) {
      if (error instanceof KithError) throw error;
      throw new KithError('ERR_STORAGE', `write to ${this.path} failed: ${messageOf(error)}`, { cause: error });
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Removes every key `[uid, …]` of a sub-database (inside a write transaction). */
function removeCollectionKeys<K extends PointKey | [number, number]>(db: Database<Buffer, K>, uid: number): void {
  for (const key of db.getKeys({ start: [uid], end: [uid + 1] })) db.removeSync(key);
}
