/**
 * LMDB opened read-only (MDB_RDONLY: nothing it does can change the file) without leaving a lock
 * file beside the database.
 *
 * LMDB keeps its reader table in `<path>-lock` and creates that file even for a read-only open;
 * lmdb-js has no option for MDB_NOLOCK. The reader table is there so that a writer does not reuse
 * pages a reader still reads. So:
 *
 * - `private`: the caller made sure no writer can run (it holds kith's file lock, which every
 *   kith writer takes): the file is opened through a symlink in a new private folder under the
 *   system's temporary folder, so LMDB's lock file goes there, and the folder is removed at close
 *   (a process killed meanwhile leaves it in the temporary folder, never beside the database);
 * - `shared`: a writer may be running (kith check of a file a server holds): the file is opened
 *   by its own path, joining the writer's reader table in the lock file the writer already made.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { KithError } from '../core/errors.js';

/** An open LMDB environment and how to close it. */
export interface LmdbEnv {
  readonly root: RootDatabase;
  /** Closes the environment, then removes the private folder (if any). */
  close(): Promise<void>;
}

export function openReadOnlyEnv(path: string, lockTable: 'private' | 'shared'): LmdbEnv {
  const folder = lockTable === 'private' ? mkdtempSync(join(tmpdir(), 'kith-read-')) : undefined;
  const removeFolder = (): void => {
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  };
  let root: RootDatabase;
  try {
    let openPath = path;
    if (folder !== undefined) {
      openPath = join(folder, 'db');
      symlinkSync(resolve(path), openPath);
    }
    root = open({ path: openPath, readOnly: true, noSubdir: true, cache: false });
  } catch (error) {
    removeFolder();
    throw new KithError('ERR_STORAGE', `cannot open ${path} read-only: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return {
    root,
    async close() {
      try {
        await root.close();
      } finally {
        removeFolder();
      }
    },
  };
}
