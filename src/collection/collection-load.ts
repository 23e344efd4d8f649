/**
 * Start-up: a collection's memory from its point records, and its HNSW graph from the snapshot
 * where that is still valid, so a restart does not rebuild the graph.
 *
 * A snapshot node is reused when its slot's (id, version) is exactly a stored point; every other
 * snapshot node is tombstoned and compacted away, and stored points the snapshot did not cover
 * (written after it) are inserted. Correctness rests on the point records alone; the snapshot
 * only saves work.
 *
 * Once memory is complete, a short bounded burst of searches warms the search path (warm-up.ts).
 */
import { KithError } from '../core/errors.js';
import { parseJson } from '../core/json-text.js';
import { isPlainObject } from '../payload/json-value.js';
import type { LmdbStore } from '../storage/lmdb-store.js';
import { decodePointRecord } from '../storage/point-record.js';
import type { CollectionConfig } from './collection-config.js';
import type { Segment, SegmentInserters, SegmentPoint } from './segment.js';
import { type WarmUpReport, warmUp } from './warm-up.js';

export interface LoadReport {
  /** Highest point version found. */
  readonly lastVersion: bigint;
  readonly points: number;
  /** Why the snapshot was not used, when there was one. */
  readonly snapshotRejected?: string;
  /** Points taken over from the snapshot's graph. */
  readonly fromSnapshot: number;
  /** Points inserted into the graph at load. */
  readonly inserted: number;
  /** The searches run to warm the search path after the load (warm-up.ts). */
  readonly warmUp: WarmUpReport;
}

/** `inserters`: threads that share the graph inserts the load makes (index/hnsw/insert-job.ts). */
export function loadCollection(store: LmdbStore, uid: number, config: CollectionConfig, segment: Segment, inserters?: SegmentInserters): LoadReport {
  const bytes = config.hnsw ? store.readSnapshot(uid) : undefined;
  const snapshotRejected = bytes === undefined ? undefined : segment.restoreSnapshot(bytes);
  segment.beginLoad(store.countPoints(uid), inserters);
  let lastVersion = 0n;
  let points = 0;
  segment.bulkLoad(() => {
    for (const point of readPoints(store, uid, config)) {
      points++;
      if (point.version > lastVersion) lastVersion = point.version;
      segment.loadPoint(point);
    }
  });
  const { fromSnapshot, inserted } = segment.finishLoad();
  const warmed = warmUp(segment, config);
  return { lastVersion, points, fromSnapshot, inserted, warmUp: warmed, ...(snapshotRejected === undefined ? {} : { snapshotRejected }) };
}

function* readPoints(store: LmdbStore, uid: number, config: CollectionConfig): IterableIterator<SegmentPoint> {
  for (const { id, record } of store.scanPoints(uid)) {
    const where = `${config.name}/${JSON.stringify(id)}`;
    const decoded = decodePointRecord(record, config.vectorSize, where);
    let payload: unknown;
    try {
      payload = parseJson(decoded.payloadJson);
    } catch (error) {
      throw new KithError('ERR_STORAGE_CORRUPTED', `point record ${where}: payload is not JSON`, { cause: error });
    }
    if (!isPlainObject(payload)) throw new KithError('ERR_STORAGE_CORRUPTED', `point record ${where}: payload is not an object`);
    yield { id, version: decoded.version, payload, vector: decoded.vector };
  }
}
