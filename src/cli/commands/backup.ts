/**
 * `kith backup DEST`: a consistent copy of the database, taken while it serves. From a file
 * (--db), LMDB's own copy (Database.backup); from a server (--url), the stream of its POST /backup.
 * Either way the copy is written to `DEST.partial`, fsynced, then renamed to DEST (and the folder
 * fsynced): DEST appears only whole, and a failed backup exits 1 leaving neither file.
 */
import { existsSync } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { KithClientError } from '../../api/client/kith-client.js';
import { addTargetOptions, openTarget, resolveWhere, type TargetOptions } from '../context.js';
import { UsageError } from '../errors.js';
import { cannotReach } from '../target-remote.js';

interface BackupOptions extends TargetOptions {
  readonly quiet?: boolean;
}

async function fsyncPath(path: string, flags = 'r'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** POST /backup into `partial`; the byte count must be the Content-Length the server announced. */
async function download(url: string, apiKey: string | undefined, partial: string): Promise<number> {
  const base = url.replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(`${base}/backup`, { method: 'POST', headers: apiKey === undefined ? {} : { 'api-key': apiKey } });
  } catch (error) {
    throw cannotReach(base, error);
  }
  if (!response.ok || response.body === null) {
    // The envelope's message and code, printed as every command prints a server's refusal.
    const refused = KithClientError.fromAnswer(response.status, await response.text(), `POST ${base}/backup`);
    throw new KithClientError(refused.status, `POST ${base}/backup: HTTP ${response.status}: ${refused.message}`, refused.code);
  }
  const expected = Number(response.headers.get('content-length') ?? Number.NaN);
  const file = await open(partial, 'wx');
  let received = 0;
  try {
    for await (const chunk of Readable.fromWeb(response.body as WebReadableStream<Uint8Array>)) {
      const bytes = chunk as Buffer;
      for (let at = 0; at < bytes.length; ) at += (await file.write(bytes, at)).bytesWritten;
      received += bytes.length;
    }
    await file.sync();
  } finally {
    await file.close();
  }
  if (Number.isFinite(expected) && received !== expected) throw new Error(`the server announced ${expected} bytes but sent ${received}`);
  return received;
}

export function registerBackupCommand(program: Command): void {
  addTargetOptions(
    program
      .command('backup')
      .description('write a consistent copy of the database (from --db FILE or a running server --url) to DEST, a new file')
      .argument('<dest>'),
  )
    .option('--quiet', 'print nothing on success')
    .action(async (dest: string, options: BackupOptions) => {
      if (dest === '') throw new UsageError('backup: expected a destination file path');
      if (existsSync(dest)) throw new UsageError(`${dest} already exists; a backup is written to a new file`);
      const partial = `${dest}.partial`;
      if (existsSync(partial)) throw new UsageError(`${partial} exists (left by another backup?); remove it first`);
      const where = resolveWhere(options); // --url or KITH_URL, checked the way every command does
      const started = performance.now();
      try {
        if ('url' in where) {
          await download(where.url, where.apiKey, partial);
        } else {
          const target = openTarget(options, 'read');
          try {
            await target.backup(partial);
          } finally {
            await target.close();
          }
          await fsyncPath(partial);
        }
        await rename(partial, dest);
        await fsyncPath(dirname(dest));
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      const { size } = await stat(dest);
      if (options.quiet !== true) {
        const seconds = (performance.now() - started) / 1000;
        process.stdout.write(`backed up ${'url' in where ? where.url : where.db} to ${dest}: ${(size / 1048576).toFixed(1)} MiB in ${seconds.toFixed(1)} s\n`);
      }
    });
}
