/**
 * kith as an engine of the `index` benchmark, through the embedded API (`Database.open`):
 * a collection in a temporary LMDB file, points upserted in awaited batches, searches in-process.
 *
 * Three engines come from here: `kith` (HNSW), `kith-sq8` (HNSW over an sq8 collection, searching
 * the 8-bit codes) and `kith-flat` (the exact Flat index, measured once as the peers' brute force).
 *
 * kith's build is not only the index: every upsert batch is validated and written durably to
 * LMDB (the promise resolves after the commit is on disk) before memory is updated. When
 * KITH_INDEX is 'hnsw', the same vectors are also upserted into a Flat collection in a second,
 * untimed file, and `buildDetails` reports that as the durable-storage baseline and the rest as
 * the index's estimated share.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/db/database.js';
import type { Metric } from '../datasets/dataset.js';
import type { AdapterSpec, BuildDetails, BuildParams, IndexAdapter } from './index-adapter.js';

/** Points per awaited upsert (as the `flat` scenario's PUTs). */
const BATCH = 1000;
const COLLECTION = 'bench_index';

const KITH_DISTANCE: Record<Metric, 'euclid' | 'cosine' | 'dot'> = { l2: 'euclid', cosine: 'cosine', ip: 'dot' };

type Collection = ReturnType<Database['collection']>;

interface IngestTiming {
  /** Open + create + convert + upsert. */
  readonly wallSeconds: number;
  readonly convertSeconds: number;
  readonly upsertSeconds: number;
  readonly fileBytes: number;
}

/** Creates the collection in a fresh file at `path` and upserts every vector (id i), batch by batch. */
async function ingest(
  path: string,
  spec: AdapterSpec,
  hnsw: boolean,
  vectors: readonly Float32Array[],
  params: BuildParams,
  quantization: 'none' | 'sq8' = 'none',
): Promise<{ db: Database; collection: Collection; timing: IngestTiming }> {
  const t0 = performance.now();
  const db = Database.open(path);
  await db.createCollection({
    name: COLLECTION,
    vector_size: spec.dim,
    distance: KITH_DISTANCE[spec.metric],
    hnsw,
    parameters: { m: params.m, ef_construction: params.efConstruction },
    quantization,
  });
  const collection = db.collection(COLLECTION);
  const c0 = performance.now();
  const batches: { id: number; vector: number[]; payload: Record<string, never> }[][] = [];
  for (let start = 0; start < vectors.length; start += BATCH) {
    const end = Math.min(vectors.length, start + BATCH);
    const batch: { id: number; vector: number[]; payload: Record<string, never> }[] = [];
    for (let i = start; i < end; i++) batch.push({ id: i, vector: Array.from(vectors[i] as Float32Array), payload: {} });
    batches.push(batch);
  }
  const u0 = performance.now();
  for (const batch of batches) await collection.upsert(batch);
  const u1 = performance.now();
  return {
    db,
    collection,
    timing: { wallSeconds: (u1 - t0) / 1000, convertSeconds: (u0 - c0) / 1000, upsertSeconds: (u1 - u0) / 1000, fileBytes: statSync(path).size },
  };
}

class KithAdapter implements IndexAdapter {
  readonly name: string;
  readonly kind: 'flat' | 'hnsw';
  private db: Database | undefined;
  private collection: Collection | undefined;
  private ef: number | undefined;
  private count = 0;
  private timing: IngestTiming | undefined;
  private baseline: IngestTiming | undefined;

  constructor(
    private readonly spec: AdapterSpec,
    index: 'flat' | 'hnsw',
    private readonly quantization: 'none' | 'sq8' = 'none',
  ) {
    this.kind = index;
    this.name = `kith${index === 'hnsw' ? '' : '-flat'}${quantization === 'sq8' ? '-sq8' : ''}`;
  }

  async build(vectors: readonly Float32Array[], params: BuildParams): Promise<void> {
    const dir = join(this.spec.tmpDir, 'kith');
    mkdirSync(dir, { recursive: true });
    const built = await ingest(join(dir, 'bench.kith'), this.spec, this.kind === 'hnsw', vectors, params, this.quantization);
    this.db = built.db;
    this.collection = built.collection;
    this.timing = built.timing;
    this.count = vectors.length;
    if (this.kind === 'hnsw') {
      // Durable storage baseline: the same upserts into a Flat collection (whose add is an array copy).
      const base = await ingest(join(dir, 'baseline.kith'), this.spec, false, vectors, params);
      this.baseline = base.timing;
      await base.db.close();
      rmSync(join(dir, 'baseline.kith'), { force: true });
      rmSync(join(dir, 'baseline.kith-lock'), { force: true });
    }
  }

  setEf(ef: number): void {
    this.ef = ef;
  }

  search(query: Float32Array, k: number): ArrayLike<number> {
    const collection = this.collection;
    if (collection === undefined) throw new Error('kith: build() first');
    const hits = collection.search({ vector: Array.from(query), limit: k, with_payload: false, params: { ef: this.ef ?? null } });
    const ids = new Array<number>(hits.length);
    for (let i = 0; i < hits.length; i++) ids[i] = Number((hits[i] as { id: string }).id);
    return ids;
  }

  /** The main ingest only: the Flat baseline (HNSW mode) is not part of kith's build. */
  buildSeconds(): number | undefined {
    return this.timing?.wallSeconds;
  }

  /** Vectors + graph as allocated in memory (arena capacity and graph arrays), per point. */
  bytesPerVector(): number | undefined {
    const stats = this.collection?.memoryStats();
    if (stats === undefined || stats.points === 0) return undefined;
    return (stats.vectorBytesAllocated + stats.graphBytesAllocated) / stats.points;
  }

  buildDetails(): BuildDetails {
    const t = this.timing;
    const b = this.baseline;
    const round = (x: number): number => Math.round(x * 1000) / 1000;
    return {
      index: this.kind,
      batch: BATCH,
      convert_seconds: t === undefined ? null : round(t.convertSeconds),
      upsert_seconds: t === undefined ? null : round(t.upsertSeconds),
      lmdb_file_bytes_per_vector: t === undefined || this.count === 0 ? null : Math.round(t.fileBytes / this.count),
      durable_storage_baseline_seconds: b === undefined ? (this.kind === 'flat' && t !== undefined ? round(t.upsertSeconds) : null) : round(b.upsertSeconds),
      index_estimate_seconds: b === undefined || t === undefined ? null : round(t.upsertSeconds - b.upsertSeconds),
      note:
        this.kind === 'flat'
          ? 'Flat: the build is validation + durable LMDB writes + an array copy per point'
          : 'upsert = validation + durable LMDB write + index insert; baseline = the same upserts into a Flat collection',
    };
  }

  async close(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    this.collection = undefined;
    if (db !== undefined) await db.close();
  }
}

export async function createKithAdapter(spec: AdapterSpec): Promise<IndexAdapter> {
  return new KithAdapter(spec, 'hnsw');
}

/** The same, on an sq8 collection: HNSW searching the 8-bit codes (the recall cost of sq8). */
export async function createKithSq8Adapter(spec: AdapterSpec): Promise<IndexAdapter> {
  return new KithAdapter(spec, 'hnsw', 'sq8');
}

/** The exact Flat index (the WASM kernels scanning every vector), against the peers' brute force. */
export async function createKithFlatAdapter(spec: AdapterSpec): Promise<IndexAdapter> {
  return new KithAdapter(spec, 'flat');
}
