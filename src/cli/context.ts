/**
 * The options every data command shares (where the data is) and opening that target: `--db FILE`
 * or `--url http://…` with `--api-key` — never both. Without either, the environment's KITH_URL
 * names a server; without that, the file ./kith.db. A flag wins over the environment, and the
 * environment over the default file.
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
    .option('--url <url>', 'a running kith server instead of a file, e.g. http://localhost:18080 (env KITH_URL)')
    .option('--api-key <key>', 'API key for --url (env KITH_API_KEY)');
}

/** Where a command goes: a server (`url`, with its API key) or a database file (`db`). */
export type Where = { readonly url: string; readonly apiKey: string | undefined } | { readonly db: string };

/** `--db`/`--url` as given, else KITH_URL, else ./kith.db; checks the combination and the URL's shape. */
export function resolveWhere(options: TargetOptions): Where {
  if (options.db !== undefined && options.url !== undefined) throw new UsageError('--db and --url: give one, not both');
  const fromEnv = process.env.KITH_URL;
  const url = options.url ?? (options.db === undefined && fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined);
  if (url !== undefined) {
    const named = options.url === undefined ? 'KITH_URL' : '--url';
    if (!/^https?:\/\/./.test(url)) throw new UsageError(`${named}: expected http://HOST:PORT, got ${JSON.stringify(url)}`);
    const apiKey = options.apiKey ?? process.env.KITH_API_KEY;
    return { url, apiKey: apiKey === '' ? undefined : apiKey };
  }
  if (options.apiKey !== undefined) throw new UsageError('--api-key goes with --url (or KITH_URL)');
  if (options.db === '') throw new UsageError('--db: expected a file path');
  return { db: options.db ?? DEFAULT_DB };
}

/** A missing file is an error, not a new empty database, unless `access` is `create`; `read` opens the file read-only. */
export function openTarget(options: TargetOptions, access: TargetAccess = 'write'): Target {
  const where = resolveWhere(options);
  if ('url' in where) return openRemote(where.url, where.apiKey);
  if (access !== 'create' && !existsSync(where.db))
    throw new Error(`database file ${where.db} does not exist (give its path with --db, or a server with --url)`);
  return openEmbedded(where.db, access === 'read');
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
