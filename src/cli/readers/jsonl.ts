/**
 * JSON Lines: one `{"id", "version", "vector", "payload"}` object a line (version and payload
 * optional; blank lines skipped; a UTF-8 byte order mark skipped, as CSV does). A version (what
 * `kith export` writes) is a decimal string. Every line is checked here, against the collection's
 * dimension and as the server checks a payload, so that an error names the line:
 * `points.jsonl:17: vector: expected 4 numbers, got 3`.
 */
import { isKithError } from '../../core/errors.js';
import { checkJsonValue } from '../../payload/json-value.js';
import type { PointLine } from '../target.js';
import { InputFileError, type SourcePoint } from './source.js';
import { readTextLines } from './text-lines.js';
import { parseJson } from '../../core/json-text.js';

const KEYS = new Set(['id', 'version', 'vector', 'payload']);

/** Versions are u64 (nanoseconds); 0 is never handed out. */
const MAX_VERSION = (1n << 64n) - 1n;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === 'object' ? 'an object' : String(value);
}

/** The problem with one parsed line, as `field: problem`, or the point. */
export function checkLine(value: unknown, dim: number): PointLine | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `expected an object {"id", "vector", "payload"}, got ${describe(value)}`;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!KEYS.has(key)) return `${key}: unknown field (expected id, version, vector, payload)`;
  const { id, version, vector, payload } = record;
  if (id === undefined) return 'id: required';
  if (typeof id === 'number' ? !Number.isSafeInteger(id) || id < 0 : typeof id !== 'string' || id === '') {
    return `id: expected a non-empty string or a non-negative integer, got ${describe(id)}`;
  }
  const versionText = typeof version === 'number' && Number.isSafeInteger(version) ? String(version) : version;
  if (versionText !== undefined && (typeof versionText !== 'string' || !/^[1-9]\d{0,19}$/.test(versionText) || BigInt(versionText) > MAX_VERSION)) {
    return `version: expected a positive integer below 2^64 as a decimal string, got ${describe(version)}`;
  }
  if (vector === undefined) return 'vector: required';
  if (!Array.isArray(vector)) return `vector: expected ${dim} numbers, got ${describe(vector)}`;
  if (vector.length !== dim) return `vector: expected ${dim} numbers, got ${vector.length}`;
  for (let i = 0; i < vector.length; i++) {
    const x: unknown = vector[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) return `vector[${i}]: expected a finite number, got ${describe(x)}`;
  }
  if (payload !== undefined && payload !== null && (typeof payload !== 'object' || Array.isArray(payload)))
    return `payload: expected an object, got ${describe(payload)}`;
  try {
    // Nesting, non-finite numbers, keys such as __proto__: refused here with the line, not by the server for the whole batch.
    if (payload !== undefined && payload !== null) checkJsonValue(payload, 'payload');
  } catch (error) {
    if (isKithError(error)) return error.message;
    throw error;
  }
  return {
    id: id as string | number,
    ...(versionText === undefined ? {} : { version: versionText }),
    vector: vector as number[],
    ...(payload === undefined || payload === null ? {} : { payload: payload as Record<string, unknown> }),
  };
}

export async function* readJsonl(path: string, label: string, dim: number): AsyncGenerator<SourcePoint> {
  for await (const { text, line, bytesRead } of readTextLines(path, label)) {
    if (text.trim() === '') continue;
    const location = `${label}:${line}`;
    let value: unknown;
    try {
      value = parseJson(text);
    } catch (error) {
      throw new InputFileError(`${location}: not valid JSON (${(error as Error).message})`);
    }
    const checked = checkLine(value, dim);
    if (typeof checked === 'string') throw new InputFileError(`${location}: ${checked}`);
    yield { location, point: checked, bytesRead };
  }
}
