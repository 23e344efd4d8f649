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
 *   load (whole)      loadCollection itself, into a fresh CollectionMemory
 *
 * "rest" = load − (snapshot read + snapshot decode + graph decode + records decode): filling the
 * point table and the vector arena at the snapshot's slots, and the reconcile of graph and table.
 * The pieces run in one process, so only the first whole load is cold (its JIT has not seen the
 * code, as at a real restart); the rest are reported from a second, warm round, where the pieces
 * and the whole are comparable. Every figure is warm in the page cache (the file was just written).
 */
import { configFromStored } from '../../src/collection/collection-config.js';
import { loadCollection } from '../../src/collection/collection-load.js';
import { CollectionMemory } from '../../src/collection/collection-memory.js';
import { decodeSnapshot } from '../../src/collection/snapshot.js';
import { crc32 } from '../../src/core/crc32.js';
import { decodeGraphInto } from '../../src/index/hnsw/graph-codec.js';
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
  readonly load_ms: number;
  /** load − (snapshot read + snapshot decode + graph decode + records decode). */
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
      const memory = new CollectionMemory(config);
      const [report, ms] = time(() => loadCollection(store, stored.uid, config, memory));
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
      const memory = new CollectionMemory(config);
      const hnsw = memory.hnsw;
      if (hnsw === undefined) throw new Error('no HNSW index in a fresh memory');
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
      return {
        bytes: bytes.length,
        points,
        snapshot_read_ms: readMs,
        snapshot_checksum_ms: crcMs,
        snapshot_decode_ms: decodeMs,
        graph_decode_ms: graphMs,
        points_scan_ms: scanMs,
        records_decode_ms: recordsMs,
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
        load_ms: r(loadWarmMs),
        rest_ms: r(loadWarmMs - warm.snapshot_read_ms - warm.snapshot_decode_ms - warm.graph_decode_ms - warm.records_decode_ms),
      },
    };
  } finally {
    await store.close();
  }
}
