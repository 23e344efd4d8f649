/**
 * What an open must know about a database file before LMDB maps it: that it is empty (a new
 * database, or nothing to read), a sound LMDB environment (lmdb-file-check.ts walks every page)
 * holding kith's sub-databases, or neither. A file that is neither is refused with
 * ERR_STORAGE_CORRUPTED saying what is wrong and where; LMDB never sees it, so it cannot crash on
 * it, and its lock file is never created beside it.
 */
import { KithError } from '../core/errors.js';
import { checkLmdbFile, type LmdbFileCheck } from './lmdb-file-check.js';

/** Every sub-database kith has written: format 2's six, and format 1's `points`. */
export const KITH_SUB_DATABASES: ReadonlySet<string> = new Set(['meta', 'collections', 'last_versions', 'point_records', 'snapshots', 'annotations', 'points']);

/** Messages name at most this many of a file's problems; `kith check` lists them all. */
const LISTED = 3;

export interface DatabaseFile {
  /** Empty (0 bytes), or an LMDB environment with no sub-database yet: a writer makes it a new database. */
  readonly isNew: boolean;
  readonly subDatabases: readonly string[];
}

/** Why a file cannot be opened as a kith database: it is none, or it is damaged. */
export interface FileRefusal {
  readonly kind: 'not-kith' | 'damaged';
  readonly problems: readonly string[];
}

/**
 * Checks the file for an open: `write` accepts an empty file as a new database, `read` refuses
 * it (there is nothing to read, and a reader must not initialise it).
 */
export function inspectDatabaseFile(path: string, access: 'read' | 'write'): DatabaseFile {
  const check = checkLmdbFile(path);
  const refusal = refusalOf(check);
  if (refusal !== undefined) throw new KithError('ERR_STORAGE_CORRUPTED', describeRefusal(path, refusal));
  const subDatabases = check.state === 'sound' ? check.summary.subDatabases : [];
  const isNew = subDatabases.length === 0;
  if (isNew && access === 'read') {
    const what = check.state === 'empty' ? 'an empty file (0 bytes)' : 'an LMDB file with no sub-database';
    throw new KithError('ERR_STORAGE_CORRUPTED', `${path}: not a kith database: ${what}; a read-only command does not make it one`);
  }
  return { isNew, subDatabases };
}

/**
 * Why a checked file cannot be opened as a kith database, or undefined when it can (an empty file
 * can be: it is a new database to a writer). Leaked pages alone (neither in a tree nor free) do
 * not stop an open.
 */
export function refusalOf(check: LmdbFileCheck): FileRefusal | undefined {
  if (check.state === 'empty') return undefined;
  if (check.state === 'not-lmdb') return { kind: 'not-kith', problems: check.problems };
  if (check.state === 'damaged') return { kind: 'damaged', problems: check.problems };
  const foreign = foreignProblem(check.summary.subDatabases, check.summary.mainValues);
  return foreign === undefined ? undefined : { kind: 'not-kith', problems: [foreign] };
}

/** The refusal as one message: `PATH: not a kith database: …` or `PATH: damaged: …` (the first few problems). */
export function describeRefusal(path: string, refusal: FileRefusal): string {
  if (refusal.kind === 'not-kith') return `${path}: not a kith database: ${refusal.problems.join('; ')}`;
  const more = refusal.problems.length - LISTED;
  return `${path}: damaged: ${refusal.problems.slice(0, LISTED).join('; ')}${more > 0 ? `; and ${more} more (kith check lists them)` : ''}`;
}

/**
 * A sound LMDB file that some other program wrote: values in the main DB, or sub-databases none
 * of which is kith's `meta`. (kith's own sub-databases without `meta` are a creation that was cut
 * short: a writer finishes it.)
 */
function foreignProblem(subDatabases: readonly string[], mainValues: number): string | undefined {
  if (mainValues > 0) return `an LMDB file with ${mainValues} value(s) in its main database, where kith keeps only sub-databases`;
  if (subDatabases.includes('meta')) return undefined;
  const foreign = subDatabases.filter((name) => !KITH_SUB_DATABASES.has(name));
  if (foreign.length === 0) return undefined;
  const named = foreign.slice(0, 5).map((name) => JSON.stringify(name));
  return `an LMDB file with sub-database(s) ${named.join(', ')}${foreign.length > 5 ? ', …' : ''} and no "meta"`;
}
