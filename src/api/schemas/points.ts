/** Request and response schemas of the point endpoints (upsert, delete, get, search). */
import { MAX_GROUPED_HITS } from '../../search/group-limits.js';
import { Type } from 'typebox';
import { PAYLOAD_SELECTOR_LIMITS } from '../../payload/payload-selector.js';
import { LIMITS } from '../../segment/collection-config.js';
import { Nullable, PayloadSchema, PointIdSchema, VersionSchema, WriteToken } from './common.js';
import { FilterRef } from './filter.js';

const { patterns: MAX_PATHS, patternLength: MAX_PATH_LENGTH } = PAYLOAD_SELECTOR_LIMITS;
const PayloadPaths = Type.Array(Type.String({ maxLength: MAX_PATH_LENGTH }), {
  maxItems: MAX_PATHS,
  description: `Payload paths (\`country.name\`, \`cities[].name\`, a top-level key as written): at most ${MAX_PATHS}, each at most ${MAX_PATH_LENGTH} characters.`,
});

/** `with_payload`: what of each payload an answer carries (payload/payload-selector.ts). */
export const WithPayloadSchema = Nullable(
  Type.Union(
    [
      Type.Boolean(),
      PayloadPaths,
      Type.Object({ include: PayloadPaths }, { additionalProperties: false }),
      Type.Object({ exclude: PayloadPaths }, { additionalProperties: false }),
    ],
    {
      default: true,
      description:
        'true (all), false (none), a list of payload paths to return, {"include": […]} (the same) or {"exclude": […]} (all but those paths); nested paths select and hide nested values, as in Qdrant.',
    },
  ),
);

/** Qdrant's sparse vector: indices with one value each. */
export const SparseVectorSchema = Type.Object(
  {
    indices: Type.Array(Type.Integer({ minimum: 0, maximum: 4294967295 }), { description: 'Distinct indices (any order), 0 to 2^32 − 1.' }),
    values: Type.Array(Type.Number(), { description: 'One finite value per index.' }),
  },
  { additionalProperties: false },
);

const SparseVectors = Type.Record(Type.String(), SparseVectorSchema, {
  description: "Sparse vectors by name (names the collection's `sparse_vectors` declares); a point may have any of them.",
});

/** A named dense vector's value: a vector, or a multi-vector's rows. */
const NamedVectorValue = Type.Union([Type.Array(Type.Number()), Type.Array(Type.Array(Type.Number()))], {
  description: "A vector of the name's size, or a multi-vector's rows (1–1,024 vectors of that size).",
});

export const NamedVectorsSchema = Type.Record(Type.String(), NamedVectorValue, {
  description: "Named dense vectors beside the main one, by name (names the collection's `named_vectors` declares); a point may have any of them.",
});

const PointStruct = Type.Object(
  {
    id: PointIdSchema,
    vector: Type.Array(Type.Number(), { description: 'Exactly vector_size finite numbers (magnitude at most 1e16).' }),
    sparse_vectors: Nullable(SparseVectors),
    named_vectors: Nullable(NamedVectorsSchema),
    payload: Nullable(PayloadSchema),
    version: Type.Optional(Type.Unknown({ description: 'Ignored: the service sets versions.' })),
  },
  { additionalProperties: false },
);

export const UpsertBody = Type.Object(
  {
    points: Type.Array(PointStruct, { description: 'Applied all-or-nothing; a repeated id: the last one wins.' }),
    update_mode: Type.Optional(
      Type.Union([Type.Literal('upsert'), Type.Literal('insert_only'), Type.Literal('update_only')], {
        description: 'Which points are written: all (default), only new ids, or only ids that exist; the others are passed over.',
      }),
    ),
    update_filter: Type.Optional(
      Type.Union([FilterRef, Type.Null()], {
        description: 'An existing point is rewritten only if it matches this filter when the write runs; new points are written regardless.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpsertResult = Type.Object({
  operation: Type.Literal('completed'),
  upserted: Type.Integer({ description: 'Distinct points written.' }),
  write_token: WriteToken,
});

export const UpdateVectorsBody = Type.Object(
  {
    points: Type.Array(
      Type.Object(
        {
          id: PointIdSchema,
          vector: Type.Optional(Type.Array(Type.Number(), { description: 'The new vector: exactly vector_size finite numbers (magnitude at most 1e16).' })),
          sparse_vectors: Type.Optional(SparseVectors),
          named_vectors: Type.Optional(NamedVectorsSchema),
        },
        { additionalProperties: false, description: 'A vector, sparse vectors, named vectors or any of them; what is not named stays as it is.' },
      ),
      { description: 'Existing points (a missing one fails the whole request, 404); each keeps its payload. A repeated id: the last vector wins.' },
    ),
    update_filter: Type.Optional(
      Type.Union([FilterRef, Type.Null()], {
        description:
          'A listed point keeps its vectors unless it matches this filter when the write runs (passed over, not counted; a missing id is still a 404).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateVectorsResult = Type.Object({
  operation: Type.Literal('completed'),
  updated: Type.Integer({ description: 'Distinct points whose vector was replaced.' }),
  write_token: WriteToken,
});

export const DeletePointsBody = Type.Object(
  {
    points: Nullable(Type.Array(PointIdSchema, { description: 'Ids to delete.' })),
    filter: Type.Optional(Type.Union([FilterRef, Type.Null()])),
  },
  { additionalProperties: false, description: 'Exactly one of points or filter.' },
);

export const DeleteResult = Type.Object({
  operation: Type.Literal('completed'),
  deleted: Type.Integer({ description: 'Points that existed and were deleted.' }),
  write_token: WriteToken,
});

export const PointParams = Type.Object({ name: Type.String(), id: Type.String() });

export const RecordSchema = Type.Object({
  id: Type.String(),
  version: VersionSchema,
  payload: PayloadSchema,
  vector: Type.Array(Type.Number()),
  sparse_vectors: Type.Optional(Type.Record(Type.String(), SparseVectorSchema)),
  named_vectors: Type.Optional(NamedVectorsSchema),
});

export const SearchBody = Type.Object(
  {
    vector: Type.Optional(
      Type.Array(Type.Number(), { description: 'The query; exactly vector_size numbers. Required unless sparse_vector or named_vector is given.' }),
    ),
    sparse_vector: Nullable(
      Type.Object(
        { name: Type.String({ description: 'A sparse vector name of the collection.' }), ...SparseVectorSchema.properties },
        { additionalProperties: false, description: 'Search by this sparse vector instead (exact; scores are dot products, larger is better).' },
      ),
    ),
    named_vector: Nullable(
      Type.Object(
        { name: Type.String({ description: 'A named vector of the collection.' }), vector: NamedVectorValue },
        {
          additionalProperties: false,
          description:
            "Search by this named vector instead (exact; a multi-vector's rows are scored by max_sim, the sum over them of the best score against any stored row).",
        },
      ),
    ),
    limit: Nullable(
      Type.Integer({ minimum: LIMITS.limit.min, maximum: LIMITS.limit.max, description: "Results to return; default: the collection's k (10)." }),
    ),
    offset: Nullable(Type.Integer({ minimum: LIMITS.offset.min, maximum: LIMITS.offset.max, default: 0, description: 'Results to skip.' })),
    filter: Type.Optional(Type.Union([FilterRef, Type.Null()])),
    score_threshold: Nullable(Type.Number({ description: 'Cosine/Dot: keep scores >= this; Euclid: keep distances <= this.' })),
    with_payload: WithPayloadSchema,
    with_vector: Nullable(Type.Boolean({ default: false, description: 'Return the stored vector (normalised for Cosine, dequantized for sq8).' })),
    mmr: Nullable(
      Type.Object(
        {
          diversity: Type.Number({ minimum: 0, maximum: 1, description: '0: by relevance alone; 1: by diversity alone (Qdrant’s MMR).' }),
          candidates: Type.Integer({
            minimum: LIMITS.mmrCandidates.min,
            maximum: LIMITS.mmrCandidates.max,
            description: 'The nearest points the picks are made among (at least offset + limit are taken).',
          }),
        },
        {
          additionalProperties: false,
          description:
            'Maximal marginal relevance: the hits re-picked, each maximising (1 − diversity) · relevance − diversity · its highest similarity to those picked before; by the main, a named or a sparse vector.',
        },
      ),
    ),
    params: Nullable(
      Type.Object(
        {
          ef: Nullable(Type.Integer({ minimum: LIMITS.efSearch.min, maximum: LIMITS.efSearch.max, description: 'HNSW beam width for this request.' })),
          exact: Nullable(Type.Boolean({ description: 'Exact search (full scan) even on an HNSW collection.' })),
          explain: Nullable(
            Type.Boolean({ description: 'Add `explain` to the response: the strategy taken, the filter estimate, distances computed, exactness.' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const EstimateSchema = Type.Object({
  min: Type.Number(),
  expected: Type.Number(),
  max: Type.Number(),
  counted: Type.Boolean({
    description: 'false: some condition could not be counted from the payload indexes, so only min and max bound the matches and expected is a midpoint.',
  }),
});

export const SearchExplainSchema = Type.Object(
  {
    strategy: Type.Union(
      [Type.Literal('graph'), Type.Literal('flat-scan'), Type.Literal('candidates-exact'), Type.Literal('graph-filtered'), Type.Literal('sparse-index')],
      {
        description:
          'graph: HNSW; flat-scan: every point; candidates-exact: the points the payload indexes name; graph-filtered: HNSW walk returning only matches; sparse-index: a sparse vector inverted index.',
      },
    ),
    fallback: Type.Boolean({ description: 'The filtered walk came back short and the matches were scored exactly instead.' }),
    estimate: Type.Union([EstimateSchema, Type.Null()], { description: 'Matching points estimated from the payload indexes (null without a filter).' }),
    candidates: Type.Union([Type.Integer(), Type.Null()], { description: 'Slots the payload indexes named (a superset of the matches).' }),
    sample: Type.Union([Type.Object({ size: Type.Integer(), matched: Type.Integer() }), Type.Null()], {
      description: 'The random sample that decided when the estimate straddled the threshold.',
    }),
    scored: Type.Integer({ description: 'Distances computed.' }),
    exact: Type.Boolean({ description: 'Whether the answer is exact.' }),
    indexed_keys: Type.Array(Type.String(), { description: 'Payload keys whose indexes were consulted.' }),
    ef: Type.Union([Type.Integer(), Type.Null()], { description: 'HNSW beam width a graph walk uses (at least offset + limit); null for Flat collections.' }),
    ef_source: Type.Union([Type.Literal('request'), Type.Literal('collection'), Type.Literal('calibrated'), Type.Literal('default'), Type.Null()], {
      description:
        'request: params.ef; collection: ef_search given at create; calibrated: measured for target_recall; default: ef_search 64, not calibrated yet.',
    }),
  },
  { description: 'How the search was answered (params.explain).' },
);

export const ScoredPointSchema = Type.Object(
  {
    id: Type.String(),
    version: VersionSchema,
    score: Type.Number({ description: 'Cosine similarity, dot product, or L2 distance.' }),
    payload: Type.Optional(PayloadSchema),
    vector: Type.Optional(Type.Array(Type.Number())),
    sparse_vectors: Type.Optional(Type.Record(Type.String(), SparseVectorSchema)),
    named_vectors: Type.Optional(NamedVectorsSchema),
  },
  { description: 'One search hit, best first.' },
);

/** A grouped search (search/groups.ts): a search's fields, but `limit` counts groups and there is no offset. */
export const GroupSearchBody = Type.Object(
  {
    vector: Type.Array(Type.Number(), { description: 'The query; exactly vector_size numbers.' }),
    filter: SearchBody.properties.filter,
    score_threshold: SearchBody.properties.score_threshold,
    with_payload: SearchBody.properties.with_payload,
    with_vector: SearchBody.properties.with_vector,
    params: Nullable(
      Type.Object(
        {
          ef: Nullable(Type.Integer({ minimum: LIMITS.efSearch.min, maximum: LIMITS.efSearch.max, description: 'HNSW beam width for every round.' })),
          exact: Nullable(Type.Boolean({ description: 'Exact search (full scan) even on an HNSW collection.' })),
        },
        { additionalProperties: false },
      ),
    ),
    group_by: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'The payload key whose values group the hits (a filter key: `a.b`, `tags[]`); its values must be strings or whole numbers.',
    }),
    group_size: Nullable(Type.Integer({ minimum: 1, maximum: MAX_GROUPED_HITS, description: 'Hits per group; 3 by default.' })),
    limit: Nullable(
      Type.Integer({ minimum: 1, maximum: MAX_GROUPED_HITS, description: `Groups; 10 by default. limit × group_size is at most ${MAX_GROUPED_HITS}.` }),
    ),
  },
  { additionalProperties: false },
);

export const PointGroupSchema = Type.Object(
  {
    id: Type.Union([Type.String(), Type.Integer()], { description: 'The value the group shares: a string or a whole number (1 and "1" are two groups).' }),
    hits: Type.Array(ScoredPointSchema, { description: "The group's best hits, best first." }),
  },
  { description: 'One group, groups ordered by their best hit.' },
);

/** Searches in one batch request: each is bounded like a single search, so the batch bounds their number. */
export const MAX_BATCH_SEARCHES = 4096;

export const SearchBatchBody = Type.Object(
  {
    searches: Type.Array(SearchBody, {
      minItems: 1,
      maxItems: MAX_BATCH_SEARCHES,
      description: `Search bodies (at most ${MAX_BATCH_SEARCHES}), answered in parallel; one result list each, in order.`,
    }),
  },
  { additionalProperties: false },
);
