/** The distance matrix on kith's port (search/matrix.ts). */
import { Type } from 'typebox';
import { LIMITS } from '../../segment/collection-config.js';
import { FilterRef } from './filter.js';

/** Sampled points at most: one search each, a batch's bound (search/request-cost.ts). */
const MAX_SAMPLE = 4096;

export const MatrixBody = Type.Object(
  {
    filter: Type.Optional(Type.Union([FilterRef, Type.Null()])),
    sample: Type.Optional(
      Type.Union([Type.Null(), Type.Integer({ minimum: 2, maximum: MAX_SAMPLE, description: 'Matching points drawn at random; 10 by default.' })]),
    ),
    limit: Type.Optional(
      Type.Union([
        Type.Null(),
        Type.Integer({ minimum: 1, maximum: LIMITS.limit.max - 1, description: 'Nearest others per sampled point, among the sample; 3 by default.' }),
      ]),
    ),
    using: Type.Optional(
      Type.Union([
        Type.Null(),
        Type.String({
          description:
            'A named dense (a multi-vector too: max_sim) or sparse vector: only the points holding it are sampled, and the rows are searches by it; the main vector when absent or "".',
        }),
      ]),
    ),
  },
  { additionalProperties: false },
);

export const MatrixResult = Type.Object({
  ids: Type.Array(Type.String(), { description: 'The sampled ids, in id order.' }),
  pairs: Type.Array(
    Type.Object({ a: Type.String(), b: Type.String(), score: Type.Number() }, { description: 'b is one of the nearest others of a, with its score.' }),
    { description: "Per sampled point (in ids' order), its nearest others, best first." },
  ),
});
