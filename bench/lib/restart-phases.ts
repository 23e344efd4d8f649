/**
 * Where a restart's time goes, measured from outside src/ by running the pieces of
 * `loadCollection` (src/collection/collection-load.ts) one by one on the same file:
 *
 *   snapshot read     LMDB range read of the 16 MiB chunks, concatenated (LmdbStore.readSnapshot)
 *   snapshot checksum CRC-32 over the whole container (part of decodeSnapshot)
 *   snapshot decode   decodeSnapshot: the checksum, then one (id, version) per slot
 *   graph decode      decodeGraphInto: the graph section into a fresh index
 *   points scan       the LMDB cursor over every point record, nothing decoded
 *   records decode    the same scan plus decodePointRecord and JSON.parse of each payload
 *   table fill        PointTable.insertAt of every point at its snapshot slot (a table of its own)
 *   vector fill       the vectors written into an arena at those slots (first touch of its pages)
 *   payload index     PayloadIndex.add of every payload (the indexes are not in the snapshot)
 *   load (whole)      loadCollection itself, into a fresh Segment
 *
 * The three fills run on points decoded beforehand (untimed), in the file's key order, as the load
 * does. "rest" = load − every piece: the id → slot map from the snapshot, the lookups, the
 * reconcile of graph and table, and garbage collection, which the pieces run alone do not pay
 * in the same way (they leave less garbage behind).
 * The pieces run in one process, so only the first whole load is cold (its JIT has not seen the
 * code, as at a real restart); the rest are reported from a second, warm round, where the pieces
 * and the whole are comparable. Every figure is warm in the page cache (the file was just written).
 */
import { type CollectionConfig, configFromStored } from '../../src/segment/collection-config.js';
import { loadCollection } from '../../src/collection/collection-load.js';
import { decodeSnapshot, type SlotEntry } from '../../src/segment/snapshot.js';
import { type Payload, PointTable } from '../../src/segment/point-table.js';
import { Segment } from '../../src/segment/segment.js';
import { crc32 } from '../../src/core/crc32.js';
import { decodeGraphInto } from '../../src/index/hnsw/graph-codec.js';
import { HnswIndex } from '../../src/index/hnsw/hnsw-index.js';
import { createKernel } from '../../src/kernels/distance-kernel.js';
import { VectorArena } from '../../src/kernels/vector-arena.js';
import { PayloadIndex } from '../../src/payload/payload-index.js';
import { LmdbStore } from '../../src/storage/lmdb-store.js';
import { decodePointRecord } from '../../src/storage/point-record.js';
import { round } from './stats.js';

export interface PhaseTimes {
  readonly snapshot_read_ms: number;
  readonly snapshot_checksum_ms: number;
  /** Includes the checksum. */
  readonly snapshot_decode_ms: number;
  readonly graph_decode_ms: number;
  readonly points_scan_ms: number;
  /** Includes the scan. */
  readonly records_decode_ms: number;
  readonly table_fill_ms: number;
  readonly vector_fill_ms: number;
  readonly payload_index_ms: number;
  readonly load_ms: number;
  /** load − every piece above (the checksum and the scan counted inside their totals). */
  readonly rest_ms: number;
}

export interface PhaseReport {
  readonly store_open_ms: number;
  readonly snapshot_bytes: number;
  readonly points: number;
  /** loadCollection the first time this process runs it (cold JIT, as at a restart). */
  readonly load_cold_ms: number;
  /** Every piece and the whole, second round (warm JIT). */
  readonly warm: PhaseTimes;
}

function time<T>(body: () => T): [T, number] {
  const t0 = performance.now();
  const value = body();
  return [value, performance.now() - t0];
}

export async function measurePhases(path: string, name: string, collectGarbage: () => void): Promise<PhaseReport> {
  const [store, storeOpenMs] = time(() => LmdbStore.open(path));
  try {
    const stored = store.loadCollections().find((c) => c.name === name);
    if (stored === undefined) throw new Error(`no collection ${name} in ${path}`);
    const config = configFromStored(stored.config, stored.name);
    if (!config.hnsw) throw new Error(`collection ${name} is not HNSW`);

    const wholeLoad = (): number => {
      collectGarbage();
      const segment = new Segment(config);
      const [report, ms] = time(() => loadCollection(store, stored.uid, config, segment));
      if (report.inserted !== 0 || report.snapshotRejected !== undefined) {
        throw new Error(`the snapshot was not used as a whole (inserted ${report.inserted}, rejected: ${report.snapshotRejected ?? 'no'})`);
      }
      return ms;
    };

    const pieces = (): Omit<PhaseTimes, 'load_ms' | 'rest_ms'> & { bytes: number; points: number } => {
      collectGarbage();
      const [bytes, readMs] = time(() => store.readSnapshot(stored.uid));
      if (bytes === undefined) throw new Error(`${path} has no snapshot for ${name}`);
      const [, crcMs] = time(() => crc32(bytes.subarray(0, bytes.length - 4)));
      const [decoded, decodeMs] = time(() => decodeSnapshot(bytes));
      if (typeof decoded === 'string') throw new Error(`snapshot does not decode: ${decoded}`);
      // A fresh index of the collection's parameters, as the segment makes one (the graph decode does not score).
      const arena = new VectorArena(config.vectorSize);
      const kernel = createKernel(arena, config.distance);
      const p = config.parameters;
      const hnsw = new HnswIndex(arena, kernel, kernel, new PointTable(), { m: p.m, efConstruction: p.efConstruction, efSearch: p.efSearch, seed: 100 });
      const [problem, graphMs] = time(() => decodeGraphInto(hnsw, decoded.graph));
      if (problem !== undefined) throw new Error(`graph does not decode: ${problem}`);
      collectGarbage();
      const [points, scanMs] = time(() => {
        let count = 0;
        for (const _ of store.scanPoints(stored.uid)) count++;
        return count;
      });
      const [, recordsMs] = time(() => {
        for (const { id, record } of store.scanPoints(stored.uid)) {
          const decodedRecord = decodePointRecord(record, config.vectorSize, id);
          JSON.parse(decodedRecord.payloadJson);
        }
      });
      const fills = timeFills(store, stored.uid, config, decoded.slots);
      return {
        bytes: bytes.length,
        points,
        snapshot_read_ms: readMs,
        snapshot_checksum_ms: crcMs,
        snapshot_decode_ms: decodeMs,
        graph_decode_ms: graphMs,
        points_scan_ms: scanMs,
        records_decode_ms: recordsMs,
        ...fills,
      };
    };

    const loadColdMs = wholeLoad();
    pieces();
    const loadWarmMs = wholeLoad();
    const warm = pieces();
    const r = (x: number): number => round(x, 1);
    return {
      store_open_ms: r(storeOpenMs),
      snapshot_bytes: warm.bytes,
      points: warm.points,
      load_cold_ms: r(loadColdMs),
      warm: {
        snapshot_read_ms: r(warm.snapshot_read_ms),
        snapshot_checksum_ms: r(warm.snapshot_checksum_ms),
        snapshot_decode_ms: r(warm.snapshot_decode_ms),
        graph_decode_ms: r(warm.graph_decode_ms),
        points_scan_ms: r(warm.points_scan_ms),
        records_decode_ms: r(warm.records_decode_ms),
        table_fill_ms: r(warm.table_fill_ms),
        vector_fill_ms: r(warm.vector_fill_ms),
        payload_index_ms: r(warm.payload_index_ms),
        load_ms: r(loadWarmMs),
        rest_ms: r(
          loadWarmMs -
            warm.snapshot_read_ms -
            warm.snapshot_decode_ms -
            warm.graph_decode_ms -
            warm.records_decode_ms -
            warm.table_fill_ms -
            warm.vector_fill_ms -
            warm.payload_index_ms,
        ),
      },
    };
  } finally {
    await store.close();
  }
}

/**
 * The three fills of a snapshot load, each timed alone over points decoded beforehand. The decoded
 * points are held compactly (one Float32Array for every vector, typed arrays for slots and
 * versions; ids and payloads as the table will hold them), not as a million record objects: a
 * heap that large makes every garbage collection slow, and the vector fill, whose arena growth
 * triggers collections, would be charged for the harness's garbage instead of the load's.
 */
function timeFills(
  store: LmdbStore,
  uid: number,
  config: CollectionConfig,
  slots: ReadonlyArray<SlotEntry | undefined>,
): { table_fill_ms: number; vector_fill_ms: number; payload_index_ms: number } {
  const slotOf = new Map<string, number>();
  slots.forEach((entry, slot) => {
    if (entry !== undefined) slotOf.set(entry.id, slot);
  });
  const dim = config.vectorSize;
  const n = slotOf.size;
  const slotAt = new Int32Array(n);
  const versions = new BigUint64Array(n);
  const vectors = new Float32Array(n * dim);
  const ids: string[] = [];
  const payloads: Payload[] = [];
  for (const { id, record } of store.scanPoints(uid)) {
    const decoded = decodePointRecord(record, dim, id);
    const slot = slotOf.get(id);
    if (slot === undefined || ids.length >= n) throw new Error(`point ${id} is not in the snapshot`);
    if (decoded.vector.encoding !== 'f32') throw new Error('the phase probe handles float32 collections only');
    const i = ids.length;
    slotAt[i] = slot;
    versions[i] = decoded.version;
    vectors.set(decoded.vector.values, i * dim);
    ids.push(id);
    payloads.push(JSON.parse(decoded.payloadJson) as Payload);
  }
  const count = ids.length;
  // The segment's parts, each on its own, as the segment fills them at load.
  const table = new PointTable();
  const arena = new VectorArena(dim);
  const payloadIndex = new PayloadIndex(config.payloadIndex);
  const [, tableMs] = time(() => {
    for (let i = 0; i < count; i++) table.insertAt(slotAt[i] as number, ids[i] as string, versions[i] as bigint, payloads[i] as Payload);
  });
  const [, vectorMs] = time(() => {
    for (let i = 0; i < count; i++) {
      const slot = slotAt[i] as number;
      arena.reserve(slot + 1);
      arena.write(slot, vectors.subarray(i * dim, (i + 1) * dim));
    }
  });
  const [, payloadMs] = time(() => {
    for (let i = 0; i < count; i++) payloadIndex.add(slotAt[i] as number, payloads[i] as Payload);
  });
  return { table_fill_ms: tableMs, vector_fill_ms: vectorMs, payload_index_ms: payloadMs };
}
