/**
 * What strict mode reads of a Qdrant filter or formula, on the request's JSON before the route
 * parses it: how many conditions it has (filter_max_conditions, and the rate limiters' cost),
 * its largest condition (condition_max_size: the values of a match any/except, the ids of a
 * has_id), and the first payload key used without an index able to answer it
 * (unindexed_filtering_retrieve / _update). A shape the route will refuse is skipped here: the
 * route's own parse answers it.
 */
import { isPlainObject } from '../../payload/json-value.js';

/** Beyond this depth the walks stop (the routes refuse filters nested that deep anyway). */
const MAX_DEPTH = 40;

/** What an index can answer, as Qdrant tells index kinds apart for strict mode. */
type Capability =
  | 'int_match'
  | 'int_range'
  | 'keyword_match'
  | 'float_range'
  | 'text'
  | 'text_phrase'
  | 'bool_match'
  | 'uuid_match'
  | 'uuid_range'
  | 'datetime_range'
  | 'geo';

const ALL_CAPABILITIES: readonly Capability[] = [
  'int_match',
  'int_range',
  'keyword_match',
  'float_range',
  'text',
  'text_phrase',
  'bool_match',
  'uuid_match',
  'uuid_range',
  'datetime_range',
  'geo',
];

/** The schema Qdrant names for a capability in its message. */
const SCHEMA_NAME: Readonly<Record<Capability, string>> = {
  int_match: 'integer',
  int_range: 'integer',
  keyword_match: 'keyword',
  float_range: 'float',
  text: 'text',
  text_phrase: 'text (with phrase_matching: true)',
  bool_match: 'bool',
  uuid_match: 'uuid',
  uuid_range: 'uuid',
  datetime_range: 'datetime',
  geo: 'geo',
};

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** A key used without a fitting index, and the schemas that would answer it (sorted, distinct). */
export interface UnindexedKey {
  readonly key: string;
  readonly schemas: readonly string[];
}

/** A payload key's declared index schema: a type name, or an object with `type` and its options. */
export type IndexSchemas = Readonly<Record<string, unknown>>;

/** The conditions of a clause: a list, or one condition given alone. */
function clauseConditions(raw: unknown): unknown[] {
  if (Array.isArray(raw)) return raw;
  return isPlainObject(raw) ? [raw] : [];
}

/** A filter's conditions at its own level: must, must_not, should and min_should's. */
function conditionsOf(filter: unknown): unknown[] {
  if (!isPlainObject(filter)) return [];
  const minShould = filter.min_should;
  return [
    ...clauseConditions(filter.must),
    ...clauseConditions(filter.must_not),
    ...clauseConditions(filter.should),
    ...(isPlainObject(minShould) ? clauseConditions(minShould.conditions) : []),
  ];
}

function isFilter(condition: Record<string, unknown>): boolean {
  return ['must', 'must_not', 'should', 'min_should'].some((k) => Object.hasOwn(condition, k)) && !Object.hasOwn(condition, 'key');
}

/** Qdrant's total_conditions_count: every condition, those of nested and inner filters counted one by one. */
export function conditionCount(filter: unknown, depth = 0): number {
  if (depth > MAX_DEPTH) return 0;
  let count = 0;
  for (const condition of conditionsOf(filter)) {
    if (isPlainObject(condition) && isPlainObject(condition.nested)) count += conditionCount(condition.nested.filter, depth + 1);
    else if (isPlainObject(condition) && isFilter(condition)) count += conditionCount(condition, depth + 1);
    else count += 1;
  }
  return count;
}

/** Qdrant's max_condition_input_size: the most values one condition lists (match any/except, has_id). */
export function largestCondition(filter: unknown, depth = 0): number {
  if (depth > MAX_DEPTH) return 0;
  let largest = 0;
  for (const condition of conditionsOf(filter)) {
    if (!isPlainObject(condition)) continue;
    let size = 0;
    if (isPlainObject(condition.nested)) size = largestCondition(condition.nested.filter, depth + 1);
    else if (isFilter(condition)) size = largestCondition(condition, depth + 1);
    else if (Array.isArray(condition.has_id)) size = condition.has_id.length;
    else if (isPlainObject(condition.match)) {
      const listed = condition.match.any ?? condition.match.except;
      size = Array.isArray(listed) ? listed.length : 0;
    }
    largest = Math.max(largest, size);
  }
  return largest;
}

/** What a match of these values needs: a keyword index (and a uuid one when every string is a uuid), an integer or a bool one. */
function matchCapabilities(values: readonly unknown[]): Capability[] {
  if (values.length > 0 && values.every((v) => typeof v === 'number')) return ['int_match'];
  if (values.length > 0 && values.every((v) => typeof v === 'boolean')) return ['bool_match'];
  return values.length > 0 && values.every((v) => typeof v === 'string' && UUID.test(v)) ? ['uuid_match', 'keyword_match'] : ['keyword_match'];
}

/** The capabilities one of which a field condition needs (Qdrant's inference from the condition's kind). */
function fieldCapabilities(condition: Record<string, unknown>): Capability[] {
  const needed: Capability[] = [];
  const match = condition.match;
  if (isPlainObject(match)) {
    if (Object.hasOwn(match, 'value')) needed.push(...matchCapabilities([match.value]));
    else if (Object.hasOwn(match, 'text') || Object.hasOwn(match, 'text_any')) needed.push('text');
    else if (Object.hasOwn(match, 'phrase')) needed.push('text_phrase');
    else {
      const listed = match.any ?? match.except;
      if (Array.isArray(listed)) needed.push(...matchCapabilities(listed));
    }
  }
  const range = condition.range;
  if (isPlainObject(range)) {
    const bounds = ['gt', 'gte', 'lt', 'lte'].map((k) => range[k]).filter((v) => v !== undefined && v !== null);
    if (bounds.some((v) => typeof v === 'string')) needed.push('datetime_range');
    else needed.push('float_range', 'int_range');
  }
  if (['geo_bounding_box', 'geo_radius', 'geo_polygon'].some((k) => condition[k] !== undefined && condition[k] !== null)) needed.push('geo');
  if (['values_count', 'is_empty', 'is_null'].some((k) => condition[k] !== undefined && condition[k] !== null)) needed.push(...ALL_CAPABILITIES);
  return needed;
}

/** What a declared index can answer (Qdrant's schema capabilities: an integer index without lookup or range answers less). */
function indexCapabilities(schema: unknown): Set<Capability> {
  const type = typeof schema === 'string' ? schema : isPlainObject(schema) ? schema.type : undefined;
  const params = isPlainObject(schema) ? schema : {};
  switch (type) {
    case 'keyword':
      return new Set(['keyword_match']);
    case 'integer': {
      const out = new Set<Capability>();
      if (params.lookup !== false) out.add('int_match');
      if (params.range !== false) out.add('int_range');
      return out;
    }
    case 'uuid':
      return new Set(['uuid_match', 'uuid_range']);
    case 'bool':
      return new Set(['bool_match']);
    case 'float':
      return new Set(['float_range']);
    case 'geo':
      return new Set(['geo']);
    case 'datetime':
      return new Set(['datetime_range']);
    case 'text':
      return new Set(params.phrase_matching === true ? ['text', 'text_phrase'] : ['text']);
    default:
      return new Set();
  }
}

function unindexed(key: string, needed: readonly Capability[], schemas: IndexSchemas): UnindexedKey | undefined {
  if (needed.length === 0) return undefined;
  const declared = Object.hasOwn(schemas, key) ? indexCapabilities(schemas[key]) : new Set<Capability>();
  if (needed.some((c) => declared.has(c))) return undefined;
  return { key, schemas: [...new Set(needed.map((c) => SCHEMA_NAME[c]))].sort() };
}

/** A nested condition's keys are its array's: `city[].key`. */
function nestedKey(prefix: string | undefined, key: string): string {
  return prefix === undefined ? key : `${prefix}.${key}`;
}

/** The first key of the filter without an index able to answer its condition (Qdrant's one_unindexed_key). */
export function firstUnindexedKey(filter: unknown, schemas: IndexSchemas, prefix?: string, depth = 0): UnindexedKey | undefined {
  if (depth > MAX_DEPTH) return undefined;
  for (const condition of conditionsOf(filter)) {
    const found = conditionUnindexed(condition, schemas, prefix, depth);
    if (found !== undefined) return found;
  }
  return undefined;
}

function conditionUnindexed(condition: unknown, schemas: IndexSchemas, prefix: string | undefined, depth: number): UnindexedKey | undefined {
  if (!isPlainObject(condition)) return undefined;
  const nested = condition.nested;
  if (isPlainObject(nested) && typeof nested.key === 'string')
    return firstUnindexedKey(nested.filter, schemas, `${nestedKey(prefix, nested.key)}[]`, depth + 1);
  if (isFilter(condition)) return firstUnindexedKey(condition, schemas, prefix, depth + 1);
  for (const form of ['is_empty', 'is_null'] as const) {
    const field = condition[form];
    if (isPlainObject(field) && typeof field.key === 'string') return unindexed(nestedKey(prefix, field.key), ALL_CAPABILITIES, schemas);
  }
  if (typeof condition.key === 'string') return unindexed(nestedKey(prefix, condition.key), fieldCapabilities(condition), schemas);
  return undefined; // has_id, has_vector: no index needed
}

/** Expression operators whose operands are expressions in turn (formula-parse.ts has the full grammar). */
const OPERAND_FIELDS = ['left', 'right', 'base', 'exponent', 'x', 'target'];

/**
 * The first payload key a formula reads without an index that answers it: a variable needs a
 * numeric index, `geo_distance.to` a geo one, `datetime_key` a datetime one, and a condition
 * what it would need in a filter.
 */
export function firstUnindexedFormulaKey(expression: unknown, schemas: IndexSchemas, depth = 0): UnindexedKey | undefined {
  if (depth > MAX_DEPTH) return undefined;
  if (typeof expression === 'string') {
    return expression.startsWith('$') ? undefined : unindexed(expression, ['int_match', 'int_range', 'float_range'], schemas);
  }
  if (Array.isArray(expression)) {
    for (const item of expression) {
      const found = firstUnindexedFormulaKey(item, schemas, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isPlainObject(expression)) return undefined;
  if (
    typeof expression.key === 'string' ||
    isFilter(expression) ||
    isPlainObject(expression.nested) ||
    isPlainObject(expression.is_empty) ||
    isPlainObject(expression.is_null)
  )
    return conditionUnindexed(expression, schemas, undefined, depth);
  if (typeof expression.datetime_key === 'string') return unindexed(expression.datetime_key, ['datetime_range'], schemas);
  const geo = expression.geo_distance;
  if (isPlainObject(geo) && typeof geo.to === 'string') return unindexed(geo.to, ['geo'], schemas);
  for (const [name, operand] of Object.entries(expression)) {
    if (name === 'datetime' || name === 'by_zero_default' || name === 'scale' || name === 'midpoint') continue;
    const inner = isPlainObject(operand) && OPERAND_FIELDS.some((f) => Object.hasOwn(operand, f)) ? OPERAND_FIELDS.map((f) => operand[f]) : operand;
    const found = firstUnindexedFormulaKey(inner, schemas, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether the filter names a key whose index is a tenant's (`is_tenant: true`): Qdrant then searches the tenant's graph. */
export function usesTenantKey(filter: unknown, schemas: IndexSchemas): boolean {
  return conditionsOf(filter).some((condition) => {
    if (!isPlainObject(condition) || typeof condition.key !== 'string' || !Object.hasOwn(schemas, condition.key)) return false;
    const schema = schemas[condition.key];
    return isPlainObject(schema) && schema.is_tenant === true;
  });
}

/** Whether a group_by key has an index that answers a match (Qdrant: keyword, integer with lookup, uuid, bool). */
export function groupingIndex(key: string, schemas: IndexSchemas): 'none' | 'matching' | string {
  if (!Object.hasOwn(schemas, key)) return 'none';
  const capabilities = indexCapabilities(schemas[key]);
  if (['keyword_match', 'int_match', 'uuid_match', 'bool_match'].some((c) => capabilities.has(c as Capability))) return 'matching';
  const schema = schemas[key];
  const type = typeof schema === 'string' ? schema : isPlainObject(schema) ? String(schema.type) : 'unknown';
  // Qdrant names the kind as its enum prints it: "Geo", "Float", "Text", "Datetime", "Integer".
  return type.charAt(0).toUpperCase() + type.slice(1);
}
