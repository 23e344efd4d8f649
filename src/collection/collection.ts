/**
 * One collection: validate → write storage (durable) → update memory, in that order, one write
 * at a time. Every step runs in slices of a few milliseconds (docs/architecture.md, "The write
 * path"), so no write holds the service thread for long; searches read memory only, and see a
 * batch either wholly or not at all (visible-change.ts).
 */
import type { Distance } from '../core/distance.js';
import { badInput, KithError } from '../core/errors.js';
import { parseNamedVector } from '../search/named-input.js';
import { childPath } from '../core/field-path.js';
import { describeJson, normalizePointId, type PointId } from '../core/point-id.js';
import { ShardedMap } from '../core/sharded-map.js';
import { runSteps, type Steps } from '../core/steps.js';
import { mapInSlices, nextTurn, SLICE_MS, TimeSlices } from '../core/time-slices.js';
import { type AppliedPosition, checkAppliedPosition } from '../core/applied-position.js';
import { CLOCK_VERSIONS, MAX_VERSION, type VersionSource } from '../core/version-clock.js';
import { bindFilter } from '../search/filter-bind.js';
import { compileFilter, type PayloadPredicate } from '../payload/filter-compile.js';
import { estimateFilter } from '../payload/filter-estimate.js';
import { type Filter, filterTerms, isEmptyFilter } from '../payload/filter-types.js';
import { parseTextIndexParams, type TextIndexes, type TextIndexParams } from '../payload/text-index.js';
import { checkJsonValue, isPlainObject } from '../payload/json-value.js';
import { type PayloadSelector, selectorPatterns, selectPayload, toPayloadSelector } from '../payload/payload-selector.js';
import type { LmdbStore, PointWrite } from '../storage/lmdb-store.js';
import { encodePointRecord, type StoredVector } from '../storage/point-record.js';
import { type CollectionConfig, type CollectionConfigJson, configToInfo, guessedMsPerInsert, LIMITS } from '../segment/collection-config.js';
import { type LoadProgress, type LoadReport, loadCollectionSteps, newLoadProgress } from './collection-load.js';
import { collectMatches, type ScoredPoint, type SearchInput, type SearchOutcome, searchSegment, searchShape } from '../search/collection-search.js';
import { ANNOTATION_KEY, type CalibrationInfo, type CalibrationSlices, EfCalibration } from '../search/ef-calibration.js';
import { checkSearchInput, type FilterInput, inSearch, prefixErrors, type SearchRequest, toFilter } from '../search/embedded-input.js';
import { matchingIds, scanMatches } from '../search/point-scan.js';
import { pageSlots } from '../search/scroll-page.js';
import { type PointQueryRequest, type QueryRequest, type QuerySource, type RecommendRequest, resolveQuery } from '../search/query-verbs.js';
import { searchSegmentParallel } from './parallel-search.js';
import { FacetCounter, type FacetHit, facetKey, MAX_FACET_LIMIT } from '../search/facet.js';
import { checkOrderBy, type OrderBy, type OrderByInput, OrderedEntries } from '../search/order-by.js';
import { checkMatrix, type Matrix, type MatrixSource, searchMatrix } from '../search/matrix.js';
import { Reservoir } from '../search/sample.js';
import { sparseToJson } from '../index/sparse/sparse-vector.js';
import { checkGrouping, type Grouping, type PointGroup, searchGroups } from '../search/groups.js';
import { runStages, type StageSource } from '../search/multi-stage.js';
import { parseStages, type StagesInput } from '../search/stage-input.js';
import type { Payload } from '../segment/point-table.js';
import { checkSelection, type PayloadOperation, payloadUpdate, type PointSelection } from './payload-operations.js';
import {
  checkIds,
  existingIdsOf,
  type PointInput,
  type PreparedPoint,
  preparePoints,
  prepareVectors,
  storedPayload,
  type VectorInput,
} from './prepare-points.js';
import { ReadWriteGate } from '../threads/read-write-gate.js';
import { sumVectors } from '../segment/sum-vectors.js';
import type { PointTableReader } from '../segment/point-table.js';
import { addRecords, addScroll, addSearch, RequestCost } from '../search/request-cost.js';
import type { CalibrationOptions, CalibrationResult } from '../segment/recall-calibration.js';
import type { ThreadWork } from '../threads/search-thread-protocol.js';
import type { SearchThreads } from '../threads/search-threads.js';
import {
  type MemoryStats,
  type RepairQueue,
  Segment,
  type SegmentInserters,
  type SegmentReader,
  type SegmentPoint,
  type SharedSegmentState,
  type StagedWrite,
} from '../segment/segment.js';
import { prepareQuery, toStoredVector } from '../search/vector-input.js';
import { VisibleChanges } from './visible-change.js';
import { spreadLiveSlots } from '../search/warm-up.js';
import { WriteQueue } from './write-queue.js';
import { parseJson } from '../core/json-text.js';
import { vectorArray } from '../core/vector-math.js';
import { boundSparseSearch, searchSparse } from '../search/sparse-search.js';
import { boundNamedSearch, namedScoresAscend, searchNamed } from '../search/named-search.js';
import { boundExampleSearch, searchByExamplesSliced } from '../search/example-search.js';
import { type NamedVectorsJson, namedVectorsJson } from '../segment/named-vectors.js';
import { type SparseVectorsJson, sparseVectorsJson } from '../segment/sparse-spaces.js';

export type { ScoredPoint, SearchExplain, SearchInput, SearchOutcome } from '../search/collection-search.js';
export type { FilterInput, FilterJson, SearchRequest } from '../search/embedded-input.js';
export type { PointInput } from './prepare-points.js';
export type { PayloadOperation, PointSelection } from './payload-operations.js';
export type { Example, PointQueryRequest, QueryRequest, RecommendRequest } from '../search/query-verbs.js';
export { PointNotFoundError, VectorNotFoundError } from '../search/query-verbs.js';
export type { Grouping, GroupId, PointGroup } from '../search/groups.js';
export type { OrderByInput } from '../search/order-by.js';
export type { FusionInput, PrefetchInput, StagesInput } from '../search/stage-input.js';
export type { DiscoverInput, RecommendInput, RecommendStrategy } from '../search/example-input.js';
export type { FormulaJson } from '../search/formula-json.js';
export type { Matrix } from '../search/matrix.js';

export interface StoredPoint {
  id: PointId;
  version: bigint;
  payload: Payload;
  vector: number[];
  /** Its sparse vectors by name, when it has any. */
  sparse_vectors?: SparseVectorsJson;
  /** Its named dense vectors beside the main one, when it has any. */
  named_vectors?: NamedVectorsJson;
}

/** A point as a page or a lookup returns it: payload and vector as asked for. */
export interface PointRecord {
  id: PointId;
  version: bigint;
  payload?: Payload;
  vector?: number[];
  /** With the vector: the point's sparse vectors by name, when it has any. */
  sparse_vectors?: SparseVectorsJson;
  /** With the vector: the point's named dense vectors beside the main one, when it has any. */
  named_vectors?: NamedVectorsJson;
  /** In a page ordered by a payload value: the value that placed it (search/order-by.ts). */
  order_value?: number;
}

export interface ScrollRequest {
  readonly filter?: FilterInput;
  /** The first id of the page (inclusive): the previous page's `next` (a number names its decimal string). */
  readonly from?: PointId | number;
  readonly limit: number;
  /** Matches to skip first (a query without a vector takes an offset; a scroll pages with `from`). */
  readonly offset?: number;
  readonly with_payload?: SearchInput['with_payload'];
  readonly with_vector?: boolean | null;
  /**
   * Order by a payload value instead of by id (search/order-by.ts): no `from` then, and no
   * `next`; a page goes on with `start_from` (`offset` skips places, for the query API).
   */
  readonly order_by?: OrderByInput | null;
}

export interface ScrollPage {
  points: PointRecord[];
  /** Where the next page starts; absent on the last page. */
  next?: PointId;
}

export interface CollectionInfo extends CollectionConfigJson {
  points_count: number;
  /** The default ef searches use and how it was chosen (search/ef-calibration.ts). */
  calibration: CalibrationInfo;
}

/** What a write may carry besides its points. */
export interface WriteOptions {
  /**
   * The log position this write brings the collection to: stored in the same transaction as the
   * write's records (even when the write changes no point), read back by `appliedPosition`.
   */
  readonly applied?: AppliedPosition;
}

/** Which points of an upsert are written: all (`upsert`), only new ones, or only existing ones (Qdrant's `update_mode`). */
export type UpdateMode = 'upsert' | 'insert_only' | 'update_only';

export interface UpsertOptions extends WriteOptions {
  /** `upsert` by default. */
  readonly mode?: UpdateMode;
  /**
   * Qdrant's `update_filter`: an existing point is rewritten only if it matches this filter as it
   * is when the write runs; new points are written regardless.
   */
  readonly condition?: FilterInput;
}

export interface VectorUpdateOptions extends WriteOptions {
  /**
   * Qdrant's `update_filter` of a vector update: a listed point whose payload does not match this
   * filter when the write runs keeps its vectors (passed over, not an error; it is not counted).
   */
  readonly condition?: FilterInput;
}

/** Every `UpdateMode`, for checking one that came as JSON (here and in a shard log's entries). */
export const UPDATE_MODES: ReadonlySet<unknown> = new Set<UpdateMode>(['upsert', 'insert_only', 'update_only']);

/** Called with problems that do not fail a request (a snapshot that could not be written or used). */
export type WarningSink = (message: string, error?: unknown) => void;

/** A graph snapshot is written once this many changes (or 10% of the graph) have accumulated. */
/** The annotation holding the collection's declared text indexes (declareTextIndex). */
const TEXT_INDEX_ANNOTATION = 'text_index';
/** Text indexes one collection may declare (each is bound into the filters that name its field). */
const MAX_TEXT_INDEXES = 64;
const SNAPSHOT_MIN_CHANGES = 20000;

/** Searches of a batch sent to the threads at once: their answers are shaped here in one turn. */
const BATCH_ROUND = 64;

/** Vectors summed between two looks at the clock (sumOfVectors on the service thread). */
const SUM_CHUNK = 256;

/** A search estimated at more units than this (about a nanosecond each) goes to a search thread even alone (isLong). */
const LONG_SEARCH_UNITS = 5_000_000;
/** Units of one filter term checked on one point (a payload lookup and a comparison). */
const FILTER_TERM_UNITS = 10;
const SNAPSHOT_SHARE = 0.1;

/**
 * A link step of a write applied in steps (applyInSteps) links as many nodes as take about this
 * long, by the collection's recent cost per node (0.15–0.5 ms at d128 from 100k to 1M points,
 * shared or not); a search arriving meanwhile waits for at most one step. While searches run
 * (one in the last SEARCHES_RECENT_MS), steps are short; without, longer, since each step costs
 * an event-loop turn and a hand-off (2 ms steps throughout cost a bulk load 10% without threads).
 */
const LINK_STEP_MS = { searching: 2, quiet: 8 };
const SEARCHES_RECENT_MS = 200;
/** The fewest nodes a link step takes: alone, and shared with threads (a hand-off is worth about a dozen inserts). */
const LINKS_PER_STEP_MIN = { alone: 4, shared: 16 };
const LINKS_PER_STEP_MAX = 512;
/**
 * A step takes its fewest nodes only while they cost less than this; beyond, one node at a time
 * (a 65,536-dimension node at m 100 costs hundreds of ms: sixteen of them held the service 2 s).
 */
const LINK_STEP_CAP_MS = 25;
/**
 * A step repairs tombstones' neighbours one neighbour at a time until it has taken this long (at
 * least one): eight tombstones at once of 65,536 dimensions at m 32 held the service 455 ms, and
 * one tombstone's neighbours together up to 100 ms.
 */
const REPAIR_STEP_MS = 10;
/** Payloads are copied into shared memory in slices of about this long (sharePayloadsInBackground). */
const SHARE_SLICE_MS = 4;
/** Points copied between two looks at the clock. */
const SHARED_PER_CHECK = 256;

/** Points whose slots are counted between two looks at the clock (a map lookup each). */
const POINTS_PER_CHECK = 256;
/**
 * Points applied to memory between two looks at the clock: a point's payload may hold thousands
 * of indexed values (a 500-number list took ~3 ms to index), so the clock is read often.
 */
const APPLIED_PER_CHECK = 4;

export class Collection {
  private segment: Segment;
  private readonly writes = new WriteQueue();
  /** Searches on threads read the segment's memory: changes to it wait for them, and they for changes. */
  private readonly gate = new ReadWriteGate();
  /** A change being made visible in slices; readers wait for it or finish it (visible-change.ts). */
  private readonly changes = new VisibleChanges(this.gate, (apply) => this.applyOrReload(apply));
  /** The segment the search threads have a view of, its key there, and the arrays they were given. */
  private posted: { readonly segment: Segment; readonly key: number; readonly state: SharedSegmentState } | undefined;
  private dropped = false;
  /**
   * The collection that took this one's place (Database.reconfigureCollection): writes queued
   * here before it did run there instead, with its configuration.
   */
  private successor: Collection | undefined;
  /** `close` was called: background work stops. */
  private closing = false;
  private readonly calibration: EfCalibration;
  /** Recent wall time per node of a link step, in ms, alone and shared with threads (applyInSteps sizes its steps by it). */
  private readonly msPerLink: { alone: number; shared: number };
  /** When the last search started (performance.now()): link steps are shorter while searches run. */
  private lastSearchAt = Number.NEGATIVE_INFINITY;
  /** The segment whose payloads are being copied into shared memory, slice by slice. */
  /** The copy of payloads into shared memory under way, and its end (true: shared; false: they will not be). */
  private payloadSharing: { readonly segment: Segment; readonly done: Promise<boolean> } | undefined;
  /** The segment whose payloads could not be shared, once the failure was logged. */
  private sharingFailureTold: Segment | undefined;
  /** Pieces of search work sent to threads: in all, and those with a filter run on the payload records. */
  private readonly threadWork = { all: 0, filtered: 0 };

  constructor(
    private readonly store: LmdbStore,
    readonly uid: number,
    readonly config: CollectionConfig,
    private lastVersion: bigint,
    private readonly warn: WarningSink = () => {},
    /** The database's search threads, when it has any (`-threads` above 1). */
    private readonly threads?: SearchThreads,
    /** Where each upsert batch's version comes from: the clock, or (a replica) a log's positions. */
    private readonly versions: VersionSource = CLOCK_VERSIONS,
    /** The applied position stored with the collection's last write that carried one. */
    private applied: AppliedPosition | undefined = undefined,
  ) {
    this.segment = new Segment(config, threads?.scratchAreas ?? 1);
    // Until steps have measured it: a 65,536-d node costs hundreds of times a 128-d one, and a
    // first step sized for 0.3 ms nodes took 53 of them (seconds) at once.
    const guessed = guessedMsPerInsert(config);
    this.msPerLink = { alone: Math.max(0.3, guessed), shared: Math.max(0.15, guessed / 2) };
    this.calibration = new EfCalibration(config, {
      reader: () => this.segment,
      offload: (options) => this.calibrationOnThread(options),
      writesIdle: () => this.writes.idle(),
      readRecord: () => this.annotations()[ANNOTATION_KEY],
      saveRecord: (record) => this.annotate(ANNOTATION_KEY, record),
      warn: (message, error) => this.warn(message, error),
    });
  }

  get name(): string {
    return this.config.name;
  }

  /** Live points; while a change is made visible, the count before it. */
  get pointsCount(): number {
    return this.changes.countBefore ?? this.segment.liveCount;
  }

  /** Writes waiting in (or running from) this collection's write queue. */
  get pendingWrites(): number {
    return this.writes.pendingWrites;
  }

  /** Where this collection's upserts take their versions (handed on when it is reloaded after a restore). */
  get versionSource(): VersionSource {
    return this.versions;
  }

  /** The log position the stored records go up to (WriteOptions.applied); undefined until a write carried one. */
  get appliedPosition(): AppliedPosition | undefined {
    return this.applied;
  }

  get distance(): Distance {
    return this.config.distance;
  }

  describe(): CollectionInfo {
    this.calibration.touch();
    return { ...configToInfo(this.config), points_count: this.pointsCount, calibration: this.calibration.info() };
  }

  /**
   * Calibrates the default ef now, synchronously, whatever the collection's size (tests and
   * benchmarks; the service calibrates in the background). Undefined for Flat collections and a
   * fixed ef_search.
   */
  calibrateEf(): CalibrationResult | undefined {
    this.changes.settleNow();
    return this.calibration.calibrateNow();
  }

  /** Loads every stored point (and the graph snapshot, when usable) into memory, at once. Start-up only. */
  load(): LoadReport {
    return runSteps(this.loadSteps());
  }

  /**
   * The same load in steps (core/steps.ts), for a caller that runs it in slices between other
   * work (the service's start-up); `progress` is updated as it goes.
   */
  *loadSteps(progress: LoadProgress = newLoadProgress()): Steps<LoadReport> {
    const report = yield* loadCollectionSteps(this.store, this.uid, this.config, this.segment, this.inserters(), progress);
    this.segment.setTextIndexes(this.readTextIndexes());
    if (report.lastVersion > this.lastVersion) this.lastVersion = report.lastVersion;
    if (report.snapshotRejected !== undefined) {
      this.warn(`collection "${this.name}": graph snapshot not used (${report.snapshotRejected}); the graph was rebuilt`);
    }
    if (report.warmUp.searches > 0) void this.warmThreads(report.warmUp.searches);
    // A graph rebuilt in good part at load is saved soon, so the next start (or backup) need not rebuild it again.
    this.scheduleSnapshot();
    return report;
  }

  /**
   * The load's warm-up (warm-up.ts) ran on this thread; the search threads get the same, in the
   * background: `searches` spread searches on stored vectors, so the first busy moments after a
   * start do not meet cold threads. Best effort: a failure here fails no request.
   */
  private async warmThreads(searches: number): Promise<void> {
    const threads = this.threads;
    if (threads === undefined) return;
    const burst: Promise<unknown>[] = [];
    for (const slot of spreadLiveSlots(this.segment.table, searches)) {
      burst.push(this.searchParallel({ vector: vectorArray(this.segment.readVector(slot)) }, { spread: true }).catch(() => undefined));
    }
    await Promise.all(burst);
  }

  /**
   * Validates the whole batch, then writes it atomically; resolves once durable and searchable.
   * `mode` and `condition` choose, when the write runs, which points are written (the others are
   * passed over, not an error); `upserted` counts the points written.
   */
  async upsert(points: readonly PointInput[], options: UpsertOptions = {}): Promise<{ upserted: number }> {
    if (!Array.isArray(points)) throw badInput('points', `expected an array of points, got ${typeof points}`);
    const applied = appliedOf(options);
    const mode = options.mode ?? 'upsert';
    if (!UPDATE_MODES.has(mode)) throw badInput('update_mode', `expected upsert, insert_only or update_only, got ${describeJson(mode)}`);
    const condition = options.condition === undefined || options.condition === null ? undefined : toFilter(options.condition, 'update_filter');
    // Checked in slices while earlier writes run; the place in the queue is taken now, so writes
    // still apply in the order they came. A bad batch fails here, before anything is written.
    const preparing = settledLater(preparePoints(points, this.config));
    const result = await this.writes.run(async () => {
      if (this.successor !== undefined) return this.successor.upsert(points, options);
      const checked = await preparing;
      this.assertLive();
      const prepared = mode === 'upsert' && condition === undefined ? checked : await this.admitted(checked, mode, condition);
      if (prepared.length === 0) {
        if (applied !== undefined) await this.writeApplied(applied);
        return { upserted: 0 };
      }
      await this.writePrepared(prepared, applied);
      return { upserted: prepared.length };
    });
    this.calibration.noteChanges(result.upserted);
    this.scheduleSnapshot();
    return result;
  }

  /** Deletes the listed ids (strings or integers, normalised by `normalizePointId`); resolves with how many existed, once durable. */
  async deleteIds(rawIds: readonly (PointId | number)[], options: WriteOptions = {}): Promise<{ deleted: number }> {
    if (!Array.isArray(rawIds)) throw badInput('points', `expected an array of ids, got ${typeof rawIds}`);
    const applied = appliedOf(options);
    const checking = settledLater(checkIds(rawIds));
    const result = await this.writes.run(async () => {
      if (this.successor !== undefined) return this.successor.deleteIds(rawIds, options);
      await checking;
      this.assertLive();
      return this.deleteExisting(await existingIdsOf(rawIds, this.segment.table), applied);
    });
    this.calibration.noteChanges(result.deleted);
    this.scheduleSnapshot();
    return result;
  }

  /**
   * Deletes every point matching the filter (an empty filter matches all); resolves with the count,
   * once durable. The filter is parsed by `parseFilter` or the JSON the REST API takes. The filter
   * is evaluated inside the write queue, on the points as every earlier write left them: replayed
   * from a log in order, it deletes the same points on every replica.
   */
  async deleteByFilter(filterInput: FilterInput, options: WriteOptions = {}): Promise<{ deleted: number }> {
    const filter = toFilter(filterInput);
    if (filter === undefined) throw badInput('filter', 'expected a filter object ({} matches every point)');
    const applied = appliedOf(options);
    const result = await this.writes.run(async () => {
      if (this.successor !== undefined) return this.successor.deleteByFilter(filterInput, options);
      this.assertLive();
      return this.deleteExisting(await matchingIds(this.segment, filter), applied);
    });
    this.calibration.noteChanges(result.deleted);
    this.scheduleSnapshot();
    return result;
  }

  /** Checked as the REST API checks a search body; `filter` is parsed by `parseFilter` or the REST JSON. */
  search(input: SearchRequest): ScoredPoint[] {
    return this.searchExplained(input).points;
  }

  /** The search and how it was answered: strategy, estimate, distances computed, exactness. */
  searchExplained(input: SearchRequest): SearchOutcome {
    this.searchStarted();
    this.changes.settleNow();
    return searchSegment(this.segment, this.config, this.calibration.calibrated, this.checkSearches([input], '')[0] as SearchInput);
  }

  /**
   * Resolves once no write is being made visible (visible-change.ts). A synchronous read after it
   * (`getPoint`, `matchingPoints`, …) then needs no rest of a change finished at once.
   */
  settled(): Promise<void> {
    return this.changes.settled();
  }

  /**
   * The service's search: the same answer as `searchExplained`, its scoring run on a search thread
   * when the database has them (docs/architecture.md, "Search threads"). A lone search runs here
   * instead — no thread has work, and either no requests queue (service-load.ts) or the search is
   * a light one (an unfiltered graph walk) — because a hand-off costs more than a small search,
   * and a lone search gains nothing from another thread. `spread`: the caller sends several
   * searches at once, so each goes to a thread even when they are idle (searchBatch does this for
   * a batch, with the batch's cost bounded as one request).
   */
  async searchParallel(input: SearchRequest, options: { readonly spread?: boolean; readonly cost?: RequestCost } = {}): Promise<SearchOutcome> {
    this.searchStarted();
    return this.runSearch(this.checkSearches([input], '', options.cost)[0] as SearchInput, options.spread === true);
  }

  /**
   * `searchParallel` for a search already checked at the edge (a route's schema, its filter
   * parsed): only its cost is bounded here. Validation runs once on every path: the REST routes
   * call this, the library's `searchParallel` checks with `checkSearchInput` first.
   */
  async searchChecked(input: SearchInput, options: { readonly spread?: boolean; readonly cost?: RequestCost } = {}): Promise<SearchOutcome> {
    this.searchStarted();
    this.boundSearches([input], '', options.cost);
    return this.runSearch(input, options.spread === true);
  }

  /**
   * Several searches of one request (a batch), each checked and the whole request's cost bounded
   * (search/request-cost.ts) before any runs; an error names its search (`searches[3].limit`).
   * With search threads, every search goes to one even when they are idle. Without, they run here
   * one after another, with a turn of the event loop whenever a slice (core/time-slices.ts) is
   * used up, so other requests are answered between them.
   */
  async searchBatch(
    inputs: readonly SearchRequest[],
    options: { readonly cost?: RequestCost; readonly paths?: readonly string[] } = {},
  ): Promise<SearchOutcome[]> {
    this.searchStarted();
    return this.runBatch(this.checkSearches(inputs, 'searches', options.cost, options.paths), options.paths);
  }

  /** `searchBatch` for searches already checked at the edge (see `searchChecked`): only the batch's cost is bounded here. */
  async searchBatchChecked(
    inputs: readonly SearchInput[],
    options: { readonly cost?: RequestCost; readonly paths?: readonly string[] } = {},
  ): Promise<SearchOutcome[]> {
    this.searchStarted();
    this.boundSearches(inputs, 'searches', options.cost, options.paths);
    return this.runBatch(inputs, options.paths);
  }

  /** Runs a batch's checked searches (searchBatch says how). */
  private async runBatch(checked: readonly SearchInput[], paths: readonly string[] | undefined): Promise<SearchOutcome[]> {
    const threads = this.threads;
    if (threads?.available === true) {
      // In rounds, so that shaping the answers of one round (on this thread) is a short turn, not the whole batch's.
      // Planning a search (the filter's estimate, its compiled form) happens here as it starts: the
      // starts are spread over turns too.
      const outcomes: SearchOutcome[] = [];
      const slices = new TimeSlices();
      for (let from = 0; from < checked.length; from += BATCH_ROUND) {
        const round: Promise<SearchOutcome>[] = [];
        for (let i = from; i < Math.min(checked.length, from + BATCH_ROUND); i++) {
          if (i > from && slices.due(0)) await slices.pause();
          let planned = (): void => {};
          const started = new Promise<void>((resolve) => {
            planned = resolve;
          });
          const search = inSearch(paths?.[i] ?? childPath('searches', i), () => this.runSearch(checked[i] as SearchInput, true, planned));
          // Awaited by Promise.all below; until then a failure must not count as unhandled (that ends the process).
          search.catch(() => {});
          search.finally(planned).catch(() => {});
          // The next search starts once this one is planned (its filter estimated and sampled, its
          // first work sent): so the slices above count the planning, which a filter of thousands
          // of terms makes milliseconds long, instead of every search of the round planning in one turn.
          await started;
          round.push(search);
        }
        outcomes.push(...(await Promise.all(round)));
      }
      return outcomes;
    }
    const outcomes: SearchOutcome[] = [];
    const slices = new TimeSlices();
    for (const [i, input] of checked.entries()) {
      // Every search is checked against the clock: one may take a whole slice.
      if (i > 0 && slices.due(0)) await slices.pause();
      if (this.dropped) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${this.name}" does not exist`);
      await this.changes.settled();
      // runSearch runs it here (no threads), a search by examples in slices of its own.
      outcomes.push(await inSearch(paths?.[i] ?? childPath('searches', i), () => this.runSearch(input, false)));
    }
    return outcomes;
  }

  /**
   * Searches of one request whose query vectors may come from stored points (query-verbs.ts): a
   * vector, a point's id, a recommendation. Each is resolved in order (its examples' cost counted
   * on `cost` before they are read), then all run as one batch (searchBatch). Errors name
   * `paths[i]` (`searches[i]` without).
   */
  async query(requests: readonly QueryRequest[], options: { readonly cost?: RequestCost; readonly paths?: readonly string[] } = {}): Promise<SearchOutcome[]> {
    const cost = options.cost ?? new RequestCost();
    const searches = await this.resolveQueries(requests, cost, options.paths);
    this.searchStarted();
    // A search by examples carries the examples the engine read (`example_query`), which no caller
    // gives and the check of a caller's fields refuses: the rest is checked, then it is put back.
    const checked = searches.map((search, i) => {
      const { example_query: examples, ...rest } = search as SearchRequest & Pick<SearchInput, 'example_query'>;
      const input = prefixErrors(searchPath('searches', options.paths, i), () => checkSearchInput(rest));
      return examples === undefined || examples === null ? input : { ...input, example_query: examples };
    });
    this.boundSearches(checked, 'searches', cost, options.paths);
    return this.runBatch(checked, options.paths);
  }

  /** `query` for searches checked at the edge (see `searchChecked`): the Qdrant port's parse checks every field. */
  async queryChecked(
    requests: readonly QueryRequest<SearchInput>[],
    options: { readonly cost?: RequestCost; readonly paths?: readonly string[] } = {},
  ): Promise<SearchOutcome[]> {
    const cost = options.cost ?? new RequestCost();
    const searches = await this.resolveQueries(requests, cost, options.paths);
    return this.searchBatchChecked(searches, { cost, ...(options.paths === undefined ? {} : { paths: options.paths }) });
  }

  /** Each query's plain search, in order, its examples' cost counted on `cost` before they are read. */
  private async resolveQueries<S extends SearchRequest>(
    requests: readonly QueryRequest<S>[],
    cost: RequestCost,
    paths: readonly string[] | undefined,
  ): Promise<S[]> {
    const source: QuerySource = {
      name: this.name,
      vectorSize: this.config.vectorSize,
      // As getPoint reads it: a change being made visible is finished first.
      vectorOf: (id) => {
        this.changes.settleNow();
        return this.vectorOf(id);
      },
      hasPoint: (id) => this.hasPoint(id),
      sumOfVectors: (ids) => this.sumOfVectors(ids),
      prepare: (vector, path) => prepareQuery(vector, this.config.vectorSize, this.config.distance, path),
      usingOf: (name) => {
        const spec = this.config.namedVectors.get(name);
        if (spec !== undefined) return { kind: 'named', size: spec.size, multivector: spec.multivector === true };
        return this.config.sparseVectors.has(name) ? { kind: 'sparse' } : undefined;
      },
      storedOf: (name, id) => {
        this.changes.settleNow();
        const slot = this.segment.table.slotOf(id);
        if (slot === undefined) return undefined;
        if (this.config.sparseVectors.has(name)) {
          return this.segment.sparse.vectorOf(name, slot);
        }
        return this.segment.named.vectorOf(name, slot);
      },
      prepareNamed: (name, vector, path) => {
        const spec = this.config.namedVectors.get(name);
        if (spec === undefined) throw badInput(path, `the collection has no named vector ${JSON.stringify(name)}`);
        return parseNamedVector(vector, spec, path);
      },
    };
    const searches: S[] = [];
    for (const [i, request] of requests.entries()) searches.push(await resolveQuery(source, request, paths?.[i] ?? childPath('searches', i), cost));
    return searches;
  }

  /**
   * A search grouped by a payload key (search/groups.ts): the best `limit` groups (10) of points
   * sharing a value there, each with its best `group_size` hits (3). The query is resolved once (a
   * point's vector, a recommendation's examples); its own limit and offset are the rounds'.
   */
  async searchGroups(query: QueryRequest, grouping: Grouping): Promise<PointGroup[]> {
    const fields = checkGrouping(grouping);
    const [resolved] = await this.resolveQueries([query], new RequestCost(), ['']);
    const { limit: _limit, offset: _offset, ...rest } = resolved as SearchRequest;
    const search = checkSearchInput(rest);
    if (search.mmr !== undefined && search.mmr !== null) throw badInput('mmr', 'a grouped search does not re-rank for diversity (MMR)');
    const selection = { with_payload: toPayloadSelector(search.with_payload, 'with_payload', true), with_vector: search.with_vector === true };
    return searchGroups(this.stageSource(), { query: { kind: 'vector', search }, ...fields, selection }, '');
  }

  /**
   * A multi-stage query (search/stage-input.ts): prefetches fused (RRF, DBSF), re-scored by a
   * query (a vector, a point, examples) or a formula, nested, every stage counted against the
   * request limits before any runs.
   */
  async queryStages(input: StagesInput): Promise<ScoredPoint[]> {
    const { stage, selection } = parseStages(input, { vectorSize: this.config.vectorSize });
    return runStages(this.stageSource(), stage, selection);
  }

  /** What the engine's multi-stage and grouped searches read of this collection. */
  private stageSource(): StageSource {
    return {
      vectorSize: this.config.vectorSize,
      pointCount: this.segment.table.liveCount,
      smallerBetter: this.config.distance === 'Euclid',
      namedAscending: (name) => {
        const spec = this.config.namedVectors.get(name);
        return spec !== undefined && namedScoresAscend(spec);
      },
      namedSize: (name) => this.config.namedVectors.get(name)?.size,
      queryChecked: async (queries, options) => (await this.queryChecked(queries, options)).map((outcome) => outcome.points),
      scroll: (request) => this.scroll(request),
      retrieve: (ids, options) => this.retrieve(ids, options),
    };
  }

  /**
   * `limit` matching points drawn uniformly at random (search/sample.ts), with payload and vector
   * as asked, in no particular order: every match is read once, in slices.
   */
  async sample(request: {
    readonly filter?: FilterInput | null;
    readonly limit: number;
    readonly with_payload?: SearchInput['with_payload'];
    readonly with_vector?: boolean | null;
  }): Promise<PointRecord[]> {
    const limit = request.limit;
    if (!Number.isInteger(limit) || limit < LIMITS.limit.min || limit > LIMITS.limit.max)
      throw badInput('limit', `expected an integer from ${LIMITS.limit.min} to ${LIMITS.limit.max}, got ${describeJson(limit)}`);
    const reservoir = new Reservoir<PointId>(limit);
    await this.scanMatches(request.filter ?? undefined, (slot, table) => reservoir.add(table.idOf(slot)));
    return this.retrieve(reservoir.items(), { with_payload: request.with_payload ?? true, with_vector: request.with_vector ?? false });
  }

  /**
   * The distance matrix (search/matrix.ts): `sample` (10) matching points drawn at random, and for
   * each its `limit` (3) nearest among them, scored exactly.
   */
  async searchMatrix(request: {
    readonly filter?: FilterInput | null;
    readonly sample?: number | null;
    readonly limit?: number | null;
    readonly using?: string | null;
  }): Promise<Matrix> {
    const { sample, limit } = checkMatrix(request);
    const filter = request.filter === undefined || request.filter === null ? undefined : toFilter(request.filter);
    const using = request.using ?? undefined;
    const source = using === undefined ? this.mainMatrixSource() : this.usedMatrixSource(using);
    return searchMatrix(source, { ...(filter === undefined ? {} : { filter }), sample, limit, ...(using === undefined ? {} : { using }) });
  }

  /** The matrix by the main vector: the sample drawn as `sample` draws it. */
  private mainMatrixSource(): MatrixSource {
    return {
      vectorSize: this.config.vectorSize,
      sample: async (where, size) =>
        (await this.sample({ ...(where === undefined ? {} : { filter: where }), limit: size, with_payload: false, with_vector: true })).map((r) => ({
          id: r.id,
          query: { vector: r.vector ?? [] },
        })),
      queryChecked: (queries, options) => this.matrixRows(queries, options),
    };
  }

  /**
   * The matrix by a named dense or sparse vector: among the points that hold it (Qdrant adds
   * `has_vector` to the filter), each row a search by the vector as stored.
   */
  private usedMatrixSource(name: string): MatrixSource {
    const spec = this.config.namedVectors.get(name);
    if (spec !== undefined) {
      return {
        vectorSize: spec.size,
        sample: async (where, size) =>
          (await this.sampleHolders(where, size, (slot) => this.segment.named.vectorOf(name, slot))).map(({ id, vector }) => {
            const rows = Array.from({ length: vector.rows }, (_, r) => vectorArray(vector.data.subarray(r * spec.size, (r + 1) * spec.size)));
            return { id, query: { named_vector: { name, vector: spec.multivector === true ? rows : (rows[0] as number[]) } } };
          }),
        queryChecked: (queries, options) => this.matrixRows(queries, options),
      };
    }
    const index = this.segment.sparse.index(name);
    if (index === undefined) throw badInput('using', `the collection has no named dense or sparse vector ${JSON.stringify(name)}`);
    return {
      vectorSize: index.widest,
      // A row scores at most the sample's points, each a dot product merging two vectors' indices
      // (or walks fewer postings than that): bounded here, before the sample is drawn.
      boundRows: (rows, cost, path) => cost.add('sparsePostings', rows * rows * 2 * index.widest, childPath(path, 'sample')),
      sample: async (where, size) =>
        (await this.sampleHolders(where, size, (slot) => this.segment.sparse.vectorOf(name, slot))).map(({ id, vector }) => ({
          id,
          query: { sparse_vector: { name, ...sparseToJson(vector) } },
        })),
      queryChecked: (queries, options) => this.matrixRows(queries, options),
    };
  }

  /** A uniform sample of the matching points that hold a vector (`vectorAt` gives it, or undefined), with the vector each holds. */
  private async sampleHolders<V>(where: Filter | undefined, size: number, vectorAt: (slot: number) => V | undefined): Promise<{ id: PointId; vector: V }[]> {
    const reservoir = new Reservoir<PointId>(size);
    await this.scanMatches(where, (slot, table) => {
      if (vectorAt(slot) !== undefined) reservoir.add(table.idOf(slot));
    });
    const out: { id: PointId; vector: V }[] = [];
    for (const id of reservoir.items()) {
      const slot = this.segment.table.slotOf(id);
      const vector = slot === undefined ? undefined : vectorAt(slot);
      if (vector !== undefined) out.push({ id, vector });
    }
    return out;
  }

  /** The matrix's rows, each an exact search checked and counted as any search is. */
  private async matrixRows(queries: readonly QueryRequest<SearchInput>[], options: { readonly cost: RequestCost; readonly paths: readonly string[] }) {
    return (await this.queryChecked(queries, options)).map((outcome) => outcome.points);
  }

  /** A search near a stored point's vector, the point left out (query-verbs.ts); ERR_POINT_NOT_FOUND when it does not exist. */
  async searchNearPoint(request: PointQueryRequest, options: { readonly cost?: RequestCost } = {}): Promise<SearchOutcome> {
    return (await this.query([{ kind: 'point', search: request }], { ...options, paths: [''] }))[0] as SearchOutcome;
  }

  /** A recommendation (average_vector; query-verbs.ts), the examples given by id left out. */
  async recommend(request: RecommendRequest, options: { readonly cost?: RequestCost } = {}): Promise<SearchOutcome> {
    return (await this.query([{ kind: 'recommend', search: request }], { ...options, paths: [''] }))[0] as SearchOutcome;
  }

  /**
   * Each search checked as the REST API checks one, then the request's cost (added to `cost` when
   * the caller counts more of the request there); errors name `paths[i]`, else `listPath[i]`.
   */
  private checkSearches(inputs: readonly SearchRequest[], listPath: string, cost = new RequestCost(), paths?: readonly string[]): SearchInput[] {
    if (!Array.isArray(inputs)) throw badInput(listPath || 'body', `expected an array of searches, got ${describeJson(inputs)}`);
    // Each search checked, then counted, in order: the first search with a problem of either kind is the one named.
    return inputs.map((input, i) => {
      const path = searchPath(listPath, paths, i);
      const checked = listPath === '' ? checkSearchInput(input) : prefixErrors(path, () => checkSearchInput(input));
      this.boundSearch(cost, checked, path);
      return checked;
    });
  }

  /** Adds searches checked at the edge to the request's cost; errors name `paths[i]`, else `listPath[i]`. */
  private boundSearches(checked: readonly SearchInput[], listPath: string, cost = new RequestCost(), paths?: readonly string[]): void {
    for (const [i, input] of checked.entries()) this.boundSearch(cost, input, searchPath(listPath, paths, i));
  }

  /** Adds one checked search to the request's cost (search/request-cost.ts), which refuses it when over the budget. */
  private boundSearch(cost: RequestCost, input: SearchInput, path: string): void {
    addSearch(cost, searchShape(input, this.config.parameters.k, this.config.vectorSize), path);
    if (input.sparse_vector !== undefined && input.sparse_vector !== null) boundSparseSearch(this.segment, this.config, input, cost, path);
    if (input.named_vector !== undefined && input.named_vector !== null) boundNamedSearch(this.segment, this.config, input, cost, path);
    if (input.example_query !== undefined && input.example_query !== null) boundExampleSearch(this.segment, this.config, input.example_query, cost, path);
  }

  /** One checked search: here, or with its scoring on the search threads (see searchParallel). */
  private async runSearch(checked: SearchInput, spread: boolean, planned?: () => void): Promise<SearchOutcome> {
    // A write being made visible in slices is finished first: a search sees it wholly or not at all.
    await this.changes.settled();
    // Sparse searches run here: their index is this thread's (search/sparse-search.ts).
    if (checked.sparse_vector !== undefined && checked.sparse_vector !== null) return searchSparse(this.segment, this.config, checked);
    if (checked.named_vector !== undefined && checked.named_vector !== null) return searchNamed(this.segment, this.config, checked);
    if (checked.example_query !== undefined && checked.example_query !== null) {
      const query = checked.example_query;
      return this.gate.read(() => searchByExamplesSliced(this.segment, this.config, checked, query));
    }
    const threads = this.threads;
    const backlogged = threads?.backlogged() === true;
    const toThread = spread || !threads?.idle || (backlogged && this.isHeavy(checked)) || this.isLong(checked);
    if (threads === undefined || !threads.available || this.dropped || !toThread) {
      return searchSegment(this.segment, this.config, this.calibration.calibrated, checked);
    }
    return this.gate.read(() => {
      const segment = this.segment;
      // A long search waits for the payloads' copy (made in slices, the service answering meanwhile)
      // rather than run its filter here: that is the stall isLong keeps off the service thread.
      const payloads = { shared: segment.payloadsShared, want: () => this.sharePayloadsInBackground(), waitForShare: this.isLong(checked) };
      return searchSegmentParallel(segment, this.config, this.calibration.calibrated, checked, (work) => this.onThread(threads, work), payloads, planned);
    });
  }

  /**
   * A search that costs several hand-offs: filtered (a filtered walk scores several times the
   * points of a plain one), exact, or on a Flat collection (a scan of every point). An unfiltered
   * graph walk costs a few hand-offs at most: sending it to a thread cost the serve bench's 16
   * clients 15–45% on two cores (bench/results/HISTORY.md, "Filters on the search threads, and
   * which searches go there").
   */
  private isHeavy(input: SearchInput): boolean {
    return !this.config.hnsw || input.params?.exact === true || (input.filter !== undefined && !isEmptyFilter(input.filter));
  }

  /**
   * A search whose scoring would hold the service thread for milliseconds even alone: a filter
   * checked on many points (its terms × the points), a scan of many vectors, or MMR's pairwise
   * scoring. It goes to a thread whatever the load, so the service keeps answering meanwhile; the
   * hand-off costs microseconds against it. The estimate counts about a nanosecond per unit.
   */
  private isLong(input: SearchInput): boolean {
    const n = this.segment.table.liveCount;
    const dim = this.config.vectorSize;
    const scan = !this.config.hnsw || input.params?.exact === true ? n * dim : 0;
    const filtered = input.filter === undefined || isEmptyFilter(input.filter) ? 0 : n * filterTerms(input.filter) * FILTER_TERM_UNITS;
    const mmr =
      input.mmr === undefined || input.mmr === null ? 0 : ((input.offset ?? 0) + (input.limit ?? this.config.parameters.k)) * input.mmr.candidates * dim;
    return scan + filtered + mmr > LONG_SEARCH_UNITS;
  }

  private searchStarted(): void {
    this.calibration.touch();
    this.lastSearchAt = performance.now();
  }

  /** Pieces of search work sent to threads since start-up: in all, and those whose filter ran on the shared payload records. */
  threadWorkCounts(): { readonly all: number; readonly filtered: number } {
    return { ...this.threadWork };
  }

  /** Sends search work to a thread, attaching this segment (or its grown arrays) first. */
  private onThread(threads: SearchThreads, work: ThreadWork): ReturnType<SearchThreads['run']> {
    this.threadWork.all++;
    if ('only' in work && work.only.kind === 'predicate') this.threadWork.filtered++;
    return threads.run(this.postSegment(threads), this.segment.header(), work);
  }

  /**
   * Copies the payloads into shared memory, in slices between other work, the first time a search
   * needs them on a thread (a filter no index answers); such searches run here meanwhile. Once
   * copied, every write keeps them in step. A collection whose filters the indexes answer never
   * pays for the copy.
   */
  private sharePayloadsInBackground(): Promise<boolean> {
    const segment = this.segment;
    if (segment.payloadSharingFailure !== undefined) {
      // Dropped by a write (the copy outgrew its limit): say so once.
      if (this.sharingFailureTold !== segment)
        this.warn(`collection "${this.name}": filters no index answers stay on the service thread`, segment.payloadSharingFailure);
      this.sharingFailureTold = segment;
      return Promise.resolve(false);
    }
    if (segment.payloadsShared) return Promise.resolve(true);
    if (this.payloadSharing?.segment === segment) return this.payloadSharing.done;
    let resolve: (shared: boolean) => void = () => {};
    const promise = new Promise<boolean>((r) => {
      resolve = r;
    });
    this.payloadSharing = { segment, done: promise };
    const finish = (shared: boolean): void => {
      this.payloadSharing = undefined;
      resolve(shared);
    };
    const slice = (): void => {
      if (this.dropped || this.closing || this.segment !== segment) {
        finish(false);
        return;
      }
      const until = performance.now() + SHARE_SLICE_MS;
      let state = segment.sharePayloads(SHARED_PER_CHECK);
      while (state === 'more' && performance.now() < until) state = segment.sharePayloads(SHARED_PER_CHECK);
      if (state === 'more') {
        setImmediate(slice);
        return;
      }
      if (state === 'done') {
        finish(true);
        return;
      }
      this.payloadSharing = undefined;
      // Failed: warn once (the call above), and answer false.
      void this.sharePayloadsInBackground().then(resolve);
    };
    setImmediate(slice);
    return promise;
  }

  /**
   * A background calibration's slices on a search thread, each one holding off writes' applies
   * as a search does (the gate); undefined without threads.
   */
  private calibrationOnThread(options: CalibrationOptions): CalibrationSlices | undefined {
    const threads = this.threads;
    if (threads === undefined || !threads.available) return undefined;
    const job = threads.newCalibrationJob();
    let started = false;
    let key = -1;
    return {
      next: (sliceMs) =>
        this.gate.read(() => {
          key = this.postSegment(threads);
          const segment = this.segment;
          const first = started ? undefined : options;
          started = true;
          return threads.calibrate(key, job, segment.header(), segment.storedVectorContext(), sliceMs, first);
        }),
      cancel: () => threads.cancelCalibration(key, job),
    };
  }

  /**
   * The threads that can insert into this segment's graph alongside a write's apply, when the
   * database has threads (index/hnsw/insert-job.ts); undefined otherwise.
   */
  private inserters(): SegmentInserters | undefined {
    const threads = this.threads;
    if (threads === undefined || !threads.available || !this.config.hnsw) return undefined;
    return { join: (job, context) => threads.insert(this.postSegment(threads), job, context) };
  }

  /** Gives the threads a view of the current segment, or its grown arrays; returns its key there. */
  private postSegment(threads: SearchThreads): number {
    const segment = this.segment;
    const state = segment.sharedState();
    let posted = this.posted;
    if (posted === undefined || posted.segment !== segment) {
      if (posted !== undefined) threads.detach(posted.key);
      const config = this.config;
      const spec = {
        dim: config.vectorSize,
        distance: config.distance,
        quantization: config.quantization,
        m: config.hnsw ? config.parameters.m : null,
        efConstruction: config.hnsw ? config.parameters.efConstruction : null,
        scratchAreas: threads.scratchAreas,
      };
      posted = { segment, key: threads.attach(spec, state), state };
    } else if (
      posted.state.graph?.layer0 !== state.graph?.layer0 ||
      posted.state.graph?.upperPool !== state.graph?.upperPool ||
      posted.state.live !== state.live ||
      posted.state.payloads !== state.payloads
    ) {
      threads.remap(posted.key, state);
      posted = { ...posted, state };
    }
    this.posted = posted;
    return posted.key;
  }

  /**
   * Visits the live points matching the filter (all without one) in slices (point-scan.ts), under
   * the read gate, so the walk sees one state and never holds the event loop long. `visit` gets a
   * slot and the table to read it from; slots mean nothing after the walk.
   */
  async scanMatches(filterInput: FilterInput | undefined, visit: (slot: number, table: PointTableReader) => void): Promise<void> {
    this.assertLive();
    const filter = filterInput === undefined ? undefined : toFilter(filterInput);
    await this.gate.read(async () => {
      const segment = this.segment;
      await scanMatches(segment, filter, (slot) => visit(slot, segment.table));
    });
  }

  /**
   * For a payload key, how many matching points hold each value (search/facet.ts): the `limit`
   * (10 by default, at most 10,000) most frequent, exactly, by count then value.
   */
  async facet(request: { readonly key: unknown; readonly filter?: FilterInput | null; readonly limit?: number | null }): Promise<FacetHit[]> {
    const field = facetKey(request.key);
    const limit = request.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_FACET_LIMIT)
      throw badInput('limit', `expected a whole number from 1 to ${MAX_FACET_LIMIT}, got ${describeJson(limit)}`);
    const counter = new FacetCounter(field);
    await this.scanMatches(request.filter ?? undefined, (slot, table) => counter.add(table.payloadOf(slot)));
    return counter.top(limit);
  }

  /** How many live points match the filter (all points without one), exactly. */
  async count(filterInput?: FilterInput): Promise<number> {
    if (filterInput === undefined) return this.pointsCount;
    let count = 0;
    await this.scanMatches(filterInput, () => {
      count++;
    });
    return count;
  }

  /**
   * A page of the matching points in id order (core/point-id.ts compareIds), starting at `from`
   * (inclusive; from the first id without it), with the id the next page starts at. The page is
   * found in the id order the point table keeps (scroll-page.ts): seek `from`, walk forward. The
   * cursor is an id, so a write between two pages neither repeats nor skips a point that exists
   * through both.
   */
  async scroll(options: ScrollRequest): Promise<ScrollPage> {
    const limit = options.limit;
    if (!Number.isInteger(limit) || limit < LIMITS.limit.min || limit > LIMITS.limit.max) {
      throw badInput('limit', `expected an integer from ${LIMITS.limit.min} to ${LIMITS.limit.max}, got ${describeJson(limit)}`);
    }
    const from = options.from === undefined ? undefined : normalizePointId(options.from, 'from');
    const offset = options.offset ?? 0;
    if (!Number.isInteger(offset) || offset < LIMITS.offset.min || offset > LIMITS.offset.max) {
      throw badInput('offset', `expected an integer from ${LIMITS.offset.min} to ${LIMITS.offset.max}, got ${describeJson(offset)}`);
    }
    const selector = toPayloadSelector(options.with_payload, 'with_payload', true);
    const shape = { offset, limit, withVector: options.with_vector === true, vectorSize: this.config.vectorSize, payloadPaths: selectorPatterns(selector) };
    addScroll(new RequestCost(), shape, '');
    const filter = options.filter === undefined ? undefined : toFilter(options.filter);
    if (options.order_by !== undefined && options.order_by !== null) {
      if (options.from !== undefined) throw badInput('order_by', 'a page in payload order goes on with order_by.start_from, not from');
      return { points: await this.orderedPage(checkOrderBy(options.order_by), offset, limit, filter, selector, options.with_vector === true) };
    }
    let points: PointRecord[] = [];
    await this.gate.read(async () => {
      const segment = this.segment;
      const table = segment.table;
      const page = await pageSlots(segment, { filter, from, skip: offset, take: limit + 1 });
      // In slices too: a page of 10,000 points with 100 payload paths each is tens of milliseconds of selecting.
      points = await mapInSlices(page.slots, (slot) => {
        const record: PointRecord = { id: table.idOf(slot), version: table.versionOf(slot) };
        const payload = selectPayload(table.payloadOf(slot), selector);
        if (payload !== undefined) record.payload = payload;
        if (options.with_vector === true) withVectors(record, segment, slot);
        return record;
      });
    });
    const next = points.length > limit ? (points.pop() as PointRecord).id : undefined;
    return next === undefined ? { points } : { points, next };
  }

  /** The `limit` places of the matching points in payload order after the first `offset`, with their records (each place one record). */
  private async orderedPage(
    order: OrderBy,
    offset: number,
    limit: number,
    filter: Filter | undefined,
    selector: PayloadSelector,
    withVector: boolean,
  ): Promise<PointRecord[]> {
    const entries = new OrderedEntries(order, offset + limit);
    await this.scanMatches(filter, (slot, table) => entries.add(table.idOf(slot), table.payloadOf(slot)));
    const first = entries.first().slice(offset);
    const records = new Map(
      (await this.retrieve([...new Set(first.map((e) => e.id))], { with_payload: selector, with_vector: withVector })).map((r) => [r.id, r]),
    );
    // A point deleted since the scan is left out, as a later page would leave it out.
    return first.flatMap((entry): PointRecord[] => {
      const record = records.get(entry.id);
      return record === undefined ? [] : [{ ...record, order_value: entry.value }];
    });
  }

  /**
   * The listed points that exist, in the order listed (each once), with payload and vector as
   * asked; the request's cost (ids, returned vectors and payload paths) is bounded first.
   */
  async retrieve(
    rawIds: readonly (PointId | number)[],
    options: { readonly with_payload?: SearchInput['with_payload']; readonly with_vector?: boolean | null } = {},
  ): Promise<PointRecord[]> {
    if (!Array.isArray(rawIds)) throw badInput('ids', `expected an array of ids, got ${describeJson(rawIds)}`);
    const selector = toPayloadSelector(options.with_payload, 'with_payload', true);
    const cost = new RequestCost();
    cost.add('ids', rawIds.length, 'ids');
    const ids = [...new Set(rawIds.map((id: unknown, i) => normalizePointId(id, childPath('ids', i))))];
    addRecords(
      cost,
      ids.length,
      { withVector: options.with_vector === true, vectorSize: this.config.vectorSize, payloadPaths: selectorPatterns(selector) },
      'ids',
    );
    // Under the read gate, so the slots read in one slice still hold the same points in the next.
    return this.gate.read(async () => {
      const segment = this.segment;
      const table = segment.table;
      const out: PointRecord[] = [];
      const slices = new TimeSlices();
      for (const [i, id] of ids.entries()) {
        if (slices.due(i)) await slices.pause();
        const slot = table.slotOf(id);
        if (slot === undefined) continue;
        const record: PointRecord = { id, version: table.versionOf(slot) };
        const payload = selectPayload(table.payloadOf(slot), selector);
        if (payload !== undefined) record.payload = payload;
        if (options.with_vector === true) withVectors(record, segment, slot);
        out.push(record);
      }
      return out;
    });
  }

  /**
   * Ids and payloads of the live points matching the filter (all points without one), in no
   * particular order. Payloads are the stored objects: callers must not change them.
   */
  matchingPoints(unbound?: Filter): { id: PointId; payload: Payload }[] {
    this.changes.settleNow();
    const segment = this.segment;
    const table = segment.table;
    const out: { id: PointId; payload: Payload }[] = [];
    if (unbound === undefined || isEmptyFilter(unbound)) {
      for (const slot of table.liveSlots()) out.push({ id: table.idOf(slot), payload: table.payloadOf(slot) });
      return out;
    }
    const filter = bindFilter(unbound, segment);
    const estimated = estimateFilter(filter, segment.payloadIndex, table.liveCount, (id) => table.slotOf(id));
    const predicate = compileFilter(filter, estimated.conditions);
    const accept = (slot: number): boolean => predicate(table.payloadOf(slot), table.idOf(slot));
    const slots = estimated.candidates !== undefined ? collectMatches(segment, estimated.candidates, accept) : [...table.liveSlots()].filter(accept);
    for (const slot of slots) out.push({ id: table.idOf(slot), payload: table.payloadOf(slot) });
    return out;
  }

  /**
   * A payload operation (set, with an optional nested `key`; overwrite; delete keys; clear) on the
   * points selected by id or by filter (collection/payload-operations.ts): checked and its cost
   * bounded before any work, then applied as `updatePayloads` applies it.
   */
  async changePayloads(selection: PointSelection, operation: PayloadOperation, options: WriteOptions = {}): Promise<{ updated: number }> {
    const update = payloadUpdate(operation);
    return this.updatePayloads(await checkSelection(selection), update, options);
  }

  /**
   * Rewrites the payloads of the selected points (listed ids, every one of which must exist, or
   * those matching a filter) through the upsert path: each point keeps its stored vector and gets
   * `update(current payload)`. All-or-nothing and durable before it resolves; an id that does not
   * exist fails the whole call (ERR_POINT_NOT_FOUND) and nothing is written. `options.applied` is
   * stored with the records (alone when no point is selected).
   */
  async updatePayloads(selector: readonly PointId[] | Filter, update: (payload: Payload) => Payload, options: WriteOptions = {}): Promise<{ updated: number }> {
    return this.rewriteSelected(selector, options, (slot, id, i) => {
      const table = this.segment.table;
      const payloadPath = childPath(childPath('points', i), 'payload');
      const payload = update(table.payloadOf(slot));
      if (!isPlainObject(payload)) throw badInput(payloadPath, 'expected an object');
      checkJsonValue(payload, payloadPath);
      return { ...this.preparedAsStored(slot, id), ...storedPayload(payload) };
    });
  }

  /**
   * Removes sparse and named vectors (by name) from the selected points (Qdrant's delete vectors),
   * as `updatePayloads` selects and rewrites them; the main dense vector cannot be removed (a
   * point has one). Names the collection does not have are a 400 before anything is written.
   */
  async deleteVectors(selector: readonly PointId[] | Filter, names: readonly string[], options: WriteOptions = {}): Promise<{ updated: number }> {
    if (!Array.isArray(names)) throw badInput('vector', `expected a list of vector names, got ${describeJson(names)}`);
    names.forEach((name, i) => {
      if (typeof name !== 'string' || (!this.config.sparseVectors.has(name) && !this.config.namedVectors.has(name))) {
        const main = name === this.config.vectorName ? ': the main dense vector cannot be removed from a point (delete the point)' : '';
        throw badInput(
          childPath('vector', i),
          `${main === '' ? `the collection has no sparse or named vector ${describeJson(name)}` : `${JSON.stringify(name)}${main}`}`,
        );
      }
    });
    const gone = new Set(names);
    const without = <V>(held: ReadonlyMap<string, V> | undefined): ReadonlyMap<string, V> | undefined => {
      if (held === undefined) return undefined;
      const kept = new Map([...held].filter(([name]) => !gone.has(name)));
      return kept.size === 0 ? undefined : kept;
    };
    return this.rewriteSelected(selector, options, (slot, id) => {
      const point = this.preparedAsStored(slot, id);
      return { ...point, sparse: without(point.sparse), named: without(point.named) };
    });
  }

  /** A point as stored, ready to be written again: its vectors and payload as they are. */
  private preparedAsStored(slot: number, id: PointId): PreparedPoint {
    return {
      id,
      stored: this.storedVectorOf(slot),
      ...storedPayload(this.segment.table.payloadOf(slot)),
      sparse: this.segment.sparse.vectorsOf(slot),
      named: this.segment.named.vectorsOf(slot),
    };
  }

  /**
   * Rewrites the selected points (listed ids, every one of which must exist, or those matching a
   * filter) through the upsert path, each as `rewrite` makes it: all or nothing, durable before it
   * resolves; an id that does not exist fails the whole call (ERR_POINT_NOT_FOUND) and nothing is
   * written. `options.applied` is stored with the records (alone when no point is selected).
   */
  private async rewriteSelected(
    selector: readonly PointId[] | Filter,
    options: WriteOptions,
    rewrite: (slot: number, id: PointId, i: number) => PreparedPoint,
  ): Promise<{ updated: number }> {
    if (Array.isArray(selector)) new RequestCost().add('ids', selector.length, 'points');
    const applied = appliedOf(options);
    const result = await this.writes.run(async () => {
      if (this.successor !== undefined) return this.successor.rewriteSelected(selector, options, rewrite);
      this.assertLive();
      const table = this.segment.table;
      const slices = new TimeSlices();
      let ids: PointId[];
      if (Array.isArray(selector)) {
        const listed = selector as readonly PointId[];
        const seen = new ShardedMap<true>();
        ids = [];
        for (let i = 0; i < listed.length; i++) {
          if (slices.due(i)) await slices.pause();
          const id = listed[i] as PointId;
          if (seen.has(id)) continue;
          seen.set(id, true);
          if (table.slotOf(id) === undefined)
            throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(id)} does not exist in collection "${this.name}"`);
          ids.push(id);
        }
      } else {
        ids = await matchingIds(this.segment, selector as Filter);
      }
      if (ids.length === 0) {
        if (applied !== undefined) await this.writeApplied(applied);
        return { updated: 0 };
      }
      const prepared: PreparedPoint[] = new Array(ids.length);
      for (let i = 0; i < ids.length; i++) {
        if (slices.due(i)) await slices.pause();
        const id = ids[i] as PointId;
        prepared[i] = rewrite(table.slotOf(id) as number, id, i);
      }
      await this.writePrepared(prepared, applied);
      return { updated: prepared.length };
    });
    this.scheduleSnapshot();
    return result;
  }

  /**
   * Replaces the vectors of existing points, keeping their payloads (Qdrant's update vectors):
   * all or nothing and durable before it resolves. An id that does not exist when the write runs
   * fails the whole call (ERR_POINT_NOT_FOUND) and nothing is written; a repeated id takes its
   * last vector. Each point gets the write's version, as an upsert's do. With `condition`, only
   * the points matching it are written (`updated` counts them).
   */
  async updateVectors(points: readonly VectorInput[], options: VectorUpdateOptions = {}): Promise<{ updated: number }> {
    const applied = appliedOf(options);
    const condition = options.condition === undefined || options.condition === null ? undefined : toFilter(options.condition, 'update_filter');
    const preparing = settledLater(prepareVectors(points, this.config));
    const result = await this.writes.run(async () => {
      if (this.successor !== undefined) return this.successor.updateVectors(points, options);
      const vectors = await preparing;
      this.assertLive();
      if (vectors.length === 0) {
        if (applied !== undefined) await this.writeApplied(applied);
        return { updated: 0 };
      }
      const table = this.segment.table;
      const matches = this.matcherOf(condition);
      const slices = new TimeSlices();
      const prepared: PreparedPoint[] = [];
      for (let i = 0; i < vectors.length; i++) {
        if (slices.due(i)) await slices.pause();
        const { id, stored, sparse, named } = vectors[i] as (typeof vectors)[number];
        const slot = table.slotOf(id);
        if (slot === undefined) throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(id)} does not exist in collection "${this.name}"`);
        if (matches !== undefined && !matches(table.payloadOf(slot), id)) continue;
        prepared.push({
          id,
          stored: stored ?? this.storedVectorOf(slot),
          ...storedPayload(table.payloadOf(slot)),
          sparse: withSparse(this.segment.sparse.vectorsOf(slot), sparse),
          named: withSparse(this.segment.named.vectorsOf(slot), named),
        });
      }
      if (prepared.length === 0) {
        if (applied !== undefined) await this.writeApplied(applied);
        return { updated: 0 };
      }
      await this.writePrepared(prepared, applied);
      return { updated: prepared.length };
    });
    this.calibration.noteChanges(result.updated);
    this.scheduleSnapshot();
    return result;
  }

  /** The points of a conditional upsert that are written, as the collection is now (inside the write queue). */
  private async admitted(points: readonly PreparedPoint[], mode: UpdateMode, condition: Filter | undefined): Promise<PreparedPoint[]> {
    const table = this.segment.table;
    const matches = this.matcherOf(condition);
    const slices = new TimeSlices();
    const out: PreparedPoint[] = [];
    for (let i = 0; i < points.length; i++) {
      if (slices.due(i)) await slices.pause();
      const point = points[i] as PreparedPoint;
      const slot = table.slotOf(point.id);
      if (slot === undefined) {
        if (mode !== 'update_only') out.push(point);
      } else if (mode !== 'insert_only' && (matches === undefined || matches(table.payloadOf(slot), point.id))) {
        out.push(point);
      }
    }
    return out;
  }

  /** A write's `update_filter` as a predicate on a stored point; undefined when every point matches. */
  private matcherOf(condition: Filter | undefined): PayloadPredicate | undefined {
    if (condition === undefined || isEmptyFilter(condition)) return undefined;
    return compileFilter(bindFilter(condition, this.segment));
  }

  /** Whether a point with this id exists. */
  hasPoint(rawId: unknown): boolean {
    return this.segment.table.slotOf(normalizePointId(rawId, 'id')) !== undefined;
  }

  /**
   * The component-wise sum of the stored vectors of `ids` (as searched: normalised under Cosine,
   * dequantized for sq8): a recommendation's examples. Under the read gate, on a search thread when
   * the service has them, else here in slices; ERR_POINT_NOT_FOUND for an id that does not exist.
   */
  async sumOfVectors(ids: readonly PointId[]): Promise<Float64Array> {
    return this.gate.read(async () => {
      const segment = this.segment;
      const slots = Int32Array.from(ids, (rawId) => {
        const slot = segment.table.slotOf(normalizePointId(rawId, 'id'));
        if (slot === undefined) throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(rawId)} does not exist in collection "${this.name}"`);
        return slot;
      });
      const threads = this.threads;
      if (threads?.available === true && !this.dropped && slots.length > 0) return (await this.onThread(threads, { kind: 'sum', slots })).hits.sims;
      const dim = this.config.vectorSize;
      const sum = new Float64Array(dim);
      const slices = new TimeSlices();
      for (let from = 0; from < slots.length; from += SUM_CHUNK) {
        if (slices.due(0)) await slices.pause();
        const part = sumVectors((slot) => segment.readVector(slot), slots.subarray(from, from + SUM_CHUNK), dim);
        for (let d = 0; d < dim; d++) sum[d] = (sum[d] as number) + (part[d] as number);
      }
      return sum;
    });
  }

  /** The vector a point is searched as (normalised under Cosine, dequantized for sq8), a copy; undefined when it does not exist. */
  vectorOf(rawId: unknown): Float32Array | undefined {
    const slot = this.segment.table.slotOf(normalizePointId(rawId, 'id'));
    return slot === undefined ? undefined : this.segment.readVector(slot);
  }

  /** One stored point, as the API shows it. */
  getPoint(rawId: unknown): StoredPoint {
    const id = normalizePointId(rawId, 'id');
    this.changes.settleNow();
    const table = this.segment.table;
    const slot = table.slotOf(id);
    if (slot === undefined) throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(id)} does not exist in collection "${this.name}"`);
    const point: StoredPoint = { id, version: table.versionOf(slot), payload: table.payloadOf(slot), vector: [] };
    withVectors(point, this.segment, slot);
    return point;
  }

  /** Memory taken by vectors and graph. */
  memoryStats(): MemoryStats {
    this.changes.settleNow();
    return this.segment.memoryStats();
  }

  /** Background calibrations started on a search thread and on the service thread. For tests and benchmarks. */
  calibrationsStarted(): { readonly onThread: number; readonly here: number } {
    return { ...this.calibration.started };
  }

  /** Graph inserts since start-up, by the writer alone and shared with insert threads. For tests and benchmarks. */
  graphInserts(): { readonly alone: number; readonly shared: number } {
    return this.segment.graphInserts();
  }

  /** Structural problems of the in-memory index; empty when sound. For tests and diagnostics. */
  checkIntegrity(): string[] {
    this.changes.settleNow();
    return this.segment.checkIntegrity();
  }

  /**
   * JSON kept with this collection, by key: the API layers' (the Qdrant port keeps its echoed
   * create options and declared payload indexes under "qdrant"), which the engine never reads, and
   * the engine's own records: "ef_calibration" (search/ef-calibration.ts) and the declared text
   * indexes under "text_index" (declareTextIndex).
   */
  annotations(): Record<string, unknown> {
    const text = this.store.readAnnotations(this.uid);
    if (text === undefined) return {};
    try {
      const value: unknown = parseJson(text);
      if (isPlainObject(value)) return value;
    } catch {
      // fall through: unreadable annotations are reported below, never guessed
    }
    throw new KithError('ERR_STORAGE_CORRUPTED', `collection "${this.name}": its annotations are not a JSON object`);
  }

  /**
   * The text indexes declared on fields (payload/text-index.ts), as their schemas were given:
   * Qdrant's TextIndexParams JSON, by field name.
   */
  textIndexSchemas(): Record<string, unknown> {
    const stored = this.annotations()[TEXT_INDEX_ANNOTATION];
    return isPlainObject(stored) ? stored : {};
  }

  /**
   * Declares (or, with undefined, removes) the text index of a payload field: from then on
   * `match.text`, `text_any` and `phrase` on that key tokenize as `schema` says, on every surface
   * (both ports read the same collection). `schema` is Qdrant's text field schema; what kith does
   * not implement is refused (ERR_BAD_INPUT, naming `path`) before anything changes. Kept durably with the
   * collection; nothing is built (text conditions are checked point by point).
   */
  async declareTextIndex(field: string, schema: unknown, path = 'field_schema'): Promise<void> {
    if (typeof field !== 'string' || field === '') throw badInput('field_name', `expected a non-empty string, got ${describeJson(field)}`);
    if (schema !== undefined) parseTextIndexParams(schema, path);
    await this.writes.run(async () => {
      this.assertLive();
      const next: Record<string, unknown> = { ...this.textIndexSchemas() };
      if (schema === undefined) delete next[field];
      else {
        if (!Object.hasOwn(next, field) && Object.keys(next).length >= MAX_TEXT_INDEXES) {
          throw badInput('field_name', `the collection already declares ${MAX_TEXT_INDEXES} text indexes, the limit; remove one first`);
        }
        next[field] = schema;
      }
      const annotations = { ...this.annotations() };
      if (Object.keys(next).length === 0) delete annotations[TEXT_INDEX_ANNOTATION];
      else annotations[TEXT_INDEX_ANNOTATION] = next;
      await this.store.writeAnnotations(this.uid, JSON.stringify(annotations));
      this.segment.setTextIndexes(this.readTextIndexes());
    });
  }

  /** The declared text indexes, resolved; a declaration that no longer reads (it was checked when made) is reported and left out. */
  private readTextIndexes(): TextIndexes {
    const out = new Map<string, TextIndexParams>();
    let schemas: Record<string, unknown>;
    try {
      schemas = this.textIndexSchemas();
    } catch (error) {
      this.warn(`collection "${this.name}": its text indexes could not be read`, error);
      return out;
    }
    for (const [field, schema] of Object.entries(schemas)) {
      try {
        out.set(field, parseTextIndexParams(schema, field));
      } catch (error) {
        this.warn(`collection "${this.name}": the text index of ${JSON.stringify(field)} is not used`, error);
      }
    }
    return out;
  }

  /** Sets (or, with undefined, removes) one annotation, durably, in write order. */
  async annotate(key: string, value: unknown): Promise<void> {
    await this.writes.run(async () => {
      if (this.successor !== undefined) return this.successor.annotate(key, value);
      this.assertLive();
      const next = { ...this.annotations() };
      if (value === undefined) delete next[key];
      else next[key] = value;
      await this.store.writeAnnotations(this.uid, JSON.stringify(next));
    });
  }

  /** Waits for queued writes, then refuses new ones with 404. */
  /**
   * Runs `task` in this collection's write order: no write runs meanwhile (they queue behind it);
   * reads go on. A reconfiguration rebuilds the collection's memory inside it.
   */
  holdWrites<T>(task: () => Promise<T>): Promise<T> {
    return this.writes.run(async () => {
      this.assertLive();
      return task();
    });
  }

  /**
   * Gives this collection's place to `next` (the same stored collection, reconfigured), from inside
   * `holdWrites`: writes queued here go there, this one stops its background work and lets the
   * search threads go once the searches on it have finished.
   */
  async handOver(next: Collection): Promise<void> {
    this.successor = next;
    this.dropped = true;
    this.calibration.stop();
    await this.gate.write(() => {
      if (this.posted !== undefined) this.threads?.detach(this.posted.key);
      this.posted = undefined;
    });
  }

  async retire(): Promise<void> {
    this.calibration.stop();
    await this.writes.run(() => {
      this.dropped = true;
    });
    // Searches already on threads hold the gate; once it is free, the threads can let go.
    await this.gate.write(() => {
      if (this.posted !== undefined) this.threads?.detach(this.posted.key);
      this.posted = undefined;
    });
  }

  /**
   * Saves the graph snapshot now if the graph changed since the last one (after the writes queued
   * before it), so that a copy of the file taken next holds it: a backup restored then takes its
   * graph from the snapshot instead of re-inserting it. A failure is a warning, as for any snapshot.
   */
  async saveSnapshot(): Promise<void> {
    await this.writes.run(() => (this.dropped || this.closing ? undefined : this.writeSnapshot(1)));
  }

  /** Finishes queued writes and saves the graph if it changed since its last snapshot. */
  async close(): Promise<void> {
    this.closing = true;
    this.calibration.stop();
    await this.writes.run(() => (this.dropped ? undefined : this.writeSnapshot(1)));
  }

  /**
   * Writes a validated batch under one new version (inside the write queue): reserve memory,
   * commit durably, then apply to memory (Flat: in slices, made visible all at once; graph: in
   * steps, applyInSteps). Records, keys and the count of new slots are computed in slices first.
   */
  private async writePrepared(prepared: readonly PreparedPoint[], position?: AppliedPosition): Promise<void> {
    const version = this.versions.next(this.lastVersion);
    if (typeof version !== 'bigint' || version <= this.lastVersion || version > MAX_VERSION) {
      throw new KithError(
        'ERR_INTERNAL',
        `collection "${this.name}": the version source gave ${String(version)}, not above the last version ${this.lastVersion}`,
      );
    }
    const slices = new TimeSlices();
    const writes: PointWrite[] = new Array(prepared.length);
    const points: SegmentPoint[] = new Array(prepared.length);
    for (let i = 0; i < prepared.length; i++) {
      if (slices.due(i)) await slices.pause();
      const p = prepared[i] as PreparedPoint;
      writes[i] = { id: p.id, record: encodePointRecord({ version, vector: p.stored, payloadJson: p.payloadJson, sparse: p.sparse, named: p.named }) };
      points[i] = { id: p.id, version, payload: p.payload, vector: p.stored, sparse: p.sparse, named: p.named };
    }
    const segment = this.segment;
    let newSlots = 0;
    for (let from = 0; from < points.length; from += POINTS_PER_CHECK) {
      if (slices.due(0)) await slices.pause();
      newSlots += segment.newSlotsAmong(points, from, Math.min(points.length, from + POINTS_PER_CHECK));
    }
    await this.gate.write(() => segment.reserveSlots(newSlots));
    await this.store.writePoints(this.uid, writes, [], version, position);
    this.lastVersion = version;
    if (position !== undefined) this.applied = position;
    if (segment.hasGraph) {
      await this.applyInSteps(segment.startUpserts(points));
      return;
    }
    let applied = 0;
    await this.changes.apply(segment.liveCount, (deadline) => {
      do {
        const to = Math.min(points.length, applied + APPLIED_PER_CHECK);
        segment.upsertFlat(points, applied, to);
        applied = to;
      } while (applied < points.length && performance.now() < deadline);
      return applied === points.length;
    });
  }

  /** Deletes `existing` (distinct ids of live points, inside the write queue): commit durably, then remove from memory in slices. */
  private async deleteExisting(existing: readonly PointId[], applied?: AppliedPosition): Promise<{ deleted: number }> {
    this.assertLive();
    if (existing.length === 0) {
      if (applied !== undefined) await this.writeApplied(applied);
      return { deleted: 0 };
    }
    await this.store.writePoints(this.uid, [], existing, undefined, applied);
    if (applied !== undefined) this.applied = applied;
    const segment = this.segment;
    const toRepair: number[] = [];
    let deleted = 0;
    await this.changes.apply(segment.liveCount, (deadline) => {
      do {
        const to = Math.min(existing.length, deleted + APPLIED_PER_CHECK);
        segment.deleteRange(existing, deleted, to, toRepair);
        deleted = to;
      } while (deleted < existing.length && performance.now() < deadline);
      return deleted === existing.length;
    });
    if (segment.hasGraph) await this.repairInSteps({ toRepair });
    return { deleted: existing.length };
  }

  /** Stores an applied position alone (a write that changed no point), durably, inside the write queue. */
  private async writeApplied(applied: AppliedPosition): Promise<void> {
    await this.store.writePoints(this.uid, [], [], undefined, applied);
    this.applied = applied;
  }

  /**
   * Applies a durable upsert to a graph collection's memory in steps (segment.ts, "writes in
   * steps"), each under the gate, with a turn of the event loop before each, so that searches (on
   * threads and here) run between them instead of waiting for the whole batch: staging and linking
   * are invisible to them; publishing is made visible all at once (visible-change.ts). Then the
   * replaced nodes' repairs and housekeeping, in steps of their own.
   */
  private async applyInSteps(staged: StagedWrite): Promise<void> {
    const segment = this.segment;
    const linkNow = this.inserters() !== undefined;
    let staging = true;
    while (staging) staging = await this.step(() => this.untilDeadline(() => segment.stageUpserts(staged, APPLIED_PER_CHECK, linkNow)));
    while (segment.linksLeft(staged) > 0) {
      await this.step(() => {
        // While searches run, the writer links alone: a step shared with a thread ends when the
        // thread's last node does, and on a busy machine that thread may not be running then.
        // So does it when a node costs so much that a shared step's fewest nodes would take long.
        const searching = performance.now() - this.lastSearchAt < SEARCHES_RECENT_MS;
        const costly = this.msPerLink.alone * LINKS_PER_STEP_MIN.shared > LINK_STEP_CAP_MS;
        const inserters = searching || costly ? undefined : this.inserters();
        const mode = inserters === undefined ? 'alone' : 'shared';
        const stepMs = searching ? LINK_STEP_MS.searching : LINK_STEP_MS.quiet;
        // The fewest nodes a step takes is one when fewer than the minimum would already fill LINK_STEP_CAP_MS.
        const fewest = this.msPerLink[mode] * LINKS_PER_STEP_MIN[mode] > LINK_STEP_CAP_MS ? 1 : LINKS_PER_STEP_MIN[mode];
        const count = Math.min(LINKS_PER_STEP_MAX, Math.max(fewest, Math.floor(stepMs / this.msPerLink[mode])));
        const linked = Math.min(count, segment.linksLeft(staged));
        const began = performance.now();
        const more = segment.linkStaged(staged, count, inserters);
        // A moving average: the cost per node grows with the graph and changes with the threads' load.
        this.msPerLink[mode] = 0.8 * this.msPerLink[mode] + (0.2 * (performance.now() - began)) / linked;
        return more;
      });
    }
    await this.changes.apply(segment.liveCount, (deadline) => !this.untilDeadline(() => segment.publishStaged(staged, APPLIED_PER_CHECK), deadline));
    await this.repairInSteps(staged);
  }

  /** Repairs a graph write's tombstones' neighbours for about REPAIR_STEP_MS at a time, then housekeeping, each a step of its own. */
  private async repairInSteps(staged: RepairQueue): Promise<void> {
    const segment = this.segment;
    let left = staged.toRepair.length > 0;
    while (left) {
      left = await this.step(() => {
        const deadline = performance.now() + REPAIR_STEP_MS;
        return segment.repairStaged(staged, () => performance.now() >= deadline);
      });
    }
    await this.step(() => segment.maintain());
  }

  /** One step of a graph write: after a turn of the event loop, under the gate (searches on threads are done or wait). */
  private async step<T>(apply: () => T): Promise<T> {
    await nextTurn();
    return this.gate.write(() => this.applyOrReload(apply));
  }

  /** Calls `more` until it returns false or the deadline (a slice from now by default) passes; returns whether more is left. */
  private untilDeadline(more: () => boolean, deadline = performance.now() + SLICE_MS): boolean {
    let left = more();
    while (left && performance.now() < deadline) left = more();
    return left;
  }

  /**
   * Applies (part of) a durable change to memory. Capacity is reserved beforehand, so this cannot
   * fail short of a bug; if it does, memory is rebuilt from the file, which already holds the
   * change, so the two agree again before the error is reported.
   */
  private applyOrReload<T>(apply: () => T): T {
    try {
      return apply();
    } catch (error) {
      this.segment = new Segment(this.config, this.threads?.scratchAreas ?? 1);
      this.load();
      throw new KithError('ERR_INDEX', `collection "${this.name}": the change is stored but updating memory failed; memory was reloaded from the file`, {
        cause: error,
      });
    }
  }

  /** Queues a snapshot write when enough has changed; failures are reported, never thrown. */
  private scheduleSnapshot(): void {
    const due = Math.max(SNAPSHOT_MIN_CHANGES, SNAPSHOT_SHARE * this.segment.graphNodes);
    if (this.segment.unsavedChanges < due) return;
    void this.writes.run(() => (this.dropped ? undefined : this.writeSnapshot(due)));
  }

  /** Writes the graph snapshot if at least `minChanges` changes are unsaved. */
  private async writeSnapshot(minChanges: number): Promise<void> {
    const segment = this.segment;
    if (segment.unsavedChanges < minChanges) return;
    // Mending connectivity before the encode may rewrite lists: not while threads search them.
    const parts = await this.gate.write(() => segment.snapshotParts());
    if (parts === undefined) return;
    try {
      await this.store.writeSnapshot(this.uid, parts);
      segment.snapshotSaved();
    } catch (error) {
      this.warn(`collection "${this.name}": graph snapshot not written; the next start-up rebuilds what it lacks`, error);
    }
  }

  /**
   * The vector to store again for a point whose payload changes. float32 collections hold exactly
   * the stored values; sq8 collections hold codes, read back dequantized here and quantized again
   * (the segment does not hand out its codes), which can move a code by one step.
   */
  private storedVectorOf(slot: number): StoredVector {
    const values = Float32Array.from(this.segment.readVector(slot));
    return this.config.quantization === 'sq8' ? toStoredVector(values, this.config.distance, 'sq8') : { encoding: 'f32', values };
  }

  private assertLive(): void {
    if (this.dropped) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${this.name}" does not exist`);
  }
}

/** The record with the slot's vectors: the dense one, and the sparse ones it has. */
function withVectors(
  record: { vector?: number[]; sparse_vectors?: SparseVectorsJson; named_vectors?: NamedVectorsJson },
  segment: SegmentReader,
  slot: number,
): void {
  record.vector = vectorArray(segment.readVector(slot));
  const sparse = segment.sparse.vectorsOf(slot);
  if (sparse !== undefined) record.sparse_vectors = sparseVectorsJson(sparse);
  const named = segment.named.vectorsOf(slot);
  if (named !== undefined) record.named_vectors = namedVectorsJson(named, (name) => segment.named.configOf(name));
}

/** A point's sparse (or named) vectors with `given` put in place of those of the same names. */
function withSparse<V>(held: ReadonlyMap<string, V> | undefined, given: ReadonlyMap<string, V> | undefined): ReadonlyMap<string, V> | undefined {
  if (given === undefined) return held;
  if (held === undefined) return given;
  return new Map([...held, ...given]);
}

/** A write's applied position, checked (ERR_BAD_INPUT naming `applied`); undefined when it carries none. */
function appliedOf(options: WriteOptions): AppliedPosition | undefined {
  return options.applied === undefined ? undefined : checkAppliedPosition(options.applied, 'applied');
}

/**
 * The promise, its failure handled now: it is awaited later (inside the write queue), and a
 * failure before then must not count as an unhandled rejection.
 */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** Where a search of a request sits: `paths[i]` when the caller names them, else `listPath[i]` (or the body, for one search). */
function searchPath(listPath: string, paths: readonly string[] | undefined, i: number): string {
  return paths?.[i] ?? (listPath === '' ? '' : childPath(listPath, i));
}
