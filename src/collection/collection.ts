/**
 * One collection: validate → write storage (durable) → update memory, in that order, one write
 * at a time. Searches read memory only and run synchronously, so a search sees a batch either
 * wholly or not at all.
 */
import type { Distance } from '../core/distance.js';
import { badInput, KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { parseJson } from '../core/json-text.js';
import { normalizePointId, type PointId } from '../core/point-id.js';
import { nextVersion } from '../core/version-clock.js';
import { compileFilter } from '../payload/filter-compile.js';
import { estimateFilter } from '../payload/filter-estimate.js';
import { type Filter, isEmptyFilter } from '../payload/filter-types.js';
import { checkJsonValue, isPlainObject } from '../payload/json-value.js';
import type { LmdbStore, PointWrite } from '../storage/lmdb-store.js';
import { encodePointRecord, type StoredVector } from '../storage/point-record.js';
import { type CollectionConfig, type CollectionConfigJson, configToInfo } from './collection-config.js';
import { type LoadReport, loadCollection } from './collection-load.js';
import { collectMatches, type ScoredPoint, type SearchInput, type SearchOutcome, searchSegment } from './collection-search.js';
import { ANNOTATION_KEY, type CalibrationInfo, type CalibrationSlices, EfCalibration } from './ef-calibration.js';
import { checkPointShape, checkSearchInput, type FilterInput, type SearchRequest, toFilter } from './embedded-input.js';
import { searchSegmentParallel } from './parallel-search.js';
import type { Payload } from './point-table.js';
import { ReadWriteGate } from './read-write-gate.js';
import type { CalibrationOptions, CalibrationResult } from './recall-calibration.js';
import type { ThreadWork } from './search-thread-protocol.js';
import type { SearchThreads } from './search-threads.js';
import { type MemoryStats, Segment, type SegmentInserters, type SharedSegmentState, type StagedWrite } from './segment.js';
import { parseVector, toStoredVector } from './vector-input.js';
import { spreadLiveSlots } from './warm-up.js';
import { WriteQueue } from './write-queue.js';

export type { ScoredPoint, SearchExplain, SearchInput, SearchOutcome } from './collection-search.js';
export type { FilterInput, FilterJson, SearchRequest } from './embedded-input.js';

export interface PointInput {
  readonly id: unknown;
  readonly vector: unknown;
  readonly payload?: unknown;
}

export interface StoredPoint {
  id: PointId;
  version: bigint;
  payload: Payload;
  vector: number[];
}

export interface CollectionInfo extends CollectionConfigJson {
  points_count: number;
  /** The default ef searches use and how it was chosen (collection/ef-calibration.ts). */
  calibration: CalibrationInfo;
}

/** Called with problems that do not fail a request (a snapshot that could not be written or used). */
export type WarningSink = (message: string, error?: unknown) => void;

/** A graph snapshot is written once this many changes (or 10% of the graph) have accumulated. */
const SNAPSHOT_MIN_CHANGES = 20000;
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
/** Tombstones whose neighbours one step repairs. */
const REPAIRS_PER_STEP = 8;
/** Payloads are copied into shared memory in slices of about this long (sharePayloadsInBackground). */
const SHARE_SLICE_MS = 4;
/** Points copied between two looks at the clock. */
const SHARED_PER_CHECK = 256;

/** A point validated and converted, ready to be written. */
interface PreparedPoint {
  readonly id: PointId;
  readonly stored: StoredVector;
  readonly payload: Payload;
  readonly payloadJson: string;
}

export class Collection {
  private segment: Segment;
  private readonly writes = new WriteQueue();
  /** Searches on threads read the segment's memory: changes to it wait for them, and they for changes. */
  private readonly gate = new ReadWriteGate();
  /** The segment the search threads have a view of, its key there, and the arrays they were given. */
  private posted: { readonly segment: Segment; readonly key: number; readonly state: SharedSegmentState } | undefined;
  private dropped = false;
  /** `close` was called: background work stops. */
  private closing = false;
  private readonly calibration: EfCalibration;
  /** Recent wall time per node of a link step, in ms, alone and shared with threads (applyInSteps sizes its steps by it). */
  private readonly msPerLink = { alone: 0.3, shared: 0.15 };
  /** When the last search started (performance.now()): link steps are shorter while searches run. */
  private lastSearchAt = Number.NEGATIVE_INFINITY;
  /** The segment whose payloads are being copied into shared memory, slice by slice. */
  private sharingPayloadsOf: Segment | undefined;
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
  ) {
    this.segment = new Segment(config, threads?.scratchAreas ?? 1);
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

  get pointsCount(): number {
    return this.segment.liveCount;
  }

  /** Writes waiting in (or running from) this collection's write queue. */
  get pendingWrites(): number {
    return this.writes.pendingWrites;
  }

  get distance(): Distance {
    return this.config.distance;
  }

  describe(): CollectionInfo {
    this.calibration.touch();
    return { ...configToInfo(this.config), points_count: this.segment.liveCount, calibration: this.calibration.info() };
  }

  /**
   * Calibrates the default ef now, synchronously, whatever the collection's size (tests and
   * benchmarks; the service calibrates in the background). Undefined for Flat collections and a
   * fixed ef_search.
   */
  calibrateEf(): CalibrationResult | undefined {
    return this.calibration.calibrateNow();
  }

  /** Loads every stored point (and the graph snapshot, when usable) into memory. Start-up only. */
  load(): LoadReport {
    const report = loadCollection(this.store, this.uid, this.config, this.segment, this.inserters());
    if (report.lastVersion > this.lastVersion) this.lastVersion = report.lastVersion;
    if (report.snapshotRejected !== undefined) {
      this.warn(`collection "${this.name}": graph snapshot not used (${report.snapshotRejected}); the graph was rebuilt`);
    }
    if (report.warmUp.searches > 0) void this.warmThreads(report.warmUp.searches);
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
      burst.push(this.searchParallel({ vector: Array.from(this.segment.readVector(slot)) }, { spread: true }).catch(() => undefined));
    }
    await Promise.all(burst);
  }

  /** Validates the whole batch, then writes it atomically; resolves once durable and searchable. */
  async upsert(points: readonly PointInput[]): Promise<{ upserted: number }> {
    if (!Array.isArray(points)) throw badInput('points', `expected an array of points, got ${typeof points}`);
    const prepared = this.preparePoints(points);
    const result = await this.writes.run(async () => {
      this.assertLive();
      if (prepared.length === 0) return { upserted: 0 };
      await this.writePrepared(prepared);
      return { upserted: prepared.length };
    });
    this.calibration.noteChanges(result.upserted);
    this.scheduleSnapshot();
    return result;
  }

  /** Deletes the listed ids (strings or integers, normalised by `normalizePointId`); resolves with how many existed, once durable. */
  async deleteIds(rawIds: readonly (PointId | number)[]): Promise<{ deleted: number }> {
    if (!Array.isArray(rawIds)) throw badInput('points', `expected an array of ids, got ${typeof rawIds}`);
    const ids = rawIds.map((id: unknown, i) => normalizePointId(id, childPath('points', i)));
    const result = await this.writes.run(() => this.deleteExisting(ids));
    this.calibration.noteChanges(result.deleted);
    this.scheduleSnapshot();
    return result;
  }

  /**
   * Deletes every point matching the filter (an empty filter matches all); resolves with the count,
   * once durable. The filter is parsed by `parseFilter` or the JSON the REST API takes.
   */
  async deleteByFilter(filterInput: FilterInput): Promise<{ deleted: number }> {
    const filter = toFilter(filterInput);
    if (filter === undefined) throw badInput('filter', 'expected a filter object ({} matches every point)');
    const result = await this.writes.run(() => {
      const segment = this.segment;
      const table = segment.table;
      const ids: PointId[] = [];
      if (isEmptyFilter(filter)) {
        for (const slot of table.liveSlots()) ids.push(table.idOf(slot));
        return this.deleteExisting(ids);
      }
      // The payload indexes name the candidates when they can; every candidate is checked.
      const estimated = estimateFilter(filter, segment.payloadIndex, table.liveCount, (id) => table.slotOf(id));
      const predicate = compileFilter(filter, estimated.conditions);
      const accept = (slot: number): boolean => predicate(table.payloadOf(slot), table.idOf(slot));
      if (estimated.candidates !== undefined) {
        for (const slot of collectMatches(segment, estimated.candidates, accept)) ids.push(table.idOf(slot));
      } else {
        for (const slot of table.liveSlots()) if (accept(slot)) ids.push(table.idOf(slot));
      }
      return this.deleteExisting(ids);
    });
    this.calibration.noteChanges(result.deleted);
    this.scheduleSnapshot();
    return result;
  }

  /** Checked as the REST API checks a search body; `filter` is parsed by `parseFilter` or the REST JSON. */
  search(input: SearchRequest): ScoredPoint[] {
    this.searchStarted();
    return searchSegment(this.segment, this.config, checkSearchInput(input)).points;
  }

  /** The search and how it was answered: strategy, estimate, distances computed, exactness. */
  searchExplained(input: SearchRequest): SearchOutcome {
    this.searchStarted();
    return searchSegment(this.segment, this.config, checkSearchInput(input));
  }

  /**
   * The service's search: the same answer as `searchExplained`, its scoring run on a search thread
   * when the database has them (docs/architecture.md, "Search threads"). A lone search runs here
   * instead — no thread has work, and either no requests queue (service-load.ts) or the search is
   * a light one (an unfiltered graph walk) — because a hand-off costs more than a small search,
   * and a lone search gains nothing from another thread. `spread`: the caller sends several
   * searches at once (a batch), so each goes to a thread even when they are idle.
   */
  async searchParallel(input: SearchRequest, options: { readonly spread?: boolean } = {}): Promise<SearchOutcome> {
    this.searchStarted();
    const checked = checkSearchInput(input);
    const threads = this.threads;
    const backlogged = threads?.backlogged() === true;
    if (threads === undefined || !threads.available || this.dropped || (options.spread !== true && threads.idle && !(backlogged && this.isHeavy(checked)))) {
      return searchSegment(this.segment, this.config, checked);
    }
    return this.gate.read(() => {
      const segment = this.segment;
      const payloads = { shared: segment.payloadsShared, want: () => this.sharePayloadsInBackground() };
      return searchSegmentParallel(segment, this.config, checked, (work) => this.onThread(threads, work), payloads);
    });
  }

  /**
   * A search that costs several hand-offs: filtered (a filtered walk scores several times the
   * points of a plain one), exact, or on a Flat collection (a scan of every point). An unfiltered
   * graph walk costs a few hand-offs at most: sending it to a thread cost the serve bench's 16
   * clients 30–45% on two cores (docs/benchmarks.md).
   */
  private isHeavy(input: SearchInput): boolean {
    return !this.config.hnsw || input.params?.exact === true || (input.filter !== undefined && !isEmptyFilter(input.filter));
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
    if (work.filter !== undefined) this.threadWork.filtered++;
    return threads.run(this.postSegment(threads), this.segment.header(), work);
  }

  /**
   * Copies the payloads into shared memory, in slices between other work, the first time a search
   * needs them on a thread (a filter no index answers); such searches run here meanwhile. Once
   * copied, every write keeps them in step. A collection whose filters the indexes answer never
   * pays for the copy.
   */
  private sharePayloadsInBackground(): void {
    const segment = this.segment;
    if (segment.payloadSharingFailure !== undefined) {
      // Dropped by a write (the copy outgrew its limit): say so once.
      if (this.sharingFailureTold !== segment) this.warn(`collection "${this.name}": filters no index answers stay on the service thread`, segment.payloadSharingFailure);
      this.sharingFailureTold = segment;
      return;
    }
    if (this.sharingPayloadsOf === segment || segment.payloadsShared) return;
    this.sharingPayloadsOf = segment;
    const slice = (): void => {
      if (this.dropped || this.closing || this.segment !== segment) {
        this.sharingPayloadsOf = undefined;
        return;
      }
      const until = performance.now() + SHARE_SLICE_MS;
      let state = segment.sharePayloads(SHARED_PER_CHECK);
      while (state === 'more' && performance.now() < until) state = segment.sharePayloads(SHARED_PER_CHECK);
      if (state === 'more') {
        setImmediate(slice);
        return;
      }
      this.sharingPayloadsOf = undefined;
      if (state === 'failed') this.sharePayloadsInBackground();
    };
    setImmediate(slice);
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
   * Ids and payloads of the live points matching the filter (all points without one), in no
   * particular order. Payloads are the stored objects: callers must not change them.
   */
  matchingPoints(filter?: Filter): { id: PointId; payload: Payload }[] {
    const segment = this.segment;
    const table = segment.table;
    const out: { id: PointId; payload: Payload }[] = [];
    if (filter === undefined || isEmptyFilter(filter)) {
      for (const slot of table.liveSlots()) out.push({ id: table.idOf(slot), payload: table.payloadOf(slot) });
      return out;
    }
    const estimated = estimateFilter(filter, segment.payloadIndex, table.liveCount, (id) => table.slotOf(id));
    const predicate = compileFilter(filter, estimated.conditions);
    const accept = (slot: number): boolean => predicate(table.payloadOf(slot), table.idOf(slot));
    const slots = estimated.candidates !== undefined ? collectMatches(segment, estimated.candidates, accept) : [...table.liveSlots()].filter(accept);
    for (const slot of slots) out.push({ id: table.idOf(slot), payload: table.payloadOf(slot) });
    return out;
  }

  /**
   * Rewrites the payloads of the selected points (listed ids, every one of which must exist, or
   * those matching a filter) through the upsert path: each point keeps its stored vector and gets
   * `update(current payload)`. All-or-nothing and durable before it resolves; an id that does not
   * exist fails the whole call (ERR_POINT_NOT_FOUND) and nothing is written.
   */
  async updatePayloads(selector: readonly PointId[] | Filter, update: (payload: Payload) => Payload): Promise<{ updated: number }> {
    const result = await this.writes.run(async () => {
      this.assertLive();
      const table = this.segment.table;
      let ids: PointId[];
      if (Array.isArray(selector)) {
        ids = [...new Set(selector as readonly PointId[])];
        const missing = ids.find((id) => table.slotOf(id) === undefined);
        if (missing !== undefined) throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(missing)} does not exist in collection "${this.name}"`);
      } else {
        ids = this.matchingPoints(selector as Filter).map((p) => p.id);
      }
      if (ids.length === 0) return { updated: 0 };
      const prepared = ids.map((id, i) => {
        const slot = table.slotOf(id) as number;
        const payloadPath = childPath(childPath('points', i), 'payload');
        const payload = update(table.payloadOf(slot));
        if (!isPlainObject(payload)) throw badInput(payloadPath, 'expected an object');
        checkJsonValue(payload, payloadPath);
        const payloadJson = JSON.stringify(payload);
        return { id, stored: this.storedVectorOf(slot), payload: parseJson(payloadJson) as Payload, payloadJson };
      });
      await this.writePrepared(prepared);
      return { updated: prepared.length };
    });
    this.scheduleSnapshot();
    return result;
  }

  /** One stored point, as the API shows it. */
  getPoint(rawId: unknown): StoredPoint {
    const id = normalizePointId(rawId, 'id');
    const table = this.segment.table;
    const slot = table.slotOf(id);
    if (slot === undefined) throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(id)} does not exist in collection "${this.name}"`);
    return { id, version: table.versionOf(slot), payload: table.payloadOf(slot), vector: Array.from(this.segment.readVector(slot)) };
  }

  /** Memory taken by vectors and graph. */
  memoryStats(): MemoryStats {
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
    return this.segment.checkIntegrity();
  }

  /**
   * JSON the API layers keep with this collection, by key (the Qdrant port keeps its echoed create
   * options and declared payload indexes under "qdrant"); the engine never reads it.
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

  /** Sets (or, with undefined, removes) one annotation, durably, in write order. */
  async annotate(key: string, value: unknown): Promise<void> {
    await this.writes.run(async () => {
      this.assertLive();
      const next = { ...this.annotations() };
      if (value === undefined) delete next[key];
      else next[key] = value;
      await this.store.writeAnnotations(this.uid, JSON.stringify(next));
    });
  }

  /** Waits for queued writes, then refuses new ones with 404. */
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

  /** Finishes queued writes and saves the graph if it changed since its last snapshot. */
  async close(): Promise<void> {
    this.closing = true;
    this.calibration.stop();
    await this.writes.run(() => (this.dropped ? undefined : this.writeSnapshot(1)));
  }

  private preparePoints(points: readonly PointInput[]): PreparedPoint[] {
    const dim = this.config.vectorSize;
    const byId = new Map<PointId, PreparedPoint>();
    points.forEach((point, i) => {
      const at = childPath('points', i);
      checkPointShape(point, at);
      const id = normalizePointId(point.id, childPath(at, 'id'));
      const vector = parseVector(point.vector, dim, childPath(at, 'vector'));
      const payloadPath = childPath(at, 'payload');
      const payload = point.payload ?? {};
      if (!isPlainObject(payload)) throw badInput(payloadPath, 'expected an object');
      checkJsonValue(payload, payloadPath);
      const stored = toStoredVector(vector, this.config.distance, this.config.quantization);
      // A repeated id: the last occurrence wins, as if the batch were applied in order.
      byId.delete(id);
      // Memory holds what the record holds, parsed back: a caller changing its object later changes
      // nothing, and answers are the same before and after a restart (-0 becomes 0 in both).
      const payloadJson = JSON.stringify(payload);
      byId.set(id, { id, stored, payload: parseJson(payloadJson) as Payload, payloadJson });
    });
    return [...byId.values()];
  }

  /**
   * Writes a validated batch under one new version (inside the write queue): reserve memory,
   * commit durably, then apply to memory in one turn.
   */
  private async writePrepared(prepared: readonly PreparedPoint[]): Promise<void> {
    const version = nextVersion(this.lastVersion);
    const writes: PointWrite[] = prepared.map((p) => ({
      id: p.id,
      record: encodePointRecord({ version, vector: p.stored, payloadJson: p.payloadJson }),
    }));
    await this.gate.write(() => this.segment.reserveFor(prepared.map((p) => ({ id: p.id, vector: p.stored }))));
    await this.store.writePoints(this.uid, writes, [], version);
    this.lastVersion = version;
    const points = prepared.map((p) => ({ id: p.id, version, payload: p.payload, vector: p.stored }));
    if (this.segment.hasGraph) {
      await this.applyInSteps(() => this.segment.stageUpserts(points, this.inserters() !== undefined));
      return;
    }
    await this.gate.write(() =>
      this.applyOrReload(() => {
        this.segment.upsertMany(points);
        this.segment.maintain();
      }),
    );
  }

  private async deleteExisting(ids: readonly PointId[]): Promise<{ deleted: number }> {
    this.assertLive();
    const existing = [...new Set(ids)].filter((id) => this.segment.table.slotOf(id) !== undefined);
    if (existing.length === 0) return { deleted: 0 };
    await this.store.writePoints(this.uid, [], existing);
    if (this.segment.hasGraph) {
      await this.applyInSteps(() => this.segment.stageDeletes(existing));
      return { deleted: existing.length };
    }
    await this.gate.write(() =>
      this.applyOrReload(() => {
        this.segment.deleteMany(existing);
        this.segment.maintain();
      }),
    );
    return { deleted: existing.length };
  }

  /**
   * Applies a durable change to a graph collection's memory in steps (segment.ts, "writes in
   * steps"), each under the gate, with a turn of the event loop before each, so that searches (on
   * threads and here) run between them instead of waiting for the whole batch; they see the batch
   * wholly or not at all. Then housekeeping, in a step of its own.
   */
  private async applyInSteps(stage: () => StagedWrite): Promise<void> {
    const step = async <T>(apply: () => T): Promise<T> => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      return this.gate.write(() => this.applyOrReload(apply));
    };
    const staged = await step(stage);
    while (staged.toLink.length > 0) {
      await step(() => {
        // While searches run, the writer links alone: a step shared with a thread ends when the
        // thread's last node does, and on a busy machine that thread may not be running then.
        const searching = performance.now() - this.lastSearchAt < SEARCHES_RECENT_MS;
        const inserters = searching ? undefined : this.inserters();
        const mode = inserters === undefined ? 'alone' : 'shared';
        const stepMs = searching ? LINK_STEP_MS.searching : LINK_STEP_MS.quiet;
        const count = Math.min(LINKS_PER_STEP_MAX, Math.max(LINKS_PER_STEP_MIN[mode], Math.floor(stepMs / this.msPerLink[mode])));
        const linked = Math.min(count, staged.toLink.length);
        const began = performance.now();
        const more = this.segment.linkStaged(staged, count, inserters);
        // A moving average: the cost per node grows with the graph and changes with the threads' load.
        this.msPerLink[mode] = 0.8 * this.msPerLink[mode] + (0.2 * (performance.now() - began)) / linked;
        return more;
      });
    }
    await step(() => this.segment.publishStaged(staged));
    while (staged.toRepair.length > 0) await step(() => this.segment.repairStaged(staged, REPAIRS_PER_STEP));
    await step(() => this.segment.maintain());
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
      throw new KithError(
        'ERR_INDEX',
        `collection "${this.name}": the change is stored but updating memory failed; memory was reloaded from the file`,
        { cause: error },
      );
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
