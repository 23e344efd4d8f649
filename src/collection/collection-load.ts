/**
 * Start-up: a collection's memory from its point records, and its HNSW graph from the snapshot
 * where that is still valid, so a restart does not rebuild the graph.
 *
 * A snapshot node is reused when its slot's (id, version) is exactly a stored point; every other
 * snapshot node is tombstoned and compacted away, and stored points the snapshot did not cover
 * (written after it) are inserted. Correctness rests on the point records alone; the snapshot
 * only saves work.
 */
import { KithError } from '../core/errors.js';
import { decodeGraphInto } from '../index/hnsw/graph-codec.js';
import { isPlainObject } from '../payload/json-value.js';
import type { LmdbStore } from '../storage/lmdb-store.js';
import { decodePointRecord, type StoredVector } from '../storage/point-record.js';
import type { CollectionConfig } from './collection-config.js';
import type { CollectionMemory } from './collection-memory.js';
import type { Payload } from './point-table.js';
import { decodeSnapshot, type SlotEntry } from './snapshot.js';

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
}

interface LoadedPoint {
  readonly id: string;
  readonly version: bigint;
  readonly payload: Payload;
  readonly vector: StoredVector;
}

export function loadCollection(store: LmdbStore, uid: number, config: CollectionConfig, memory: CollectionMemory): LoadReport {
  const hnsw = memory.hnsw;
  let snapshotRejected: string | undefined;
  let snapshotSlots: ReadonlyArray<SlotEntry | undefined> | undefined;
  const bytes = hnsw === undefined ? undefined : store.readSnapshot(uid);
  if (hnsw !== undefined && bytes !== undefined) {
    const decoded = decodeSnapshot(bytes);
    const problem = typeof decoded === 'string' ? decoded : decodeGraphInto(hnsw, decoded.graph);
    if (problem === undefined && typeof decoded !== 'string') snapshotSlots = decoded.slots;
    else {
      snapshotRejected = problem;
      memory.hnsw = memory.newHnsw();
    }
  }

  const bySnapshot = new Map<string, { slot: number; version: bigint }>();
  if (snapshotSlots !== undefined && memory.hnsw !== undefined) {
    const graph = memory.hnsw.graph;
    snapshotSlots.forEach((entry, slot) => {
      if (entry !== undefined && graph.isLive(slot)) bySnapshot.set(entry.id, { slot, version: entry.version });
    });
  }

  // Size memory once: growing it point by point costs many copies and garbage collections.
  const stored = store.countPoints(uid);
  const slots = Math.max(stored, memory.hnsw?.graph.capacity ?? 0);
  // The table is empty here, so this reserves exactly `slots` in the arena, the table and the graph.
  memory.reserve(slots);

  let lastVersion = 0n;
  let points = 0;
  let fromSnapshot = 0;
  const pending: LoadedPoint[] = [];
  const place = (point: LoadedPoint): void => {
    points++;
    if (point.version > lastVersion) lastVersion = point.version;
    if (snapshotSlots === undefined) {
      // No graph to restore: insert as we read, without holding every point twice.
      memory.reserve(1);
      memory.upsert(point.id, point.version, point.payload, point.vector);
      return;
    }
    const placed = bySnapshot.get(point.id);
    if (placed === undefined || placed.version !== point.version) {
      pending.push(point);
      return;
    }
    memory.arena.reserve(placed.slot + 1);
    memory.table.insertAt(placed.slot, point.id, point.version, point.payload);
    memory.payloadIndex.add(placed.slot, point.payload);
    memory.writeVector(placed.slot, point.vector);
    fromSnapshot++;
  };
  memory.payloadIndex.bulkLoad(() => {
    for (const point of readPoints(store, uid, config)) place(point);
  });

  const current = memory.hnsw;
  if (snapshotSlots !== undefined && current !== undefined) {
    const graph = current.graph;
    for (let slot = 0; slot < graph.capacity; slot++) {
      if (graph.isLive(slot) && !memory.table.isLive(slot)) graph.markDeleted(slot);
    }
    if (graph.deletedCount > 0) current.compact();
    memory.table.rebuildFreeSlots((slot) => graph.has(slot));
  }

  memory.reserve(pending.length);
  for (const point of pending) memory.upsert(point.id, point.version, point.payload, point.vector);
  memory.maintain();
  const inserted = snapshotSlots === undefined ? points : pending.length;
  return { lastVersion, points, fromSnapshot, inserted, ...(snapshotRejected === undefined ? {} : { snapshotRejected }) };
}

function* readPoints(store: LmdbStore, uid: number, config: CollectionConfig): IterableIterator<LoadedPoint> {
  for (const { id, record } of store.scanPoints(uid)) {
    const where = `${config.name}/${JSON.stringify(id)}`;
    const decoded = decodePointRecord(record, config.vectorSize, where);
    let payload: unknown;
    try {
      payload = JSON.parse(decoded.payloadJson);
    } catch (error) {
      throw new KithError('ERR_STORAGE_CORRUPTED', `point record ${where}: payload is not JSON`, { cause: error });
    }
    if (!isPlainObject(payload)) throw new KithError('ERR_STORAGE_CORRUPTED', `point record ${where}: payload is not an object`);
    yield { id, version: decoded.version, payload, vector: decoded.vector };
  }
}
