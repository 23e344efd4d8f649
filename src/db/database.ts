/**
 * The registry of collections over one database file: open and load, create, drop, close.
 * This is also the embeddable entry point: `Database.open(path)` gives the whole engine in-process.
 *
 * Two ways to open: `open` loads every collection before it returns (the library, the command
 * line); `openInBackground` returns with the file open and loads the collections in slices
 * between other work on the event loop, so that a service can listen and answer its probes while
 * it loads (main.ts). Until every collection is loaded, everything that reads or changes
 * collections is ERR_LOADING: nothing is served from a database half loaded.
 */
import { badInput, KithError } from '../core/errors.js';
import { runSteps, runStepsInSlices, type Steps } from '../core/steps.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import type { VersionSource } from '../core/version-clock.js';
import type { NamedVectorConfigJson } from '../segment/named-vector-config.js';
import {
  type CollectionConfig,
  type CollectionConfigInput,
  configFromStored,
  configToInfo,
  configToJson,
  parseCollectionConfig,
  validateCollectionName,
} from '../segment/collection-config.js';
import { Collection, type CollectionInfo, type WarningSink } from '../collection/collection.js';
import { type LoadProgress, type LoadReport, newLoadProgress } from '../collection/collection-load.js';
import { SearchThreads } from '../threads/search-threads.js';
import { LmdbStore, type StoredCollection } from '../storage/lmdb-store.js';
import { type AliasAction, type AliasInfo, applyAliasActions } from './aliases.js';
import { importCollection } from './collection-import.js';
import { RestoreSession } from './restore-session.js';

export interface DatabaseOptions {
  /** Receives problems that fail no request, e.g. a graph snapshot that could not be used. */
  readonly onWarning?: WarningSink;
  /**
   * Search threads (worker threads sharing the collections' memory) that run the service's
   * searches (`Collection.searchParallel`); 0 or absent: searches run on the calling thread.
   */
  readonly threads?: number;
  /**
   * Open the file read-only (the command line's reading commands): nothing is written to it (a
   * stale graph snapshot is not refreshed), no lock file is left beside it, and every write fails
   * with ERR_STORAGE. The file must exist and hold a kith database.
   */
  readonly readOnly?: boolean;
  /** Told as each collection loads: when it starts, about once a second while it runs, and when it is done. */
  readonly onLoad?: (event: LoadEvent) => void;
  /**
   * Where each stored collection's upserts take their versions, by name (a replica hands out its
   * log's positions); absent, or undefined for a name: the clock. A collection created later takes
   * its own from `createCollection`'s options.
   */
  readonly versions?: (collection: string) => VersionSource | undefined;
}

/** What `reconfigureCollection` may change: the index parameters and whether there is a graph. */
export interface CollectionChange {
  readonly parameters?: {
    readonly m?: number;
    readonly ef_construction?: number;
    readonly ef_search?: number;
    readonly k?: number;
    readonly target_recall?: number;
  } | null;
  readonly hnsw?: boolean | null;
  /** Named vectors' own graph parameters, by name; a null field goes back to the collection's. */
  readonly named_vectors?: Readonly<Record<string, { readonly m?: number | null; readonly ef_construction?: number | null }>> | null;
  /** Sparse vectors' modifiers, by name (idf is computed at query time: nothing is rebuilt for it). */
  readonly sparse_vectors?: Readonly<Record<string, { readonly modifier?: 'none' | 'idf' | null }>> | null;
}

/** The configuration `change` asks for, checked as a create checks it (bounds, m × ef_construction × vector_size). */
function changedConfig(current: CollectionConfig, change: CollectionChange): CollectionConfig {
  const info = configToInfo(current);
  const { ef_search, ...kept } = info.parameters;
  const parameters = { ...kept, ...(current.parameters.efSearchExplicit ? { ef_search } : {}), ...(change.parameters ?? {}) };
  return parseCollectionConfig({
    ...info,
    hnsw: change.hnsw ?? info.hnsw,
    parameters,
    named_vectors: changedNamed(info.named_vectors, change.named_vectors),
    sparse_vectors: changedSparse(info.sparse_vectors, change.sparse_vectors),
  });
}

/** The sparse vectors' configurations with `change`'s modifiers; a name the collection lacks is a 400. */
function changedSparse(
  current: Readonly<Record<string, { modifier: 'none' | 'idf' }>> | undefined,
  change: CollectionChange['sparse_vectors'],
): Record<string, { modifier: 'none' | 'idf' }> | undefined {
  if (change === undefined || change === null) return current;
  const out: Record<string, { modifier: 'none' | 'idf' }> = Object.create(null);
  for (const [name, spec] of Object.entries(current ?? {})) out[name] = { ...spec };
  for (const [name, fields] of Object.entries(change)) {
    const at = childPath('sparse_vectors', name);
    const spec = Object.hasOwn(out, name) ? out[name] : undefined;
    if (spec === undefined) throw badInput(at, `the collection has no sparse vector ${JSON.stringify(name)}`);
    for (const [field, value] of Object.entries(fields ?? {})) {
      if (field !== 'modifier') throw badInput(childPath(at, field), 'unknown field');
      if (value === null || value === undefined) continue;
      if (value !== 'none' && value !== 'idf') throw badInput(childPath(at, field), `expected "none" or "idf", got ${describeJson(value)}`);
      spec.modifier = value;
    }
  }
  return { ...out };
}

/** The named vectors' configurations with `change`'s graph parameters merged in; a name the collection lacks is a 400. */
function changedNamed(
  current: Readonly<Record<string, NamedVectorConfigJson>> | undefined,
  change: CollectionChange['named_vectors'],
): Record<string, NamedVectorConfigJson> | undefined {
  if (change === undefined || change === null) return current;
  const out: Record<string, NamedVectorConfigJson> = Object.create(null);
  for (const [name, spec] of Object.entries(current ?? {})) out[name] = { ...spec };
  for (const [name, fields] of Object.entries(change)) {
    const spec = Object.hasOwn(out, name) ? out[name] : undefined;
    if (spec === undefined) throw badInput(childPath('named_vectors', name), `the collection has no named vector ${JSON.stringify(name)}`);
    for (const [field, value] of Object.entries(fields ?? {})) {
      if (field !== 'm' && field !== 'ef_construction') throw badInput(childPath(childPath('named_vectors', name), field), 'unknown field');
      if (value === null || value === undefined) delete spec[field];
      else spec[field] = value as number;
    }
  }
  return { ...out };
}

/** How `createCollection` sets up the new collection's write path. */
export interface CreateOptions {
  /** Where its upserts take their versions; the clock when absent. */
  readonly versions?: VersionSource;
}

/** What `DatabaseOptions.onLoad` is told; `ms` counts from the start of that collection's load. */
export type LoadEvent =
  | { readonly kind: 'start'; readonly collection: string; readonly index: 'hnsw' | 'flat' }
  | { readonly kind: 'progress'; readonly collection: string; readonly progress: Readonly<LoadProgress>; readonly ms: number }
  | { readonly kind: 'done'; readonly collection: string; readonly report: LoadReport; readonly ms: number };

/** While loading in the background, slices of about this long alternate with other work (what a probe may wait). */
const LOAD_SLICE_MS = 20;
/** Progress is told about this often while a collection loads. */
const PROGRESS_EVERY_MS = 1000;

export class Database {
  private readonly collections = new Map<string, Collection>();
  /** Names being created or dropped: a create of one of them is a conflict. */
  private readonly busyNames = new Set<string>();
  /** Collections whose reconfiguration is running (one at a time each). */
  private readonly reconfiguring = new Set<string>();
  /** Names a snapshot's recovery is to replace (importCollection with `replace`). */
  private readonly replacing = new Set<string>();
  private readonly reports = new Map<string, LoadReport>();
  private closing: Promise<void> | undefined;
  private loadingNow = true;
  private loadDone: Promise<void> = Promise.resolve();
  /** What stopped a load in the background: every call that reads collections then throws it, never part of the data. */
  private loadFailure: unknown;
  /** Alias → the collection it names (aliases.ts), as last committed. */
  private aliasMap: Map<string, string>;
  /** Alias changes run one after another, each validated against the one before. */
  private aliasChanges: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly store: LmdbStore,
    private readonly options: DatabaseOptions,
    private readonly threads: SearchThreads | undefined,
  ) {
    this.aliasMap = store.readAliases();
  }

  private get warn(): WarningSink | undefined {
    return this.options.onWarning;
  }

  /**
   * Opens (or creates) the file at `path` and loads every collection into memory before it
   * returns. The file is this process's until `close()`: another open of it, here or in another
   * process, is ERR_DATABASE_LOCKED naming the file and the holder.
   */
  static open(path: string, options: DatabaseOptions = {}): Database {
    const { db, loadAll } = Database.prepare(path, options);
    try {
      runSteps(loadAll);
    } catch (error) {
      void db.store.close();
      void db.threads?.close();
      throw error;
    }
    db.loadingNow = false;
    return db;
  }

  /**
   * Opens (or creates) the file at `path` as `open` does, but returns at once and loads the
   * collections in slices of about 20 ms between other work on the event loop: `loading` until
   * `loaded` settles. Meanwhile everything that reads or changes collections is ERR_LOADING (503).
   * A load that fails rejects `loaded`; the database is then of no use but to `close()` (every
   * other call throws what stopped the load). Errors of the file itself (locked, not a kith
   * database) are thrown here, as by `open`.
   */
  static openInBackground(path: string, options: DatabaseOptions = {}): Database {
    const { db, loadAll } = Database.prepare(path, options);
    const stop = (): Error | undefined => (db.closing === undefined ? undefined : new KithError('ERR_SHUTTING_DOWN', 'the database closed while loading'));
    db.loadDone = runStepsInSlices(loadAll, LOAD_SLICE_MS, stop)
      .catch((error: unknown) => {
        db.loadFailure = error;
        throw error;
      })
      .finally(() => {
        db.loadingNow = false;
      });
    // A failed load is the caller's to handle through `loaded`, never an unhandled rejection.
    db.loadDone.catch(() => {});
    return db;
  }

  /** Opens the file, reads and checks every collection's configuration, starts the threads; the loads are left to run. */
  private static prepare(path: string, options: DatabaseOptions): { db: Database; loadAll: Steps<void> } {
    const threadCount = options.threads ?? 0;
    if (!Number.isInteger(threadCount) || threadCount < 0) throw badInput('threads', `expected a whole number ≥ 0, got ${describeJson(threadCount)}`);
    const store = LmdbStore.open(path, { readOnly: options.readOnly === true });
    let stored: StoredCollection[];
    let configs: CollectionConfig[];
    try {
      stored = store.loadCollections();
      configs = stored.map((entry) => configFromStored(entry.config, entry.name));
    } catch (error) {
      void store.close();
      throw error;
    }
    const threads = threadCount > 0 ? SearchThreads.start(threadCount, (message) => options.onWarning?.(message)) : undefined;
    const db = new Database(store, options, threads);
    return { db, loadAll: db.loadAll(stored, configs) };
  }

  /**
   * Resolves once every collection is loaded; rejects with what stopped the load (a record that
   * does not decode, the database closing). Settled from the start after `open`.
   */
  get loaded(): Promise<void> {
    return this.loadDone;
  }

  /** Whether the collections are still loading (`openInBackground`); most calls answer ERR_LOADING meanwhile. */
  get loading(): boolean {
    return this.loadingNow;
  }

  /** Every collection's load, one after another, as steps; each joins the registry once loaded. */
  private *loadAll(stored: readonly StoredCollection[], configs: readonly CollectionConfig[]): Steps<void> {
    const tell = this.options.onLoad;
    for (const [i, entry] of stored.entries()) {
      const config = configs[i] as CollectionConfig;
      const versions = this.options.versions?.(entry.name);
      const collection = new Collection(this.store, entry.uid, config, entry.lastVersion, this.warn, this.threads, versions, entry.applied);
      const started = performance.now();
      tell?.({ kind: 'start', collection: entry.name, index: config.hnsw ? 'hnsw' : 'flat' });
      const progress = newLoadProgress();
      const steps = collection.loadSteps(progress);
      let tellAt = started + PROGRESS_EVERY_MS;
      let report: LoadReport;
      for (;;) {
        const next = steps.next();
        if (next.done === true) {
          report = next.value;
          break;
        }
        if (tell !== undefined && performance.now() >= tellAt) {
          tell({ kind: 'progress', collection: entry.name, progress: { ...progress }, ms: performance.now() - started });
          tellAt = performance.now() + PROGRESS_EVERY_MS;
        }
        yield;
      }
      this.reports.set(entry.name, report);
      this.collections.set(entry.name, collection);
      tell?.({ kind: 'done', collection: entry.name, report, ms: performance.now() - started });
    }
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
    this.assertLoaded();
    return [...this.collections.keys()].sort().map((name) => (this.collections.get(name) as Collection).describe());
  }

  /**
   * The named collection, or the one an alias of that name names; ERR_BAD_INPUT for a name no
   * collection can have (as on the wire), ERR_COLLECTION_NOT_FOUND if there is none.
   */
  collection(name: string): Collection {
    checkName(name);
    this.assertOpen();
    this.assertLoaded();
    const aliased = this.aliasMap.get(name);
    const collection = this.collections.get(aliased ?? name);
    if (collection === undefined) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist`);
    return collection;
  }

  /** Every alias with the collection it names, sorted by alias. */
  aliases(): AliasInfo[] {
    this.assertLoaded();
    return [...this.aliasMap].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([alias, collection]) => ({ alias, collection }));
  }

  /** The aliases of the collection of that name (not through an alias), sorted; ERR_COLLECTION_NOT_FOUND if there is none. */
  aliasesOf(name: string): string[] {
    checkName(name);
    this.assertLoaded();
    if (!this.collections.has(name)) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist`);
    return this.aliases()
      .filter((entry) => entry.collection === name)
      .map((entry) => entry.alias);
  }

  /**
   * Applies alias actions (aliases.ts) in order, all or nothing, durably before it resolves; a
   * search that names an alias sees either every action or none. Changes run one at a time.
   */
  changeAliases(actions: readonly AliasAction[]): Promise<void> {
    const change = this.aliasChanges.then(async () => {
      this.assertOpen();
      this.assertLoaded();
      const next = applyAliasActions(this.aliasMap, actions, (name) => this.collections.has(name) || this.busyNames.has(name));
      try {
        await this.store.writeAliases(next);
      } finally {
        // What the file holds now: a drop that committed meanwhile removed its collection's aliases.
        this.aliasMap = this.store.readAliases();
      }
    });
    this.aliasChanges = change.catch(() => {});
    return change;
  }

  /** Validates (400 first), then creates durably; ERR_COLLECTION_EXISTS if the name is taken. */
  async createCollection(input: CollectionConfigInput, options: CreateOptions = {}): Promise<CollectionInfo> {
    checkCreateShape(input);
    const config = parseCollectionConfig(input);
    this.assertOpen();
    this.assertLoaded();
    this.refuseAliasName(config.name, 'name');
    if (this.collections.has(config.name) || this.busyNames.has(config.name)) {
      throw new KithError('ERR_COLLECTION_EXISTS', `collection "${config.name}" already exists`);
    }
    this.busyNames.add(config.name);
    try {
      const uid = await this.store.createCollection(config.name, configToJson(config));
      const collection = new Collection(this.store, uid, config, 0n, this.warn, this.threads, options.versions);
      this.collections.set(config.name, collection);
      return collection.describe();
    } finally {
      this.busyNames.delete(config.name);
    }
  }

  /**
   * Drops a collection: it disappears from the registry at once (later requests get 404), writes
   * already queued on it finish first, then its entry, points and aliases leave the file in one
   * transaction. A drop takes the collection's own name, never an alias (ERR_COLLECTION_NOT_FOUND):
   * an alias is what readers hold while the collection behind it is replaced.
   */
  async dropCollection(name: string): Promise<void> {
    checkName(name);
    this.assertOpen();
    this.assertLoaded();
    const collection = this.collections.get(name);
    if (collection === undefined) {
      const aliased = this.aliasMap.get(name);
      const hint = aliased === undefined ? '' : ` ("${name}" is an alias of "${aliased}"; a drop takes the collection's own name)`;
      throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist${hint}`);
    }
    this.collections.delete(name);
    this.reports.delete(name);
    this.busyNames.add(name);
    for (const [alias, target] of this.aliasMap) if (target === name) this.aliasMap.delete(alias);
    try {
      await collection.retire();
      await this.store.dropCollection(collection.uid, name);
    } finally {
      this.busyNames.delete(name);
      this.aliasMap = this.store.readAliases();
    }
  }

  /**
   * Changes a collection's index parameters in place: `parameters` (m, ef_construction, ef_search,
   * k, target_recall) and `hnsw` (a graph or an exact scan). The name, dimension, distance,
   * quantization and payload indexing stay. The new configuration is written durably first; then
   * the collection's memory is rebuilt from its stored points with it (the graph too, when m,
   * ef_construction or hnsw change; otherwise its snapshot is reused), in slices, while reads go on
   * against the old memory and writes wait in its queue; then the rebuilt collection takes its
   * place and the waiting writes run on it. Resolves once it has. A crash meanwhile loses nothing:
   * the next start loads the stored points with the new configuration. ERR_CONFLICT while another
   * reconfiguration of the collection runs.
   */
  async reconfigureCollection(nameOrAlias: string, change: CollectionChange): Promise<CollectionInfo> {
    this.assertOpen();
    this.assertLoaded();
    const old = this.collection(nameOrAlias);
    const name = old.name;
    const config = changedConfig(old.config, change);
    const before = old.config.parameters;
    const rebuildGraph =
      config.hnsw !== old.config.hnsw ||
      config.parameters.m !== before.m ||
      config.parameters.efConstruction !== before.efConstruction ||
      JSON.stringify(configToInfo(config).named_vectors) !== JSON.stringify(configToInfo(old.config).named_vectors);
    if (!rebuildGraph && JSON.stringify(configToJson(config)) === JSON.stringify(configToJson(old.config))) return old.describe();
    if (this.reconfiguring.has(name)) throw new KithError('ERR_CONFLICT', `collection "${name}" is being reconfigured; try again when that has finished`);
    this.reconfiguring.add(name);
    try {
      return await old.holdWrites(async () => {
        await this.store.updateCollectionConfig(old.uid, name, configToJson(config), rebuildGraph);
        const stored = this.store.loadCollections().find((entry) => entry.uid === old.uid);
        const next = new Collection(this.store, old.uid, config, stored?.lastVersion ?? 0n, this.warn, this.threads, old.versionSource, old.appliedPosition);
        const stop = (): Error | undefined =>
          this.closing === undefined ? undefined : new KithError('ERR_SHUTTING_DOWN', 'the database closed while reconfiguring');
        const report = await runStepsInSlices(next.loadSteps(), LOAD_SLICE_MS, stop);
        if (this.collections.get(name) !== old) {
          // Dropped meanwhile: the drop's retire waits behind this task, then removes the stored collection.
          await next.handOver(old);
          throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" was dropped while it was reconfigured`);
        }
        this.reports.set(name, report);
        this.collections.set(name, next);
        await old.handOver(next);
        return next.describe();
      });
    } finally {
      this.reconfiguring.delete(name);
    }
  }

  /** A new collection cannot take an alias's name (400, as Qdrant answers): the alias would hide it. */
  private refuseAliasName(name: string, path: string): void {
    const aliased = this.aliasMap.get(name);
    if (aliased !== undefined) throw badInput(path, `"${name}" is an alias of collection "${aliased}"; delete or rename the alias first`);
  }

  /**
   * Starts a restore of the named collection (restore-session.ts): points written with their own
   * versions. The collection is out of the registry until the session's `finish()`.
   */
  async beginRestore(nameOrAlias: string): Promise<RestoreSession> {
    const collection = this.collection(nameOrAlias);
    const name = collection.name;
    this.collections.delete(name);
    this.busyNames.add(name);
    await collection.retire();
    const stored = this.store.loadCollections().find((c) => c.uid === collection.uid);
    const reinstate = (restored: Collection, report: LoadReport): void => {
      this.busyNames.delete(name);
      this.collections.set(name, restored);
      this.reports.set(name, report);
    };
    return new RestoreSession(this.store, collection.uid, collection.config, stored?.lastVersion ?? 0n, this.warn, reinstate, this.threads, {
      versions: collection.versionSource,
      applied: stored?.applied,
    });
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
    this.assertLoaded();
    await Promise.all([...this.collections.values()].map((c) => c.saveSnapshot()));
    await this.store.backup(toPath);
  }

  /**
   * The collection as an export stream (storage/collection-export.ts): its configuration, last
   * version, applied position, annotations, points and graph snapshot as of one commit, read from
   * one LMDB read transaction while reads and writes go on. The graph is saved first (when it
   * changed), so an import takes it from the snapshot instead of rebuilding it.
   */
  async *exportCollection(name: string): AsyncGenerator<Buffer> {
    const collection = this.collection(name);
    await collection.saveSnapshot();
    this.assertOpen();
    yield* this.store.exportCollection(collection.name);
  }

  /**
   * Imports an export stream (from this database or another) as a new collection, named as
   * exported or `options.name`: all or nothing, even if the process dies mid-way
   * (collection-import.ts). ERR_COLLECTION_EXISTS if the name is taken; ERR_BAD_INPUT for a stream
   * that is not a whole export. The graph comes from the export's snapshot where it matches.
   * `options.annotations` are set over the exported ones in the import's commit.
   *
   * `options.replace` (a snapshot's recovery): a collection of that name is no error; it serves
   * reads and writes while the stream is read, then, once the whole stream is written, its queued
   * writes finish, it leaves the registry and one transaction puts the import in its place (its
   * aliases stay). A refused stream leaves it as it was. ERR_CONFLICT while another replace of the
   * name or a reconfiguration of it runs.
   */
  async importCollection(
    source: AsyncIterable<Uint8Array>,
    options: { readonly name?: string; readonly annotations?: Record<string, unknown>; readonly replace?: boolean } & CreateOptions = {},
  ): Promise<CollectionInfo> {
    if (options.name !== undefined) checkName(options.name);
    this.assertOpen();
    this.assertLoaded();
    let claimed: string | undefined;
    let replacing: string | undefined;
    let replaced: Collection | undefined;
    const taken = (name: string) => new KithError('ERR_COLLECTION_EXISTS', `collection "${name}" already exists`);
    try {
      const imported = await importCollection(
        this.store,
        source,
        options.name,
        (name) => {
          this.refuseAliasName(name, 'name');
          if (this.replacing.has(name)) throw new KithError('ERR_CONFLICT', `collection "${name}" is being recovered from a snapshot already`);
          if (options.replace === true && this.collections.has(name)) {
            this.replacing.add(name);
            replacing = name;
            return;
          }
          if (this.collections.has(name) || this.busyNames.has(name)) throw taken(name);
          this.busyNames.add(name);
          claimed = name;
        },
        options.annotations,
        async () => {
          if (replacing === undefined) return undefined;
          const name = replacing;
          if (this.reconfiguring.has(name)) throw new KithError('ERR_CONFLICT', `collection "${name}" is being reconfigured; recover once that has finished`);
          const old = this.collections.get(name);
          if (this.busyNames.has(name)) throw taken(name);
          this.busyNames.add(name);
          claimed = name;
          // Dropped meanwhile: the import takes the free name.
          if (old === undefined) return undefined;
          this.collections.delete(name);
          this.reports.delete(name);
          replaced = old;
          await old.retire();
          return old.uid;
        },
      );
      const name = imported.config.name;
      const collection = new Collection(
        this.store,
        imported.uid,
        imported.config,
        imported.lastVersion,
        this.warn,
        this.threads,
        options.versions,
        imported.applied,
      );
      this.reports.set(name, collection.load());
      this.collections.set(name, collection);
      replaced = undefined;
      return collection.describe();
    } catch (error) {
      // The commit failed after the collection it was to replace was retired: that one is still
      // the file's, so it is loaded again, as a restart would.
      if (replaced !== undefined) this.reload(replaced);
      throw error;
    } finally {
      if (claimed !== undefined) this.busyNames.delete(claimed);
      if (replacing !== undefined) this.replacing.delete(replacing);
    }
  }

  private reload(retired: Collection): void {
    const stored = this.store.loadCollections().find((c) => c.uid === retired.uid);
    if (stored === undefined || this.collections.has(stored.name)) return;
    const collection = new Collection(
      this.store,
      stored.uid,
      retired.config,
      stored.lastVersion,
      this.warn,
      this.threads,
      retired.versionSource,
      stored.applied,
    );
    this.reports.set(stored.name, collection.load());
    this.collections.set(stored.name, collection);
  }

  /**
   * Finishes queued writes, saves changed graphs, makes everything durable, closes the file and
   * gives up its lock. Idempotent. A load in the background stops first (what it loaded is dropped).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.loadDone.catch(() => {});
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

  private assertLoaded(): void {
    if (this.loadingNow) throw new KithError('ERR_LOADING', 'the database is loading its collections; retry shortly');
    const failure = this.loadFailure;
    if (failure !== undefined) {
      const code = failure instanceof KithError ? failure.code : 'ERR_STORAGE';
      throw new KithError(code, `the database did not load: ${failure instanceof Error ? failure.message : String(failure)}`, { cause: failure });
    }
  }
}

/** A collection name from an embedded caller: a string (the wire always has one), then the name rule. */
function checkName(name: unknown, path = 'name'): void {
  if (typeof name !== 'string') throw badInput(path, `expected string, got ${describeJson(name)}`);
  validateCollectionName(name, path);
}

const CREATE_KEYS = new Set([
  'name',
  'vector_size',
  'distance',
  'hnsw',
  'parameters',
  'quantization',
  'payload_index',
  'vector_name',
  'sparse_vectors',
  'named_vectors',
]);
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
