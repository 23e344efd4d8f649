/**
 * What the Qdrant port's routes read and change: one node's database (`localStore`), or a
 * cluster's collections (cluster-store.ts). The routes parse Qdrant's bodies into the engine's
 * inputs (parsed filters, payload selectors, queries) and hand them here; each store runs them its
 * own way, so the Qdrant dialect is written once for both.
 */
import { parseKeyPath } from '../../payload/filter-parse.js';
import type { KeyPath } from '../../payload/filter-types.js';
import { someValueAt } from '../../payload/json-value.js';
import type { OrderByInput } from '../../search/order-by.js';
import type { PayloadOperation, PointInput, PointRecord, ScrollPage, StoredPoint, UpdateMode } from '../../collection/collection.js';
import type { VectorInput } from '../../collection/prepare-points.js';
import type { CollectionConfigInput } from '../../segment/collection-config.js';
import type { QdrantAliases } from './aliases.js';
import { isKithError } from '../../core/errors.js';
import type { PointId } from '../../core/point-id.js';
import type { Database } from '../../db/database.js';
import type { Filter } from '../../payload/filter-types.js';
import type { NamedVectorConfigJson } from '../../segment/named-vector-config.js';
import type { PayloadSelector } from '../../payload/payload-selector.js';
import type { ScoredPoint, SearchInput } from '../../search/collection-search.js';
import type { QueryRequest } from '../../search/query-verbs.js';
import type { RequestCost } from '../../search/request-cost.js';
import type { FacetHit } from '../../search/facet.js';
import type { Matrix } from '../../search/matrix.js';
import type { CollectionChange } from '../../db/database.js';

/** What the Qdrant port shows of a collection's configuration and size. */
export interface QdrantCollectionFacts {
  readonly vector_size: number;
  readonly distance: 'Cosine' | 'Euclid' | 'Dot';
  readonly hnsw: boolean;
  readonly parameters: { readonly m: number; readonly ef_construction: number };
  readonly quantization: 'none' | 'sq8';
  readonly points_count: number;
  /** The dense vector's name, when it has one (vector-layout.ts). */
  readonly vector_name?: string | undefined;
  /** The sparse vectors' names and modifiers, when the collection has some. */
  readonly sparse_vectors?: Readonly<Record<string, { readonly modifier: 'none' | 'idf' }>> | undefined;
  /** The dense vectors beside the main one, when the collection has some. */
  readonly named_vectors?: Readonly<Record<string, NamedVectorConfigJson>> | undefined;
  /** A cluster's collection: its shards and replicas (one node: absent, Qdrant's 1 and 1). */
  readonly sharding?: { readonly shard_number: number; readonly replication_factor: number };
}

export interface QdrantScroll {
  readonly limit: number;
  readonly offset?: number;
  readonly from?: PointId;
  readonly filter?: Filter;
  readonly with_payload: PayloadSelector;
  readonly with_vector: boolean;
  /** Order by a payload value (search/order-by.ts; checked): no `from`, `offset` or next page then. */
  readonly order_by?: OrderByInput;
}

/** One collection, as the Qdrant routes use it. */
export interface QdrantCollection {
  readonly name: string;
  facts(): Promise<QdrantCollectionFacts>;
  /** What the Qdrant port keeps with the collection (its options and declared payload fields). */
  extras(): unknown;
  saveExtras(extras: unknown): Promise<void>;
  /**
   * Declares (schema) or removes (undefined) a field's text index with the engine, which then
   * answers `match.text`/`text_any`/`phrase` on it by tokens (Collection.declareTextIndex); absent
   * on a cluster node, whose replicas keep the unindexed behaviour (docs/qdrant.md).
   */
  declareTextIndex?(field: string, schema: unknown): Promise<void>;
  /** The text indexes the engine has declared, by field (some through kith's port); absent on a cluster node. */
  textIndexSchemas?(): Record<string, unknown>;
  /**
   * Per declared field (a payload path: `a.b`, `tags[]`), the points holding a value there other
   * than null or an empty list: what Qdrant's index on it holds (GET …/collections/{name}'s
   * payload_schema[f].points).
   */
  pointsWithValues(fields: readonly string[]): Promise<number[]>;
  /** `options`: Qdrant's update_mode and update_filter (Collection.upsert). */
  upsert(points: readonly PointInput[], options?: { readonly mode?: UpdateMode; readonly condition?: Filter }): Promise<void>;
  /** New vectors for existing points, which keep their payloads; ERR_POINT_NOT_FOUND (nothing written) for a missing one. */
  /** `options.condition`: Qdrant's update_filter (Collection.updateVectors). */
  updateVectors(points: readonly VectorInput[], options?: { readonly condition?: Filter }): Promise<void>;
  retrieve(ids: readonly PointId[], options: { readonly with_payload: PayloadSelector; readonly with_vector: boolean }): Promise<PointRecord[]>;
  /** The point with its payload and vector; undefined when there is none. */
  findPoint(id: PointId): Promise<StoredPoint | undefined>;
  deleteIds(ids: readonly PointId[]): Promise<void>;
  deleteByFilter(filter: Filter): Promise<void>;
  scroll(request: QdrantScroll): Promise<ScrollPage>;
  count(filter: Filter | undefined): Promise<number>;
  /** New index parameters, the collection rebuilt with them (Database.reconfigureCollection); absent on a cluster node. */
  reconfigure?(change: CollectionChange): Promise<void>;
  /** The distance matrix (search/matrix.ts); absent on a cluster node. */
  searchMatrix?(request: { readonly filter?: Filter; readonly sample: number; readonly limit: number; readonly using?: string }): Promise<Matrix>;
  /** Matching points drawn at random (search/sample.ts); absent on a cluster node. */
  sample?(request: {
    readonly filter?: Filter;
    readonly limit: number;
    readonly with_payload: PayloadSelector;
    readonly with_vector: boolean;
  }): Promise<PointRecord[]>;
  /** Value counts of a payload key over the matching points (search/facet.ts); absent on a cluster node. */
  facet?(request: { readonly key: string; readonly filter?: Filter; readonly limit: number }): Promise<FacetHit[]>;
  /** The queries' hits, in order, every query bounded by `cost` before any runs. */
  queryChecked(
    queries: readonly QueryRequest<SearchInput>[],
    options: { readonly cost: RequestCost; readonly paths: readonly string[] },
  ): Promise<ScoredPoint[][]>;
  changePayloads(selection: { readonly points: readonly PointId[] } | { readonly filter: Filter }, operation: PayloadOperation): Promise<void>;
  /** Removes sparse and named vectors from the selected points; absent on a cluster node (its points have one vector). */
  deleteVectors?(selector: readonly PointId[] | Filter, names: readonly string[]): Promise<void>;
}

/** Qdrant's `consistency` of a read, as a store takes it: one replica (eventual) or the log's latest (strong). */
export type QdrantRead = 'eventual' | 'strong';

export interface QdrantStore {
  /** Still loading its collections (the probes say so; everything else waits). */
  readonly loading: boolean;
  list(): Promise<string[]>;
  /** Creates the collection with the Qdrant port's extras; `sharding` on a cluster (absent: its defaults). */
  create(config: CollectionConfigInput, extras: unknown, sharding: { readonly shard_number?: number; readonly replication_factor?: number }): Promise<void>;
  drop(name: string): Promise<void>;
  /** ERR_COLLECTION_NOT_FOUND when there is none. */
  collection(name: string, read: QdrantRead): Promise<QdrantCollection>;
}

/** The key of the Qdrant port's extras among a collection's annotations. */
export const QDRANT_EXTRAS = 'qdrant';

/** One node's aliases (db/aliases.ts). */
export function localAliases(db: Database): QdrantAliases {
  return {
    list: () => db.aliases(),
    of: (name) => {
      try {
        return db.aliasesOf(name);
      } catch (error) {
        if (isKithError(error) && error.code === 'ERR_COLLECTION_NOT_FOUND') return [];
        throw error;
      }
    },
    change: (actions) => db.changeAliases(actions),
  };
}

/** One node's database. */
export function localStore(db: Database): QdrantStore {
  return {
    get loading() {
      return db.loading;
    },
    list: async () => db.list().map((c) => c.name),
    create: async (config, extras) => {
      await db.createCollection(config);
      await db.collection(config.name).annotate(QDRANT_EXTRAS, extras);
    },
    drop: (name) => db.dropCollection(name),
    collection: async (name) => {
      const collection = db.collection(name);
      return {
        // Its own name: `name` may be an alias of it.
        name: collection.name,
        facts: async () => collection.describe(),
        extras: () => collection.annotations()[QDRANT_EXTRAS],
        saveExtras: (extras) => collection.annotate(QDRANT_EXTRAS, extras),
        declareTextIndex: (field, schema) => collection.declareTextIndex(field, schema),
        textIndexSchemas: () => collection.textIndexSchemas(),
        pointsWithValues: async (fields) => {
          const paths = fields.map((field) => parseKeyPath(field, 'field_name'));
          const counts = new Array<number>(paths.length).fill(0);
          // One pass for every field: a point counts for a field when a value other than null or [] is at its path.
          await collection.scanMatches(undefined, (slot, table) => {
            const payload = table.payloadOf(slot);
            for (let f = 0; f < paths.length; f++) {
              const path = paths[f] as KeyPath;
              if (someValueAt(payload, path.key, path.parts, hasValue, path.projections)) counts[f] = (counts[f] as number) + 1;
            }
          });
          return counts;
        },
        upsert: async (points, options = {}) => {
          await collection.upsert(points, options);
        },
        updateVectors: async (points, options = {}) => {
          await collection.updateVectors(points, options);
        },
        retrieve: (ids, options) => collection.retrieve(ids, options),
        findPoint: async (id) => {
          try {
            return collection.getPoint(id);
          } catch (error) {
            if (isKithError(error) && error.code === 'ERR_POINT_NOT_FOUND') return undefined;
            throw error;
          }
        },
        deleteIds: async (ids) => {
          await collection.deleteIds(ids);
        },
        deleteByFilter: async (filter) => {
          await collection.deleteByFilter(filter);
        },
        scroll: (request) => collection.scroll(request),
        count: (filter) => collection.count(filter),
        facet: (request) => collection.facet(request),
        searchMatrix: (request) => collection.searchMatrix(request),
        reconfigure: async (change) => {
          await db.reconfigureCollection(collection.name, change);
        },
        sample: (request) => collection.sample(request),
        queryChecked: async (queries, options) => (await collection.queryChecked(queries, options)).map((outcome) => outcome.points),
        deleteVectors: async (selector, names) => {
          await collection.deleteVectors(selector, names);
        },
        changePayloads: async (selection, operation) => {
          await collection.changePayloads(selection, operation);
        },
      };
    },
  };
}

/** A value an index would hold: not null, not an empty list. */
function hasValue(value: unknown): boolean {
  return value !== null && !(Array.isArray(value) && value.length === 0);
}
