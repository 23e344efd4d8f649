/**
 * `kith check`: verifies a database file without changing it (storage/read-only-store.ts) and
 * says what is wrong. In order:
 *
 * 0. the file's LMDB structure, every page, with plain reads before LMDB maps it
 *    (storage/lmdb-file-check.ts): a file that fails is reported and not opened, since LMDB
 *    could crash on it; pages neither in a tree nor listed free are reported too (open does not
 *    refuse a file for them). The file is held with kith's file lock during the check, so that no
 *    writer starts meanwhile; when a server holds it, its pages are walked as of one commit
 *    (retrying while commits come) and LMDB reads it through the server's own lock file;
 * 1. the format entry (magic "kith", a known version), the uid counter;
 * 2. every collection entry: its uid, its configuration (as start-up validates it), its last
 *    version (decimal digits);
 * 3. every point record: its key (uid + UTF-8 id) belongs to a collection, the record decodes
 *    (magic, format, encoding, dimension = the collection's, length), its vector is finite, its
 *    payload is a JSON object, its version is at most the collection's last version;
 * 4. every graph snapshot: its chunks numbered 0, 1, … without gaps, the container's CRC-32 and
 *    section lengths (segment/snapshot.ts); a snapshot of a collection without HNSW, or of no
 *    collection, is reported;
 * 5. annotations: JSON objects, of collections that exist;
 * 6. each collection whose records all decode is loaded as start-up loads it (reusing the
 *    snapshot where it matches) and must hold as many points as it has records; its id order
 *    (segment/id-order.ts) must be sound, and for HNSW the graph's invariants
 *    (index/hnsw/check-integrity.ts), both via Collection.checkIntegrity.
 *
 * A stale snapshot (points written after it) is not a problem: start-up repairs it; the report
 * says how much of it is still used.
 */
import { existsSync } from 'node:fs';
import { isKithError, KithError } from '../core/errors.js';
import { Collection } from '../collection/collection.js';
import { type CollectionConfig, configFromStored } from '../segment/collection-config.js';
import { decodeSnapshot } from '../segment/snapshot.js';
import { refusalOf } from '../storage/database-file.js';
import { type FileLock, lockDatabaseFile } from '../storage/file-lock.js';
import { checkLiveLmdbFile, checkLmdbFile, type LmdbFileSummary } from '../storage/lmdb-file-check.js';
import type { LmdbStore } from '../storage/lmdb-store.js';
import { decodePointKey } from '../storage/point-key.js';
import { decodePointRecord } from '../storage/point-record.js';
import { ReadOnlyStore } from '../storage/read-only-store.js';
import { parseJson } from '../core/json-text.js';

export interface CollectionCheck {
  readonly name: string;
  readonly uid: number;
  readonly config?: CollectionConfig;
  records: number;
  lastVersion?: bigint;
  /** Snapshot bytes and chunk count, when it has one. */
  snapshot?: { bytes: number; chunks: number; sound: boolean };
  /** After loading: points, and how many came from the snapshot's graph. */
  loaded?: { points: number; fromSnapshot: number; graphChecked: boolean };
}

export interface CheckReport {
  readonly path: string;
  /** What the page walk found: `sound` files are then read through LMDB; the others are not opened. */
  readonly fileState: 'sound' | 'damaged' | 'not-kith';
  /** The file's pages, when its meta pages could be read. */
  readonly file?: LmdbFileSummary;
  readonly formatVersion?: number;
  readonly collections: CollectionCheck[];
  /** Every problem found, each a sentence naming where; empty when the file is sound. */
  readonly problems: string[];
}

/** Formats 2 and 3 share their layout; 3 only stores every UUID id in its canonical form (storage/format-2-migration.ts). */
const CHECKED_FORMATS: readonly number[] = [2, 3];
/** Problems of one kind in one collection past this many are counted, not listed. */
const MAX_LISTED = 20;

export async function checkDatabase(path: string): Promise<CheckReport> {
  // LMDB would take a missing file as a new, empty environment: a check of a typo must not pass.
  if (!existsSync(path)) throw new KithError('ERR_STORAGE', `${path} does not exist`);
  const lock = lockUnlessHeld(path);
  try {
    const file = lock === undefined ? checkLiveLmdbFile(path) : checkLmdbFile(path);
    if (file.state !== 'sound') {
      const refusal = refusalOf(file) ?? { kind: 'not-kith', problems: ['an empty file (0 bytes)'] };
      const summary = file.state === 'damaged' ? file.summary : undefined;
      return { path, fileState: refusal.kind, ...(summary === undefined ? {} : { file: summary }), collections: [], problems: [...refusal.problems] };
    }
    // A sound LMDB file may still be another program's, or hold no kith data at all.
    const foreign = refusalOf(file)?.problems ?? (file.summary.subDatabases.includes('meta') ? [] : ['an LMDB file with no "meta" sub-database']);
    if (foreign.length > 0) return { path, fileState: 'not-kith', file: file.summary, collections: [], problems: [...foreign] };
    // While a server holds the file, LMDB must read it as one of that writer's readers.
    const store = ReadOnlyStore.open(path, lock === undefined && existsSync(`${path}-lock`) ? 'shared' : 'private');
    try {
      const report = runChecks(store, file.summary);
      if (file.summary.unreachedPages > 0) {
        report.problems.unshift(
          `file: ${file.summary.unreachedPages} page(s) up to the last page ${file.summary.lastPage} are neither in a tree nor listed free (space LMDB will not reuse: the file was changed outside LMDB)`,
        );
      }
      return report;
    } finally {
      await store.close();
    }
  } finally {
    lock?.release();
  }
}

/** Kith's file lock, so that no writer starts during the check; undefined when another process holds it. */
function lockUnlessHeld(path: string): FileLock | undefined {
  try {
    return lockDatabaseFile(path, { create: false });
  } catch (error) {
    if (isKithError(error) && error.code === 'ERR_DATABASE_LOCKED') return undefined;
    throw error;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function runChecks(store: ReadOnlyStore, file: LmdbFileSummary): CheckReport {
  const problems: string[] = [];
  const collections: CollectionCheck[] = [];
  const report = (): CheckReport => ({ path: store.path, fileState: 'sound', file, formatVersion, collections, problems });

  const format = store.metaEntry('format') as { magic?: unknown; version?: unknown } | undefined;
  let formatVersion: number | undefined;
  if (format === undefined) {
    problems.push('meta: no format entry (an empty file, or not a kith database)');
    return report();
  }
  if (format.magic !== 'kith') {
    problems.push(`meta: format magic is ${JSON.stringify(format.magic)}, not "kith": not a kith database`);
    return report();
  }
  formatVersion = typeof format.version === 'number' ? format.version : undefined;
  if (formatVersion === undefined || !CHECKED_FORMATS.includes(formatVersion)) {
    problems.push(
      formatVersion === 1
        ? 'meta: storage format 1; open the file once with this build (it migrates to the current format), then check it'
        : `meta: storage format ${JSON.stringify(format.version)}; this build checks formats ${CHECKED_FORMATS.join(' and ')}`,
    );
    return report();
  }
  const nextUid = store.metaEntry('next_uid');

  // 2. Collection entries.
  const byUid = new Map<number, CollectionCheck>();
  for (const { key, value } of store.collectionEntries()) {
    const entry = value as { uid?: unknown; config?: unknown } | undefined;
    if (typeof key !== 'string' || typeof entry?.uid !== 'number' || !Number.isInteger(entry.uid)) {
      problems.push(`collection entry ${JSON.stringify(key)}: does not decode to { uid, config }`);
      continue;
    }
    const uid = entry.uid;
    let config: CollectionConfig | undefined;
    try {
      config = configFromStored(entry.config, key);
    } catch (error) {
      problems.push(messageOf(error));
    }
    if (byUid.has(uid)) problems.push(`collection "${key}": uid ${uid} is also collection "${byUid.get(uid)?.name}"'s`);
    if (typeof nextUid !== 'number' || uid >= nextUid) problems.push(`collection "${key}": uid ${uid} is not below the uid counter ${String(nextUid)}`);
    const check: CollectionCheck = { name: key, uid, records: 0, ...(config === undefined ? {} : { config }) };
    const last = store.lastVersion(uid);
    if (typeof last === 'string' && /^\d+$/.test(last)) check.lastVersion = BigInt(last);
    else if (last !== undefined) problems.push(`collection "${key}": last version ${JSON.stringify(last)} is not decimal digits`);
    byUid.set(uid, check);
    collections.push(check);
  }
  for (const key of store.lastVersionKeys()) {
    if (typeof key !== 'number' || !byUid.has(key)) problems.push(`last_versions: an entry for uid ${JSON.stringify(key)}, which no collection has`);
  }
  // Aliases (db/aliases.ts): each names a collection, and none has a collection's name.
  const names = new Set(collections.map((c) => c.name));
  for (const { key, value } of store.metaEntriesFrom('alias/')) {
    const alias = String(key).slice('alias/'.length);
    if (typeof value !== 'string') problems.push(`meta: alias "${alias}" does not decode to a collection name`);
    else if (!names.has(value)) problems.push(`meta: alias "${alias}" names collection "${value}", which does not exist`);
    if (names.has(alias)) problems.push(`meta: alias "${alias}" has the name of a collection`);
  }

  // 3. Point records, in key order.
  const recordProblems = new Map<number, string[]>();
  const orphanUids = new Map<number, number>();
  const note = (uid: number, problem: string): void => {
    const list = recordProblems.get(uid) ?? [];
    list.push(problem);
    recordProblems.set(uid, list);
  };
  for (const { key, value } of store.pointEntries()) {
    let uid: number;
    let id: string;
    try {
      ({ uid, id } = decodePointKey(key));
    } catch (error) {
      problems.push(`point_records: ${messageOf(error)}`);
      continue;
    }
    const check = byUid.get(uid);
    if (check === undefined) {
      orphanUids.set(uid, (orphanUids.get(uid) ?? 0) + 1);
      continue;
    }
    check.records++;
    if (check.config === undefined) continue;
    const where = `${check.name}/${JSON.stringify(id)}`;
    try {
      const record = decodePointRecord(value, check.config.vectorSize, where);
      const values = record.vector.encoding === 'f32' ? record.vector.values : [record.vector.min, record.vector.max];
      const bad = Array.prototype.findIndex.call(values, (x: number) => !Number.isFinite(x));
      if (bad >= 0) note(uid, `point record ${where}: vector component ${bad} is not finite`);
      if (record.vector.encoding === 'sq8' && check.config.quantization !== 'sq8')
        note(uid, `point record ${where}: an sq8 vector in a collection without sq8`);
      if (record.vector.encoding === 'f32' && check.config.quantization === 'sq8') note(uid, `point record ${where}: an f32 vector in an sq8 collection`);
      if (check.lastVersion !== undefined && record.version > check.lastVersion) {
        note(uid, `point record ${where}: version ${record.version} is above the collection's last version ${check.lastVersion}`);
      }
      let payload: unknown;
      try {
        payload = parseJson(record.payloadJson);
      } catch {
        note(uid, `point record ${where}: payload is not JSON`);
        continue;
      }
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) note(uid, `point record ${where}: payload is not a JSON object`);
    } catch (error) {
      note(uid, messageOf(error));
    }
  }
  // An import cut short (its process died) left its records under a marked uid; the next writable open removes them.
  const importing = (uid: number): boolean => store.metaEntry(`importing/${uid}`) === true;
  for (const [uid, count] of orphanUids) if (!importing(uid)) problems.push(`point_records: ${count} record(s) under uid ${uid}, which no collection has`);
  for (const check of collections) {
    const list = recordProblems.get(check.uid) ?? [];
    problems.push(...list.slice(0, MAX_LISTED));
    if (list.length > MAX_LISTED) problems.push(`collection "${check.name}": ${list.length - MAX_LISTED} more bad point records`);
    if (check.records > 0 && check.lastVersion === undefined) problems.push(`collection "${check.name}": ${check.records} points but no last version`);
  }

  // 4. Snapshots: chunks per uid.
  const chunks = new Map<number, number[]>();
  for (const key of store.snapshotKeys()) {
    if (!Array.isArray(key) || key.length !== 2 || typeof key[0] !== 'number' || typeof key[1] !== 'number') {
      problems.push(`snapshots: key ${JSON.stringify(key)} is not [uid, chunk]`);
      continue;
    }
    const list = chunks.get(key[0]) ?? [];
    list.push(key[1]);
    chunks.set(key[0], list);
  }
  for (const [uid, numbers] of chunks) {
    const check = byUid.get(uid);
    if (check === undefined) {
      if (!importing(uid)) problems.push(`snapshots: ${numbers.length} chunk(s) under uid ${uid}, which no collection has`);
      continue;
    }
    if (check.config !== undefined && !check.config.hnsw) problems.push(`collection "${check.name}": a graph snapshot, but the collection has no HNSW index`);
    const gap = numbers.findIndex((n, i) => n !== i);
    if (gap >= 0) {
      problems.push(`collection "${check.name}": snapshot chunk ${gap} is missing (chunks ${numbers.join(', ')})`);
      check.snapshot = { bytes: 0, chunks: numbers.length, sound: false };
      continue;
    }
    const bytes = store.readSnapshot(uid) as Buffer;
    const decoded = decodeSnapshot(bytes);
    const sound = typeof decoded !== 'string';
    if (!sound) problems.push(`collection "${check.name}": graph snapshot (${bytes.length} bytes in ${numbers.length} chunk(s)): ${decoded}`);
    check.snapshot = { bytes: bytes.length, chunks: numbers.length, sound };
  }

  // 5. Annotations.
  for (const { key, value } of store.annotationEntries()) {
    const check = typeof key === 'number' ? byUid.get(key) : undefined;
    if (check === undefined) {
      problems.push(`annotations: an entry for uid ${JSON.stringify(key)}, which no collection has`);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = parseJson(String(value));
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      problems.push(`collection "${check.name}": its annotations are not a JSON object`);
  }

  // 6. Load each collection whose records all decode, and check what start-up would build.
  for (const check of collections) {
    if (check.config === undefined || recordProblems.has(check.uid)) continue;
    try {
      // The collection only reads (readSnapshot, countPoints, scanPoints) while loading.
      const collection = new Collection(store as unknown as LmdbStore, check.uid, check.config, check.lastVersion ?? 0n);
      const load = collection.load();
      if (load.points !== check.records || collection.pointsCount !== check.records) {
        problems.push(`collection "${check.name}": ${check.records} records but ${collection.pointsCount} points loaded`);
      }
      if (check.snapshot?.sound === true && load.snapshotRejected !== undefined) {
        problems.push(`collection "${check.name}": the graph snapshot passes its checksum but cannot be used: ${load.snapshotRejected}`);
      }
      // The id order (scroll's, every collection) and, for HNSW, the graph's invariants.
      const memoryProblems = collection.checkIntegrity();
      problems.push(...memoryProblems.slice(0, MAX_LISTED).map((p) => `collection "${check.name}": ${p.startsWith('id order') ? '' : 'graph: '}${p}`));
      if (memoryProblems.length > MAX_LISTED) problems.push(`collection "${check.name}": ${memoryProblems.length - MAX_LISTED} more problems in memory`);
      check.loaded = { points: collection.pointsCount, fromSnapshot: load.fromSnapshot, graphChecked: check.config.hnsw };
    } catch (error) {
      problems.push(`collection "${check.name}": does not load: ${messageOf(error)}${error instanceof KithError ? ` [${error.code}]` : ''}`);
    }
  }
  return report();
}

/** The report as text: the file, one line per collection, then the problems, then the verdict. */
export function formatCheckReport(report: CheckReport): string {
  const lines: string[] = [];
  const file = report.file;
  if (report.fileState === 'sound') lines.push(`${report.path}: storage format ${report.formatVersion ?? '?'}, ${report.collections.length} collection(s)`);
  else lines.push(`${report.path}: ${report.fileState === 'damaged' ? 'damaged: its LMDB structure is broken, so it was not opened' : 'not a kith database'}`);
  if (file !== undefined) {
    const walked = report.fileState === 'sound' ? `: ${file.usedPages} in trees, ${file.freePages} free, every page walked` : '';
    lines.push(`  file: ${file.pages} pages of ${file.pageSize} bytes, txnid ${file.txnId}${walked}`);
  }
  for (const c of report.collections) {
    const parts = [`collection "${c.name}" (uid ${c.uid}`];
    if (c.config !== undefined)
      parts[0] += `, ${c.config.vectorSize}-d ${c.config.distance}, ${c.config.hnsw ? 'hnsw' : 'flat'}${c.config.quantization === 'sq8' ? ', sq8' : ''}`;
    parts[0] += `): ${c.records} point record(s)`;
    if (c.snapshot !== undefined) parts.push(`graph snapshot ${c.snapshot.sound ? 'checksum ok' : 'UNSOUND'} (${c.snapshot.bytes} bytes)`);
    if (c.loaded !== undefined) {
      parts.push(`${c.loaded.points} loaded`);
      parts.push(c.loaded.graphChecked ? `${c.loaded.fromSnapshot} from the snapshot's graph, id order and graph invariants checked` : 'id order checked');
    }
    lines.push(`  ${parts.join('; ')}`);
  }
  if (report.problems.length === 0) {
    lines.push('sound: every record decodes, every checksum matches, every graph invariant holds, every page is well formed');
  } else {
    lines.push(`${report.problems.length} problem(s):`);
    for (const problem of report.problems) lines.push(`  ${problem}`);
  }
  return `${lines.join('\n')}\n`;
}
