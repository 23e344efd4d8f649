/**
 * One collection: validate → write storage (durable) → update memory, in that order, one write
 * at a time. Searches read memory only and run synchronously, so a search sees a batch either
 * wholly or not at all.
 */
import { type Distance, passesThreshold, scoresAscend, similarityToScore } from '../core/distance.js';
import { badInput, KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { normalizePointId, type PointId } from '../core/point-id.js';
import { nextVersion } from '../core/version-clock.js';
import { FlatIndex } from '../index/flat/flat-index.js';
import type { SearchHits, VectorIndex } from '../index/vector-index.js';
import { createKernel } from '../kernels/distance-kernel.js';
import { VectorArena } from '../kernels/vector-arena.js';
import { compileFilter } from '../payload/filter-compile.js';
import { type Filter, isEmptyFilter } from '../payload/filter-types.js';
import { checkJsonValue, isPlainObject } from '../payload/json-value.js';
import type { LmdbStore, PointWrite } from '../storage/lmdb-store.js';
import { decodePointRecord, encodePointRecord, type StoredVector } from '../storage/point-record.js';
import { type CollectionConfig, type CollectionConfigJson, configToJson } from './collection-config.js';
import { type Payload, PointTable } from './point-table.js';
import { parseVector, prepareQuery, searchableVector, toStoredVector } from './vector-input.js';
import { WriteQueue } from './write-queue.js';

export interface PointInput {
  readonly id: unknown;
  readonly vector: unknown;
  readonly payload?: unknown;
}

export interface SearchInput {
  readonly vector: unknown;
  readonly limit?: number | null;
  readonly offset?: number | null;
  /** Parsed with `parseFilter`; absent or empty means every point. */
  readonly filter?: Filter;
  readonly score_threshold?: number | null;
  readonly with_payload?: boolean | readonly string[] | null;
  readonly with_vector?: boolean | null;
  readonly params?: { readonly ef?: number | null; readonly exact?: boolean | null } | null;
}

export interface ScoredPoint {
  id: PointId;
  version: bigint;
  score: number;
  payload?: Payload;
  vector?: number[];
}

export interface StoredPoint {
  id: PointId;
  version: bigint;
  payload: Payload;
  vector: number[];
}

export interface CollectionInfo extends CollectionConfigJson {
  points_count: number;
}

/** A point validated and converted, ready to be written. */
interface PreparedPoint {
  readonly id: PointId;
  readonly stored: StoredVector;
  readonly searchable: Float32Array;
  readonly payload: Payload;
  readonly payloadJson: string;
}

export class Collection {
  private readonly table = new PointTable();
  private readonly arena: VectorArena;
  private readonly flat: FlatIndex;
  private readonly index: VectorIndex;
  private readonly writes = new WriteQueue();
  private dropped = false;

  constructor(
    private readonly store: LmdbStore,
    readonly uid: number,
    readonly config: CollectionConfig,
    private lastVersion: bigint,
  ) {
    this.arena = new VectorArena(config.vectorSize);
    this.flat = new FlatIndex(this.arena, createKernel(this.arena, config.distance), this.table);
    this.index = this.flat;
  }

  get name(): string {
    return this.config.name;
  }

  get pointsCount(): number {
    return this.table.liveCount;
  }

  get distance(): Distance {
    return this.config.distance;
  }

  describe(): CollectionInfo {
    return { ...configToJson(this.config), points_count: this.table.liveCount };
  }

  /** Loads every stored point into memory (start-up). */
  load(): void {
    const dim = this.config.vectorSize;
    for (const { id, record } of this.store.scanPoints(this.uid)) {
      const where = `${this.name}/${JSON.stringify(id)}`;
      const decoded = decodePointRecord(record, dim, where);
      let payload: unknown;
      try {
        payload = JSON.parse(decoded.payloadJson);
      } catch (error) {
        throw new KithError('ERR_STORAGE_CORRUPTED', `point record ${where}: payload is not JSON`, { cause: error });
      }
      if (!isPlainObject(payload)) throw new KithError('ERR_STORAGE_CORRUPTED', `point record ${where}: payload is not an object`);
      this.reserve(1);
      this.applyUpsert(id, decoded.version, payload, searchableVector(decoded.vector, this.config.distance));
      if (decoded.version > this.lastVersion) this.lastVersion = decoded.version;
    }
  }

  /** Validates the whole batch, then writes it atomically; resolves once durable and searchable. */
  async upsert(points: readonly PointInput[]): Promise<{ upserted: number }> {
    const prepared = this.preparePoints(points);
    return this.writes.run(async () => {
      this.assertLive();
      if (prepared.length === 0) return { upserted: 0 };
      const version = nextVersion(this.lastVersion);
      const writes: PointWrite[] = prepared.map((p) => ({
        id: p.id,
        record: encodePointRecord({ version, vector: p.stored, payloadJson: p.payloadJson }),
      }));
      const newIds = prepared.reduce((n, p) => (this.table.slotOf(p.id) === undefined ? n + 1 : n), 0);
      this.reserve(newIds);
      await this.store.writePoints(this.uid, writes, [], version);
      this.lastVersion = version;
      this.applyOrReload(() => {
        for (const p of prepared) this.applyUpsert(p.id, version, p.payload, p.searchable);
      });
      return { upserted: prepared.length };
    });
  }

  /** Deletes the listed ids (normalised by `normalizePointId`); resolves with how many existed, once durable. */
  async deleteIds(ids: readonly PointId[]): Promise<{ deleted: number }> {
    return this.writes.run(() => this.deleteExisting(ids));
  }

  /** Deletes every point matching the filter (an empty filter matches all); resolves with the count, once durable. */
  async deleteByFilter(filter: Filter): Promise<{ deleted: number }> {
    const predicate = isEmptyFilter(filter) ? undefined : compileFilter(filter);
    return this.writes.run(() => {
      const ids: PointId[] = [];
      for (const slot of this.table.liveSlots()) {
        if (predicate === undefined || predicate(this.table.payloadOf(slot))) ids.push(this.table.idOf(slot));
      }
      return this.deleteExisting(ids);
    });
  }

  search(input: SearchInput): ScoredPoint[] {
    const query = prepareQuery(input.vector, this.config.vectorSize, this.config.distance);
    const filter = input.filter;
    const limit = input.limit ?? this.config.parameters.k;
    const offset = input.offset ?? 0;
    const k = offset + limit;
    if (this.table.liveCount === 0) return [];

    this.arena.setQuery(query);
    const predicate = filter === undefined || isEmptyFilter(filter) ? undefined : compileFilter(filter);
    const accept = predicate === undefined ? undefined : (slot: number) => predicate(this.table.payloadOf(slot));
    const useExact = input.params?.exact === true || this.index.kind === 'flat';
    const hits = (useExact ? this.flat : this.index).search({ k, accept, ef: input.params?.ef ?? undefined });
    return this.toScoredPoints(hits, input, offset, limit);
  }

  /** One stored point, as the API shows it. */
  getPoint(rawId: unknown): StoredPoint {
    const id = normalizePointId(rawId, 'id');
    const slot = this.table.slotOf(id);
    if (slot === undefined) throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(id)} does not exist in collection "${this.name}"`);
    return {
      id,
      version: this.table.versionOf(slot),
      payload: this.table.payloadOf(slot),
      vector: Array.from(this.arena.read(slot)),
    };
  }

  /** Waits for queued writes, then refuses new ones with 404. */
  async retire(): Promise<void> {
    await this.writes.run(() => {
      this.dropped = true;
    });
  }

  /** Resolves when every write queued so far has finished. */
  async idle(): Promise<void> {
    await this.writes.idle();
  }

  private preparePoints(points: readonly PointInput[]): PreparedPoint[] {
    const dim = this.config.vectorSize;
    const byId = new Map<PointId, PreparedPoint>();
    points.forEach((point, i) => {
      const at = childPath('points', i);
      const id = normalizePointId(point.id, childPath(at, 'id'));
      const vector = parseVector(point.vector, dim, childPath(at, 'vector'));
      const payloadPath = childPath(at, 'payload');
      const payload = point.payload ?? {};
      if (!isPlainObject(payload)) throw badInput(payloadPath, 'expected an object');
      checkJsonValue(payload, payloadPath);
      const stored = toStoredVector(vector, this.config.distance, this.config.quantization);
      // A repeated id: the last occurrence wins, as if the batch were applied in order.
      byId.delete(id);
      byId.set(id, {
        id,
        stored,
        searchable: searchableVector(stored, this.config.distance),
        payload,
        payloadJson: JSON.stringify(payload),
      });
    });
    return [...byId.values()];
  }

  private async deleteExisting(ids: readonly PointId[]): Promise<{ deleted: number }> {
    this.assertLive();
    const existing = [...new Set(ids)].filter((id) => this.table.slotOf(id) !== undefined);
    if (existing.length === 0) return { deleted: 0 };
    await this.store.writePoints(this.uid, [], existing);
    this.applyOrReload(() => {
      for (const id of existing) {
        const slot = this.table.slotOf(id);
        if (slot === undefined) continue;
        this.index.remove(slot);
        this.table.delete(id);
      }
    });
    return { deleted: existing.length };
  }

  /** Grows every per-slot structure for `newPoints` more ids, before storage is touched. */
  private reserve(newPoints: number): void {
    const slots = this.table.slotsNeededFor(newPoints);
    this.arena.reserve(slots);
    this.table.reserve(slots);
  }

  private applyUpsert(id: PointId, version: bigint, payload: Payload, vector: Float32Array): void {
    const slot = this.table.upsert(id, version, payload);
    this.arena.write(slot, vector);
    this.index.add(slot);
  }

  /**
   * Applies a durable change to memory. Capacity is reserved beforehand, so this cannot fail short
   * of a bug; if it does, memory is rebuilt from the file, which already holds the change, so the
   * two agree again before the error is reported.
   */
  private applyOrReload(apply: () => void): void {
    try {
      apply();
    } catch (error) {
      this.reloadFromStore();
      throw new KithError(
        'ERR_INDEX',
        `collection "${this.name}": the change is stored but updating memory failed; memory was reloaded from the file`,
        { cause: error },
      );
    }
  }

  private reloadFromStore(): void {
    for (const slot of [...this.table.liveSlots()]) {
      this.index.remove(slot);
      this.table.delete(this.table.idOf(slot));
    }
    this.load();
  }

  private assertLive(): void {
    if (this.dropped) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${this.name}" does not exist`);
  }

  private toScoredPoints(hits: SearchHits, input: SearchInput, offset: number, limit: number): ScoredPoint[] {
    const distance = this.config.distance;
    const ascending = scoresAscend(distance);
    const ranked: Array<{ slot: number; score: number; id: PointId }> = [];
    for (let i = 0; i < hits.slots.length; i++) {
      const slot = hits.slots[i] as number;
      ranked.push({ slot, score: similarityToScore(distance, hits.sims[i] as number), id: this.table.idOf(slot) });
    }
    // Converting similarities to distances can round two values to one; re-sort so ties break by id.
    ranked.sort((a, b) => (a.score !== b.score ? (ascending ? a.score - b.score : b.score - a.score) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const threshold = input.score_threshold;
    const withPayload = input.with_payload ?? true;
    const out: ScoredPoint[] = [];
    for (const hit of ranked.slice(offset, offset + limit)) {
      if (threshold !== undefined && threshold !== null && !passesThreshold(distance, hit.score, threshold)) break;
      const point: ScoredPoint = { id: hit.id, version: this.table.versionOf(hit.slot), score: hit.score };
      if (withPayload !== false) point.payload = selectPayload(this.table.payloadOf(hit.slot), withPayload);
      if (input.with_vector === true) point.vector = Array.from(this.arena.read(hit.slot));
      out.push(point);
    }
    return out;
  }
}

/** `with_payload: true` gives the whole payload; a list of keys gives just those top-level keys. */
function selectPayload(payload: Payload, selection: true | readonly string[]): Payload {
  if (selection === true) return payload;
  const out: Payload = {};
  for (const key of selection) if (Object.hasOwn(payload, key)) out[key] = payload[key];
  return out;
}
