/**
 * External point ids. The wire accepts a non-empty string (at most 1024 UTF-8 bytes) or a
 * non-negative safe integer; both become the same string key, so `7` and `"7"` name one point.
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
  return raw;
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
