/**
 * `kith export C`: every point of a collection, ids in sorted order (from a file, --db: by their
 * strings; from a server, --url: its scroll's id order, numeric ids by value first), as
 *
 * - JSON Lines (default): `{"id", "version", "vector", "sparse_vectors", "named_vectors", "payload"}`
 *   a line (`sparse_vectors` and `named_vectors` only on points that have some), which `kith import` reads back into the same
 *   collection: ids, versions (kept when importing into a file, --db), vectors and payloads;
 * - NumPy (`--format npy --out FILE.npy`): a 2-D little-endian float32 array, one row a point, and
 *   beside it `FILE.ids.jsonl`, row i's id as a JSON string on line i; `kith import FILE.npy
 *   --ids FILE.ids.jsonl` gives the same ids and dense vectors back (the format has no versions,
 *   sparse vectors or payloads).
 *
 * From a server, the points are read page by page (POST …/points/scroll): the export is not one
 * snapshot when the server takes writes meanwhile.
 */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import { addTargetOptions, resolveWhere, type TargetOptions, withTarget } from '../context.js';
import { UsageError } from '../errors.js';
import { npyHeader, npyIdsPath } from '../npy.js';
import { toJson } from '../output.js';
import { startProgress } from '../progress.js';
import type { PointLine } from '../target.js';

interface ExportOptions extends TargetOptions {
  readonly out?: string;
  readonly format: string;
  readonly quiet?: boolean;
}

const BATCH = 1000;

async function write(stream: NodeJS.WritableStream, data: string | Uint8Array): Promise<void> {
  if (!stream.write(data)) await once(stream, 'drain');
}

/** The output file, opened now so that a path that cannot be written fails before any work. */
function openOut(path: string): WriteStream {
  try {
    return createWriteStream(path, { fd: openSync(path, 'w') });
  } catch (error) {
    throw new Error(`${path}: cannot write (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

async function end(file: WriteStream): Promise<void> {
  file.end();
  await once(file, 'finish');
}

function jsonLines(batch: readonly PointLine[]): string {
  return batch
    .map(
      (p) =>
        `${toJson({ id: p.id, version: p.version, vector: p.vector, sparse_vectors: p.sparse_vectors, named_vectors: p.named_vectors, payload: p.payload ?? {} })}\n`,
    )
    .join('');
}

function float32Rows(batch: readonly PointLine[], dim: number): Uint8Array {
  const rows = new Float32Array(batch.length * dim);
  batch.forEach((p, i) => {
    rows.set(p.vector, i * dim);
  });
  // Float32Array is in the platform's byte order; .npy says '<f4'. Every platform Node runs kith on is little-endian.
  return new Uint8Array(rows.buffer);
}

export function registerExportCommand(program: Command): void {
  addTargetOptions(
    program
      .command('export')
      .description('write every point of a collection as JSON Lines (to stdout, or --out FILE) or as NumPy .npy')
      .argument('<collection>'),
  )
    .option('--out <file>', 'write to this file instead of stdout (required for npy)')
    .option('--format <format>', 'output format: jsonl, or npy (float32 vectors, ids in FILE.ids.jsonl)', 'jsonl')
    .option('--quiet', 'no progress on stderr')
    .action(async (name: string, options: ExportOptions) => {
      const remote = 'url' in resolveWhere(options);
      if (options.format !== 'jsonl' && options.format !== 'npy')
        throw new UsageError(`--format: expected jsonl or npy, got ${JSON.stringify(options.format)}`);
      if (options.format === 'npy' && options.out === undefined)
        throw new UsageError('--format npy: give the file with --out FILE.npy (its ids go to FILE.ids.jsonl beside it)');
      const npy = options.format === 'npy';
      const file: WriteStream | undefined = options.out === undefined ? undefined : openOut(options.out);
      const idsFile = npy && options.out !== undefined ? openOut(npyIdsPath(options.out)) : undefined;
      const stream = file ?? process.stdout;
      let written = 0;
      await withTarget(
        options,
        async (target) => {
          const info = await target.info(name);
          const total = info.points_count;
          const dim = info.vector_size;
          const sparseNames = Object.keys(info.sparse_vectors ?? {});
          if (npy && sparseNames.length > 0)
            process.stderr.write(`kith: warning: ${name}'s sparse vectors (${sparseNames.join(', ')}) are not in a .npy file: export jsonl to keep them\n`);
          const namedNames = Object.keys(info.named_vectors ?? {});
          if (npy && namedNames.length > 0)
            process.stderr.write(`kith: warning: ${name}'s named vectors (${namedNames.join(', ')}) are not in a .npy file: export jsonl to keep them\n`);
          // A bar only when the points go to a file: on stdout they would be mixed with it.
          const progress = startProgress(total, options.quiet === true || file === undefined);
          try {
            if (npy) await write(stream, npyHeader(total, dim));
            for await (const batch of target.scan(name, BATCH)) {
              if (npy) {
                // The header promised `total` rows: a file is the one writer (locked), so this holds there; a server may take writes meanwhile.
                if (written + batch.length > total)
                  throw new Error(
                    `${name} grew during the export${remote ? ' (the server took writes meanwhile: export npy from a quiet server, or jsonl)' : ''}`,
                  );
                await write(stream, float32Rows(batch, dim));
                await write(idsFile as WriteStream, batch.map((p) => `${JSON.stringify(String(p.id))}\n`).join(''));
              } else {
                await write(stream, jsonLines(batch));
              }
              written += batch.length;
              progress.update(written, written, `exported ${written} of ${total}`);
            }
            if (npy && written !== total)
              throw new Error(
                `${name} has ${written} points, ${total} were counted when the export began${remote ? ' (the server took writes meanwhile)' : ''}`,
              );
          } finally {
            progress.stop();
          }
        },
        'read',
      );
      if (file !== undefined) {
        await end(file);
        if (idsFile !== undefined) await end(idsFile);
        const also = idsFile === undefined ? '' : ` (ids in ${npyIdsPath(options.out as string)})`;
        process.stderr.write(`kith: exported ${written} points of ${name} to ${options.out}${also}\n`);
      }
    });
}
