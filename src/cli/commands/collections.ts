/** `kith ls`, `kith info C`, `kith drop C`. */
import type { Command } from 'commander';
import { addTargetOptions, type TargetOptions, withTarget } from '../context.js';
import { table, toJson } from '../output.js';

interface JsonOption {
  readonly json?: boolean;
}

export function registerCollectionCommands(program: Command): void {
  addTargetOptions(program.command('ls').description('list the collections: name, dimension, distance, index, points'))
    .option('--json', 'print JSON instead of a table')
    .action(async (options: TargetOptions & JsonOption) => {
      const collections = await withTarget(options, (target) => target.list(), 'read');
      if (options.json === true) {
        process.stdout.write(`${toJson(collections, 2)}\n`);
        return;
      }
      if (collections.length === 0) {
        process.stdout.write('no collections\n');
        return;
      }
      const rows = collections.map((c) => [c.name, String(c.vector_size), c.distance, c.hnsw ? 'hnsw' : 'flat', String(c.points_count)]);
      process.stdout.write(`${table(['NAME', 'DIM', 'DISTANCE', 'INDEX', 'POINTS'], rows)}\n`);
    });

  addTargetOptions(program.command('info').description("a collection's configuration and point count, as JSON").argument('<collection>'))
    .action(async (name: string, options: TargetOptions) => {
      const info = await withTarget(options, (target) => target.info(name), 'read');
      process.stdout.write(`${toJson(info, 2)}\n`);
    });

  addTargetOptions(program.command('drop').description('drop a collection and every point in it').argument('<collection>'))
    .action(async (name: string, options: TargetOptions) => {
      await withTarget(options, (target) => target.drop(name));
      process.stdout.write(`dropped collection ${name}\n`);
    });
}
