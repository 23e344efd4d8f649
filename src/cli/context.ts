/**
 * The options every data command shares (where the data is) and opening that target: `--db FILE`
 * (default ./kith.db) or `--url http://…` with `--api-key` — never both.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from './errors.js';
import type { Target } from './target.js';
import { openEmbedded } from './target-embedded.js';
import { openRemote } from './target-remote.js';

export interface TargetOptions {
  readonly db?: string;
  readonly url?: string;
  readonly apiKey?: string;
}

export const DEFAULT_DB = 'kith.db';

/**
 * What a command does with a database file: `read` opens it read-only (nothing written, no lock
 * file left beside it); `write` needs it to exist; `create` makes it when missing (import).
 */
export type TargetAccess = 'read' | 'write' | 'create';

export function addTargetOptions(command: Command): Command {
  return command
    .option('--db <file>', `database file, opened directly (default ./${DEFAULT_DB}); refused while a server holds it`)
    .option('--url <url>', 'a running kith server instead of a file, e.g. http://localhost:18080')
    .option('--api-key <key>', 'API key for --url (env KITH_API_KEY)');
}

/** A missing file is an error, not a new empty database, unless `access` is `create`. */
export function openTarget(options: TargetOptions, access: TargetAccess = 'write'): Target {
  if (options.db !== undefined && options.url !== undefined) throw new UsageError('--db and --url: give one, not both');
  if (options.url !== undefined) {
    if (!/^https?:\/\/./.test(options.url)) throw new UsageError(`--url: expected http://HOST:PORT, got ${JSON.stringify(options.url)}`);
    const apiKey = options.apiKey ?? process.env.KITH_API_KEY;
    return openRemote(options.url, apiKey === '' ? undefined : apiKey);
  }
  if (options.apiKey !== undefined) throw new UsageError('--api-key goes with --url');
  if (options.db === '') throw new UsageError('--db: expected a file path');
  const path = options.db ?? DEFAULT_DB;
  if (access !== 'create' && !existsSync(path)) throw new Error(`database file ${path} does not exist (give its path with --db, or a server with --url)`);
  return openEmbedded(path, access === 'read');
}

/** Opens the target, runs `work`, and closes the target whatever happens (a file is made durable and unlocked). */
export async function withTarget<T>(options: TargetOptions, work: (target: Target) => Promise<T>, access: TargetAccess = 'write'): Promise<T> {
  const target = openTarget(options, access);
  try {
    return await work(target);
  } finally {
    await target.close();
  }
}
