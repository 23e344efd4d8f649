/**
 * One process at a time per database file.
 *
 * The lock is a listening Unix socket in Linux's abstract namespace, named after the file's device,
 * inode and birth time: binding a name is atomic (of two processes starting together exactly one gets it),
 * the name needs no file, and the kernel releases it when the process ends however it ends
 * (`kill -9` included), so a restart never waits for or cleans up a stale lock. Node has no
 * flock(); this needs no native code. `net.Server.listen` binds synchronously (the error event
 * comes later, but `listening` is already false), which keeps `LmdbStore.open` synchronous.
 *
 * To name the holder, it also binds `…:<pid>` under a second, never contended prefix; a refused
 * process finds that name in /proc/net/unix.
 *
 * Limits (docs/storage.md): abstract names live in a network namespace, so processes in different
 * namespaces (containers sharing a volume, say) do not see each other's lock; any local user can
 * bind a name first and so keep the file from opening; off Linux only the in-process check runs.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createServer, type Server } from 'node:net';
import { KithError } from '../core/errors.js';

export interface FileLock {
  /** Gives the lock up (idempotent). */
  release(): void;
}

/** sun_path's size: every name is padded to it so that all libuv versions bind the same address. */
const SUN_PATH_BYTES = 108;
const LOCK_PREFIX = 'kith-db-lock';
const HOLDER_PREFIX = 'kith-db-holder';

/** Files this process holds, by device:inode:birth time, for a clear refusal without asking the kernel. */
const heldHere = new Map<string, string>();

/**
 * Locks the file at `path` (creating it, empty, if it does not exist and `create` is on: LMDB
 * takes an empty file as a new environment; a read-only opener passes `create: false` and so
 * needs only read access and creates nothing). ERR_DATABASE_LOCKED names the file and the holder
 * when it is taken.
 */
export function lockDatabaseFile(path: string, { create = true }: { create?: boolean } = {}): FileLock {
  const fileKey = fileIdentity(path, create);
  const heldAs = heldHere.get(fileKey);
  if (heldAs !== undefined) {
    const same = heldAs === path ? '' : ` (as ${heldAs})`;
    throw new KithError('ERR_DATABASE_LOCKED', `database file ${path} is already open in this process${same}; close it first`);
  }
  const servers: Server[] = [];
  if (process.platform === 'linux') {
    const lock = bindAbstract(`${LOCK_PREFIX}:${fileKey}`);
    if (lock === undefined) {
      const holder = findHolderPid(fileKey);
      const who = holder === undefined ? 'another process (its pid could not be determined)' : `process ${holder}`;
      throw new KithError('ERR_DATABASE_LOCKED', `database file ${path} is in use by ${who}; only one process may open it`);
    }
    servers.push(lock);
    const info = bindAbstract(`${HOLDER_PREFIX}:${fileKey}:${process.pid}`);
    if (info !== undefined) servers.push(info);
  }
  heldHere.set(fileKey, path);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      heldHere.delete(fileKey);
      for (const server of servers) server.close();
    },
  };
}

function fileIdentity(path: string, create: boolean): string {
  let fd: number;
  try {
    if (create) {
      // As LMDB would: a missing folder is created.
      mkdirSync(dirname(path), { recursive: true });
      fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o664);
    } else {
      fd = openSync(path, constants.O_RDONLY);
    }
  } catch (error) {
    throw new KithError('ERR_STORAGE', `cannot open database file ${path}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  try {
    const stat = fstatSync(fd, { bigint: true });
    // An inode number is reused as soon as a deleted file's last descriptor closes, possibly before
    // the old holder's socket has closed; the birth time tells a new file from the old one.
    return `${stat.dev}:${stat.ino}:${stat.birthtimeNs}`;
  } finally {
    closeSync(fd);
  }
}

/** Listens on the abstract name; undefined when another socket has it. */
function bindAbstract(name: string): Server | undefined {
  const server = createServer((socket) => socket.destroy());
  // A bind failure is also emitted later as an error event; `listening` has already told us.
  server.on('error', () => {});
  server.listen(abstractAddress(name));
  if (!server.listening) return undefined;
  server.unref(); // the lock must not keep an embedding process alive
  return server;
}

function abstractAddress(name: string): string {
  const full = `\0${name}`;
  if (Buffer.byteLength(full) > SUN_PATH_BYTES) throw new KithError('ERR_INTERNAL', `lock name ${name} is too long`);
  return full.padEnd(SUN_PATH_BYTES, '.');
}

/** The pid in the holder's second name, read from the kernel's list of Unix sockets. */
function findHolderPid(fileKey: string): number | undefined {
  let table: string;
  try {
    table = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return undefined;
  }
  const prefix = `@${HOLDER_PREFIX}:${fileKey}:`;
  for (const line of table.split('\n')) {
    const at = line.indexOf(prefix);
    if (at < 0) continue;
    const pid = /^(\d+)/.exec(line.slice(at + prefix.length));
    if (pid !== null) return Number(pid[1]);
  }
  return undefined;
}
