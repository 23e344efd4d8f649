/**
 * The command line's two kinds of failure and their exit codes: a usage error (the command line
 * itself is wrong: a missing option, JSON that does not parse) exits 2, everything else exits 1.
 */
import { parseJson } from '../core/json-text.js';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * A failure with what to do next: `cause` is printed as any error is (`kith: message [CODE]`), then
 * each note on its own `kith:` line; the exit code is `exitCode` (1, or 128 + a signal's number).
 */
export class FailureWithNotes extends Error {
  override readonly name = 'FailureWithNotes';
  constructor(
    override readonly cause: unknown,
    readonly notes: readonly string[],
    readonly exitCode: number,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** `--filter '{"must":…}'` and the like: JSON from the command line, or a usage error naming the option. */
export function parseJsonOption(text: string, option: string): unknown {
  try {
    return parseJson(text);
  } catch (error) {
    throw new UsageError(`${option}: not valid JSON (${(error as Error).message})`);
  }
}

/** A positive integer option (`--limit 5`, `--batch 1000`). */
export function parsePositiveInt(text: string, option: string, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > max) throw new UsageError(`${option}: expected an integer from 1 to ${max}, got ${JSON.stringify(text)}`);
  return value;
}
