/**
 * An applied position: how far into an ordered log (a stream and a sequence number in it) a
 * collection's stored state goes. A write can carry one; it is stored in the same transaction as
 * the write's records, so after any crash the position and the records agree, and a replica knows
 * exactly where to resume.
 */
import { badInput } from './errors.js';
import { childPath } from './field-path.js';
import { parseJson } from './json-text.js';
import { describeJson } from './point-id.js';

export interface AppliedPosition {
  /** The log's name: 1–255 characters. */
  readonly stream: string;
  /** The position in it: an integer from 0 to 2^64 − 1. */
  readonly sequence: bigint;
}

const MAX_SEQUENCE = (1n << 64n) - 1n;
const MAX_STREAM_CHARS = 255;

/** Checks an applied position from a caller (ERR_BAD_INPUT naming `path`); returns it as given. */
export function checkAppliedPosition(value: unknown, path: string): AppliedPosition {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badInput(path, `expected { stream, sequence }, got ${describeJson(value)}`);
  const { stream, sequence } = value as { stream?: unknown; sequence?: unknown };
  if (typeof stream !== 'string' || stream.length === 0 || stream.length > MAX_STREAM_CHARS)
    throw badInput(childPath(path, 'stream'), `expected a string of 1 to ${MAX_STREAM_CHARS} characters, got ${describeJson(stream)}`);
  if (typeof sequence !== 'bigint' || sequence < 0n || sequence > MAX_SEQUENCE)
    throw badInput(childPath(path, 'sequence'), `expected a bigint from 0 to 2^64 − 1, got ${describeJson(sequence)}`);
  return { stream, sequence };
}

/** The stored form: JSON text with the sequence as a decimal string. */
export function encodeAppliedPosition(position: AppliedPosition): string {
  return JSON.stringify({ stream: position.stream, sequence: position.sequence.toString() });
}

/** Reads the stored form back; undefined when it does not decode (the caller reports it). */
export function decodeAppliedPosition(text: unknown): AppliedPosition | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const value = parseJson(text) as { stream?: unknown; sequence?: unknown };
    if (typeof value.stream !== 'string' || typeof value.sequence !== 'string' || !/^(0|[1-9][0-9]*)$/.test(value.sequence)) return undefined;
    const sequence = BigInt(value.sequence);
    return sequence > MAX_SEQUENCE ? undefined : { stream: value.stream, sequence };
  } catch {
    return undefined;
  }
}
