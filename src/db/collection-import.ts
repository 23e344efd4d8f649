/**
 * Importing a collection export (storage/collection-export.ts) into this database, all or nothing:
 * the points and the graph snapshot are written batch by batch under a uid of their own, marked as
 * an import under way and with no collection entry (so invisible, and removed by the next open if
 * the process dies); once the stream's end frame and checksum are read, one transaction makes the
 * collection exist (LmdbStore.commitImport). A crash at any moment leaves either nothing of the
 * import or all of it.
 */
import { type AppliedPosition, decodeAppliedPosition } from '../core/applied-position.js';
import { badInput, KithError } from '../core/errors.js';
import { type CollectionConfig, configFromStored, configToJson, validateCollectionName } from '../segment/collection-config.js';
import { type ExportHeader, readExport } from '../storage/collection-export.js';
import type { LmdbStore, PointWrite } from '../storage/lmdb-store.js';
import { decodePointRecord } from '../storage/point-record.js';
import { parseJson } from '../core/json-text.js';

/** Points written per transaction (below point-writer.ts's threshold: each commits on the service thread in a few ms). */
const IMPORT_BATCH = 2048;

export interface ImportedCollection {
  readonly uid: number;
  readonly config: CollectionConfig;
  readonly lastVersion: bigint;
  readonly applied?: AppliedPosition;
}

/**
 * Reads the stream, writes it under a fresh uid and commits it as collection `name` (the exported
 * name when absent). `claim(name)` is called once the name is known, before anything is written;
 * it throws when the name is taken. ERR_BAD_INPUT for a stream that is not a whole export or holds
 * a record that does not decode; nothing is left of the import then.
 */
export async function importCollection(
  store: LmdbStore,
  source: AsyncIterable<Uint8Array>,
  rename: string | undefined,
  claim: (name: string) => void,
  /** Annotations set over the exported ones, in the same commit (a replica seeded from a peer's is marked as this node's). */
  annotations?: Record<string, unknown>,
  /** Called once the whole stream is read and written, just before the commit: the uid of the collection the import replaces, if any (LmdbStore.commitImport). */
  beforeCommit?: () => Promise<number | undefined>,
): Promise<ImportedCollection> {
  const items = readExport(source);
  const first = await items.next();
  if (first.done === true || first.value.kind !== 'header') throw badInput('export', 'not a whole kith collection export: no header');
  const header = first.value.header;
  const name = rename ?? header.name;
  validateCollectionName(name, 'name');
  const config = checkedConfig(header, name);
  const lastVersion = BigInt(header.last_version);
  const applied = header.applied === null ? undefined : decodeAppliedPosition(header.applied);
  if (header.applied !== null && applied === undefined) throw badInput('export', 'its applied position does not decode');
  claim(name);
  const uid = await store.beginImport();
  try {
    let batch: PointWrite[] = [];
    let points = 0;
    const snapshot: Buffer[] = [];
    for await (const item of items) {
      if (item.kind === 'point') {
        checkRecord(item.id, item.record, config, lastVersion);
        batch.push({ id: item.id, record: item.record });
        points++;
        if (batch.length >= IMPORT_BATCH) {
          await store.writePoints(uid, batch, []);
          batch = [];
        }
      } else if (item.kind === 'snapshot') {
        snapshot.push(item.bytes);
      }
    }
    if (points !== header.points) throw badInput('export', `its header announces ${header.points} points but it holds ${points}`);
    if (batch.length > 0) await store.writePoints(uid, batch, []);
    if (snapshot.length > 0) await store.writeSnapshot(uid, snapshot);
    const replaces = await beforeCommit?.();
    await store.commitImport(uid, name, configToJson(config), lastVersion, applied, annotationsOf(header.annotations, annotations), replaces);
  } catch (error) {
    await store.abortImport(uid).catch(() => {});
    throw error;
  }
  return { uid, config, lastVersion, ...(applied === undefined ? {} : { applied }) };
}

function checkedConfig(header: ExportHeader, name: string): CollectionConfig {
  try {
    return configFromStored(header.config, name);
  } catch (error) {
    throw badInput('export', `its configuration does not decode: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A record is imported only if it decodes as start-up would read it, with a version the header covers. */
function checkRecord(id: string, record: Buffer, config: CollectionConfig, lastVersion: bigint): void {
  const where = `${config.name}/${JSON.stringify(id)}`;
  try {
    if (id.length === 0) throw new Error('empty id');
    const decoded = decodePointRecord(record, config.vectorSize, where);
    if (decoded.version > lastVersion) throw new Error(`version ${decoded.version} is above the export's last version ${lastVersion}`);
    const payload: unknown = parseJson(decoded.payloadJson);
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new Error('payload is not a JSON object');
  } catch (error) {
    const problem = error instanceof KithError || error instanceof Error ? error.message : String(error);
    throw badInput('export', `point record ${where}: ${problem}`);
  }
}

/** The exported annotations (JSON text) with `over` set over them. */
function annotationsOf(exported: string | null, over: Record<string, unknown> | undefined): string | undefined {
  if (over === undefined) return exported ?? undefined;
  let base: Record<string, unknown> = {};
  if (exported !== null) {
    const parsed: unknown = parseJson(exported);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badInput('export', 'its annotations are not a JSON object');
    base = parsed as Record<string, unknown>;
  }
  return JSON.stringify({ ...base, ...over });
}
