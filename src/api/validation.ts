/**
 * Request validation from the route schemas, with messages that name the field:
 * `points[3].vector[5]: expected number`, `filter: unknown field "fitler"`.
 *
 * Ajv checks shapes. Filters are skipped here (their `$ref: Filter` becomes "anything") because
 * `payload/filter-parse.ts` validates them with better messages and compiles them in one pass.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { badInput, KithError } from '../core/errors.js';
import { childPath, pointerToPath } from '../core/field-path.js';

const ajv = new Ajv({
  allErrors: false,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  strict: false,
  validateFormats: false,
  verbose: true,
});

/** Replaces every `{ $ref: "Filter" }` (and other shared refs) by an accept-anything schema. */
function withoutSharedRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutSharedRefs);
  if (typeof schema !== 'object' || schema === null) return schema;
  const object = schema as Record<string, unknown>;
  if (typeof object.$ref === 'string') return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) out[key] = withoutSharedRefs(value);
  return out;
}

const PART_ROOT: Record<string, string> = { body: '', params: '', querystring: '', headers: 'headers' };

export const validatorCompiler: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => {
  const validate: ValidateFunction = ajv.compile(withoutSharedRefs(schema) as object);
  const root = PART_ROOT[httpPart ?? 'body'] ?? '';
  return (data: unknown) => {
    try {
      if (validate(data)) return { value: data };
    } catch (error) {
      // Ajv recursion on hostile nesting; the input is at fault, not the server.
      return { error: new KithError('ERR_BAD_INPUT', 'body: nested too deeply', { cause: error }) };
    }
    return { error: describeAjvError(validate.errors ?? [], root) };
  };
};

/** How deep in the body an error sits; `required`/`additionalProperties` name a child field. */
function depthOf(error: ErrorObject): number {
  const childKeyword = error.keyword === 'required' || error.keyword === 'additionalProperties';
  return (error.instancePath === '' ? 0 : error.instancePath.split('/').length - 1) + (childKeyword ? 1 : 0);
}

/**
 * One clear message from Ajv's errors. Under an `anyOf` (nullable fields, string-or-integer ids)
 * Ajv reports every branch's failure; the most specific one is the deepest, and a failure that is
 * only "wrong type" at the union itself is best told as the list of accepted forms.
 */
function describeAjvError(errors: readonly ErrorObject[], root: string): KithError {
  const union = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const specific = errors
    .filter((e) => e !== union && e.keyword !== 'anyOf' && e.keyword !== 'oneOf')
    .sort((a, b) => depthOf(b) - depthOf(a) || Number(a.keyword === 'type') - Number(b.keyword === 'type'))[0];
  const error =
    union !== undefined && (specific === undefined || (specific.keyword === 'type' && depthOf(specific) <= depthOf(union)))
      ? union
      : specific;
  if (error === undefined) return badInput(root || 'body', 'invalid');
  const path = pointerToPath(error.instancePath, root);
  const at = path === '' ? 'body' : path;
  switch (error.keyword) {
    case 'required':
      return badInput(childPath(path, String(error.params.missingProperty)), 'required');
    case 'additionalProperties':
      return badInput(childPath(path, String(error.params.additionalProperty)), 'unknown field');
    case 'type':
      return badInput(at, `expected ${String(error.params.type)}${describeGot(error.data)}`);
    case 'const':
      return badInput(at, `expected ${JSON.stringify(error.params.allowedValue)}`);
    case 'anyOf':
    case 'oneOf':
      return badInput(at, `expected ${describeAlternatives(error.parentSchema)}${describeGot(error.data)}`);
    default:
      return badInput(at, error.message ?? 'invalid');
  }
}

function describeGot(data: unknown): string {
  if (data === undefined) return ', got nothing';
  if (data === null) return ', got null';
  if (Array.isArray(data)) return ', got an array';
  return `, got ${typeof data === 'object' ? 'an object' : typeof data}`;
}

function describeAlternatives(schema: unknown): string {
  const union = schema as { anyOf?: Array<Record<string, unknown>>; oneOf?: Array<Record<string, unknown>> } | undefined;
  const branches = union?.anyOf ?? union?.oneOf ?? [];
  const names = branches.map((b) => {
    if (b.const !== undefined) return JSON.stringify(b.const);
    if (b.type === 'array') return 'an array';
    if (b.type === 'integer' && typeof b.minimum === 'number') return `an integer >= ${b.minimum}`;
    return String(b.type ?? 'a value');
  });
  return names.length > 0 ? names.join(' or ') : 'one of the allowed forms';
}
