/**
 * Point ids on the Qdrant port. Qdrant ids are unsigned integers or UUIDs; kith ids are strings.
 * One rule holds on both ports (core/point-id.ts): an integer n is the id "n", a UUID in any
 * spelling is its canonical lowercase hyphenated form, and every other string is itself.
 *
 *   Qdrant → kith: integer n → "n"; a string → normalizePointId (a UUID spelling → canonical; any
 *   other string, such as an id written on kith's port ("doc-a", "007"), → itself: an extension
 *   of Qdrant, which takes only UUID strings, so that every id this port shows can be sent back).
 *   kith → Qdrant: "n" (canonical decimal, a safe integer) → the number n; anything else → the
 *   string as it is.
 *
 * Order (scroll, a query without a vector): compareIds (integers, then UUIDs, then other ids).
 */
import { formatError } from './errors.js';
import { isKithError } from '../../core/errors.js';
import { describeJson, isIntegerId, normalizePointId, type PointId } from '../../core/point-id.js';

export type QdrantId = number | string;

/** A Qdrant id from a request body → kith's id; 400 naming the path otherwise. */
export function toKithId(raw: unknown, path: string): PointId {
  if (typeof raw === 'number') {
    if (Number.isSafeInteger(raw) && raw >= 0) return String(raw);
    throw formatError(path, `value ${raw} is not a valid point ID; expected an unsigned integer (at most 2^53 − 1 here) or a UUID`);
  }
  if (typeof raw !== 'string') throw formatError(path, `expected a point ID (an unsigned integer or a UUID), got ${describeJson(raw)}`);
  try {
    return normalizePointId(raw, path);
  } catch (error) {
    if (isKithError(error)) throw formatError('', error.message);
    throw error;
  }
}

/**
 * An id from a URL path segment: a canonical decimal (no leading zeros) is an integer id, as
 * Qdrant reads it; any other text is a string id (a UUID in any spelling, or a kith id such as
 * "007", which this port shows as the string "007").
 */
export function pathIdToKithId(text: string): PointId {
  return toKithId(text, 'id');
}

/** kith's id → what the Qdrant port shows. */
export function toQdrantId(id: PointId): QdrantId {
  return isIntegerId(id) ? Number(id) : id;
}
