/**
 * External point ids. The wire accepts a non-empty string (at most 1024 UTF-8 bytes) or a
 * non-negative safe integer; both become the same string key, so `7` and `"7"` name one point.
 * A string that spells a UUID in any of the forms Qdrant accepts (hyphenated in any case, 32 hex
 * digits, `{braced}`, `urn:uuid:`) becomes its canonical form (lowercase, hyphenated), so one UUID
 * is one point whatever its spelling, on both ports (docs/qdrant.md, "Point ids").
 */
import { badInput } from './errors.js';

export const MAX_POINT_ID_BYTES = 1024;

export type PointId = string;

export function normalizePointId(raw: unknown, path: string): PointId {
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw) || raw < 0) {
      throw badInput(path, `expected a non-empty string or a non-negative safe integer, got ${raw}`);
    }
    return String(raw);
  }
  if (typeof raw !== 'string') {
    throw badInput(path, `expected a non-empty string or a non-negative safe integer, got ${describeJson(raw)}`);
  }
  if (raw.length === 0) throw badInput(path, 'must not be empty');
  if (!raw.isWellFormed()) throw badInput(path, 'must be valid Unicode (it holds a lone surrogate)');
  const bytes = Buffer.byteLength(raw, 'utf8');
  if (bytes > MAX_POINT_ID_BYTES) {
    throw badInput(path, `is ${bytes} UTF-8 bytes long; the limit is ${MAX_POINT_ID_BYTES}`);
  }
  return canonicalUuid(raw) ?? raw;
}

const HYPHENATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SIMPLE = /^[0-9a-f]{32}$/i;
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CANONICAL_INTEGER = /^(0|[1-9][0-9]*)$/;

/** The canonical form of a UUID spelling (lowercase, hyphenated), or undefined when the text is not one. */
export function canonicalUuid(text: string): string | undefined {
  // Only UUID-long texts can spell one: most ids are rejected by their length alone.
  if (text.length !== 36 && text.length !== 32 && text.length !== 38 && text.length !== 45) return undefined;
  let body = text;
  if (body.length === 45 && body.slice(0, 9).toLowerCase() === 'urn:uuid:') body = body.slice(9);
  else if (body.length === 38 && body.startsWith('{') && body.endsWith('}')) body = body.slice(1, -1);
  if (HYPHENATED.test(body)) return body.toLowerCase();
  if (SIMPLE.test(body) && body === text) {
    const h = body.toLowerCase();
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  return undefined;
}

/** Whether an id is the canonical text of an integer id (what `7` becomes): a safe integer without leading zeros. */
export function isIntegerId(id: PointId): boolean {
  return CANONICAL_INTEGER.test(id) && Number.isSafeInteger(Number(id));
}

/** An id's class in the scroll order (compareIds): 0 integer ids, 1 UUIDs, 2 every other id. */
export function idRank(id: PointId): number {
  if (isIntegerId(id)) return 0;
  return CANONICAL_UUID.test(id) ? 1 : 2;
}

/**
 * The order of ids in a scroll (and a query without a vector): integer ids numerically, then
 * UUIDs (by their bytes, which is the order of their canonical text), then every other id by
 * UTF-16 code unit. It is Qdrant's order, extended to kith's string ids.
 */
export function compareIds(a: PointId, b: PointId): number {
  const ra = idRank(a);
  const rb = idRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A short name of a JSON value's kind, for error messages. */
export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'object':
      return 'an object';
    case 'string':
      return 'a string';
    case 'number':
      return Number.isFinite(value) ? 'a number' : 'a non-finite number';
    case 'boolean':
      return 'a boolean';
    default:
      return typeof value;
  }
}
