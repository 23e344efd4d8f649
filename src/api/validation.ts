/**
 * Request validation from the route schemas, with messages that name the field:
 * `points[3].vector[5]: expected number`, `filter: unknown field "fitler"`.
 *
 * Ajv checks shapes. Filters are skipped here (their `$ref: Filter` becomes "anything") because
 * `payload/filter-parse.ts` validates them with better messages and compiles them in one pass.
 *
 * The items of a body's top-level arrays (`points`, `searches`) are checked one by one with their
 * own compiled schema, and in slices (core/time-slices.ts) when there are many: one Ajv call over
 * a 64 MiB upsert of small points (millions of them) held the service thread for most of a second.
 * The messages are the same: the item's errors are named from `points[i]`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchema, FastifySchemaCompiler, SafePromiseLike } from 'fastify';
import { badInput, KithError } from '../core/errors.js';
import { childPath, pointerToPath } from '../core/field-path.js';
import { TimeSlices } from '../core/time-slices.js';

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

/** Up to this many items of a body's arrays are checked at once; more, in slices. */
const ITEMS_CHECKED_AT_ONCE = 4096;

type Check = { value: unknown } | { error: KithError };

export const validatorCompiler: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => {
  const root = PART_ROOT[httpPart ?? 'body'] ?? '';
  const { envelope, arrays } = httpPart === 'body' ? splitArrays(withoutSharedRefs(schema)) : { envelope: withoutSharedRefs(schema), arrays: [] };
  const validate = compiled(envelope);
  return (data: unknown) => {
    const checked = validate(data, root);
    if ('error' in checked || arrays.length === 0 || !isObject(data)) return checked;
    let items = 0;
    for (const array of arrays) {
      const value = data[array.key];
      if (Array.isArray(value)) items += value.length;
    }
    if (items <= ITEMS_CHECKED_AT_ONCE) {
      for (const array of arrays) {
        const value = data[array.key];
        if (!Array.isArray(value)) continue;
        for (let i = 0; i < value.length; i++) {
          const item = array.validateItem(value[i], root, i);
          if ('error' in item) return item;
        }
      }
      return checked;
    }
    // Fastify awaits a validator's promise: resolved, the body passes; rejected, the error is the answer.
    return checkItemsInSlices(data, arrays, root) as unknown as SafePromiseLike<true>;
  };
};

/** A top-level array of a body whose items are checked one by one. */
interface ItemArray {
  readonly key: string;
  /** Checks item `index`; its errors are named from `root`.key[index] (built only then). */
  readonly validateItem: (item: unknown, root: string, index: number) => Check;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A validator for `schema`, naming fields from `root` (given per call, or built on a failure). */
function compiled(schema: unknown): (data: unknown, root: string | (() => string)) => Check {
  const validate: ValidateFunction = ajv.compile(schema as object);
  return (data, root) => {
    try {
      if (validate(data)) return { value: data };
    } catch (error) {
      // Ajv recursion on hostile nesting; the input is at fault, not the server.
      return { error: new KithError('ERR_BAD_INPUT', 'body: nested too deeply', { cause: error }) };
    }
    return { error: describeAjvError(validate.errors ?? [], typeof root === 'string' ? root : root()) };
  };
}

/**
 * The body schema without the items of its top-level arrays (`{}` instead: checked apart), and
 * a validator per array for its items. An array property may be nullable (`anyOf` with null).
 */
function splitArrays(schema: unknown): { envelope: unknown; arrays: ItemArray[] } {
  if (!isObject(schema) || !isObject(schema.properties)) return { envelope: schema, arrays: [] };
  const arrays: ItemArray[] = [];
  const properties: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties)) {
    const split = withoutItems(property);
    properties[key] = split.schema;
    if (split.items !== undefined) {
      const validate = compiled(split.items);
      arrays.push({ key, validateItem: (item, root, index) => validate(item, () => childPath(childPath(root, key), index)) });
    }
  }
  return { envelope: { ...schema, properties }, arrays };
}

/** An array schema (or a union with one) without its `items`, and those items; unchanged otherwise. */
function withoutItems(schema: unknown): { schema: unknown; items?: unknown } {
  if (!isObject(schema)) return { schema };
  if (schema.type === 'array' && isObject(schema.items)) return { schema: { ...schema, items: {} }, items: schema.items };
  for (const union of ['anyOf', 'oneOf'] as const) {
    const branches = schema[union];
    if (!Array.isArray(branches)) continue;
    const at = branches.findIndex((b) => isObject(b) && b.type === 'array' && isObject(b.items));
    if (at < 0 || branches.some((b, i) => i !== at && isObject(b) && b.type === 'array')) continue;
    const branch = branches[at] as Record<string, unknown>;
    const replaced = branches.map((b, i) => (i === at ? { ...branch, items: {} } : b));
    return { schema: { ...schema, [union]: replaced }, items: branch.items };
  }
  return { schema };
}

/** Checks the arrays' items in slices; resolves true, or rejects with the first item's error. */
async function checkItemsInSlices(data: Record<string, unknown>, arrays: readonly ItemArray[], root: string): Promise<true> {
  const slices = new TimeSlices();
  for (const array of arrays) {
    const value = data[array.key];
    if (!Array.isArray(value)) continue;
    for (let i = 0; i < value.length; i++) {
      if (slices.due(i)) await slices.pause();
      const item = array.validateItem(value[i], root, i);
      if ('error' in item) throw item.error;
    }
  }
  return true;
}

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
  const error = union !== undefined && (specific === undefined || (specific.keyword === 'type' && depthOf(specific) <= depthOf(union))) ? union : specific;
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
