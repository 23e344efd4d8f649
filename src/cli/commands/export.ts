/**
 * `kith export C`: every point of a collection as JSON Lines (`{"id", "vector", "payload"}`, ids
 * in sorted order), which `kith import` reads back into the same points. Versions are not carried:
 * an import assigns new ones. Needs the file (--db): the REST API cannot list points.
 */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import { addTargetOptions, type TargetOptions, withTarget } from '../context.js';
import { UsageError } from '../errors.js';
import { toJson } from '../output.js';
import { startProgress } from '../progress.js';
import { NotAvailableError } from '../target.js';

interface ExportOptions extends TargetOptions {
  readonly out?: string;
  readonly format: string;
  readonly quiet?: boolean;
}

const BATCH = 1000;

async function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

/** The output file, opened now so that a path that cannot be written fails before any work. */
function openOut(path: string): WriteStream {
  try {
    return createWriteStream(path, { fd: openSync(path, 'w') });
  } catch (error) {
    throw new Error(`${path}: cannot write (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

export function registerExportCommand(program: Command): void {
  addTargetOptions(program.command('export').description('write every point of a collection as JSON Lines (to stdout, or --out FILE)').argument('<collection>'))
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--format <format>', 'output format: jsonl', 'jsonl')
    .option('--quiet', 'no progress on stderr')
    .action(async (name: string, options: ExportOptions) => {
      if (options.url !== undefined) throw new NotAvailableError('export is not available over --url (the REST API cannot list points); use --db on the file');
      if (options.format !== 'jsonl') throw new UsageError(`--format: expected jsonl, got ${JSON.stringify(options.format)}`);
      const file: WriteStream | undefined = options.out === undefined ? undefined : openOut(options.out);
      const stream = file ?? process.stdout;
      let written = 0;
      await withTarget(options, async (target) => {
        const total = (await target.info(name)).points_count;
        // A bar only when the points go to a file: on stdout they would be mixed with it.
        const progress = startProgress(total, options.quiet === true || file === undefined);
        try {
          for await (const batch of target.scan(name, BATCH)) {
            await write(stream, batch.map((p) => `${toJson({ id: p.id, vector: p.vector, payload: p.payload ?? {} })}\n`).join(''));
            written += batch.length;
            progress.update(written, written, `exported ${written} of ${total}`);
          }
        } finally {
          progress.stop();
        }
      });
      if (file !== undefined) {
        file.end();
        await once(file, 'finish');
        process.stderr.write(`kith: exported ${written} points of ${name} to ${options.out}\n`);
      }
    });
}
