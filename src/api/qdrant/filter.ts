/**
 * Qdrant filter JSON → kith's filter (payload/filter-parse.ts). The two languages coincide on
 * must / must_not / should, `key` + `match {value | any | except}` and `range`; this module
 * rewrites the rest of Qdrant's spelling and refuses, with a 400 naming the path, the
 * conditions kith does not evaluate yet.
 *
 * Differences handled here:
 * - a clause may be one condition object instead of a list (Qdrant accepts both);
 * - `should: []` matches nothing in Qdrant (no alternative holds) while kith ignores an empty
 *   `should`; it becomes a `must_not` of the always-true empty filter;
 * - `range` bounds may be null (absent).
 */
import { childPath } from '../../core/field-path.js';
import { describeJson } from '../../core/point-id.js';
import { parseFilter } from '../../payload/filter-parse.js';
import type { Filter } from '../../payload/filter-types.js';
import { formatError, notSupported } from './errors.js';

const CLAUSES = ['must', 'must_not', 'should'] as const;
/** Qdrant conditions kith has no evaluator for yet. */
const UNSUPPORTED_CONDITIONS = ['is_empty', 'is_null', 'has_id', 'nested', 'has_vector'];
const UNSUPPORTED_FIELD_KEYS = ['geo_radius', 'geo_bounding_box', 'geo_polygon', 'values_count'];
const UNSUPPORTED_MATCH_KEYS = ['text', 'text_any', 'phrase'];

/** Parses a Qdrant filter; null/undefined mean "no filter". */
export function parseQdrantFilter(raw: unknown, path = 'filter'): Filter | undefined {
  if (raw === undefined || raw === null) return undefined;
  return parseFilter(translateFilter(raw, path), path);
}

function isObject(raw: unknown): raw is Record<string, unknown> {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw);
}

function translateFilter(raw: unknown, path: string): Record<string, unknown> {
  if (!isObject(raw)) throw formatError(path, `expected a filter object, got ${describeJson(raw)}`);
  if (raw.min_should !== undefined && raw.min_should !== null) throw notSupported(childPath(path, 'min_should'), '`min_should`', true);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'min_should') continue;
    if (!(CLAUSES as readonly string[]).includes(key)) throw formatError(childPath(path, key), 'unknown field; a filter has must, must_not, should');
    if (value === undefined || value === null) continue;
    const list = Array.isArray(value) ? value : [value];
    out[key] = list.map((c, i) => translateCondition(c, Array.isArray(value) ? childPath(childPath(path, key), i) : childPath(path, key)));
  }
  if (Array.isArray(raw.should) && raw.should.length === 0) {
    out.must_not = [...((out.must_not as unknown[] | undefined) ?? []), {}];
  }
  return out;
}

function translateCondition(raw: unknown, path: string): unknown {
  if (!isObject(raw)) throw formatError(path, `expected a condition object, got ${describeJson(raw)}`);
  for (const name of UNSUPPORTED_CONDITIONS) {
    if (Object.hasOwn(raw, name)) throw notSupported(childPath(path, name), `the \`${name}\` condition`, true);
  }
  if (!Object.hasOwn(raw, 'key')) return translateFilter(raw, path);
  for (const name of UNSUPPORTED_FIELD_KEYS) {
    if (raw[name] !== undefined && raw[name] !== null) throw notSupported(childPath(path, name), `the \`${name}\` condition`, true);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null || UNSUPPORTED_FIELD_KEYS.includes(key)) continue;
    out[key] = value;
  }
  if (isObject(raw.match)) {
    for (const name of UNSUPPORTED_MATCH_KEYS) {
      if (Object.hasOwn(raw.match, name)) throw notSupported(childPath(childPath(path, 'match'), name), `\`match.${name}\``, true);
    }
  }
  if (isObject(raw.range)) {
    out.range = Object.fromEntries(Object.entries(raw.range).filter(([, v]) => v !== null));
  }
  return out;
}
