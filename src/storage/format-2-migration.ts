/**
 * Storage format 2 → 3, run by `LmdbStore.open` on a format-2 file: point ids that spell a UUID
 * in another form than its canonical one (upper case, 32 hex digits, `{braced}`, `urn:uuid:`)
 * are renamed to the canonical form, which is how every id is stored from format 3 on
 * (core/point-id.ts normalizePointId: one UUID is one point whatever its spelling). When a file
 * holds several spellings of one UUID in one collection, the point with the highest version stays
 * (the last write, as an upsert of the canonical id would have decided) and the others go. The
 * graph snapshots of collections whose ids changed are dropped: the next start rebuilds their graph
 * from the points. All in one synchronous write transaction, durable when open returns; a crash or
 * an error during it leaves the file at format 2.
 */
import type { Database, Key, RootDatabase } from 'lmdb';
import { canonicalUuid } from '../core/point-id.js';
import { decodePointKey, encodePointKey } from './point-key.js';

/** Where a record keeps its version (point-record.ts: u64 little-endian at offset 8). */
const VERSION_OFFSET = 8;

export interface IdMigrationReport {
  /** Points whose id was renamed to its canonical UUID. */
  readonly renamed: number;
  /** Points dropped because another spelling of their UUID had a higher version. */
  readonly merged: number;
  /** Collections whose graph snapshot was dropped (their ids changed). */
  readonly snapshotsDropped: number;
}

function versionOf(record: Buffer): bigint {
  return record.length >= VERSION_OFFSET + 8 ? record.readBigUInt64LE(VERSION_OFFSET) : -1n;
}

export function migrateFormat2(
  root: RootDatabase,
  points: Database<Buffer, Buffer>,
  snapshots: Database<Buffer, Key>,
  writeFormat: () => void,
): IdMigrationReport {
  return root.transactionSync(() => {
    // Collected first: the keys are rewritten after the walk, not under it.
    const renames: { from: Buffer; uid: number; to: string; record: Buffer }[] = [];
    for (const { key, value } of points.getRange()) {
      const { uid, id } = decodePointKey(key);
      const canonical = canonicalUuid(id);
      if (canonical !== undefined && canonical !== id) renames.push({ from: Buffer.from(key), uid, to: canonical, record: Buffer.from(value) });
    }
    let renamed = 0;
    let merged = 0;
    const uids = new Set<number>();
    for (const { from, uid, to, record } of renames) {
      const target = encodePointKey(uid, to);
      const existing = points.get(target);
      points.removeSync(from);
      uids.add(uid);
      if (existing !== undefined && versionOf(existing) >= versionOf(record)) {
        merged++;
        continue;
      }
      if (existing !== undefined) merged++;
      else renamed++;
      points.putSync(target, record);
    }
    for (const uid of uids) for (const key of snapshots.getKeys({ start: [uid], end: [uid + 1] })) snapshots.removeSync(key);
    writeFormat();
    return { renamed, merged, snapshotsDropped: uids.size };
  });
}
