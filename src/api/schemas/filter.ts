/**
 * The filter language as JSON Schema, for the OpenAPI document. Request validation of filters is
 * done by `payload/filter-parse.ts` (which gives field-path messages and compiles regexes), so
 * route validation skips the `Filter` reference (see api/validation.ts).
 */
import { Type } from 'typebox';

const RangeBound = Type.Union([Type.Number(), Type.String({ format: 'date-time' })], {
  description: 'A number, or an RFC 3339 datetime; all bounds of one range are of one kind.',
});

const FieldCondition = Type.Object(
  {
    key: Type.String({ description: 'Payload key; dots walk into nested objects when no top-level key has this name.' }),
    type: Type.Optional(
      Type.Union([Type.Literal('exact'), Type.Literal('range'), Type.Literal('prefix'), Type.Literal('contains'), Type.Literal('regex')], {
        description: 'Default: `range` when `range` is given, else `exact`.',
      }),
    ),
    match: Type.Optional(
      Type.Object(
        {
          value: Type.Optional(Type.Unknown({ description: 'exact: JSON value; prefix/regex: string; contains: element or substring.' })),
          any: Type.Optional(Type.Array(Type.Unknown(), { description: 'exact only: the value is one of these.' })),
          except: Type.Optional(Type.Array(Type.Unknown(), { description: 'exact only: the value is none of these.' })),
        },
        { additionalProperties: false, description: 'Exactly one of value, any, except.' },
      ),
    ),
    range: Type.Optional(
      Type.Object(
        { gt: Type.Optional(RangeBound), gte: Type.Optional(RangeBound), lt: Type.Optional(RangeBound), lte: Type.Optional(RangeBound) },
        { additionalProperties: false, description: 'At least one bound.' },
      ),
    ),
  },
  { additionalProperties: false },
);

const Condition = Type.Union([FieldCondition, Type.Ref('Filter')], {
  description: 'A field condition, or a nested filter.',
});

export const FilterSchema = Type.Object(
  {
    must: Type.Optional(Type.Array(Condition, { description: 'All must hold.' })),
    must_not: Type.Optional(Type.Array(Condition, { description: 'None may hold.' })),
    should: Type.Optional(Type.Array(Condition, { description: 'At least one must hold (when not empty).' })),
  },
  { $id: 'Filter', additionalProperties: false, description: 'A payload filter; `{}` matches every point.' },
);

/** Where a route takes a filter. Validated by filter-parse, documented by FilterSchema. */
export const FilterRef = Type.Unsafe<unknown>(Type.Ref('Filter'));
