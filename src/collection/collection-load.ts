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
 *
 * The load is a generator of steps (core/steps.ts), so that a service can run it in slices and
 * answer requests between them (Database.openInBackground); Database.open runs it at once.
 */
import { KithError } from '../core/errors.js';
import { runSteps, type Steps } from '../core/steps.js';
import { isPlainObject } from '../payload/json-value.js';
import type { LmdbStore } from '../storage/lmdb-store.js';
import { decodePointRecord } from '../storage/point-record.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import type { Segment, SegmentInserters, SegmentPoint } from '../segment/segment.js';
import { type WarmUpReport, warmUpSteps } from '../search/warm-up.js';
import { parseJson } from '../core/json-text.js';

export interface LoadReport {
  /** Highest point version found. */
  readonly lastVersion: bigint;
  readonly points: number;
  /** Why the snapshot was not used, when there was one. */
  readonly snapshotRejected?: string;
  /** Points taken over from the snapshot's graph. */
  readonly fromSnapshot: number;
  /** Named vectors taken over from their graphs in the snapshot (segment/named-dense-space.ts). */
  readonly namedFromSnapshot: number;
  /** Points inserted into the graph at load. */
  readonly inserted: number;
  /** The searches run to warm the search path after the load (warm-up.ts). */
  readonly warmUp: WarmUpReport;
}

/** How far a load has got, updated in place as it goes (the service logs it while it loads). */
export interface LoadProgress {
  /** Point records stored (counted before reading), and read so far. */
  points: number;
  pointsRead: number;
  /** Points placed at their node of the graph snapshot so far. */
  fromSnapshot: number;
  /** Points inserted into the graph (or, without one, into the Flat index) so far. */
  inserted: number;
  /** Points read that wait to be inserted. */
  toInsert: number;
}

export function newLoadProgress(): LoadProgress {
  return { points: 0, pointsRead: 0, fromSnapshot: 0, inserted: 0, toInsert: 0 };
}

/**
 * The load, in steps (core/steps.ts): each point read, each step of graph links and each warm-up
 * search is one. `inserters`: threads that share the graph inserts (index/hnsw/insert-job.ts).
 */
export function* loadCollectionSteps(
  store: LmdbStore,
  uid: number,
  config: CollectionConfig,
  segment: Segment,
  inserters?: SegmentInserters,
  progress: LoadProgress = newLoadProgress(),
): Steps<LoadReport> {
  const bytes = config.hnsw ? store.readSnapshot(uid) : undefined;
  yield;
  const snapshotRejected = bytes === undefined ? undefined : yield* segment.restoreSnapshot(bytes);
  progress.points = store.countPoints(uid);
  segment.beginLoad(progress.points, inserters);
  let lastVersion = 0n;
  const insert = function* (): Steps<void> {
    for (const inserted of segment.insertHeldBack()) {
      progress.inserted += inserted;
      progress.toInsert -= inserted;
      yield;
    }
  };
  for (const point of readPoints(store, uid, config)) {
    progress.pointsRead++;
    if (point.version > lastVersion) lastVersion = point.version;
    if (segment.loadPoint(point)) progress.fromSnapshot++;
    else progress.toInsert++;
    if (segment.heldBackDue) yield* insert();
    yield;
  }
  segment.endPointRecords();
  yield;
  yield* insert();
  const { fromSnapshot, namedFromSnapshot } = segment.finishLoad();
  yield;
  const warmed = yield* warmUpSteps(segment, config);
  return {
    lastVersion,
    points: progress.pointsRead,
    fromSnapshot,
    namedFromSnapshot,
    inserted: progress.inserted,
    warmUp: warmed,
    ...(snapshotRejected === undefined ? {} : { snapshotRejected }),
  };
}

/** A record's named vectors must have the sizes the collection declares: else the record is corrupt, not a vector to search. */
function checkNamedSizes(named: ReadonlyMap<string, { readonly rows: number; readonly data: Float32Array }>, config: CollectionConfig, where: string): void {
  for (const [name, v] of named) {
    const spec = config.namedVectors.get(name);
    if (spec === undefined) continue;
    if (v.rows < 1 || v.data.length !== v.rows * spec.size || (!spec.multivector && v.rows !== 1)) {
      throw new KithError(
        'ERR_STORAGE_CORRUPTED',
        `point record ${where}: named vector "${name}" holds ${v.rows} rows of ${v.data.length} floats, the collection declares ${spec.multivector ? 'rows' : 'one row'} of ${spec.size}`,
      );
    }
  }
}

/** The whole load at once (restart-phases in bench/ times it). */
export function loadCollection(store: LmdbStore, uid: number, config: CollectionConfig, segment: Segment, inserters?: SegmentInserters): LoadReport {
  return runSteps(loadCollectionSteps(store, uid, config, segment, inserters));
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
    if (decoded.named !== undefined) checkNamedSizes(decoded.named, config, where);
    yield { id, version: decoded.version, payload, vector: decoded.vector, sparse: decoded.sparse, named: decoded.named };
  }
}
