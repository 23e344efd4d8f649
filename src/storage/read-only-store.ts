/**
 * The database file opened read-only, for `kith check`: LMDB's MDB_RDONLY, so nothing this does
 * can change the file, opened through read-only-env.ts so no lock file is left beside it (unless
 * a running writer made one already). Raw entries come back undecoded, so that every decoding
 * problem is the checker's to report rather than an exception. A sub-database the file lacks
 * (read-only, LMDB cannot create one) reads as empty.
 *
 * The caller checks the file's pages first (lmdb-file-check.ts): LMDB must never map a broken one.
 *
 * It also answers the three reads a collection makes while loading (`readSnapshot`, `countPoints`,
 * `scanPoints`, with LmdbStore's signatures), so the checker can load a collection from it.
 */
import type { Database, Key } from 'lmdb';
import type { PointWrite } from './lmdb-store.js';
import { decodePointKey, pointKeyRange } from './point-key.js';
import { type LmdbEnv, openReadOnlyEnv } from './read-only-env.js';

export type RawSnapshotKey = Key;

interface Entry<K, V> {
  readonly key: K;
  readonly value: V;
}

export class ReadOnlyStore {
  private constructor(
    readonly path: string,
    private readonly env: LmdbEnv,
    private readonly meta: Database<unknown, string>,
    private readonly collections: Database<unknown, Key> | undefined,
    private readonly lastVersions: Database<unknown, Key> | undefined,
    private readonly points: Database<Buffer, Buffer> | undefined,
    private readonly snapshots: Database<Buffer, RawSnapshotKey> | undefined,
    private readonly annotations: Database<unknown, Key> | undefined,
  ) {}

  /**
   * Opens the file (which must hold a `meta` sub-database). `lockTable`: `private` when no writer
   * can be running, `shared` to join a running writer's reader table (read-only-env.ts).
   */
  static open(path: string, lockTable: 'private' | 'shared'): ReadOnlyStore {
    const env = openReadOnlyEnv(path, lockTable);
    const root = env.root;
    try {
      // Read-only, openDB gives undefined (whatever its type says) for a sub-database the file lacks.
      return new ReadOnlyStore(
        path,
        env,
        root.openDB<unknown, string>({ name: 'meta' }),
        root.openDB<unknown, Key>({ name: 'collections' }),
        root.openDB<unknown, Key>({ name: 'last_versions', encoding: 'string' }),
        root.openDB<Buffer, Buffer>({ name: 'point_records', encoding: 'binary', keyEncoding: 'binary' }),
        root.openDB<Buffer, RawSnapshotKey>({ name: 'snapshots', encoding: 'binary' }),
        root.openDB<unknown, Key>({ name: 'annotations', encoding: 'string' }),
      );
    } catch (error) {
      void env.close();
      throw error;
    }
  }

  metaEntry(key: string): unknown {
    return this.meta.get(key);
  }

  /** The meta entries whose key starts with `prefix`, raw. */
  metaEntriesFrom(prefix: string): Iterable<Entry<Key, unknown>> {
    // The prefix's last character + 1 ends the range (as the store's "alias/"…"alias0").
    const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    return this.meta.getRange({ start: prefix, end });
  }

  collectionEntries(): Iterable<Entry<Key, unknown>> {
    return this.collections?.getRange() ?? [];
  }

  lastVersion(uid: number): unknown {
    return this.lastVersions?.get(uid);
  }

  lastVersionKeys(): Iterable<Key> {
    return this.lastVersions?.getKeys() ?? [];
  }

  pointEntries(): Iterable<Entry<Buffer, Buffer>> {
    return this.points?.getRange() ?? [];
  }

  snapshotKeys(): Iterable<RawSnapshotKey> {
    return this.snapshots?.getKeys() ?? [];
  }

  annotationEntries(): Iterable<Entry<Key, unknown>> {
    return this.annotations?.getRange() ?? [];
  }

  readSnapshot(uid: number): Buffer | undefined {
    const chunks: Buffer[] = [];
    for (const { value } of this.snapshots?.getRange({ start: [uid], end: [uid + 1] }) ?? []) chunks.push(value);
    return chunks.length === 0 ? undefined : Buffer.concat(chunks);
  }

  countPoints(uid: number): number {
    return this.points?.getKeysCount(pointKeyRange(uid)) ?? 0;
  }

  *scanPoints(uid: number): IterableIterator<PointWrite> {
    for (const { key, value } of this.points?.getRange(pointKeyRange(uid)) ?? []) yield { id: decodePointKey(key).id, record: value };
  }

  close(): Promise<void> {
    return this.env.close();
  }
}
