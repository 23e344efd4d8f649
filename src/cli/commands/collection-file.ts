/**
 * `kith dump-collection C DEST --db FILE` and `kith load-collection SRC --db FILE [--name N]`: one
 * collection as a collection export (docs/storage.md, "Collection export and import"), read from one
 * read transaction of the file, and made a collection of another file all or nothing. Unlike
 * `kith export` (JSON Lines, the points only), the stream carries the configuration, the applied
 * position, the annotations and the graph snapshot, so the loaded collection need not rebuild its
 * graph. From a file only (--db): a server does not offer it yet.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { Database } from '../../db/database.js';
import { addTargetOptions, resolveWhere, type TargetOptions } from '../context.js';
import { UsageError } from '../errors.js';

interface LoadOptions extends TargetOptions {
  readonly name?: string;
}

function dbPath(options: TargetOptions, command: string): string {
  const where = resolveWhere(options);
  if ('url' in where) throw new UsageError(`${command}: works on a database file (--db); a server does not offer it`);
  return where.db;
}

function openDb(path: string, readOnly: boolean): Database {
  return Database.open(path, { readOnly, onWarning: (message) => process.stderr.write(`kith: warning: ${message}\n`) });
}

export function registerCollectionFileCommands(program: Command): void {
  addTargetOptions(
    program
      .command('dump-collection')
      .description('write one collection (points, configuration, applied position, graph) as a collection export to DEST, a new file')
      .argument('<collection>')
      .argument('<dest>'),
  ).action(async (name: string, dest: string, options: TargetOptions) => {
    const path = dbPath(options, 'dump-collection');
    if (existsSync(dest)) throw new UsageError(`${dest} already exists; a dump is written to a new file`);
    const partial = `${dest}.partial`;
    const db = openDb(path, true);
    try {
      await pipeline(Readable.from(db.exportCollection(name)), createWriteStream(partial, { flags: 'wx' }));
      const handle = await open(partial, 'r');
      await handle.sync().finally(() => handle.close());
      await rename(partial, dest);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    } finally {
      await db.close();
    }
  });

  addTargetOptions(
    program
      .command('load-collection')
      .description('make a collection export (from dump-collection) a collection of the database, all or nothing')
      .argument('<src>')
      .option('--name <name>', "the new collection's name (default: the dumped one)"),
  ).action(async (src: string, options: LoadOptions) => {
    const path = dbPath(options, 'load-collection');
    if (!existsSync(src)) throw new UsageError(`${src} does not exist`);
    const db = openDb(path, false);
    try {
      const info = await db.importCollection(createReadStream(src), options.name === undefined ? {} : { name: options.name });
      process.stdout.write(`loaded collection "${info.name}": ${info.points_count} points\n`);
    } finally {
      await db.close();
    }
  });
}
