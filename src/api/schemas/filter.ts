/**
 * The filter language as JSON Schema, for the OpenAPI document. Request validation of filters is
 * done by `payload/filter-parse.ts` (which gives field-path messages and compiles regexes), so
 * route validation skips the `Filter` reference (see api/validation.ts).
 */
import { type TSchema, Type } from 'typebox';
import { FILTER_LIMITS } from '../../payload/filter-parse.js';
import { Nullable, PointIdSchema } from './common.js';

/** A payload key as a condition names it. */
const KeySchema = (description?: string) =>
  Type.String({ minLength: 1, maxLength: FILTER_LIMITS.keyLength, ...(description === undefined ? {} : { description }) });

const NOT_NULL = { not: { type: 'null' } };
/** `field` is there and not null (null stands for absent in a filter). */
function given(field: string): { required: string[]; properties: Record<string, object> } {
  return { required: [field], properties: { [field]: NOT_NULL } };
}

/** Bounds gt, gte, lt, lte of one kind; null stands for an absent bound, as everywhere in a filter. */
function Bounds<T extends TSchema>(bound: T, description: string) {
  return Type.Object(
    { gt: Nullable(bound), gte: Nullable(bound), lt: Nullable(bound), lte: Nullable(bound) },
    // At least one bound given.
    { additionalProperties: false, description, anyOf: ['gt', 'gte', 'lt', 'lte'].map(given) },
  );
}

/** Numbers, or RFC 3339 datetimes: all bounds of one range are of one kind. */
const Range = Type.Union([
  Bounds(Type.Number(), 'Numeric bounds; at least one.'),
  Bounds(Type.String({ format: 'date-time' }), 'RFC 3339 datetime bounds; at least one.'),
]);

const GeoPoint = Type.Object(
  { lon: Type.Number({ minimum: -180, maximum: 180 }), lat: Type.Number({ minimum: -90, maximum: 90 }) },
  { additionalProperties: false },
);

/** `condition` ⇒ `consequence`, in JSON Schema (if/then written without a `then` key). */
function implies(condition: object, consequence: object): object {
  return { anyOf: [{ not: condition }, consequence] };
}

/** The parts of a field condition that say what to test (filter-parse.ts: TESTS). */
const TESTS = ['match', 'range', 'values_count', 'geo_radius', 'geo_bounding_box', 'geo_polygon'];

const FieldCondition = Type.Object(
  {
    key: KeySchema('Payload key; dots walk into nested objects when no top-level key has this name; `a[].b` reads b in every element of array a.'),
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
          text: Type.Optional(
            Type.String({
              maxLength: 1024,
              description:
                "exact only: with the field's text index, every query token is among the field's tokens; without one, a string value contains this substring (case-sensitive).",
            }),
          ),
          text_any: Type.Optional(
            Type.String({
              maxLength: 1024,
              description:
                "exact only: with the field's text index, some query token is among the field's tokens; without one, some whitespace-separated part is a substring.",
            }),
          ),
          phrase: Type.Optional(
            Type.String({
              maxLength: 1024,
              description:
                "exact only: with the field's text index (phrase_matching), the query tokens appear consecutively in one string; without one, a substring (case-sensitive).",
            }),
          ),
        },
        { additionalProperties: false, minProperties: 1, maxProperties: 1, description: 'Exactly one of value, any, except, text, text_any, phrase.' },
      ),
    ),
    range: Nullable(Range),
    values_count: Nullable(Bounds(Type.Integer({ minimum: 0 }), 'How many values the key holds (null 0, an array its length, else 1); at least one bound.')),
    geo_radius: Nullable(
      Type.Object({ center: GeoPoint, radius: Type.Number({ minimum: 0, description: 'Meters (haversine).' }) }, { additionalProperties: false }),
    ),
    geo_bounding_box: Nullable(Type.Object({ top_left: GeoPoint, bottom_right: GeoPoint }, { additionalProperties: false })),
    geo_polygon: Nullable(
      Type.Object(
        {
          exterior: Type.Object(
            { points: Type.Array(GeoPoint, { minItems: 4, description: 'Closed: the last point repeats the first.' }) },
            { additionalProperties: false },
          ),
          interiors: Nullable(Type.Array(Type.Object({ points: Type.Array(GeoPoint, { minItems: 4 }) }, { additionalProperties: false }))),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'A condition on one payload key: exactly one of match, range, values_count, geo_radius, geo_bounding_box, geo_polygon.',
    // The rules across fields, as filter-parse.ts applies them (null stands for absent).
    allOf: [
      // Exactly one test.
      {
        oneOf: TESTS.map((test) => ({
          ...given(test),
          properties: Object.fromEntries(TESTS.map((other) => [other, other === test ? NOT_NULL : { type: 'null' }])),
        })),
      },
      // `type` only with match or range; range with a range type (or none), match with the others.
      implies(given('type'), { anyOf: [given('match'), given('range')] }),
      implies(given('range'), { anyOf: [{ not: { required: ['type'] } }, { properties: { type: { enum: ['range', null] } } }] }),
      implies(given('match'), { anyOf: [{ not: { required: ['type'] } }, { properties: { type: { enum: ['exact', 'prefix', 'contains', 'regex', null] } } }] }),
      // any, except and the text matches only for exact conditions; a prefix or a regex is a string.
      implies(
        { required: ['type'], properties: { type: { const: 'contains' } } },
        { properties: { match: { anyOf: [{ type: 'null' }, { required: ['value'] }] } } },
      ),
      implies(
        { required: ['type'], properties: { type: { enum: ['prefix', 'regex'] } } },
        { properties: { match: { anyOf: [{ type: 'null' }, { required: ['value'], properties: { value: { type: 'string' } } }] } } },
      ),
    ],
  },
);

const KeyOnly = Type.Object({ key: KeySchema() }, { additionalProperties: false });
const IsEmpty = Type.Object({ is_empty: KeyOnly }, { additionalProperties: false, description: 'The key has no value, or only null or [].' });
const IsNull = Type.Object({ is_null: KeyOnly }, { additionalProperties: false, description: 'Some value at the key is null.' });
const HasId = Type.Object(
  { has_id: Type.Array(PointIdSchema) },
  { additionalProperties: false, description: 'The point\'s id is listed (7 and "7" are one id).' },
);
const HasVector = Type.Object(
  { has_vector: Type.String() },
  {
    additionalProperties: false,
    description:
      'The point holds a vector under the name: the main vector\'s name ("" unless the collection names it) every point, a named or sparse vector\'s the points that hold one, any other name none.',
  },
);
const Nested = Type.Object(
  { nested: Type.Object({ key: KeySchema(), filter: Type.Ref('Filter') }, { additionalProperties: false }) },
  { additionalProperties: false, description: 'Some object element of the array at key satisfies the whole filter by itself.' },
);

/** One condition, shared by reference so the document states it once. */
export const ConditionSchema = Type.Union([FieldCondition, IsEmpty, IsNull, HasId, HasVector, Nested, Type.Ref('Filter')], {
  $id: 'FilterCondition',
  description: 'A field condition, is_empty, is_null, has_id, has_vector, nested, or a nested filter.',
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
