/** Multi-stage queries on kith's port (search/stage-input.ts). */
import { Type } from 'typebox';
import { LIMITS } from '../../segment/collection-config.js';
import { Nullable } from './common.js';
import { FilterRef } from './filter.js';
import { SearchBody } from './points.js';

const FusionSchema = Type.Union(
  [
    Type.Literal('rrf'),
    Type.Literal('dbsf'),
    Type.Object(
      {
        method: Type.Literal('rrf'),
        k: Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'RRF’s k; 2 by default (Qdrant’s).' })),
        weights: Nullable(Type.Array(Type.Number({ minimum: 0 }), { description: 'One weight per prefetch; a hit at rank r adds 1 / (r / w + k − 1).' })),
      },
      { additionalProperties: false },
    ),
    Type.Object({ method: Type.Literal('dbsf') }, { additionalProperties: false }),
  ],
  { description: 'Fuse the prefetches: reciprocal rank fusion, or distribution-based score fusion (each list mapped onto [0, 1] between mean ∓ 3σ).' },
);

/** A prefetch is checked by the engine's parser (its depth and nesting are bounded there), so its schema stays open here. */
const PrefetchSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'A stage below the request: `vector`, `sparse_vector` or `named_vector` (a search; with its own prefetches, re-scoring their candidates), `fusion` (of its prefetches), or neither (its first `limit` points in id order); `prefetch`, `filter`, `limit` (10), `score_threshold`, `params`.',
  },
);

export const QueryStagesBody = Type.Object(
  {
    vector: Nullable(SearchBody.properties.vector),
    sparse_vector: SearchBody.properties.sparse_vector,
    named_vector: SearchBody.properties.named_vector,
    fusion: Nullable(FusionSchema),
    prefetch: Nullable(Type.Array(PrefetchSchema, { maxItems: 64 })),
    filter: Type.Optional(Type.Union([FilterRef, Type.Null()])),
    limit: Nullable(Type.Integer({ minimum: LIMITS.limit.min, maximum: LIMITS.limit.max, description: 'Results; 10 by default.' })),
    offset: Nullable(Type.Integer({ minimum: LIMITS.offset.min, maximum: LIMITS.offset.max, description: 'Results to skip.' })),
    score_threshold: SearchBody.properties.score_threshold,
    with_payload: SearchBody.properties.with_payload,
    with_vector: SearchBody.properties.with_vector,
    params: Nullable(
      Type.Object(
        {
          ef: Nullable(Type.Integer({ minimum: LIMITS.efSearch.min, maximum: LIMITS.efSearch.max })),
          exact: Nullable(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
