/**
 * The database file opened read-only, for `kith check`: LMDB's MDB_RDONLY, so nothing this does
 * can change the file, and no kith file lock, so a file a server is using can be checked too
 * (LMDB readers see one committed state and never block the writer). Raw entries come back
 * undecoded, so that every decoding problem is the checker's to report rather than an exception.
 *
 * It also answers the three reads a collection makes while loading (`readSnapshot`, `countPoints`,
 * `scanPoints`, with LmdbStore's signatures), so the checker can load a collection from it.
 */
import { existsSync } from 'node:fs';
import { type Database, type Key, open, type RootDatabase } from 'lmdb';
import { KithError } from '../core/errors.js';
import type { PointWrite } from './lmdb-store.js';
import { decodePointKey, pointKeyRange } from './point-key.js';

export type RawSnapshotKey = Key;

export class ReadOnlyStore {
  private constructor(
    readonly path: string,
    private readonly root: RootDatabase,
    readonly meta: Database<unknown, string>,
    readonly collections: Database<unknown, Key>,
    readonly lastVersions: Database<unknown, Key>,
    readonly points: Database<Buffer, Buffer>,
    readonly snapshots: Database<Buffer, RawSnapshotKey>,
    readonly annotations: Database<unknown, Key>,
  ) {}

  static open(path: string): ReadOnlyStore {
    // LMDB would take a missing file as a new, empty environment: a check of a typo must not pass.
    if (!existsSync(path)) throw new KithError('ERR_STORAGE', `${path} does not exist`);
    let root: RootDatabase;
    try {
      root = open({ path, readOnly: true, noSubdir: true, cache: false });
    } catch (error) {
      throw new KithError('ERR_STORAGE', `cannot open ${path} read-only: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    return new ReadOnlyStore(
      path,
      root,
      root.openDB<unknown, string>({ name: 'meta' }),
      root.openDB<unknown, Key>({ name: 'collections' }),
      root.openDB<unknown, Key>({ name: 'last_versions', encoding: 'string' }),
      root.openDB<Buffer, Buffer>({ name: 'point_records', encoding: 'binary', keyEncoding: 'binary' }),
      root.openDB<Buffer, RawSnapshotKey>({ name: 'snapshots', encoding: 'binary' }),
      root.openDB<unknown, Key>({ name: 'annotations', encoding: 'string' }),
    );
  }

  readSnapshot(uid: number): Buffer | undefined {
    const chunks: Buffer[] = [];
    for (const { value } of this.snapshots.getRange({ start: [uid], end: [uid + 1] })) chunks.push(value);
    return chunks.length === 0 ? undefined : Buffer.concat(chunks);
  }

  countPoints(uid: number): number {
    return this.points.getKeysCount(pointKeyRange(uid));
  }

  *scanPoints(uid: number): IterableIterator<PointWrite> {
    for (const { key, value } of this.points.getRange(pointKeyRange(uid))) yield { id: decodePointKey(key).id, record: value };
  }

  close(): Promise<void> {
    return this.root.close();
  }
}
