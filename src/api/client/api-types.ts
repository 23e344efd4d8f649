/**
 * The request and response types of kith's REST API, each the `Static<>` of the route schema in
 * api/schemas/ (imported as types only): the typed client, the CLI and the dashboard read them from
 * here, so a schema change that breaks one of them fails its type check (`npm run lint`, the build).
 */
import type { PrefetchStage as PrefetchStageSchema, QueryStagesBody } from '../schemas/query.js';
import type { ContextPairSchema, DiscoverBody, ExampleSchema, RecommendBody } from '../schemas/examples.js';
import type { MatrixBody, MatrixResult } from '../schemas/matrix.js';
import type { Static } from 'typebox';
import type { AliasInfoSchema, ChangeAliasesBody, ChangeAliasesResult } from '../schemas/aliases.js';
import type { DeletedSnapshot as DeletedSnapshotSchema, SnapshotInfoSchema } from '../schemas/snapshots.js';
import type { FacetBody, FacetResult } from '../schemas/facet.js';
import type { ClusterPart, ClusterState as ClusterStateSchema, ReplicaChangeBody } from '../schemas/cluster.js';
import type { CollectionInfoSchema, CreateCollectionBody, CreateCollectionResult, DropCollectionResult, UpdateCollectionBody } from '../schemas/collections.js';
import type { FilterSchema } from '../schemas/filter.js';
import type {
  CountResult,
  DeletePayloadKeysBody,
  OverwritePayloadBody,
  PayloadResult,
  PointRecordSchema,
  RetrieveBody,
  ScrollBody,
  ScrollResult,
  SetPayloadBody,
} from '../schemas/point-pages.js';
import type {
  DeleteResult,
  RecordSchema,
  GroupSearchBody,
  ScoredPointSchema,
  SearchBody,
  SearchExplainSchema,
  UpdateVectorsBody,
  UpdateVectorsResult,
  UpsertBody,
  UpsertResult,
} from '../schemas/points.js';

export type CreateCollectionRequest = Static<typeof CreateCollectionBody>;
export type CollectionInfo = Static<typeof CollectionInfoSchema>;
export type UpdateCollectionRequest = Static<typeof UpdateCollectionBody>;
export type CreatedCollection = Static<typeof CreateCollectionResult>;
export type DroppedCollection = Static<typeof DropCollectionResult>;
export type PointId = string | number;
/** One point to upsert: `id` a non-empty string or a non-negative safe integer, `vector` of the collection's dimension. */
export type PointStruct = Static<typeof UpsertBody>['points'][number];
export type Upserted = Static<typeof UpsertResult>;
/** Which points of an upsert are written (docs/api.md): `update_mode`, `update_filter` (typed). */
export type UpsertOptions = Omit<Static<typeof UpsertBody>, 'points' | 'update_filter'> & { update_filter?: Filter | null };
/** A new vector for an existing point, which keeps its payload. */
export type VectorUpdate = Static<typeof UpdateVectorsBody>['points'][number];
export type VectorsUpdated = Static<typeof UpdateVectorsResult>;
/** Which listed points' vectors are replaced (docs/api.md): those matching `update_filter` (typed). */
export type VectorUpdateOptions = { update_filter?: Filter | null };
export type Deleted = Static<typeof DeleteResult>;
/** The filter language of docs/filters.md, as JSON. */
export type Filter = Static<typeof FilterSchema>;
/** A search body (docs/api.md) whose `filter` is typed. */
export type SearchRequest = Omit<Static<typeof SearchBody>, 'filter'> & { filter?: Filter | null };
export type ScoredPoint = Static<typeof ScoredPointSchema>;
/** A grouped search: a search's fields (no offset), `group_by`, `group_size` (3) and `limit` groups (10). */
export type GroupSearchRequest = Omit<Static<typeof GroupSearchBody>, 'filter'> & { filter?: Filter | null };
/** One group of a grouped search, its hits best first. */
export type PointGroup = { id: string | number; hits: ScoredPoint[] };
/** A distance matrix request: a filter, the sample size (10) and neighbours per sampled point (3). */
export type MatrixRequest = Omit<Static<typeof MatrixBody>, 'filter'> & { filter?: Filter | null };
export type MatrixPairs = Static<typeof MatrixResult>;
/** A multi-stage query: prefetches fused or re-scored (docs/api.md, "POST /collections/{name}/points/query"). */
export type QueryStagesRequest = Omit<Static<typeof QueryStagesBody>, 'filter'> & { filter?: Filter | null };
/** A stage below a query: a query (`vector`, `point`, `recommend`, `discover`, `context`, …), `fusion` or `formula` over its own prefetches. */
export type PrefetchStage = PrefetchStageSchema;
/** An example of a search by examples: a point id (its stored vector; the point is left out) or a vector. */
export type Example = Static<typeof ExampleSchema>;
/** A context pair: points nearer `positive` than `negative` are on its good side. */
export type ContextPair = Static<typeof ContextPairSchema>;
/** A recommendation (docs/api.md): `positive` and `negative` examples, a `strategy` (average_vector), and a search's fields. */
export type RecommendRequest = Omit<Static<typeof RecommendBody>, 'filter'> & { filter?: Filter | null };
/** A discovery (`target` within `context` pairs) or, without a target, a context search; and a search's fields. */
export type DiscoverRequest = Omit<Static<typeof DiscoverBody>, 'filter'> & { filter?: Filter | null };
export type SearchExplain = Static<typeof SearchExplainSchema>;
export type PointRecord = Static<typeof RecordSchema>;
export type ScrollRequest = Omit<Static<typeof ScrollBody>, 'filter'> & { filter?: Filter | null };
export type ScrollPage = Static<typeof ScrollResult>;
export type RetrieveRequest = Static<typeof RetrieveBody>;
/** A point of a scroll page or a retrieve: payload and vector as asked for. */
export type StoredRecord = Static<typeof PointRecordSchema>;
export type Counted = Static<typeof CountResult>;
/** Which points a payload operation changes: listed ids (each must exist) or a filter's matches. */
export type PointSelection = { points: PointId[]; filter?: null } | { filter: Filter; points?: null };
export type SetPayloadRequest = Pick<Static<typeof SetPayloadBody>, 'payload' | 'key'> & PointSelection;
export type OverwritePayloadRequest = Pick<Static<typeof OverwritePayloadBody>, 'payload'> & PointSelection;
export type DeletePayloadKeysRequest = Pick<Static<typeof DeletePayloadKeysBody>, 'keys'> & PointSelection;
export type PayloadChanged = Static<typeof PayloadResult>;
export interface ServiceInfo {
  title: string;
  version: string;
}
/** How a collection's default ef was chosen (docs/params.md, "Calibrated ef"). */
export type Calibration = CollectionInfo['calibration'];
/** The filter's estimated matches (docs/filters.md); `counted` false: `expected` is a midpoint, not a count. */
export type FilterEstimate = NonNullable<SearchExplain['estimate']>;
/** GET /cluster on a cluster node: the live nodes and this node's replicas (docs/cluster.md). */
export type ClusterState = Static<typeof ClusterStateSchema>;
/** Qdrant's move_shard, replicate_shard or drop_replica (POST /collections/{name}/cluster). */
export type ReplicaChangeRequest = Static<typeof ReplicaChangeBody>;
/** One alias: another name for a collection (docs/api.md, "Aliases"). */
export type AliasInfo = Static<typeof AliasInfoSchema>;
/** One action of an alias change: `{create: {alias, collection}}`, `{delete: {alias}}` or `{rename: {from, to}}`. */
export type AliasAction = Static<typeof ChangeAliasesBody>['actions'][number];
export type AliasesChanged = Static<typeof ChangeAliasesResult>;
export type SnapshotInfo = Static<typeof SnapshotInfoSchema>;
export type DeletedSnapshot = Static<typeof DeletedSnapshotSchema>;
/** A facet request: a payload key, an optional filter (typed) and limit. */
export type FacetRequest = Omit<Static<typeof FacetBody>, 'filter'> & { filter?: Filter | null };
export type FacetHits = Static<typeof FacetResult>;
/** A collection's shards and placement, as a cluster node answers a replica change. */
export type ClusterPlacement = Static<typeof ClusterPart>['cluster'];
