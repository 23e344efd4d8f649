/**
 * One interface for every engine of the `index` benchmark, and the adapters of the peer
 * libraries (hnswlib-node, usearch). kith's adapter is bench/lib/kith-adapter.ts.
 *
 * The peers are loaded at run time from bench/peers (bench/lib/peers.ts); their shapes are in
 * bench/peers/types.d.ts. Every call here is single-threaded.
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Metric } from '../datasets/dataset.js';
import type {
  HnswlibBruteforceSearch,
  HnswlibHierarchicalNSW,
  HnswlibModule,
  HnswlibSpace,
  UsearchIndex,
  UsearchIndexConfig,
  UsearchMetric,
  UsearchModule,
} from '../peers/types.js';
import { loadPeer } from './peers.js';

export interface BuildParams {
  /** HNSW M: links per node on the upper layers (2·M on layer 0 in hnswlib and kith). */
  readonly m: number;
  readonly efConstruction: number;
}

/** What a build left behind, beyond its wall time (which the scenario measures around `build`). */
export type BuildDetails = Readonly<Record<string, number | string | null>>;

export interface IndexAdapter {
  /** As printed in tables and plots. */
  readonly name: string;
  /** `hnsw`: approximate, swept over ef; `flat`: exact, measured once (ef does not apply). */
  readonly kind: 'hnsw' | 'flat';
  /** Indexes `vectors`; vector i gets id i. Timed as a whole by the caller. */
  build(vectors: readonly Float32Array[], params: BuildParams): Promise<void>;
  /** The search beam width for the following searches (the caller does this outside the timing). */
  setEf(ef: number): void | Promise<void>;
  /** Ids of the (approximate) `k` nearest, closest first. */
  search(query: Float32Array, k: number): ArrayLike<number>;
  /**
   * The build time to report, when `build` also did untimed work (kith's durable-storage baseline);
   * undefined: the caller's wall time around `build`.
   */
  buildSeconds?(): number | undefined;
  /** The index's own size per vector when the engine can tell (vectors + graph + ids), else undefined. */
  bytesPerVector(): number | undefined;
  /** Extra facts about the build (e.g. what share of it was durable storage). */
  buildDetails(): BuildDetails;
  /** Frees memory and deletes temporary files. */
  close(): Promise<void>;
}

export interface AdapterSpec {
  readonly dim: number;
  readonly metric: Metric;
  /** A private, empty folder the adapter may write to (deleted by the caller afterwards). */
  readonly tmpDir: string;
}

/** Copies of rows as one n × d matrix. */
function flatten(vectors: readonly Float32Array[], dim: number): Float32Array {
  const out = new Float32Array(vectors.length * dim);
  vectors.forEach((v, i) => {
    if (v.length !== dim) throw new RangeError(`vector ${i} has ${v.length} components, expected ${dim}`);
    out.set(v, i * dim);
  });
  return out;
}

/** The array itself when it owns its whole buffer, else a copy (usearch reads `buffer` from offset 0 in places). */
function ownBuffer(v: Float32Array): Float32Array {
  return v.byteOffset === 0 && v.byteLength === v.buffer.byteLength ? v : v.slice();
}

function fileSize(path: string): number {
  return statSync(path).size;
}

// ---------------------------------------------------------------------------------------------
// hnswlib-node 3.0.0: HierarchicalNSW (the C++ hnswlib), plain number[] in and out.

const HNSWLIB_SPACE: Record<Metric, HnswlibSpace> = { l2: 'l2', cosine: 'cosine', ip: 'ip' };
const HNSWLIB_SEED = 100;

class HnswlibAdapter implements IndexAdapter {
  readonly name = 'hnswlib-node';
  readonly kind = 'hnsw';
  private index: HnswlibHierarchicalNSW | undefined;
  private count = 0;
  private serializedBytes: number | undefined;

  constructor(
    private readonly lib: HnswlibModule,
    private readonly spec: AdapterSpec,
  ) {}

  async build(vectors: readonly Float32Array[], params: BuildParams): Promise<void> {
    const index = new this.lib.HierarchicalNSW(HNSWLIB_SPACE[this.spec.metric], this.spec.dim);
    index.initIndex(vectors.length, params.m, params.efConstruction, HNSWLIB_SEED);
    // addPoint refuses typed arrays: each vector becomes a number[], which the binding copies again.
    for (let i = 0; i < vectors.length; i++) index.addPoint(Array.from(vectors[i] as Float32Array), i);
    this.index = index;
    this.count = vectors.length;
  }

  setEf(ef: number): void {
    this.built().setEf(ef);
  }

  search(query: Float32Array, k: number): ArrayLike<number> {
    return this.built().searchKnn(Array.from(query), k).neighbors;
  }

  /** The size of `writeIndexSync`'s file per vector: level-0 links + vector + label, plus upper-level links. */
  bytesPerVector(): number | undefined {
    if (this.serializedBytes === undefined) {
      const path = join(this.spec.tmpDir, 'hnswlib.index');
      this.built().writeIndexSync(path);
      this.serializedBytes = fileSize(path);
      rmSync(path, { force: true });
    }
    return this.count === 0 ? undefined : this.serializedBytes / this.count;
  }

  buildDetails(): BuildDetails {
    return {
      random_seed: HNSWLIB_SEED,
      serialized_bytes: this.serializedBytes ?? null,
      note: 'bytes/vector = writeIndexSync file size / n (excludes the per-element mutex array and the label hash map)',
    };
  }

  async close(): Promise<void> {
    this.index = undefined;
  }

  private built(): HnswlibHierarchicalNSW {
    if (this.index === undefined) throw new Error('hnswlib-node: build() first');
    return this.index;
  }
}

export async function createHnswlibAdapter(spec: AdapterSpec): Promise<IndexAdapter> {
  return new HnswlibAdapter(loadPeer<HnswlibModule>('hnswlib-node'), spec);
}

/** hnswlib-node's BruteforceSearch: the exact baseline kith's Flat index is compared with. */
class HnswlibBruteforceAdapter implements IndexAdapter {
  readonly name = 'hnswlib-bf';
  readonly kind = 'flat';
  private index: HnswlibBruteforceSearch | undefined;

  constructor(
    private readonly lib: HnswlibModule,
    private readonly spec: AdapterSpec,
  ) {}

  async build(vectors: readonly Float32Array[]): Promise<void> {
    const index = new this.lib.BruteforceSearch(HNSWLIB_SPACE[this.spec.metric], this.spec.dim);
    index.initIndex(vectors.length);
    for (let i = 0; i < vectors.length; i++) index.addPoint(Array.from(vectors[i] as Float32Array), i);
    this.index = index;
  }

  setEf(): void {}

  search(query: Float32Array, k: number): ArrayLike<number> {
    if (this.index === undefined) throw new Error('hnswlib-bf: build() first');
    return this.index.searchKnn(Array.from(query), k).neighbors;
  }

  bytesPerVector(): number | undefined {
    return undefined;
  }

  buildDetails(): BuildDetails {
    return { note: 'hnswlib BruteforceSearch: exact scan, SSE distance functions, number[] copied per call' };
  }

  async close(): Promise<void> {
    this.index = undefined;
  }
}

export async function createHnswlibBruteforceAdapter(spec: AdapterSpec): Promise<IndexAdapter> {
  return new HnswlibBruteforceAdapter(loadPeer<HnswlibModule>('hnswlib-node'), spec);
}

// ---------------------------------------------------------------------------------------------
// usearch 2.26.2: Index with f32 storage; ef (expansion_search) is fixed at construction.

const USEARCH_METRIC: Record<Metric, UsearchMetric> = { l2: 'l2sq', cosine: 'cos', ip: 'ip' };
/** Single-threaded build and search, as every other engine here. */
const USEARCH_THREADS = 1;

class UsearchAdapter implements IndexAdapter {
  readonly name = 'usearch';
  readonly kind = 'hnsw';
  private index: UsearchIndex | undefined;
  private params: BuildParams | undefined;
  private count = 0;
  private readonly savedPath: string;
  private savedBytes: number | undefined;
  private lastLoadSeconds: number | null = null;

  constructor(
    private readonly lib: UsearchModule,
    private readonly spec: AdapterSpec,
  ) {
    this.savedPath = join(spec.tmpDir, 'usearch.index');
  }

  private config(params: BuildParams, ef: number): UsearchIndexConfig {
    return {
      dimensions: this.spec.dim,
      metric: USEARCH_METRIC[this.spec.metric],
      quantization: 'f32',
      connectivity: params.m,
      expansion_add: params.efConstruction,
      expansion_search: ef,
      multi: false,
    };
  }

  async build(vectors: readonly Float32Array[], params: BuildParams): Promise<void> {
    const index = new this.lib.Index(this.config(params, 64));
    const keys = BigUint64Array.from({ length: vectors.length }, (_, i) => BigInt(i));
    index.add(keys, flatten(vectors, this.spec.dim), USEARCH_THREADS);
    this.index = index;
    this.params = params;
    this.count = vectors.length;
  }

  /**
   * The JS binding has no ef setter: the built index is saved once, and every setEf loads it into a
   * new Index constructed with `expansion_search: ef`.
   */
  setEf(ef: number): void {
    const params = this.params;
    if (params === undefined) throw new Error('usearch: build() first');
    this.save();
    const t0 = performance.now();
    const index = new this.lib.Index(this.config(params, ef));
    index.load(this.savedPath);
    if (index.size() !== this.count) throw new Error(`usearch: loaded ${index.size()} vectors, expected ${this.count}`);
    this.index = index;
    this.lastLoadSeconds = (performance.now() - t0) / 1000;
  }

  search(query: Float32Array, k: number): ArrayLike<number> {
    const index = this.index;
    if (index === undefined) throw new Error('usearch: build() first');
    const { keys } = index.search(ownBuffer(query), k, USEARCH_THREADS);
    const ids = new Array<number>(keys.length);
    for (let i = 0; i < keys.length; i++) ids[i] = Number(keys[i]);
    return ids;
  }

  /** The size of `save`'s file per vector. */
  bytesPerVector(): number | undefined {
    this.save();
    return this.count === 0 || this.savedBytes === undefined ? undefined : this.savedBytes / this.count;
  }

  buildDetails(): BuildDetails {
    return {
      threads: USEARCH_THREADS,
      saved_bytes: this.savedBytes ?? null,
      last_set_ef_load_seconds: this.lastLoadSeconds,
      note: 'ef via save + load into new Index({expansion_search: ef}); bytes/vector = saved file size / n',
    };
  }

  async close(): Promise<void> {
    this.index = undefined;
    rmSync(this.savedPath, { force: true });
  }

  private save(): void {
    if (this.savedBytes !== undefined) return;
    const index = this.index;
    if (index === undefined) throw new Error('usearch: build() first');
    index.save(this.savedPath);
    this.savedBytes = fileSize(this.savedPath);
  }
}

export async function createUsearchAdapter(spec: AdapterSpec): Promise<IndexAdapter> {
  return new UsearchAdapter(loadPeer<UsearchModule>('usearch'), spec);
}
