/**
 * The database file: one LMDB environment at the `-db` path (plus, once a writer has opened it,
 * LMDB's `-lock` file beside it), opened by one process at a time (file-lock.ts). The key layout
 * is documented in docs/storage.md:
 *
 *   sub-database   key                     value
 *   meta           "format"                { magic: "kith", version }          (msgpack)
 *                  "next_uid"              the next collection uid             (msgpack number)
 *   collections    name                    { uid, config }                     (msgpack)
 *   last_versions  uid                     highest version handed out          (decimal string)
 *   point_records  uid (u32 BE) + id UTF-8 point record (point-record.ts)      (raw bytes)
 *   snapshots      [uid, chunk]            index snapshot, in 16 MiB chunks    (raw bytes)
 *   meta           "applied/<uid>"         the collection's applied position   (JSON text)
 *                  "importing/<uid>"       an import under way into that uid   (msgpack true)
 *                  "alias/<alias>"         the name of the collection it names (msgpack string)
 *
 * Collections are keyed by a uid, never reused, so a dropped collection's keys can never be
 * mistaken for those of a new collection with the same name.
 *
 * Durability: `overlappingSync` is off, so every write transaction is fsynced before its promise
 * resolves; callers acknowledge only after awaiting it.
 *
 * Before LMDB maps the file, database-file.ts checks it page by page: LMDB trusts its file and
 * dies of a signal on a broken one. A read-only open (`readOnly`) takes the file lock without
 * creating anything, opens LMDB read-only with its lock file kept elsewhere (read-only-env.ts),
 * and writes nothing: not the format entry, not a migration, not a graph snapshot.
 *
 * Atomicity: lmdb-js runs every `transaction()` callback of one event-loop turn in one LMDB
 * transaction and commits it even when a callback threw, keeping that callback's earlier writes.
 * Each write here is therefore a child transaction (`childTransaction`): a callback that throws
 * has its own writes aborted, while the others of the turn still commit.
 */
import { existsSync } from 'node:fs';
import { type Database, type Key, open, type RootDatabase } from 'lmdb';
import { type AppliedPosition, decodeAppliedPosition, encodeAppliedPosition } from '../core/applied-position.js';
import { badInput, KithError } from '../core/errors.js';
import { inspectDatabaseFile } from './database-file.js';
import { type FileLock, lockDatabaseFile } from './file-lock.js';
import { migrateFormat1 } from './format-1-migration.js';
import { migrateFormat2 } from './format-2-migration.js';
import { TimeSlices } from '../core/time-slices.js';
import { ExportWriter } from './collection-export.js';
import { APPLIED_KEY_PREFIX, ENV_OPTIONS, LAST_VERSIONS_DB, META_DB, POINT_RECORDS_DB } from './lmdb-env.js';
import { isLargeWrite, writeOnThread } from './point-writer.js';
import { decodePointKey, encodePointKey, MAX_POINT_KEY_BYTES, pointKeyRange } from './point-key.js';
import { openReadOnlyEnv, type LmdbEnv } from './read-only-env.js';

/** 1: points under ordered-binary `[uid, id]` keys (migrated at open); 2: point-key.ts keys. */
export const STORAGE_FORMAT_VERSION = 3;
const SNAPSHOT_CHUNK_BYTES = 16 * 1048576;
const MAGIC = 'kith';

type SnapshotKey = [number, number];
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
  /** The log position the collection's records go up to, when a write carried one. */
  readonly applied?: AppliedPosition;
}

export interface PointWrite {
  readonly id: string;
  readonly record: Buffer;
}

export interface StoreOptions {
  /** Open without writing anything, and without leaving LMDB's lock file beside the database. */
  readonly readOnly?: boolean;
}

const SUB_DATABASES = ['meta', 'collections', 'last_versions', 'point_records', 'snapshots', 'annotations'] as const;

export class LmdbStore {
  private closed = false;
  /** Copies under way: close() waits for them, since LMDB must not close under a copy. */
  private readonly copies = new Set<Promise<void>>();

  private constructor(
    readonly path: string,
    readonly readOnly: boolean,
    private readonly lock: FileLock,
    private readonly env: LmdbEnv,
    private readonly root: RootDatabase,
    private readonly meta: Database<unknown, string>,
    private readonly collections: Database<CollectionEntry, string>,
    private readonly lastVersions: Database<string, number>,
    private readonly points: Database<Buffer, Buffer>,
    private readonly snapshots: Database<Buffer, SnapshotKey>,
    private readonly annotations: Database<string, number>,
  ) {}

  /**
   * Opens (or, unless `readOnly`, creates) the database file, locks it for this process
   * (ERR_DATABASE_LOCKED when another process, or this one, has it open), checks its pages
   * (ERR_STORAGE_CORRUPTED, before LMDB maps it) and its format, and migrates a format-1 file.
   */
  static open(path: string, { readOnly = false }: StoreOptions = {}): LmdbStore {
    const lock = lockDatabaseFile(path, { create: !readOnly });
    let env: LmdbEnv;
    let subDatabases: readonly string[];
    try {
      ({ subDatabases } = inspectDatabaseFile(path, readOnly ? 'read' : 'write'));
      env = readOnly ? openReadOnlyEnv(path, 'private') : openWritable(path);
    } catch (error) {
      lock.release();
      throw error;
    }
    const root = env.root;
    try {
      const maxKeySize = (root as unknown as { maxKeySize?: unknown }).maxKeySize;
      if (typeof maxKeySize === 'number' && maxKeySize < MAX_POINT_KEY_BYTES) {
        throw new KithError('ERR_STORAGE', `LMDB keys are limited to ${maxKeySize} bytes here; point keys need ${MAX_POINT_KEY_BYTES}`);
      }
      if (readOnly) checkReadable(path, subDatabases);
      const store = new LmdbStore(
        path,
        readOnly,
        lock,
        env,
        root,
        root.openDB<unknown, string>(META_DB),
        root.openDB<CollectionEntry, string>({ name: 'collections' }),
        root.openDB<string, number>(LAST_VERSIONS_DB),
        root.openDB<Buffer, Buffer>(POINT_RECORDS_DB),
        root.openDB<Buffer, SnapshotKey>({ name: 'snapshots', encoding: 'binary' }),
        root.openDB<string, number>({ name: 'annotations', encoding: 'string' }),
      );
      store.checkFormat();
      if (!readOnly) store.discardUnfinishedImports();
      return store;
    } catch (error) {
      // The lock is given up only once LMDB has let go of the file.
      void env.close().finally(() => lock.release());
      throw error;
    }
  }

  private checkFormat(): void {
    const format = this.meta.get('format') as { magic?: unknown; version?: unknown } | undefined;
    if (format === undefined) {
      if (this.readOnly) {
        throw new KithError(
          'ERR_STORAGE_CORRUPTED',
          `${this.path}: no format entry: not a kith database, or its creation was cut short; a read-only command does not write one`,
        );
      }
      this.writeFormat();
      return;
    }
    if (format.magic !== MAGIC) {
      throw new KithError('ERR_STORAGE_CORRUPTED', `${this.path} is an LMDB file but not a kith database`);
    }
    if (typeof format.version !== 'number' || !Number.isInteger(format.version) || format.version < 1 || format.version > STORAGE_FORMAT_VERSION) {
      throw new KithError(
        'ERR_STORAGE_CORRUPTED',
        `${this.path} has storage format ${String(format.version)}; this build reads 1 to ${STORAGE_FORMAT_VERSION}`,
      );
    }
    if (format.version === 1) {
      if (this.readOnly) throw format1ReadOnly(this.path);
      const liveUids = new Set(this.loadCollections().map((c) => c.uid));
      // To format 2, in its own transaction: the ids' migration below is the step to 3.
      migrateFormat1(this.root, liveUids, this.points, () => this.writeFormat(2));
    }
    // Format 1 migrates straight to the current format, so its ids go through this too. A read-only
    // open reads a format-2 file as it is (its ids as stored); the next writable open migrates it.
    if (format.version <= 2 && !this.readOnly)
      migrateFormat2(this.root, this.points, this.snapshots as unknown as Database<Buffer, Key>, () => this.writeFormat());
  }

  private writeFormat(version = STORAGE_FORMAT_VERSION): void {
    this.meta.putSync('format', { magic: MAGIC, version });
  }

  /** Every collection in the file, by name. */
  loadCollections(): StoredCollection[] {
    const out: StoredCollection[] = [];
    for (const { key: name, value: entry } of this.collections.getRange()) {
      if (typeof name !== 'string' || typeof entry?.uid !== 'number') {
        throw new KithError('ERR_STORAGE_CORRUPTED', `collection entry ${JSON.stringify(name)} does not decode`);
      }
      const last = this.lastVersions.get(entry.uid);
      const applied = this.readApplied(entry.uid, name);
      out.push({
        uid: entry.uid,
        name,
        config: entry.config,
        lastVersion: typeof last === 'string' ? BigInt(last) : 0n,
        ...(applied === undefined ? {} : { applied }),
      });
    }
    return out;
  }

  /** The collection's applied position, as last committed; ERR_STORAGE_CORRUPTED if it does not decode. */
  readApplied(uid: number, name: string): AppliedPosition | undefined {
    const text = this.meta.get(appliedKey(uid));
    if (text === undefined) return undefined;
    const applied = decodeAppliedPosition(text);
    if (applied === undefined) throw new KithError('ERR_STORAGE_CORRUPTED', `collection "${name}": its applied position does not decode`);
    return applied;
  }

  /** The stored points of a collection, in key order (the ids' UTF-8 bytes). */
  *scanPoints(uid: number): IterableIterator<PointWrite> {
    for (const { key, value } of this.points.getRange(pointKeyRange(uid))) {
      yield { id: decodePointKey(key).id, record: value };
    }
  }

  /** How many points a collection has stored (counted by LMDB without decoding values). */
  countPoints(uid: number): number {
    return this.points.getKeysCount(pointKeyRange(uid));
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

  /**
   * Replaces the collection entry's configuration (a reconfiguration); with `dropSnapshot`, its
   * graph snapshot goes in the same transaction (it was built with other graph parameters).
   */
  async updateCollectionConfig(uid: number, name: string, config: unknown, dropSnapshot: boolean): Promise<void> {
    await this.write(() => {
      const entry = this.collections.get(name);
      if (entry?.uid !== uid) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist`);
      this.collections.putSync(name, { uid, config });
      if (dropSnapshot) removeRange(this.snapshots, snapshotRange(uid));
    });
  }

  /** Removes the collection entry, every point of it and every alias naming it in one transaction. */
  async dropCollection(uid: number, name: string): Promise<void> {
    await this.write(() => {
      for (const [alias, collection] of this.readAliases()) if (collection === name) this.meta.removeSync(aliasKey(alias));
      this.collections.removeSync(name);
      this.removeCollectionData(uid);
    });
  }

  /** Everything stored under a collection's uid but its entry (inside a write). */
  private removeCollectionData(uid: number): void {
    this.lastVersions.removeSync(uid);
    removeRange(this.points, pointKeyRange(uid));
    removeRange(this.snapshots, snapshotRange(uid));
    this.annotations.removeSync(uid);
    this.meta.removeSync(appliedKey(uid));
  }

  /** Every alias, by alias: the name of the collection it names (inside a write, as that write sees them). */
  readAliases(): Map<string, string> {
    const aliases = new Map<string, string>();
    for (const { key, value } of this.meta.getRange({ start: ALIAS_KEY_PREFIX, end: ALIAS_KEY_END })) {
      if (typeof value === 'string') aliases.set(String(key).slice(ALIAS_KEY_PREFIX.length), value);
    }
    return aliases;
  }

  /**
   * Replaces every alias with `aliases`, in one transaction that first checks that each collection
   * they name is still stored: a drop that commits first makes this write fail with
   * ERR_COLLECTION_NOT_FOUND, so no alias outlives its collection.
   */
  async writeAliases(aliases: ReadonlyMap<string, string>): Promise<void> {
    await this.write(() => {
      for (const collection of new Set(aliases.values())) {
        if (this.collections.get(collection) === undefined) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${collection}" does not exist`);
      }
      for (const alias of this.readAliases().keys()) if (!aliases.has(alias)) this.meta.removeSync(aliasKey(alias));
      for (const [alias, collection] of aliases) this.meta.putSync(aliasKey(alias), collection);
    });
  }

  /** The collection's annotations (JSON text the API layers keep with it), if any. */
  readAnnotations(uid: number): string | undefined {
    const text = this.annotations.get(uid);
    return typeof text === 'string' ? text : undefined;
  }

  /** Replaces the collection's annotations; resolves once durable. */
  async writeAnnotations(uid: number, json: string): Promise<void> {
    await this.write(() => {
      this.annotations.putSync(uid, json);
    });
  }

  /** Replaces the collection's snapshot with the concatenation of `parts`, atomically. */
  async writeSnapshot(uid: number, parts: readonly Uint8Array[]): Promise<void> {
    // A snapshot is a cache of what the records hold: a read-only open leaves the old one.
    if (this.readOnly) return;
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
      removeRange(this.snapshots, snapshotRange(uid));
      chunks.forEach((chunk, i) => {
        this.snapshots.putSync([uid, i], Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      });
    });
  }

  /** The collection's snapshot bytes, or undefined when it has none. */
  readSnapshot(uid: number): Buffer | undefined {
    const chunks: Buffer[] = [];
    for (const { value } of this.snapshots.getRange(snapshotRange(uid))) chunks.push(value);
    return chunks.length === 0 ? undefined : Buffer.concat(chunks);
  }

  /**
   * Applies removes, then puts, of one collection (and its last version and applied position)
   * all or nothing; resolves once durable. Keys are encoded before the transaction starts (a slice at a time), so a bad id
   * fails before any write. A large batch is committed by a thread of its own (point-writer.ts),
   * so that its transaction does not hold the service thread.
   */
  async writePoints(uid: number, puts: readonly PointWrite[], removes: readonly string[], lastVersion?: bigint, applied?: AppliedPosition): Promise<void> {
    if (this.closed) throw new KithError('ERR_SHUTTING_DOWN', 'the database is closed');
    const slices = new TimeSlices();
    const removeKeys: Buffer[] = new Array(removes.length);
    for (let i = 0; i < removes.length; i++) {
      if (slices.due(i)) await slices.pause();
      removeKeys[i] = encodePointKey(uid, removes[i] as string);
    }
    const putEntries: Array<readonly [Buffer, Buffer]> = new Array(puts.length);
    let recordBytes = 0;
    for (let i = 0; i < puts.length; i++) {
      if (slices.due(i)) await slices.pause();
      const { id, record } = puts[i] as PointWrite;
      putEntries[i] = [encodePointKey(uid, id), record];
      recordBytes += record.length;
    }
    if (isLargeWrite(removeKeys.length + putEntries.length, recordBytes)) {
      if (this.closed) throw new KithError('ERR_SHUTTING_DOWN', 'the database is closed');
      await writeOnThread(this.path, uid, removeKeys, putEntries, lastVersion, applied);
      return;
    }
    await this.write(() => {
      for (const key of removeKeys) this.points.removeSync(key);
      for (const [key, record] of putEntries) this.points.putSync(key, record);
      if (lastVersion !== undefined) this.lastVersions.putSync(uid, lastVersion.toString());
      if (applied !== undefined) this.meta.putSync(appliedKey(uid), encodeAppliedPosition(applied));
    });
  }

  /**
   * The collection as an export stream (collection-export.ts), read in ONE read transaction: its
   * entry, last version, applied position, annotations, points and graph snapshot are those of a
   * single commit, whatever is written meanwhile (LMDB keeps that commit's pages for the reader).
   * The transaction is held until the stream is read to its end or abandoned; close() waits for it.
   */
  async *exportCollection(name: string): AsyncGenerator<Buffer> {
    if (this.closed) throw new KithError('ERR_SHUTTING_DOWN', 'the database is closed');
    const transaction = this.root.useReadTransaction();
    let finish = (): void => {};
    const held = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.copies.add(held);
    try {
      const entry = this.collections.get(name, { transaction });
      if (entry === undefined) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist`);
      const uid = entry.uid;
      const last = this.lastVersions.get(uid, { transaction });
      const applied = this.meta.get(appliedKey(uid), { transaction });
      const annotations = this.annotations.get(uid, { transaction });
      const out = new ExportWriter();
      out.header({
        name,
        config: entry.config,
        last_version: typeof last === 'string' ? last : '0',
        applied: typeof applied === 'string' ? applied : null,
        annotations: typeof annotations === 'string' ? annotations : null,
        points: this.points.getKeysCount({ ...pointKeyRange(uid), transaction }),
      });
      for (const { key, value } of this.points.getRange({ ...pointKeyRange(uid), transaction })) {
        out.point(decodePointKey(key).id, value);
        const ready = out.take();
        if (ready !== undefined) yield ready;
      }
      for (const { value } of this.snapshots.getRange({ ...snapshotRange(uid), transaction } as { start: SnapshotKey; end: SnapshotKey })) {
        out.snapshot(value);
        const ready = out.take();
        if (ready !== undefined) yield ready;
      }
      yield out.end();
    } finally {
      transaction.done();
      finish();
      this.copies.delete(held);
    }
  }

  /**
   * Reserves a uid for an import and marks it under way, durably: until `commitImport` its points
   * and snapshot are written under that uid with no collection entry (invisible), and an open
   * that finds the mark (the import's process died) removes them.
   */
  async beginImport(): Promise<number> {
    return this.write(() => {
      const next = this.meta.get('next_uid');
      const uid = typeof next === 'number' ? next : 1;
      this.meta.putSync('next_uid', uid + 1);
      this.meta.putSync(importingKey(uid), true);
      return uid;
    });
  }

  /**
   * Makes an import's collection exist, in one transaction: its entry, last version, applied
   * position and annotations, and the mark removed. ERR_COLLECTION_EXISTS (nothing written) if
   * the name was taken meanwhile. `replaces`: the uid of the collection of that name the import
   * takes the place of (a snapshot's recovery): its entry now names the import and everything
   * stored under the old uid goes, in the same transaction; its aliases stay.
   */
  async commitImport(
    uid: number,
    name: string,
    config: unknown,
    lastVersion: bigint,
    applied: AppliedPosition | undefined,
    annotations: string | undefined,
    replaces?: number,
  ): Promise<void> {
    await this.write(() => {
      const existing = this.collections.get(name);
      if (existing !== undefined) {
        if (replaces === undefined || existing.uid !== replaces) throw new KithError('ERR_COLLECTION_EXISTS', `collection "${name}" already exists`);
        this.removeCollectionData(replaces);
      }
      this.collections.putSync(name, { uid, config });
      this.lastVersions.putSync(uid, lastVersion.toString());
      if (applied !== undefined) this.meta.putSync(appliedKey(uid), encodeAppliedPosition(applied));
      if (annotations !== undefined) this.annotations.putSync(uid, annotations);
      this.meta.removeSync(importingKey(uid));
    });
  }

  /** Removes what an import that will not finish wrote, and its mark. */
  async abortImport(uid: number): Promise<void> {
    await this.write(() => this.removeImport(uid));
  }

  /** Imports whose process died: their points and snapshots go, in one transaction, durable before the open returns. */
  private discardUnfinishedImports(): void {
    const uids: number[] = [];
    for (const key of this.meta.getKeys({ start: IMPORTING_KEY_PREFIX, end: IMPORTING_KEY_END })) {
      const uid = Number(String(key).slice(IMPORTING_KEY_PREFIX.length));
      if (Number.isSafeInteger(uid)) uids.push(uid);
    }
    if (uids.length === 0) return;
    this.root.transactionSync(() => {
      for (const uid of uids) this.removeImport(uid);
    });
  }

  private removeImport(uid: number): void {
    removeRange(this.points, pointKeyRange(uid));
    removeRange(this.snapshots, snapshotRange(uid));
    this.meta.removeSync(importingKey(uid));
  }

  /** Resolves once everything written so far is on disk. */
  async flush(): Promise<void> {
    await this.root.flushed;
  }

  /**
   * Writes a consistent copy of the whole file to `toPath` (which must not exist): LMDB's own copy
   * (mdb_env_copy), read from one read transaction in a worker thread, so it holds every write
   * committed before it started and none half-done, while writes go on. Not compacted: the pages
   * are copied as they are, which is the quickest and keeps the read transaction shortest.
   */
  async backup(toPath: string): Promise<void> {
    if (this.closed) throw new KithError('ERR_SHUTTING_DOWN', 'the database is closed');
    if (existsSync(toPath)) throw badInput('path', `${toPath} already exists; a backup is written to a new file`);
    const copy = (async () => {
      try {
        await this.root.backup(toPath, false);
      } catch (error) {
        throw new KithError('ERR_STORAGE', `backup of ${this.path} to ${toPath} failed: ${messageOf(error)}`, { cause: error });
      }
    })();
    this.copies.add(copy);
    try {
      await copy;
    } finally {
      this.copies.delete(copy);
    }
  }

  /** Closes the file, then gives up its lock (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.copies]);
    try {
      await this.env.close();
    } finally {
      this.lock.release();
    }
  }

  /**
   * Runs `body` as a child transaction of the turn's write transaction: if it throws, its writes
   * are rolled back and nothing else is; resolves after the commit is durable.
   */
  private async write<T>(body: () => T): Promise<T> {
    if (this.closed) throw new KithError('ERR_SHUTTING_DOWN', 'the database is closed');
    if (this.readOnly) throw new KithError('ERR_STORAGE', `${this.path} is open read-only; nothing was written`);
    try {
      return (await this.root.childTransaction(body)) as T;
    } catch (error) {
      if (error instanceof KithError) throw error;
      throw new KithError('ERR_STORAGE', `write to ${this.path} failed: ${messageOf(error)}`, { cause: error });
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function openWritable(path: string): LmdbEnv {
  let root: RootDatabase;
  try {
    root = open({ path, ...ENV_OPTIONS });
  } catch (error) {
    throw new KithError('ERR_STORAGE', `cannot open database file ${path}: ${messageOf(error)}`, { cause: error });
  }
  return { root, close: () => root.close() };
}

function format1ReadOnly(path: string): KithError {
  return new KithError(
    'ERR_STORAGE_CORRUPTED',
    `${path} has storage format 1, which a read-only command does not migrate: open it once with a command that writes (kith serve, kith import), which migrates it to format 2`,
  );
}

/** Read-only, LMDB cannot create a missing sub-database, and kith's reads need every one. */
function checkReadable(path: string, subDatabases: readonly string[]): void {
  if (subDatabases.includes('points') && !subDatabases.includes('point_records')) throw format1ReadOnly(path);
  const missing = SUB_DATABASES.filter((name) => !subDatabases.includes(name));
  if (missing.length > 0) {
    throw new KithError(
      'ERR_STORAGE_CORRUPTED',
      `${path}: no ${missing.map((name) => JSON.stringify(name)).join(', ')} sub-database: not a kith database, or its creation was cut short`,
    );
  }
}

/** The meta key of a collection's applied position (a string, as every meta key). */
export function appliedKey(uid: number): string {
  return `${APPLIED_KEY_PREFIX}${uid}`;
}

const ALIAS_KEY_PREFIX = 'alias/';
/** '/' + 1: the end of the range of keys that start with ALIAS_KEY_PREFIX. */
const ALIAS_KEY_END = 'alias0';

/** The meta key of an alias. */
function aliasKey(alias: string): string {
  return `${ALIAS_KEY_PREFIX}${alias}`;
}

const IMPORTING_KEY_PREFIX = 'importing/';
/** '/' + 1: the end of the range of keys that start with IMPORTING_KEY_PREFIX. */
const IMPORTING_KEY_END = 'importing0';

/** The meta key marking an import under way into `uid`. */
function importingKey(uid: number): string {
  return `${IMPORTING_KEY_PREFIX}${uid}`;
}

/** A collection's snapshot chunks: ordered-binary numbers, which read back exactly as written. */
function snapshotRange(uid: number): { start: SnapshotKey | [number]; end: SnapshotKey | [number] } {
  return { start: [uid], end: [uid + 1] };
}

/** Removes every key of a range (inside a write transaction). */
function removeRange<K extends Buffer | SnapshotKey>(db: Database<Buffer, K>, range: { start: unknown; end: unknown }): void {
  for (const key of db.getKeys(range as { start: K; end: K })) db.removeSync(key);
}
