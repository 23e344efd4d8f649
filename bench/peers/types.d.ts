/**
 * The minimal shapes of the peer libraries that the `index` benchmark uses. The peers live in
 * bench/peers/node_modules (installed with `npm ci --prefix bench/peers`), outside the main
 * package, and are loaded at run time with `require` from there (bench/lib/peers.ts). These types
 * stand in for their own declarations, so that `npm run build` and `npm run lint` pass on a machine
 * where the peers are not installed. They describe only what the benchmark calls.
 */

// ---- hnswlib-node 3.0.0 (lib/index.d.ts) ----

export type HnswlibSpace = 'l2' | 'ip' | 'cosine';

export interface HnswlibSearchResult {
  readonly distances: number[];
  readonly neighbors: number[];
}

export interface HnswlibHierarchicalNSW {
  initIndex(maxElements: number, m?: number, efConstruction?: number, randomSeed?: number, allowReplaceDeleted?: boolean): void;
  /** Plain arrays only: a typed array is refused ("must be an Array"). */
  addPoint(point: number[], label: number, replaceDeleted?: boolean): void;
  searchKnn(queryPoint: number[], numNeighbors: number): HnswlibSearchResult;
  setEf(ef: number): void;
  getEf(): number;
  getCurrentCount(): number;
  writeIndexSync(filename: string): void;
}

/** hnswlib's exact index (bruteforce.h): every search scores every vector. */
export interface HnswlibBruteforceSearch {
  initIndex(maxElements: number): void;
  addPoint(point: number[], label: number): void;
  searchKnn(queryPoint: number[], numNeighbors: number): HnswlibSearchResult;
}

export interface HnswlibModule {
  readonly HierarchicalNSW: new (spaceName: HnswlibSpace, numDimensions: number) => HnswlibHierarchicalNSW;
  readonly BruteforceSearch: new (spaceName: HnswlibSpace, numDimensions: number) => HnswlibBruteforceSearch;
}

// ---- usearch 2.26.2 (javascript/dist/cjs/usearch.d.ts) ----

/** The string values of usearch's `MetricKind` enum that the benchmark uses. */
export type UsearchMetric = 'l2sq' | 'ip' | 'cos';
/** The string value of usearch's `ScalarKind` enum that the benchmark uses. */
export type UsearchScalar = 'f32';

export interface UsearchIndexConfig {
  readonly dimensions: number;
  readonly metric: UsearchMetric;
  readonly quantization: UsearchScalar;
  /** HNSW M. */
  readonly connectivity: number;
  /** ef_construction. */
  readonly expansion_add: number;
  /** ef at search time: fixed at construction; there is no setter in the JS binding. */
  readonly expansion_search: number;
  readonly multi: boolean;
}

export interface UsearchMatches {
  readonly keys: BigUint64Array;
  readonly distances: Float32Array;
}

export interface UsearchIndex {
  /** `vectors`: a flat n × d matrix. `threads` 0 means "as many as the machine has". */
  add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
  /** One query vector gives one `Matches`. */
  search(vector: Float32Array, k: number, threads: number): UsearchMatches;
  size(): number;
  save(path: string): void;
  load(path: string): void;
}

export interface UsearchModule {
  readonly Index: new (config: UsearchIndexConfig) => UsearchIndex;
}
