/**
 * A copy of a database file without its HNSW graph snapshots, to time the restart a crash takes
 * in the worst case (no usable snapshot: every point is inserted into a new graph again).
 *
 * Done with the `lmdb` package directly, as the layout in docs/storage.md describes it (sub-database
 * `snapshots`, binary values, keys [uid, chunk]), so src/ needs no test-only switch. The original
 * file is never opened for writing: the copy is what loses its snapshots.
 */
import { copyFileSync } from 'node:fs';
import { open } from 'lmdb';

/** Copies `from` to `to` (the data file only; LMDB creates `to`-lock) and clears the copy's snapshots; returns how many chunks went. */
export async function copyWithoutSnapshots(from: string, to: string): Promise<number> {
  copyFileSync(from, to);
  // Same environment flags as src/storage/lmdb-store.ts, so the copy is opened as kith opens it.
  const root = open({ path: to, noSubdir: true, overlappingSync: false, cache: false });
  try {
    const snapshots = root.openDB<Buffer, [number, number]>({ name: 'snapshots', encoding: 'binary' });
    const chunks = snapshots.getCount();
    await snapshots.clearAsync();
    if (snapshots.getCount() !== 0) throw new Error(`${to}: snapshots still present after clearing`);
    return chunks;
  } finally {
    await root.close();
  }
}
