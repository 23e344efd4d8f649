/** Multi-stage queries on kith's port (search/stage-input.ts). */
import { type Static, Type } from 'typebox';
import { LIMITS } from '../../segment/collection-config.js';
import type { FormulaJson } from '../../search/formula-json.js';
import { Nullable, PointIdSchema } from './common.js';
import { ContextPairSchema, DiscoverSchema, ExampleUsing, RecommendSchema } from './examples.js';
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

/** A formula's expression: checked by the engine's parser (search/formula-parse.ts), its size bounded there. */
const FormulaSchema = Type.Unsafe<FormulaJson>({
  description:
    'An expression over the prefetches’ scores (`$score`, `$score[i]`), payload keys, filter conditions (1 or 0), numbers, and `{sum}`, `{mult}`, `{div}`, `{pow}`, `{neg}`, `{abs}`, `{sqrt}`, `{exp}`, `{log10}`, `{ln}`, `{geo_distance}`, `{datetime}`, `{datetime_key}`, `{lin_decay}`, `{exp_decay}`, `{gauss_decay}` (Qdrant’s expression JSON); at most 1,024 nodes, 64 deep.',
});

/** What a stage may ask for, at the top of the request or in a prefetch. */
const StageFields = {
  vector: Nullable(SearchBody.properties.vector),
  sparse_vector: SearchBody.properties.sparse_vector,
  named_vector: SearchBody.properties.named_vector,
  point: Nullable(PointIdSchema),
  recommend: Nullable(RecommendSchema),
  discover: Nullable(DiscoverSchema),
  context: Nullable(Type.Array(ContextPairSchema, { description: 'A context search: points on the good side of every pair score 0, the others less.' })),
  using: ExampleUsing,
  fusion: Nullable(FusionSchema),
  formula: Nullable(FormulaSchema),
  defaults: Nullable(
    Type.Record(Type.String(), Type.Unknown(), { description: 'Values of the formula’s variables (payload keys, `$score[i]`) for points that lack them.' }),
  ),
  filter: Type.Optional(Type.Union([FilterRef, Type.Null()])),
  limit: Nullable(Type.Integer({ minimum: LIMITS.limit.min, maximum: LIMITS.limit.max, description: 'Results; 10 by default.' })),
  score_threshold: SearchBody.properties.score_threshold,
  params: Nullable(
    Type.Object(
      {
        ef: Nullable(Type.Integer({ minimum: LIMITS.efSearch.min, maximum: LIMITS.efSearch.max })),
        exact: Nullable(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
  ),
};

/** A prefetch as a client writes it: a stage's fields and its own prefetches. */
export type PrefetchStage = Partial<Static<ReturnType<typeof Type.Object<typeof StageFields>>>> & { prefetch?: PrefetchStage[] | null };

/** A prefetch is checked by the engine's parser (its depth and nesting are bounded there), so its schema stays open here. */
const PrefetchSchema = Type.Unsafe<PrefetchStage>({
  type: 'object',
  additionalProperties: true,
  description:
    'A stage below the request: a query (`vector`, `sparse_vector`, `named_vector`, `point`, `recommend`, `discover` or `context`: a search; with its own prefetches, re-scoring their candidates), `fusion` or `formula` (with `defaults`) over its prefetches, or none of these (its first `limit` points in id order); `prefetch`, `filter`, `limit` (10), `score_threshold`, `params`.',
});

export const QueryStagesBody = Type.Object(
  {
    ...StageFields,
    prefetch: Nullable(Type.Array(PrefetchSchema, { maxItems: 64 })),
    offset: Nullable(Type.Integer({ minimum: LIMITS.offset.min, maximum: LIMITS.offset.max, description: 'Results to skip.' })),
    with_payload: SearchBody.properties.with_payload,
    with_vector: SearchBody.properties.with_vector,
  },
  { additionalProperties: false },
);
