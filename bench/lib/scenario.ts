/** What `bench/run.ts` dispatches to: one scenario per file under bench/scenarios/. */
import { parseArgs } from 'node:util';

export interface Scenario {
  readonly name: string;
  /** One line for the usage listing. */
  readonly summary: string;
  /** The option lines printed by `--help`. */
  readonly options: string;
  run(argv: readonly string[]): Promise<void>;
}

/** A bad command line: run.ts prints the message and the usage, and exits 2. */
export class UsageError extends Error {}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/** `util.parseArgs`, strict, with parse errors turned into UsageError. */
export function parseOptions(argv: readonly string[], options: OptionSpec): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function positiveInt(text: string | boolean | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (typeof text !== 'string' || !/^\d+$/.test(text) || n < 1 || !Number.isSafeInteger(n)) {
    throw new UsageError(`${flag}: expected a positive integer, got ${JSON.stringify(text)}`);
  }
  return n;
}

export function positiveIntList(text: string | boolean | undefined, flag: string, fallback: readonly number[]): number[] {
  if (text === undefined) return [...fallback];
  if (typeof text !== 'string' || text.trim() === '') throw new UsageError(`${flag}: expected a comma-separated list of positive integers`);
  return text.split(',').map((part) => positiveInt(part.trim().replace(/_/g, ''), flag, 0));
}

export function oneOf<T extends string>(text: string | boolean | undefined, flag: string, allowed: readonly T[], fallback: T): T {
  if (text === undefined) return fallback;
  if (typeof text !== 'string' || !(allowed as readonly string[]).includes(text)) {
    throw new UsageError(`${flag}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(text)}`);
  }
  return text as T;
}

/** A comma-separated subset of `allowed` (all of it when the flag is absent), without repeats. */
export function nameList<T extends string>(text: string | boolean | undefined, flag: string, allowed: readonly T[]): T[] {
  if (text === undefined) return [...allowed];
  if (typeof text !== 'string' || text.trim() === '') throw new UsageError(`${flag}: expected a comma-separated list of ${allowed.join(', ')}`);
  const names = text.split(',').map((part) => part.trim());
  for (const name of names) {
    if (!(allowed as readonly string[]).includes(name))
      throw new UsageError(`${flag}: unknown ${JSON.stringify(name)}; expected some of ${allowed.join(', ')}`);
  }
  return [...new Set(names)] as T[];
}
