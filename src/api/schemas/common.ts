/**
 * Schemas shared by every route: the success and error envelopes, ids, versions.
 * One source for request validation, response serialisation and the OpenAPI document.
 */
import { type TProperties, type TSchema, Type } from 'typebox';
import { ERRORS, type ErrorCode } from '../../core/errors.js';

/** Seconds the request took, as a float. */
const Time = Type.Number({ description: 'Seconds spent on the request.' });

/** `{"status":"ok","result":…,"time":…}` around a route's result; `extra` adds optional siblings of `result` (e.g. `explain`). */
export function okEnvelope<T extends TSchema, E extends TProperties = Record<never, never>>(result: T, extra?: E) {
  return Type.Object({ status: Type.Literal('ok'), result, ...(extra as E), time: Time });
}

export const ErrorEnvelope = Type.Object(
  {
    status: Type.Object({
      error: Type.String({ description: 'What went wrong, starting with the field path when a field is at fault.' }),
      code: Type.Union(
        (Object.keys(ERRORS) as ErrorCode[]).map((code) => Type.Literal(code)),
        { description: "The error's code (docs/errors.md): what a client branches on, never the message or the status." },
      ),
    }),
    time: Time,
  },
  { $id: 'ErrorEnvelope', description: "Every error response: Qdrant's shape, with the code added." },
);

const errorRef = Type.Unsafe<{ status: { error: string; code: ErrorCode }; time: number }>(Type.Ref('ErrorEnvelope'));

/** Error responses a route can give, for the OpenAPI document and serialisation. */
export function errorResponses(...statuses: number[]): Record<number, typeof errorRef> {
  const out: Record<number, typeof errorRef> = {};
  for (const status of statuses) out[status] = errorRef;
  return out;
}

export const PointIdSchema = Type.Union(
  [Type.String({ minLength: 1, description: 'At most 1024 UTF-8 bytes.' }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })],
  { description: 'A non-empty string, or a non-negative integer (stored as its decimal string: 7 and "7" are one point).' },
);

/** Nanosecond version: a 64-bit integer written exactly (a bigint in JS). */
export const VersionSchema = Type.Unsafe<bigint>({
  type: 'integer',
  format: 'int64',
  description: 'Nanoseconds since the Unix epoch when the batch was written; strictly increasing per collection.',
});

export const CollectionNameParams = Type.Object({
  name: Type.String({ description: 'Collection name.' }),
});

/** `{}` with any keys: a payload (arbitrary JSON object); typed as a record so readers can index it. */
export const PayloadSchema = Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true, description: 'Arbitrary JSON object.' }));

/** A nullable optional field: absent and `null` both mean "not given". */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Optional(Type.Union([schema, Type.Null()]));
}

/** What a write answers on a cluster node, for reads that must see it (docs/cluster.md); a single node sends none. */
export const WriteToken = Type.Optional(
  Type.String({ description: 'Cluster nodes only: the log positions the write reached, for a later read with `?after=` (read-your-writes through any node).' }),
);
