/**
 * Searches by stored points and examples on kith's port (search/example-input.ts): the bodies of
 * POST …/points/recommend, …/points/recommend/batch and …/points/discover, and the example shapes
 * a query stage takes (schemas/query.ts).
 */
import { Type } from 'typebox';
import { Nullable, PointIdSchema } from './common.js';
import { MAX_BATCH_SEARCHES, SearchBody } from './points.js';

export const ExampleSchema = Type.Union(
  [
    PointIdSchema,
    Type.Array(Type.Number(), { description: 'A vector of the main or the named vector’s size.' }),
    Type.Array(Type.Array(Type.Number()), { description: 'A multi-vector’s rows (with `using` naming one).' }),
    Type.Object(
      { indices: Type.Array(Type.Integer({ minimum: 0 })), values: Type.Array(Type.Number()) },
      { additionalProperties: false, description: 'A sparse vector (with `using` naming one).' },
    ),
  ],
  {
    description: 'A point id (its stored vector under `using`; the point is left out of the answer) or a vector of the kind `using` names.',
  },
);

const Examples = Type.Array(ExampleSchema, {
  description: 'Point ids and vectors; together with the other side at most the exampleComponents budget (examples × vector_size).',
});

export const ContextPairSchema = Type.Object(
  { positive: ExampleSchema, negative: ExampleSchema },
  { additionalProperties: false, description: 'A pair splitting the space: points nearer `positive` than `negative` are on its good side.' },
);

const ContextPairs = Type.Array(ContextPairSchema, { description: 'Context pairs {positive, negative}.' });

export const RecommendSchema = Type.Object(
  {
    positive: Nullable(Examples),
    negative: Nullable(Examples),
    strategy: Nullable(
      Type.Union([Type.Literal('average_vector'), Type.Literal('best_score'), Type.Literal('sum_scores')], {
        description:
          'average_vector (default): near avg(positive) + (avg(positive) − avg(negative)), needs a positive; best_score: each point by its best positive against its best negative; sum_scores: the positives’ scores minus the negatives’.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const DiscoverSchema = Type.Object(
  {
    target: Nullable(ExampleSchema),
    context: Nullable(ContextPairs),
  },
  { additionalProperties: false, description: 'A target ranked within the context pairs’ zones; no target: a context search (pairs required).' },
);

/** The fields of a search kept by a search by examples: all but the query vector's (and MMR, which re-ranks a search by one vector). */
const { vector: _v, sparse_vector: _s, named_vector: _n, mmr: _m, ...SearchFields } = SearchBody.properties;

/** `using`: the vector the examples are of and the points are scored (or searched) by. */
export const ExampleUsing = Nullable(
  Type.String({
    description:
      'A named dense vector (one row or a multi-vector) or a sparse vector the examples are of, and the points are scored by (points without it are not); the main vector when absent or "".',
  }),
);

export const RecommendBody = Type.Object({ ...RecommendSchema.properties, using: ExampleUsing, ...SearchFields }, { additionalProperties: false });

export const RecommendBatchBody = Type.Object(
  {
    searches: Type.Array(RecommendBody, {
      minItems: 1,
      maxItems: MAX_BATCH_SEARCHES,
      description: `Recommendation bodies (at most ${MAX_BATCH_SEARCHES}), one result list each, in order; all counted against one request's budgets.`,
    }),
  },
  { additionalProperties: false },
);

export const DiscoverBody = Type.Object({ ...DiscoverSchema.properties, using: ExampleUsing, ...SearchFields }, { additionalProperties: false });
