/**
 * A restore: points written with the versions they carry (a `kith export` read back), instead of
 * the new version every upsert hands out, so that export → import gives the same collection,
 * versions included.
 *
 * The collection leaves the registry for the whole restore (requests get 404): its records are
 * written batch by batch, each batch durable and all or nothing, straight to the store; `finish`
 * then loads the collection again from the file (as a start-up does, reusing what of the graph
 * snapshot still matches). If the process dies mid-way, the file holds whole batches and opens as
 * usual; running the same restore again gives the same records.
 */
import type { AppliedPosition } from '../core/applied-position.js';
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { normalizePointId } from '../core/point-id.js';
import { MAX_VERSION, type VersionSource } from '../core/version-clock.js';
import { Collection, type WarningSink } from '../collection/collection.js';
import { parseNamedVectors, parseSparseVectors } from '../collection/prepare-points.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import type { LoadReport } from '../collection/collection-load.js';
import type { SearchThreads } from '../threads/search-threads.js';
import { parseVector, toStoredVector } from '../search/vector-input.js';
import type { LmdbStore, PointWrite } from '../storage/lmdb-store.js';
import { encodePointRecord, type StoredVector } from '../storage/point-record.js';

export interface RestorePoint {
  readonly id: unknown;
  /** The point's version: a bigint from 1 to 2^64 − 1. */
  readonly version: bigint;
  readonly vector: unknown;
  /**
   * A plain JSON object. Checked here for shape only: the caller has checked it as a payload
   * (nesting depth, forbidden keys: payload/json-value.ts `checkJsonValue`, which db/ may not import).
   */
  readonly payload?: unknown;
  /** Sparse vectors by name, as an upsert takes them: `{name: {indices, values}}`, names the collection has. */
  readonly sparse_vectors?: unknown;
  /** Named dense vectors by name, as an upsert takes them (a vector, or a multi-vector's rows). */
  readonly named_vectors?: unknown;
}

/** Under Cosine a stored vector is normalised; an exported one already is, and normalising it again could move its last bits. */
const UNIT_TOLERANCE = 1e-6;

export class RestoreSession {
  private finished: Promise<Collection> | undefined;

  constructor(
    private readonly store: LmdbStore,
    private readonly uid: number,
    private readonly config: CollectionConfig,
    private lastVersion: bigint,
    private readonly warn: WarningSink | undefined,
    private readonly reinstate: (collection: Collection, report: LoadReport) => void,
    /** The database's search threads, handed to the collection loaded at the end. */
    private readonly threads?: SearchThreads,
    /** The collection's version source and applied position, handed on to the collection loaded at the end. */
    private readonly log: { readonly versions?: VersionSource; readonly applied?: AppliedPosition | undefined } = {},
  ) {}

  /** Validates the whole batch, then writes it all or nothing; resolves once durable. */
  async write(points: readonly RestorePoint[]): Promise<number> {
    if (this.finished !== undefined) throw new Error('the restore has finished');
    const byId = new Map<string, PointWrite>();
    let batchMax = 0n;
    points.forEach((point, i) => {
      const at = childPath('points', i);
      if (typeof point !== 'object' || point === null) throw badInput(at, 'expected an object');
      const id = normalizePointId(point.id, childPath(at, 'id'));
      const version = point.version;
      if (typeof version !== 'bigint' || version < 1n || version > MAX_VERSION)
        throw badInput(childPath(at, 'version'), 'expected an integer from 1 to 2^64 − 1');
      const vector = parseVector(point.vector, this.config.vectorSize, childPath(at, 'vector'));
      const payload = point.payload ?? {};
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw badInput(childPath(at, 'payload'), 'expected an object');
      const sparse = parseSparseVectors(point.sparse_vectors, this.config, childPath(at, 'sparse_vectors'));
      const named = parseNamedVectors(point.named_vectors, this.config, childPath(at, 'named_vectors'));
      if (version > batchMax) batchMax = version;
      byId.delete(id);
      byId.set(id, { id, record: encodePointRecord({ version, vector: this.stored(vector), payloadJson: JSON.stringify(payload), sparse, named }) });
    });
    if (batchMax > this.lastVersion) this.lastVersion = batchMax;
    await this.store.writePoints(this.uid, [...byId.values()], [], this.lastVersion);
    return byId.size;
  }

  /** Loads the collection from the file and puts it back in the registry. Idempotent. */
  finish(): Promise<Collection> {
    this.finished ??= (async () => {
      const collection = new Collection(this.store, this.uid, this.config, this.lastVersion, this.warn, this.threads, this.log.versions, this.log.applied);
      const report = collection.load();
      this.reinstate(collection, report);
      return collection;
    })();
    return this.finished;
  }

  private stored(vector: Float32Array): StoredVector {
    if (this.config.distance === 'Cosine' && this.config.quantization === 'none') {
      let norm = 0;
      for (const x of vector) norm += x * x;
      if (Math.abs(Math.sqrt(norm) - 1) <= UNIT_TOLERANCE) return { encoding: 'f32', values: vector };
    }
    return toStoredVector(vector, this.config.distance, this.config.quantization);
  }
}
