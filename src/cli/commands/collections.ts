/** `kith ls`, `kith info C`, `kith drop C`. */
import type { Command } from 'commander';
import { askOnTerminal } from '../confirm.js';
import { addTargetOptions, type TargetOptions, withTarget } from '../context.js';
import { UsageError } from '../errors.js';
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

  addTargetOptions(program.command('info').description("a collection's configuration and point count, as JSON").argument('<collection>')).action(
    async (name: string, options: TargetOptions) => {
      const info = await withTarget(options, (target) => target.info(name), 'read');
      process.stdout.write(`${toJson(info, 2)}\n`);
    },
  );

  addTargetOptions(program.command('drop').description('drop a collection and every point in it; asks first on a terminal').argument('<collection>'))
    .option('--yes', 'drop without asking (required when stdin is not a terminal)')
    .action(async (name: string, options: TargetOptions & { yes?: boolean }) => {
      const ask = options.yes !== true;
      if (ask && process.stdin.isTTY !== true) {
        throw new UsageError(`drop: stdin is not a terminal, so no one can confirm; pass --yes to drop ${name} without asking`);
      }
      const dropped = await withTarget(options, async (target) => {
        if (ask) {
          const { points_count } = await target.info(name);
          if (!(await askOnTerminal(`drop collection ${name} and its ${points_count} point${points_count === 1 ? '' : 's'} (${target.where})? [y/N] `)))
            return false;
        }
        await target.drop(name);
        return true;
      });
      if (!dropped) throw new Error(`${name} not dropped`);
      process.stdout.write(`dropped collection ${name}\n`);
    });
}
