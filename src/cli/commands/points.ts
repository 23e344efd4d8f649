/** `kith count`, `kith search`, `kith get`, `kith delete`: points of one collection. */
import type { Command } from 'commander';
import { addTargetOptions, type TargetOptions, withTarget } from '../context.js';
import { parseJsonOption, parsePositiveInt, UsageError } from '../errors.js';
import { table, toJson } from '../output.js';

interface FilterOption {
  readonly filter?: string;
}

function filterOf(options: FilterOption): unknown {
  return options.filter === undefined ? undefined : parseJsonOption(options.filter, '--filter');
}

export function registerPointCommands(program: Command): void {
  addTargetOptions(program.command('count').description('how many points match the filter (all points without one)').argument('<collection>'))
    .option('--filter <json>', 'a filter as the REST API takes it, e.g. \'{"must":[{"key":"lang","match":{"value":"en"}}]}\'')
    .action(async (name: string, options: TargetOptions & FilterOption) => {
      const filter = filterOf(options);
      const count = await withTarget(options, (target) => target.count(name, filter), 'read');
      process.stdout.write(`${count}\n`);
    });

  addTargetOptions(program.command('search').description('the nearest points to a vector, best first, as a table').argument('<collection>'))
    .requiredOption('--vector <json>', 'the query vector as a JSON array, e.g. "[0.1, 0.2, 0.3]"')
    .option('--filter <json>', 'only points matching this filter')
    .option('--limit <n>', "how many hits (default: the collection's k, 10 unless set)")
    .option('--with-vector', "also print each hit's vector")
    .option('--json', 'print the hits as JSON instead of a table')
    .action(async (name: string, options: TargetOptions & FilterOption & { vector: string; limit?: string; withVector?: boolean; json?: boolean }) => {
      const vector = parseJsonOption(options.vector, '--vector');
      if (!Array.isArray(vector)) throw new UsageError('--vector: expected a JSON array of numbers, e.g. "[0.1, 0.2]"');
      const filter = filterOf(options);
      const limit = options.limit === undefined ? undefined : parsePositiveInt(options.limit, '--limit', 10000);
      const hits = await withTarget(
        options,
        (target) =>
          target.search(name, {
            vector,
            ...(filter === undefined ? {} : { filter }),
            ...(limit === undefined ? {} : { limit }),
            ...(options.withVector === true ? { with_vector: true } : {}),
          }),
        'read',
      );
      if (options.json === true) {
        process.stdout.write(`${toJson(hits, 2)}\n`);
        return;
      }
      if (hits.length === 0) {
        process.stdout.write('no hits\n');
        return;
      }
      const headers = ['ID', 'SCORE', 'PAYLOAD', ...(options.withVector === true ? ['VECTOR'] : [])];
      const rows = hits.map((hit) => [
        String(hit.id),
        hit.score.toPrecision(6),
        toJson(hit.payload ?? {}),
        ...(options.withVector === true ? [toJson(hit.vector)] : []),
      ]);
      process.stdout.write(`${table(headers, rows)}\n`);
    });

  addTargetOptions(program.command('get').description('one point (id, version, payload, vector) as JSON').argument('<collection>').argument('<id>')).action(
    async (name: string, id: string, options: TargetOptions) => {
      const point = await withTarget(options, (target) => target.get(name, id), 'read');
      process.stdout.write(`${toJson(point, 2)}\n`);
    },
  );

  addTargetOptions(program.command('delete').description('delete points by id or by filter').argument('<collection>'))
    .option('--ids <ids>', 'comma-separated point ids, e.g. 1,2,doc-7')
    .option('--filter <json>', 'delete every point matching this filter ({} deletes them all)')
    .action(async (name: string, options: TargetOptions & FilterOption & { ids?: string }) => {
      if ((options.ids === undefined) === (options.filter === undefined)) throw new UsageError('delete: give exactly one of --ids or --filter');
      let deleted: number;
      if (options.ids !== undefined) {
        const ids = options.ids.split(',').map((id) => id.trim());
        if (ids.some((id) => id === '')) throw new UsageError(`--ids: expected comma-separated ids, got ${JSON.stringify(options.ids)}`);
        deleted = await withTarget(options, (target) => target.deleteIds(name, ids));
      } else {
        const filter = filterOf(options);
        deleted = await withTarget(options, (target) => target.deleteByFilter(name, filter));
      }
      process.stdout.write(`deleted ${deleted} point${deleted === 1 ? '' : 's'}\n`);
    });
}
