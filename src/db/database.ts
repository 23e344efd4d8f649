/**
 * The registry of collections over one database file: open and load, create, drop, close.
 * This is also the embeddable entry point: `Database.open(path)` gives the whole engine in-process.
 */
import { badInput, KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import {
  type CollectionConfigInput,
  configFromStored,
  configToJson,
  parseCollectionConfig,
  validateCollectionName,
} from '../collection/collection-config.js';
import { Collection, type CollectionInfo, type WarningSink } from '../collection/collection.js';
import type { LoadReport } from '../collection/collection-load.js';
import { SearchThreads } from '../collection/search-threads.js';
import { LmdbStore } from '../storage/lmdb-store.js';
import { RestoreSession } from './restore-session.js';

export interface DatabaseOptions {
  /** Receives problems that fail no request, e.g. a graph snapshot that could not be used. */
  readonly onWarning?: WarningSink;
  /**
   * Search threads (worker threads sharing the collections' memory) that run the service's
   * searches (`Collection.searchParallel`); 0 or absent: searches run on the calling thread.
   */
  readonly threads?: number;
}

export class Database {
  private readonly collections = new Map<string, Collection>();
  /** Names being created or dropped: a create of one of them is a conflict. */
  private readonly busyNames = new Set<string>();
  private readonly reports = new Map<string, LoadReport>();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly store: LmdbStore,
    private readonly warn: WarningSink | undefined,
    private readonly threads: SearchThreads | undefined,
  ) {}

  /**
   * Opens (or creates) the file at `path` and loads every collection into memory. The file is
   * this process's until `close()`: another open of it, here or in another process, is
   * ERR_DATABASE_LOCKED naming the file and the holder.
   */
  static open(path: string, options: DatabaseOptions = {}): Database {
    const threadCount = options.threads ?? 0;
    if (!Number.isInteger(threadCount) || threadCount < 0) throw badInput('threads', `expected a whole number ≥ 0, got ${describeJson(threadCount)}`);
    const store = LmdbStore.open(path);
    const threads = threadCount > 0 ? SearchThreads.start(threadCount, (message) => options.onWarning?.(message)) : undefined;
    const db = new Database(store, options.onWarning, threads);
    try {
      for (const stored of store.loadCollections()) {
        const config = configFromStored(stored.config, stored.name);
        const collection = new Collection(store, stored.uid, config, stored.lastVersion, db.warn, threads);
        db.reports.set(stored.name, collection.load());
        db.collections.set(stored.name, collection);
      }
    } catch (error) {
      void store.close();
      void threads?.close();
      throw error;
    }
    return db;
  }

  /** Search threads running the service's searches (0: none, searches run on the calling thread). */
  get searchThreads(): number {
    return this.threads?.size ?? 0;
  }

  get path(): string {
    return this.store.path;
  }

  /** What start-up found for each collection: points, and how much of the graph came from its snapshot. */
  get loadReports(): ReadonlyMap<string, LoadReport> {
    return this.reports;
  }

  /** Every collection, sorted by name. */
  list(): CollectionInfo[] {
    return [...this.collections.keys()].sort().map((name) => (this.collections.get(name) as Collection).describe());
  }

  /** The named collection; ERR_BAD_INPUT for a name no collection can have (as on the wire), ERR_COLLECTION_NOT_FOUND if there is none. */
  collection(name: string): Collection {
    checkName(name);
    this.assertOpen();
    const collection = this.collections.get(name);
    if (collection === undefined) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist`);
    return collection;
  }

  /** Validates (400 first), then creates durably; ERR_COLLECTION_EXISTS if the name is taken. */
  async createCollection(input: CollectionConfigInput): Promise<CollectionInfo> {
    checkCreateShape(input);
    const config = parseCollectionConfig(input);
    this.assertOpen();
    if (this.collections.has(config.name) || this.busyNames.has(config.name)) {
      throw new KithError('ERR_COLLECTION_EXISTS', `collection "${config.name}" already exists`);
    }
    this.busyNames.add(config.name);
    try {
      const uid = await this.store.createCollection(config.name, configToJson(config));
      const collection = new Collection(this.store, uid, config, 0n, this.warn, this.threads);
      this.collections.set(config.name, collection);
      return collection.describe();
    } finally {
      this.busyNames.delete(config.name);
    }
  }

  /**
   * Drops a collection: it disappears from the registry at once (later requests get 404), writes
   * already queued on it finish first, then its entry and points leave the file in one transaction.
   */
  async dropCollection(name: string): Promise<void> {
    checkName(name);
    const collection = this.collection(name);
    this.collections.delete(name);
    this.reports.delete(name);
    this.busyNames.add(name);
    try {
      await collection.retire();
      await this.store.dropCollection(collection.uid, name);
    } finally {
      this.busyNames.delete(name);
    }
  }

  /**
   * Starts a restore of the named collection (restore-session.ts): points written with their own
   * versions. The collection is out of the registry until the session's `finish()`.
   */
  async beginRestore(name: string): Promise<RestoreSession> {
    const collection = this.collection(name);
    this.collections.delete(name);
    this.busyNames.add(name);
    await collection.retire();
    const stored = this.store.loadCollections().find((c) => c.uid === collection.uid);
    const reinstate = (restored: Collection, report: LoadReport): void => {
      this.busyNames.delete(name);
      this.collections.set(name, restored);
      this.reports.set(name, report);
    };
    return new RestoreSession(this.store, collection.uid, collection.config, stored?.lastVersion ?? 0n, this.warn, reinstate, this.threads);
  }

  /**
   * Writes a consistent copy of the database file to `toPath` (a new file) while reads and writes
   * go on: it holds every write acknowledged before the call. The copy opens with `Database.open`.
   * Each graph is saved first (when it changed since its last snapshot), so the copy holds graph
   * snapshots as recent as the call and opens about as fast as a restart, instead of re-inserting
   * every point written since the last snapshot.
   */
  async backup(toPath: string): Promise<void> {
    if (typeof toPath !== 'string' || toPath === '') throw badInput('path', `expected a file path, got ${describeJson(toPath)}`);
    this.assertOpen();
    await Promise.all([...this.collections.values()].map((c) => c.saveSnapshot()));
    await this.store.backup(toPath);
  }

  /** Finishes queued writes, saves changed graphs, makes everything durable, closes the file and gives up its lock. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.collections.values()].map((c) => c.close()));
      await this.store.flush();
      await this.store.close();
      await this.threads?.close();
    })();
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closing !== undefined) throw new KithError('ERR_SHUTTING_DOWN', 'the database is closing');
  }
}

/** A collection name from an embedded caller: a string (the wire always has one), then the name rule. */
function checkName(name: unknown, path = 'name'): void {
  if (typeof name !== 'string') throw badInput(path, `expected string, got ${describeJson(name)}`);
  validateCollectionName(name, path);
}

const CREATE_KEYS = new Set(['name', 'vector_size', 'distance', 'hnsw', 'parameters', 'quantization', 'payload_index']);
const PARAMETER_KEYS = new Set(['m', 'ef_construction', 'ef_search', 'k', 'target_recall']);

/**
 * What the route schema checks before `parseCollectionConfig` (which checks every value): an
 * object of known fields, so an embedded caller's typo is a 400 as it is on the wire.
 */
function checkCreateShape(input: unknown): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw badInput('body', `expected object, got ${describeJson(input)}`);
  const fields = input as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (!CREATE_KEYS.has(key)) throw badInput(childPath('', key), 'unknown field');
  if (!('name' in fields)) throw badInput('name', 'required');
  checkName(fields.name);
  const parameters = fields.parameters;
  if (parameters === undefined || parameters === null) return;
  if (typeof parameters !== 'object' || Array.isArray(parameters)) throw badInput('parameters', `expected object, got ${describeJson(parameters)}`);
  for (const key of Object.keys(parameters)) if (!PARAMETER_KEYS.has(key)) throw badInput(childPath('parameters', key), 'unknown field');
}
