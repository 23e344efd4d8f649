/**
 * What a failed or interrupted import leaves, and what to run next. The import owns only a
 * collection it created: if nothing of the file reached it, it is dropped again, so a failure
 * leaves no empty collection behind; a collection the user named is never dropped. Whatever is
 * durable stays, and the message says how many points of the file that is and the exact command
 * that goes on from there (`--skip N`, the points already written).
 */
import { InputFileError } from '../readers/source.js';
import type { Target } from '../target.js';
import type { ImportTally } from './batches.js';

/** A word as a POSIX shell reads it back: as it is when safe, else in single quotes. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Options whose value is the next word (or after `=`); those dropped from a printed command. */
function withoutOption(args: readonly string[], option: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === option) {
      i++;
      continue;
    }
    if (arg.startsWith(`${option}=`)) continue;
    out.push(arg);
  }
  return out;
}

/** The same `kith import …` with `--skip N`; an API key given on the command line is not printed (KITH_API_KEY instead). */
export function resumeCommand(rawArgs: readonly string[], skip: number): string {
  const keyed = rawArgs.some((arg) => arg === '--api-key' || arg.startsWith('--api-key='));
  const args = withoutOption(withoutOption(rawArgs, '--skip'), '--api-key');
  const prefix = keyed ? 'KITH_API_KEY=… ' : '';
  return `${prefix}kith ${[...args, '--skip', String(skip)].map(shellQuote).join(' ')}`;
}

/** The `--db`/`--url` words of the command line, for a `kith drop` that goes to the same place. */
function targetArgs(rawArgs: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i] as string;
    if ((arg === '--db' || arg === '--url') && i + 1 < rawArgs.length) out.push(arg, rawArgs[++i] as string);
    else if (arg.startsWith('--db=') || arg.startsWith('--url=')) out.push(arg);
  }
  return out;
}

export interface FailedImport {
  readonly target: Target;
  readonly collection: string;
  /** Whether this import created the collection. */
  readonly created: boolean;
  readonly tally: ImportTally;
  readonly file: string;
  /** The command line as given (`import FILE --collection C …`). */
  readonly rawArgs: readonly string[];
  readonly error: unknown;
}

/** Drops the collection if this import created it and wrote nothing; returns the lines to print after the error. */
export async function afterFailure(failed: FailedImport): Promise<string[]> {
  const { target, collection, created, tally, file, rawArgs, error } = failed;
  const dropCommand = `kith drop ${[collection, '--yes', ...targetArgs(rawArgs)].map(shellQuote).join(' ')}`;
  if (tally.batches === 0 && created) {
    try {
      await target.drop(collection);
      return [`nothing was written; ${collection}, which this import created, was dropped again`];
    } catch (dropError) {
      return [
        `nothing was written, but ${collection}, which this import created, could not be dropped again (${(dropError as Error).message})`,
        `drop it with: ${dropCommand}`,
      ];
    }
  }
  const fix = error instanceof InputFileError ? ' once the file is fixed' : '';
  if (tally.durable === 0) return [`nothing was written to ${collection}; to import${fix}, run the same command again`];
  const kept = created ? `, which this import created and keeps with them` : '';
  return [
    `the first ${tally.durable} point${tally.durable === 1 ? '' : 's'} of ${file} (through ${tally.durableThrough}) are durable in ${collection}${kept}; the rest is not written`,
    `to resume${fix}, run: ${resumeCommand(rawArgs, tally.durable)}`,
    created ? `or, to start over: ${dropCommand}` : `(running the same command again gives the same collection too: upserts replace points by id)`,
  ];
}
