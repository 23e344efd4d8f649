/**
 * The filter language as JSON Schema, for the OpenAPI document. Request validation of filters is
 * done by `payload/filter-parse.ts` (which gives field-path messages and compiles regexes), so
 * route validation skips the `Filter` reference (see api/validation.ts).
 */
import { Type } from 'typebox';
import { Nullable } from './common.js';

const RangeBound = Type.Union([Type.Number(), Type.String({ format: 'date-time' })], {
  description: 'A number, or an RFC 3339 datetime; all bounds of one range are of one kind.',
});

const GeoPoint = Type.Object({ lon: Type.Number(), lat: Type.Number() }, { additionalProperties: false });

const FieldCondition = Type.Object(
  {
    key: Type.String({
      description: 'Payload key; dots walk into nested objects when no top-level key has this name; `a[].b` reads b in every element of array a.',
    }),
    type: Nullable(
      Type.Union([Type.Literal('exact'), Type.Literal('range'), Type.Literal('prefix'), Type.Literal('contains'), Type.Literal('regex')], {
        description: 'Default: `range` when `range` is given, else `exact`.',
      }),
    ),
    match: Nullable(
      Type.Object(
        {
          value: Type.Optional(Type.Unknown({ description: 'exact: JSON value; prefix/regex: string; contains: element or substring.' })),
          any: Type.Optional(Type.Array(Type.Unknown(), { description: 'exact only: the value is one of these.' })),
          except: Type.Optional(Type.Array(Type.Unknown(), { description: 'exact only: the value is none of these.' })),
          text: Type.Optional(Type.String({ maxLength: 1024, description: 'exact only: a string value contains this substring (case-sensitive).' })),
        },
        { additionalProperties: false, description: 'Exactly one of value, any, except, text.' },
      ),
    ),
    range: Nullable(
      Type.Object(
        { gt: Nullable(RangeBound), gte: Nullable(RangeBound), lt: Nullable(RangeBound), lte: Nullable(RangeBound) },
        { additionalProperties: false, description: 'At least one bound.' },
      ),
    ),
    values_count: Nullable(
      Type.Object(
        { gt: Nullable(Type.Integer()), gte: Nullable(Type.Integer()), lt: Nullable(Type.Integer()), lte: Nullable(Type.Integer()) },
        { additionalProperties: false, description: 'How many values the key holds (null 0, an array its length, else 1); at least one bound.' },
      ),
    ),
    geo_radius: Nullable(Type.Object({ center: GeoPoint, radius: Type.Number({ description: 'Meters (haversine).' }) }, { additionalProperties: false })),
    geo_bounding_box: Nullable(Type.Object({ top_left: GeoPoint, bottom_right: GeoPoint }, { additionalProperties: false })),
    geo_polygon: Nullable(
      Type.Object(
        {
          exterior: Type.Object({ points: Type.Array(GeoPoint) }, { additionalProperties: false }),
          interiors: Nullable(Type.Array(Type.Object({ points: Type.Array(GeoPoint) }, { additionalProperties: false }))),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'A condition on one payload key: exactly one of match, range, values_count, geo_radius, geo_bounding_box, geo_polygon.',
  },
);

const KeyOnly = Type.Object({ key: Type.String() }, { additionalProperties: false });
const IsEmpty = Type.Object({ is_empty: KeyOnly }, { additionalProperties: false, description: 'The key has no value, or only null or [].' });
const IsNull = Type.Object({ is_null: KeyOnly }, { additionalProperties: false, description: 'Some value at the key is null.' });
const HasId = Type.Object(
  { has_id: Type.Array(Type.Union([Type.String(), Type.Integer({ minimum: 0 })])) },
  { additionalProperties: false, description: 'The point\'s id is listed (7 and "7" are one id).' },
);
const Nested = Type.Object(
  { nested: Type.Object({ key: Type.String(), filter: Type.Ref('Filter') }, { additionalProperties: false }) },
  { additionalProperties: false, description: 'Some object element of the array at key satisfies the whole filter by itself.' },
);

/** One condition, shared by reference so the document states it once. */
export const ConditionSchema = Type.Union([FieldCondition, IsEmpty, IsNull, HasId, Nested, Type.Ref('Filter')], {
  $id: 'FilterCondition',
  description: 'A field condition, is_empty, is_null, has_id, nested, or a nested filter.',
});

const Condition = Type.Ref('FilterCondition');

/** A list of conditions, or one condition alone (as Qdrant accepts). */
const Conditions = (description: string) => Type.Union([Type.Array(Condition), Condition], { description });

export const FilterSchema = Type.Object(
  {
    must: Nullable(Conditions('All must hold.')),
    must_not: Nullable(Conditions('None may hold.')),
    should: Nullable(Conditions('At least one must hold (when not empty).')),
    min_should: Nullable(
      Type.Object(
        { conditions: Conditions('The candidates.'), min_count: Type.Integer({ minimum: 0 }) },
        { additionalProperties: false, description: 'At least min_count of the conditions hold.' },
      ),
    ),
  },
  { $id: 'Filter', additionalProperties: false, description: 'A payload filter; `{}` matches every point.' },
);

/** Where a route takes a filter. Validated by filter-parse, documented by FilterSchema. */
export const FilterRef = Type.Unsafe<unknown>(Type.Ref('Filter'));
