/**
 * How the database file is opened (its environment options and sub-databases), shared by the store (lmdb-store.ts) and the thread that writes
 * large point batches (point-writer.ts): both must open the same environment and sub-databases the
 * same way, or they would read each other's keys and values differently.
 */

/** `overlappingSync` off: every commit is fsynced before its promise resolves (lmdb-store.ts, "Durability"). */
export const ENV_OPTIONS = { overlappingSync: false, noSubdir: true, cache: false } as const;

/** point_records: raw point keys (point-key.ts) to raw point records (point-record.ts). */
export const POINT_RECORDS_DB = { name: 'point_records', encoding: 'binary', keyEncoding: 'binary' } as const;

/** last_versions: collection uid to the highest version handed out, as a decimal string. */
export const LAST_VERSIONS_DB = { name: 'last_versions', encoding: 'string' } as const;

/** meta: the format entry, the uid counter, and (under APPLIED_KEY_PREFIX + uid) each collection's applied position. */
export const META_DB = { name: 'meta' } as const;

/** Prefix of the meta keys holding applied positions, as JSON text (core/applied-position.ts). */
export const APPLIED_KEY_PREFIX = 'applied/';
