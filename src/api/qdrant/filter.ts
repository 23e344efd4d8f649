/**
 * Qdrant filter JSON on the Qdrant port. kith's filter language (payload/filter-parse.ts) speaks
 * Qdrant's conditions, and its `qdrant` dialect gives an explicit `should: []` Qdrant's meaning
 * (no point matches). What this module adds is the id mapping: `has_id` lists Qdrant ids, which
 * are checked and turned into kith ids as request bodies' ids are (ids.ts); the field forms
 * `{"key": k, "is_empty": true}` and `"is_null": …` become kith's conditions. `has_vector` is
 * kith's own condition (search/filter-bind.ts answers it per segment), except for the name of the
 * placeholder main vector of a collection without a plain dense vector (vector-layout.ts), which
 * no point holds on this port.
 */
import { childPath } from '../../core/field-path.js';
import { parseFilter } from '../../payload/filter-parse.js';
import type { Filter } from '../../payload/filter-types.js';
import { describeJson } from '../../core/point-id.js';
import { formatError } from './errors.js';
import { NO_DENSE_VECTOR } from './vector-layout.js';
import { toKithId } from './ids.js';

/** Beyond this depth the walk stops rewriting; parseFilter refuses filters nested that deep anyway. */
const MAX_WALK_DEPTH = 40;

/** Parses a Qdrant filter; null/undefined mean "no filter". */
export function parseQdrantFilter(raw: unknown, path = 'filter'): Filter | undefined {
  if (raw === undefined || raw === null) return undefined;
  return parseFilter(rewriteFilter(raw, path, 0), path, { dialect: 'qdrant' });
}

function isObject(raw: unknown): raw is Record<string, unknown> {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw);
}

function rewriteFilter(raw: unknown, path: string, depth: number): unknown {
  if (!isObject(raw) || depth > MAX_WALK_DEPTH) return raw;
  const out: Record<string, unknown> = { ...raw };
  for (const clause of ['must', 'must_not', 'should'] as const) {
    const list = raw[clause];
    const at = childPath(path, clause);
    if (Array.isArray(list)) out[clause] = list.map((c, i) => rewriteCondition(c, childPath(at, i), depth));
    else if (isObject(list)) out[clause] = rewriteCondition(list, at, depth);
  }
  const minShould = raw.min_should;
  if (isObject(minShould) && Array.isArray(minShould.conditions)) {
    const at = childPath(childPath(path, 'min_should'), 'conditions');
    out.min_should = { ...minShould, conditions: minShould.conditions.map((c, i) => rewriteCondition(c, childPath(at, i), depth)) };
  }
  return out;
}

/**
 * A field condition with `is_empty` / `is_null` as booleans (Qdrant's other spelling of
 * `{"is_empty": {"key": k}}`; false negates it), as kith's conditions: all of the field's
 * conditions must hold.
 */
function withFlagForms(condition: Record<string, unknown>, path: string): unknown {
  const flags = (['is_empty', 'is_null'] as const).filter((flag) => condition[flag] !== undefined && condition[flag] !== null);
  if (flags.length === 0) return condition;
  const { is_empty: _empty, is_null: _null, ...rest } = condition;
  const parts: unknown[] = [];
  for (const flag of flags) {
    const value = condition[flag];
    if (typeof value !== 'boolean') throw formatError(childPath(path, flag), `expected a boolean, got ${describeJson(value)}`);
    const check = { [flag]: { key: condition.key } };
    parts.push(value ? check : { must_not: [check] });
  }
  // Other conditions on the same key (a match, a range) hold too.
  if (Object.keys(rest).some((k) => k !== 'key')) parts.push(rest);
  return parts.length === 1 ? parts[0] : { must: parts };
}

function rewriteCondition(raw: unknown, path: string, depth: number): unknown {
  if (!isObject(raw)) return raw;
  // kith's placeholder main vector is no vector on this port: no point has it (Qdrant's answer for a name the collection lacks).
  if (raw.has_vector === NO_DENSE_VECTOR) return { has_id: [] };
  if (Array.isArray(raw.has_id)) {
    const at = childPath(path, 'has_id');
    return { ...raw, has_id: raw.has_id.map((id, i) => toKithId(id, childPath(at, i))) };
  }
  if (isObject(raw.nested)) {
    const nested = raw.nested;
    return { ...raw, nested: { ...nested, filter: rewriteFilter(nested.filter, childPath(childPath(path, 'nested'), 'filter'), depth + 1) } };
  }
  if (Object.hasOwn(raw, 'key')) {
    // Qdrant's clients may send absent range bounds as null.
    const condition = isObject(raw.range) ? { ...raw, range: Object.fromEntries(Object.entries(raw.range).filter(([, v]) => v !== null)) } : raw;
    return withFlagForms(condition, path);
  }
  return rewriteFilter(raw, path, depth + 1);
}
