/**
 * Request and response schemas of the operator endpoints over stored points: scroll (pages in id
 * order with a cursor), count, retrieve by ids, and the payload operations (set, overwrite, delete
 * keys, clear), each selecting points by id or by filter.
 */
import { Type } from 'typebox';
import { PAYLOAD_SELECTOR_LIMITS } from '../../payload/payload-selector.js';
import { LIMITS } from '../../segment/collection-config.js';
import { Nullable, PayloadSchema, PointIdSchema, VersionSchema, WriteToken } from './common.js';
import { FilterRef } from './filter.js';
import { NamedVectorsSchema, SparseVectorSchema, WithPayloadSchema } from './points.js';

const OptionalFilter = Type.Optional(Type.Union([FilterRef, Type.Null()]));
const WithVector = Nullable(Type.Boolean({ default: false, description: 'Return the stored vector (normalised for Cosine, dequantized for sq8).' }));

/** A point as a page or a lookup returns it: payload and vector as asked for. */
export const PointRecordSchema = Type.Object({
  id: Type.String(),
  version: VersionSchema,
  payload: Type.Optional(PayloadSchema),
  vector: Type.Optional(Type.Array(Type.Number())),
  sparse_vectors: Type.Optional(Type.Record(Type.String(), SparseVectorSchema, { description: 'With the vector: the sparse vectors the point has, by name.' })),
  named_vectors: Type.Optional(NamedVectorsSchema),
  order_value: Type.Optional(
    Type.Number({ description: 'In a page ordered by order_by: the value that placed the point (a date-time as microseconds since the epoch).' }),
  ),
});

/** `order_by` (search/order-by.ts): a payload key, or `{key, direction, start_from}`. */
const OrderBySchema = Type.Union(
  [
    Type.String({ minLength: 1, maxLength: 1024, description: 'A payload key (a filter key: `a.b`, `tags[]`), ascending.' }),
    Type.Object(
      {
        key: Type.String({ minLength: 1, maxLength: 1024 }),
        direction: Nullable(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' })),
        start_from: Nullable(
          Type.Union([Type.Number(), Type.String()], {
            description: 'Values from this one on (≥ ascending, ≤ descending): a number or an RFC 3339 date-time.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'Order the page by the numbers or date-times at a payload key instead of by id; a point appears once per value there, ties by id. No cursor then, and next_cursor is null: the next page starts from the last value with start_from.',
  },
);

export const ScrollBody = Type.Object(
  {
    filter: OptionalFilter,
    limit: Nullable(Type.Integer({ minimum: LIMITS.limit.min, maximum: LIMITS.limit.max, default: 10, description: 'Points per page.' })),
    // Where the page starts (inclusive): the previous page's next_cursor; that point need not exist any more.
    cursor: Nullable(PointIdSchema),
    order_by: Nullable(OrderBySchema),
    with_payload: WithPayloadSchema,
    with_vector: WithVector,
  },
  { additionalProperties: false },
);

export const ScrollResult = Type.Object({
  points: Type.Array(PointRecordSchema, { description: 'The matching points in id order (numeric ids by value, before string ids in code-point order).' }),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page; null on the last page.' }),
});

export const CountBody = Type.Object({ filter: OptionalFilter }, { additionalProperties: false });

export const CountResult = Type.Object({ count: Type.Integer({ description: 'Live points matching the filter (all without one), counted exactly.' }) });

export const RetrieveBody = Type.Object(
  {
    ids: Type.Array(PointIdSchema, { description: 'Ids to look up; a repeated id is answered once.' }),
    with_payload: WithPayloadSchema,
    with_vector: WithVector,
  },
  { additionalProperties: false },
);

export const RetrieveResult = Type.Array(PointRecordSchema, { description: 'The listed points that exist, in the order listed.' });

/** `points` or `filter`: which points a payload operation changes (exactly one). */
const Selection = {
  points: Nullable(Type.Array(PointIdSchema, { description: 'Ids to change; every one must exist (else 404 and nothing changes).' })),
  filter: OptionalFilter,
};
const SELECTION = 'Exactly one of points or filter.';

export const SetPayloadBody = Type.Object(
  {
    payload: PayloadSchema,
    key: Nullable(
      Type.String({
        maxLength: PAYLOAD_SELECTOR_LIMITS.patternLength,
        description:
          'Merge into the object at this payload path (`a.b`, `list[].c`, `list[0]`) instead of the root; missing members on the way become objects.',
      }),
    ),
    ...Selection,
  },
  { additionalProperties: false, description: `Merges payload's top-level keys into each selected payload. ${SELECTION}` },
);

export const OverwritePayloadBody = Type.Object(
  { payload: PayloadSchema, ...Selection },
  { additionalProperties: false, description: `Replaces each selected payload. ${SELECTION}` },
);

export const DeletePayloadKeysBody = Type.Object(
  {
    keys: Type.Array(Type.String({ maxLength: PAYLOAD_SELECTOR_LIMITS.patternLength }), {
      maxItems: PAYLOAD_SELECTOR_LIMITS.patterns,
      description: `Payload paths to remove (\`a\`, \`a.b\`, \`list[].c\`); at most ${PAYLOAD_SELECTOR_LIMITS.patterns}.`,
    }),
    ...Selection,
  },
  { additionalProperties: false, description: `Removes these paths from each selected payload. ${SELECTION}` },
);

export const ClearPayloadBody = Type.Object(Selection, { additionalProperties: false, description: `Empties each selected payload. ${SELECTION}` });

export const PayloadResult = Type.Object({
  operation: Type.Literal('completed'),
  updated: Type.Integer({ description: 'Points rewritten; each got a new version.' }),
  write_token: WriteToken,
});
