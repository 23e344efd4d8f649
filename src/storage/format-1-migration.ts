/**
 * Storage format 1 → 2, run by `LmdbStore.open` on a format-1 file: every point moves from the
 * `points` sub-database (ordered-binary `[uid, id]` keys) to `point_records` (point-key.ts), the
 * old sub-database is deleted and `meta.format` says 2, all in one synchronous write transaction:
 * it is durable when open returns, and a crash or an error during it leaves the file at format 1.
 */
import type { Database, RootDatabase } from 'lmdb';
import { decodeFormat1PointKey } from './format-1-point-key.js';
import { encodePointKey } from './point-key.js';

export const FORMAT_1_POINTS = 'points';

export interface MigrationReport {
  /** Points moved to the format-2 keys. */
  readonly moved: number;
  /** Keys of collections that no longer exist (format 1 could leave them behind when dropping one). */
  readonly discarded: number;
}

export function migrateFormat1(root: RootDatabase, liveUids: ReadonlySet<number>, target: Database<Buffer, Buffer>, writeFormat: () => void): MigrationReport {
  // Opened (and created, on a file that never had a point) outside the transaction: a handle opened
  // inside a transaction that aborts would be left dangling.
  const old = root.openDB<Buffer, Buffer>({ name: FORMAT_1_POINTS, encoding: 'binary', keyEncoding: 'binary' });
  return root.transactionSync(() => {
    let moved = 0;
    let discarded = 0;
    for (const { key, value } of old.getRange()) {
      const { uid, id } = decodeFormat1PointKey(key);
      if (!liveUids.has(uid)) {
        discarded++;
        continue;
      }
      target.putSync(encodePointKey(uid, id), value);
      moved++;
    }
    old.dropSync();
    writeFormat();
    return { moved, discarded };
  });
}
