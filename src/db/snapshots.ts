/**
 * Collection snapshots (Qdrant's snapshot API on both ports; docs/storage.md, "Collection
 * snapshots"): files holding a collection's export stream (storage/collection-export.ts), in
 * `<dir>/<collection>/<collection>-<UTC stamp>.snapshot`, each with its SHA-256 (hex) in
 * `<file>.checksum` beside it.
 *
 * A snapshot is written to a hidden temporary name (`.….partial`), fsynced, and renamed to its
 * name once whole, so a listed snapshot is always a whole file; its checksum file is made durable
 * first. Uploads are streamed to a hidden temporary file (never held in memory), bounded by a byte
 * limit and hashed as they arrive, then recovered from through `Database.importCollection`, all or
 * nothing. Hidden files (a crash's leftovers) are never listed and are removed by `sweep()`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { badInput, KithError } from '../core/errors.js';
import type { CollectionInfo } from '../collection/collection.js';
import type { Database } from './database.js';

export const SNAPSHOT_SUFFIX = '.snapshot';
const CHECKSUM_SUFFIX = '.checksum';
const PARTIAL_SUFFIX = '.partial';
/** What a snapshot's name may be: no separators, no leading dot (hidden files are temporaries), at most 255 bytes. */
const SNAPSHOT_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,245}\.snapshot$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** As Qdrant describes a snapshot: `creation_time` is UTC without a zone, to the second. */
export interface SnapshotInfo {
  readonly name: string;
  readonly creation_time: string;
  readonly size: number;
  readonly checksum: string | null;
}

/** A received upload: a hidden file in the snapshot directory, its size and SHA-256. */
export interface ReceivedFile {
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
}

/** A location outside the snapshot directory (Qdrant answers 403 for it). */
export class SnapshotLocationForbidden extends KithError {
  constructor(dir: string) {
    super('ERR_BAD_INPUT', `location: a snapshot file to recover from must be inside the snapshot directory ${JSON.stringify(dir)}`);
  }
}

export function snapshotNotFound(snapshot: string): KithError {
  return new KithError('ERR_SNAPSHOT_NOT_FOUND', `snapshot ${JSON.stringify(snapshot.slice(0, 300))} not found`);
}

/** The default upload limit: 4096 MiB (`-max-snapshot-mb`). */
export const DEFAULT_MAX_SNAPSHOT_MB = 4096;

/** Snapshots in the default place, beside the database file, with the default upload limit. */
export function defaultSnapshotFiles(dbPath: string): SnapshotFiles {
  return new SnapshotFiles(`${dbPath}.snapshots`, DEFAULT_MAX_SNAPSHOT_MB * 1048576);
}

function stamp(at: Date): string {
  const iso = at.toISOString();
  return `${iso.slice(0, 10)}-${iso.slice(11, 19).replaceAll(':', '-')}-${iso.slice(20, 23)}`;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === 'ENOENT';
}

/** Makes a rename (or an unlink) in `dir` durable. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes `source` to the new file `path` (with backpressure), fsyncs it, and gives its size and SHA-256. */
async function writeHashed(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  path: string,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > maxBytes) throw new KithError('ERR_BODY_TOO_LARGE', `the snapshot is larger than the limit of ${maxBytes} bytes (-max-snapshot-mb)`);
      hash.update(chunk);
      yield chunk;
    }
  }
  await pipeline(counted(), createWriteStream(path, { flags: 'wx' }));
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { size, sha256: hash.digest('hex') };
}

/** A file's SHA-256, read in chunks. */
async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Refuses a checksum that is not a SHA-256 in hex, as Qdrant validates it. */
export function checkChecksumShape(checksum: string | undefined, path = 'checksum'): void {
  if (checksum !== undefined && !SHA256_HEX.test(checksum.toLowerCase())) throw badInput(path, 'expected a SHA-256 hash: 64 hexadecimal digits');
}

export class SnapshotFiles {
  /** One snapshot is written at a time: they compete for the same disk, and names stay unique. */
  private creating: Promise<unknown> = Promise.resolve();

  constructor(
    /** The snapshot directory. */
    readonly dir: string,
    /** The largest upload accepted, in bytes. */
    readonly maxUploadBytes: number,
  ) {}

  /** The collection's own directory; its name is checked by `db.collection` first. */
  private collectionDir(collection: string): string {
    return join(this.dir, collection);
  }

  /** The path of a snapshot of the collection, or ERR_SNAPSHOT_NOT_FOUND for a name no snapshot can have. */
  private snapshotPath(collection: string, snapshot: string): string {
    if (!SNAPSHOT_NAME.test(snapshot)) throw snapshotNotFound(snapshot);
    return join(this.collectionDir(collection), snapshot);
  }

  /** Writes a snapshot of the collection (a name or an alias; the file is named after the collection). */
  create(db: Database, nameOrAlias: string): Promise<SnapshotInfo> {
    const collection = db.collection(nameOrAlias).name;
    const run = this.creating.then(() => this.write(db, collection));
    this.creating = run.catch(() => {});
    return run;
  }

  private async write(db: Database, collection: string): Promise<SnapshotInfo> {
    const dir = this.collectionDir(collection);
    await mkdir(dir, { recursive: true });
    let at = new Date();
    let name = `${collection}-${stamp(at)}${SNAPSHOT_SUFFIX}`;
    // Two within one millisecond (writes are one at a time, so only a clock step back can do it).
    while (
      await stat(join(dir, name)).then(
        () => true,
        (error: unknown) => (isMissing(error) ? false : Promise.reject(error)),
      )
    ) {
      at = new Date(at.getTime() + 1);
      name = `${collection}-${stamp(at)}${SNAPSHOT_SUFFIX}`;
    }
    const path = join(dir, name);
    const partial = join(dir, `.${name}.${randomUUID()}${PARTIAL_SUFFIX}`);
    const checksumPartial = `${partial}${CHECKSUM_SUFFIX}`;
    try {
      const { sha256 } = await writeHashed(db.exportCollection(collection), partial);
      await writeHashed([Buffer.from(sha256)], checksumPartial);
      // The checksum first: a listed snapshot always has it.
      await rename(checksumPartial, `${path}${CHECKSUM_SUFFIX}`);
      await rename(partial, path);
      await syncDir(dir);
    } catch (error) {
      await Promise.all([rm(partial, { force: true }), rm(checksumPartial, { force: true })]);
      throw error;
    }
    return this.describe(collection, name);
  }

  private async describe(collection: string, name: string): Promise<SnapshotInfo> {
    const path = join(this.collectionDir(collection), name);
    const info = await stat(path);
    const checksum = await readFile(`${path}${CHECKSUM_SUFFIX}`, 'utf8').then(
      (text) => (SHA256_HEX.test(text.trim()) ? text.trim() : null),
      () => null,
    );
    return { name, creation_time: info.mtime.toISOString().slice(0, 19), size: info.size, checksum };
  }

  /** The collection's snapshots, oldest first (by name at equal times). */
  async list(db: Database, nameOrAlias: string): Promise<SnapshotInfo[]> {
    const collection = db.collection(nameOrAlias).name;
    let names: string[];
    try {
      names = await readdir(this.collectionDir(collection));
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const out: SnapshotInfo[] = [];
    for (const name of names.filter((n) => SNAPSHOT_NAME.test(n)).sort()) {
      try {
        out.push(await this.describe(collection, name));
      } catch (error) {
        // Deleted meanwhile.
        if (!isMissing(error)) throw error;
      }
    }
    return out.sort((a, b) => (a.creation_time < b.creation_time ? -1 : a.creation_time > b.creation_time ? 1 : 0));
  }

  /** A snapshot's file, open for reading (a delete meanwhile does not cut the read short). */
  async open(db: Database, nameOrAlias: string, snapshot: string): Promise<{ readonly stream: NodeJS.ReadableStream; readonly size: number }> {
    const collection = db.collection(nameOrAlias).name;
    const path = this.snapshotPath(collection, snapshot);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      throw isMissing(error) ? snapshotNotFound(snapshot) : error;
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw snapshotNotFound(snapshot);
      return { stream: handle.createReadStream(), size: info.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Deletes a snapshot and its checksum file. */
  async delete(db: Database, nameOrAlias: string, snapshot: string): Promise<void> {
    const collection = db.collection(nameOrAlias).name;
    const path = this.snapshotPath(collection, snapshot);
    try {
      await unlink(path);
    } catch (error) {
      throw isMissing(error) || (error as NodeJS.ErrnoException)?.code === 'EISDIR' ? snapshotNotFound(snapshot) : error;
    }
    await rm(`${path}${CHECKSUM_SUFFIX}`, { force: true });
    await syncDir(dirname(path));
  }

  /**
   * Streams an upload to a hidden file of the snapshot directory, hashing it; ERR_BODY_TOO_LARGE
   * past the limit (nothing kept). The caller removes the file (`discard`) once recovered from.
   */
  async receive(source: AsyncIterable<Uint8Array>): Promise<ReceivedFile> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `.upload-${randomUUID()}${PARTIAL_SUFFIX}`);
    try {
      const { size, sha256 } = await writeHashed(source, path, this.maxUploadBytes);
      return { path, size, sha256 };
    } catch (error) {
      await rm(path, { force: true });
      throw error;
    }
  }

  async discard(file: ReceivedFile): Promise<void> {
    await rm(file.path, { force: true });
  }

  /**
   * The file a recovery's `location` names: a `file://` URL or an absolute path, which must be
   * inside the snapshot directory (SnapshotLocationForbidden otherwise). kith downloads nothing:
   * an http(s) location is refused.
   */
  async resolveLocation(location: string): Promise<string> {
    let path: string;
    if (isAbsolute(location)) {
      path = location;
    } else {
      let url: URL;
      try {
        url = new URL(location);
      } catch {
        throw badInput('location', `expected a file:// URL or an absolute path, got ${JSON.stringify(location.slice(0, 300))}`);
      }
      if (url.protocol === 'http:' || url.protocol === 'https:') {
        throw badInput(
          'location',
          'kith makes no outbound downloads: recover from a file:// location inside the snapshot directory, or upload the file (POST …/snapshots/upload)',
        );
      }
      if (url.protocol !== 'file:') throw badInput('location', `expected a file:// URL or an absolute path, got the scheme ${JSON.stringify(url.protocol)}`);
      try {
        path = fileURLToPath(url);
      } catch {
        throw badInput('location', 'invalid snapshot URI: the file path must be absolute or on localhost');
      }
    }
    let real: string;
    try {
      real = await realpath(path);
    } catch (error) {
      if (isMissing(error)) throw badInput('location', `snapshot file ${JSON.stringify(path)} does not exist`);
      throw error;
    }
    await mkdir(this.dir, { recursive: true });
    const root = await realpath(this.dir);
    if (!real.startsWith(root + sep)) throw new SnapshotLocationForbidden(root);
    if (!(await stat(real)).isFile()) throw badInput('location', `${JSON.stringify(path)} is not a file`);
    return real;
  }

  /**
   * Makes the snapshot file at `path` the collection `name` (replacing one of that name), all or
   * nothing; ERR_BAD_INPUT for a `checksum` that does not match (nothing read further) or a file
   * that is not a whole export. `sha256`: the file's, when already known (an upload's).
   */
  async recover(db: Database, name: string, path: string, checksum?: string, sha256?: string): Promise<CollectionInfo> {
    checkChecksumShape(checksum);
    if (checksum !== undefined) {
      const actual = sha256 ?? (await sha256Of(path));
      if (actual !== checksum.toLowerCase()) throw badInput('checksum', `checksum mismatch: expected ${checksum.toLowerCase()}, actual ${actual}`);
    }
    return db.importCollection(createReadStream(path), { name, replace: true });
  }

  /** Removes a crash's leftovers (hidden temporaries) from the snapshot directory; before the service serves. */
  async sweep(): Promise<number> {
    let removed = 0;
    const leftovers = async (dir: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        if (isMissing(error)) return;
        throw error;
      }
      for (const entry of entries) {
        if (entry.isFile() && entry.name.startsWith('.') && entry.name.includes(PARTIAL_SUFFIX)) {
          await rm(join(dir, entry.name), { force: true });
          removed++;
        } else if (entry.isDirectory() && dir === this.dir) {
          await leftovers(join(dir, entry.name));
        }
      }
    };
    await leftovers(this.dir);
    return removed;
  }
}
