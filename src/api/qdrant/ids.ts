/**
 * Point ids on the Qdrant port. Qdrant ids are unsigned integers or UUIDs; kith ids are strings
 * (an integer n is stored as "n", which kith already treats as the same point as the number n).
 *
 *   Qdrant → kith: integer n → "n"; a UUID in any spelling Qdrant accepts (hyphenated, 32 hex
 *   digits, {braced}, urn:uuid:, any case) → its canonical lowercase hyphenated form.
 *   kith → Qdrant: "n" (canonical decimal, a safe integer) → the number n; a canonical UUID → the
 *   string; any other kith id (written through the kith port) → the string as it is.
 *
 * Order (scroll, a query without a vector): integers numerically, then UUIDs (by their bytes,
 * which is the order of their canonical text), then other kith ids by code unit.
 */
import type { PointId } from '../../core/point-id.js';
import { describeJson } from '../../core/point-id.js';
import { formatError } from './errors.js';

export type QdrantId = number | string;

const HYPHENATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SIMPLE = /^[0-9a-f]{32}$/i;
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CANONICAL_INTEGER = /^(0|[1-9][0-9]*)$/;

/** The canonical form of a UUID spelling, or undefined when the text is not one. */
export function canonicalUuid(text: string): string | undefined {
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

/** A Qdrant id from a request body → kith's id; 400 naming the path otherwise. */
export function toKithId(raw: unknown, path: string): PointId {
  if (typeof raw === 'number') {
    if (Number.isSafeInteger(raw) && raw >= 0) return String(raw);
    throw formatError(path, `value ${raw} is not a valid point ID; expected an unsigned integer (at most 2^53 − 1 here) or a UUID`);
  }
  if (typeof raw === 'string') {
    const uuid = canonicalUuid(raw);
    if (uuid !== undefined) return uuid;
    throw formatError(path, `value ${JSON.stringify(raw.slice(0, 100))} is not a valid point ID; expected an unsigned integer or a UUID`);
  }
  throw formatError(path, `expected a point ID (an unsigned integer or a UUID), got ${describeJson(raw)}`);
}

/** An id from a URL path segment: decimal digits are an integer id, anything else must be a UUID. */
export function pathIdToKithId(text: string): PointId {
  if (/^[0-9]+$/.test(text)) return toKithId(Number(text), 'id');
  return toKithId(text, 'id');
}

/** kith's id → what the Qdrant port shows. */
export function toQdrantId(id: PointId): QdrantId {
  if (CANONICAL_INTEGER.test(id)) {
    const n = Number(id);
    if (Number.isSafeInteger(n)) return n;
  }
  return id;
}

function rank(id: PointId): number {
  if (CANONICAL_INTEGER.test(id) && Number.isSafeInteger(Number(id))) return 0;
  return CANONICAL_UUID.test(id) ? 1 : 2;
}

/** Qdrant's id order over kith ids (see the module comment). */
export function compareIds(a: PointId, b: PointId): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}
