/**
 * Qdrant's error statuses on the Qdrant port. Kith's own errors (core/errors.ts) keep their
 * status; this adds what Qdrant answers and kith has no code for: 422 for a value out of range
 * ("Validation error"), and 400 for a feature of Qdrant kith does not have.
 */
import { describeJson } from '../../core/point-id.js';

export class QdrantHttpError extends Error {
  constructor(
    readonly statusCode: 400 | 403 | 404 | 409 | 422 | 429,
    message: string,
    /** Seconds a client should wait before trying again (a 429's Retry-After header). */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'QdrantHttpError';
  }
}

/** 400 "Format error in JSON body: <path>: <problem>" (wrong shape or kind). */
export function formatError(path: string, problem: string): QdrantHttpError {
  return new QdrantHttpError(400, `Format error in JSON body: ${path === '' ? problem : `${path}: ${problem}`}`);
}

/** Qdrant's 400 for a value none of an enum's: `unknown variant "x", expected one of a, b`. */
export function unknownVariant(path: string, value: unknown, expected: readonly string[]): QdrantHttpError {
  const given = typeof value === 'string' ? JSON.stringify(value) : describeJson(value);
  return formatError(path, `unknown variant ${given}, expected ${expected.length === 1 ? expected[0] : `one of ${expected.join(', ')}`}`);
}

/** 422 "Validation error in JSON body: <path>: <problem>" (right kind, value out of range). */
export function validationError(path: string, problem: string): QdrantHttpError {
  return new QdrantHttpError(422, `Validation error in JSON body: ${path}: ${problem}`);
}

/** 400 for a Qdrant feature kith does not implement; the message says so plainly. */
export function notSupported(path: string, what: string, yet = false): QdrantHttpError {
  return new QdrantHttpError(400, `Wrong input: ${path}: ${what} is not supported${yet ? ' yet' : ''} by kith's Qdrant API`);
}

/**
 * The query parameters every Qdrant route checks alike: `timeout` (seconds) a whole number ≥ 1, as
 * Qdrant validates it (422; text that is no number: 400). kith bounds each request's work before
 * it starts instead of timing it, so a valid timeout changes nothing.
 */
export function checkQueryParameters(query: unknown): void {
  if (typeof query !== 'object' || query === null) return;
  const timeout = (query as Record<string, unknown>).timeout;
  if (timeout === undefined) return;
  if (typeof timeout !== 'string' || !/^\d+$/.test(timeout)) {
    throw new QdrantHttpError(
      400,
      `Query deserialize error: timeout: invalid digit found in string: ${typeof timeout === 'string' ? JSON.stringify(timeout.slice(0, 40)) : describeJson(timeout)}`,
    );
  }
  if (Number(timeout) < 1)
    throw new QdrantHttpError(422, `Validation error in query parameters: [timeout: value ${Number(timeout)} invalid, must be 1 or larger]`);
}

/** A collection name longer than Qdrant's 255 characters, in a path: its 422. */
export function nameTooLong(name: string): QdrantHttpError {
  return new QdrantHttpError(
    422,
    `Validation error in path parameters: [collection_name: value of ${name.length} characters invalid, must be from 1 to 255 symbols]`,
  );
}

export function collectionNotFound(name: string): QdrantHttpError {
  return new QdrantHttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
}

/** Small shape checks shared by the route files; each throws formatError naming the path. */
export function asObject(raw: unknown, path: string): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw formatError(path, `expected an object, got ${describeJson(raw)}`);
  return raw as Record<string, unknown>;
}

export function optionalBoolean(raw: unknown, path: string, fallback: boolean): boolean {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== 'boolean') throw formatError(path, `expected a boolean, got ${describeJson(raw)}`);
  return raw;
}

export function optionalInteger(raw: unknown, path: string, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== 'number' || !Number.isInteger(raw)) throw formatError(path, `expected an integer, got ${describeJson(raw)}`);
  if (raw < min || raw > max) throw validationError(path, `must be between ${min} and ${max}, got ${raw}`);
  return raw;
}

export function optionalNumber(raw: unknown, path: string): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'number' || !Number.isFinite(raw)) throw formatError(path, `expected a number, got ${describeJson(raw)}`);
  return raw;
}
