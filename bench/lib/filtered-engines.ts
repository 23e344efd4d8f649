/**
 * The two engines of the `filtered` benchmark, in-process and single-threaded:
 *
 * - kith through the embedded API: an HNSW collection in a temporary LMDB file, every point with
 *   its payload (so the payload indexes are built as in production), searched with
 *   `searchExplained` so each answer says which strategy ran. Forced strategies use the
 *   embedded-only overrides `params.strategy` and `params.filter_walk`.
 * - hnswlib-node's HierarchicalNSW with its filtered `searchKnn(query, k, filter)`: the filter is a
 *   JS callback on the label, called from C++ for every candidate the walk considers.
 *
 * A cell's filters (kith: parsed filter objects; hnswlib: callbacks) are prepared before the
 * clock starts, once per query, so the timing holds the searches only.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchExplain } from '../../src/collection/collection.js';
import { Database } from '../../src/db/database.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import type { Filter } from '../../src/payload/filter-types.js';
import type { AnnDataset, Metric } from '../datasets/dataset.js';
import type { FilteredWorkload, FilterShape } from '../datasets/filtered-workload.js';
import type { HnswlibHierarchicalNSW, HnswlibSearchResult, HnswlibSpace } from '../peers/types.js';
import type { BuildParams } from './index-adapter.js';
import { loadPeer } from './peers.js';

/** kith's ways to answer a filtered search: the planner's choice, or one strategy forced. */
export const KITH_MODES = ['auto', 'candidates-exact', 'two-hop', 'plain'] as const;
export type KithMode = (typeof KITH_MODES)[number];
/** hnswlib has one filtered search: the callback. */
export type CellMode = KithMode | 'callback';

export const FILTERED_ENGINES = ['kith', 'hnswlib'] as const;
export type FilteredEngineName = (typeof FILTERED_ENGINES)[number];

/** One measured configuration: ef, a filter shape (null: unfiltered) and how to search. */
export interface Cell {
  readonly ef: number;
  readonly shape: string | null;
  readonly mode: CellMode;
  /** The unfiltered baseline measured again at the end of its ef group: ratios use the mean of both, so drift shows. */
  readonly again?: true;
}

export interface BuildInfo {
  readonly seconds: number;
  readonly details: Readonly<Record<string, number | string>>;
}

export interface FilteredEngine {
  readonly name: string;
  build(dataset: AnnDataset, workload: FilteredWorkload, params: BuildParams): Promise<BuildInfo>;
  /** The search of one cell, query by query (row ids, closest first). */
  searcher(cell: Cell, shape: FilterShape | undefined, queries: readonly Float32Array[], k: number): (qi: number) => ArrayLike<number>;
  /** How the last search was answered, when the engine can say (kith's explain). */
  lastExplain(): SearchExplain | undefined;
  close(): Promise<void>;
}

const KITH_DISTANCE: Record<Metric, 'euclid' | 'cosine' | 'dot'> = { l2: 'euclid', cosine: 'cosine', ip: 'dot' };
const BATCH = 1000;
const COLLECTION = 'bench_filtered';

type Collection = ReturnType<Database['collection']>;
type SearchParams = NonNullable<Parameters<Collection['searchExplained']>[0]['params']>;

/** The search params of a kith mode: the planner's choice, or the embedded-only overrides. */
function kithParams(ef: number, mode: CellMode): SearchParams {
  switch (mode) {
    case 'candidates-exact':
      return { ef, strategy: 'candidates-exact' };
    case 'two-hop':
      return { ef, strategy: 'graph-filtered', filter_walk: 'two-hop' };
    case 'plain':
      return { ef, strategy: 'graph-filtered', filter_walk: 'plain' };
    default:
      return { ef };
  }
}

class KithFilteredEngine implements FilteredEngine {
  readonly name = 'kith';
  private db: Database | undefined;
  private collection: Collection | undefined;
  private last: SearchExplain | undefined;

  constructor(private readonly tmpDir: string) {}

  async build(dataset: AnnDataset, workload: FilteredWorkload, params: BuildParams): Promise<BuildInfo> {
    const dir = join(this.tmpDir, 'kith');
    mkdirSync(dir, { recursive: true });
    const t0 = performance.now();
    const db = Database.open(join(dir, 'bench.kith'));
    this.db = db;
    await db.createCollection({
      name: COLLECTION,
      vector_size: dataset.dim,
      distance: KITH_DISTANCE[dataset.metric],
      hnsw: true,
      parameters: { m: params.m, ef_construction: params.efConstruction },
    });
    const collection = db.collection(COLLECTION);
    this.collection = collection;
    const rows = dataset.base.rows;
    const c0 = performance.now();
    type Point = { id: number; vector: number[]; payload: Record<string, string | number> };
    const batches: Point[][] = [];
    for (let start = 0; start < rows.length; start += BATCH) {
      const batch: Point[] = [];
      for (let i = start; i < Math.min(rows.length, start + BATCH); i++) {
        batch.push({ id: i, vector: Array.from(rows[i] as Float32Array), payload: workload.payload(i) });
      }
      batches.push(batch);
    }
    const u0 = performance.now();
    for (const batch of batches) await collection.upsert(batch);
    const u1 = performance.now();
    return {
      seconds: (u1 - t0) / 1000,
      details: {
        convert_seconds: Math.round(u0 - c0) / 1000,
        upsert_seconds: Math.round(u1 - u0) / 1000,
        batch: BATCH,
        note: 'upsert = validation + durable LMDB write + payload indexes + HNSW insert, batches awaited one by one',
      },
    };
  }

  searcher(cell: Cell, shape: FilterShape | undefined, queries: readonly Float32Array[], k: number): (qi: number) => ArrayLike<number> {
    const collection = this.collection;
    if (collection === undefined) throw new Error('kith: build() first');
    const filters: (Filter | undefined)[] | undefined = shape === undefined ? undefined : queries.map((_, qi) => parseFilter(shape.filter(qi)));
    const params = kithParams(cell.ef, cell.mode);
    return (qi) => {
      const outcome = collection.searchExplained({
        vector: Array.from(queries[qi] as Float32Array),
        limit: k,
        with_payload: false,
        filter: filters?.[qi],
        params,
      });
      this.last = outcome.explain;
      const points = outcome.points;
      const ids = new Array<number>(points.length);
      for (let i = 0; i < points.length; i++) ids[i] = Number((points[i] as { id: string }).id);
      return ids;
    };
  }

  lastExplain(): SearchExplain | undefined {
    return this.last;
  }

  async close(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    this.collection = undefined;
    if (db !== undefined) await db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// hnswlib-node 3.0.0. bench/peers/types.d.ts declares the unfiltered searchKnn only; the binding
// also takes a third argument, a function of the label (addon.cc: CustomFilterFunctor).

interface FilterableHnswlibIndex extends HnswlibHierarchicalNSW {
  searchKnn(queryPoint: number[], numNeighbors: number, filter?: (label: number) => boolean): HnswlibSearchResult;
}

interface FilterableHnswlibModule {
  readonly HierarchicalNSW: new (spaceName: HnswlibSpace, numDimensions: number) => FilterableHnswlibIndex;
}

const HNSWLIB_SPACE: Record<Metric, HnswlibSpace> = { l2: 'l2', cosine: 'cosine', ip: 'ip' };
/** As in the `index` benchmark's adapter. */
const HNSWLIB_SEED = 100;

class HnswlibFilteredEngine implements FilteredEngine {
  readonly name = 'hnswlib-node';
  private index: FilterableHnswlibIndex | undefined;

  constructor(private readonly lib: FilterableHnswlibModule) {}

  async build(dataset: AnnDataset, _workload: FilteredWorkload, params: BuildParams): Promise<BuildInfo> {
    const t0 = performance.now();
    const index = new this.lib.HierarchicalNSW(HNSWLIB_SPACE[dataset.metric], dataset.dim);
    index.initIndex(dataset.base.count, params.m, params.efConstruction, HNSWLIB_SEED);
    // addPoint refuses typed arrays; labels are row ids, which the filter callbacks index by.
    dataset.base.rows.forEach((row, i) => {
      index.addPoint(Array.from(row), i);
    });
    this.index = index;
    return { seconds: (performance.now() - t0) / 1000, details: { random_seed: HNSWLIB_SEED } };
  }

  searcher(cell: Cell, shape: FilterShape | undefined, queries: readonly Float32Array[], k: number): (qi: number) => ArrayLike<number> {
    const index = this.index;
    if (index === undefined) throw new Error('hnswlib-node: build() first');
    index.setEf(cell.ef);
    if (shape === undefined) return (qi) => index.searchKnn(Array.from(queries[qi] as Float32Array), k).neighbors;
    const tests = queries.map((_, qi) => shape.matcher(qi));
    return (qi) => index.searchKnn(Array.from(queries[qi] as Float32Array), k, tests[qi]).neighbors;
  }

  lastExplain(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    this.index = undefined;
  }
}

/** Throws PeerMissingError when hnswlib-node is not installed in bench/peers. */
export function createFilteredEngine(name: FilteredEngineName, tmpDir: string): FilteredEngine {
  return name === 'kith' ? new KithFilteredEngine(tmpDir) : new HnswlibFilteredEngine(loadPeer<FilterableHnswlibModule>('hnswlib-node'));
}
