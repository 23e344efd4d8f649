/**
 * `kith import FILE --collection C`: points from a file into a collection, in batches that are
 * each durable before the next is sent (the next is read while one is written). Upserts replace by id, so re-running the same file after
 * an interruption (or twice) gives the same collection: that is how an import resumes. Every point
 * of a batch is checked before the batch is written, so a bad line stops the import with nothing
 * of its batch written (earlier batches stay: re-run once the file is fixed).
 */
import { statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { Command } from 'commander';
import { KithClientError } from '../../api/client/kith-client.js';
import { isKithError, KithError } from '../../core/errors.js';
import { addTargetOptions, type TargetOptions, withTarget } from '../context.js';
import { parsePositiveInt, UsageError } from '../errors.js';
import { startProgress } from '../progress.js';
import { readBvecs, readFvecs, readNpy } from '../readers/binary.js';
import { readCsv } from '../readers/csv.js';
import { withIds } from '../readers/ids.js';
import { readJsonl } from '../readers/jsonl.js';
import { InputFileError, type SourcePoint } from '../readers/source.js';
import type { CollectionSummary, PointLine, Target } from '../target.js';

interface ImportOptions extends TargetOptions {
  readonly collection: string;
  readonly dim?: string;
  readonly distance: string;
  readonly hnsw?: boolean;
  readonly batch: string;
  readonly format?: string;
  readonly idColumn: string;
  readonly ids?: string;
  readonly vectorColumn: string;
  readonly quiet?: boolean;
}

const FORMATS = ['jsonl', 'csv', 'fvecs', 'bvecs', 'npy'] as const;
type Format = (typeof FORMATS)[number];

const EXTENSIONS: Record<string, Format> = {
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'jsonl',
  '.csv': 'csv',
  '.fvecs': 'fvecs',
  '.bvecs': 'bvecs',
  '.npy': 'npy',
};

const READERS: Record<Format, (path: string, label: string, dim: number, options: ImportOptions) => AsyncIterable<SourcePoint>> = {
  jsonl: readJsonl,
  csv: (path, label, dim, options) => readCsv(path, label, dim, { idColumn: options.idColumn, vectorColumn: options.vectorColumn }),
  fvecs: readFvecs,
  bvecs: readBvecs,
  npy: readNpy,
};

function formatOf(file: string, given: string | undefined): Format {
  const name = given ?? EXTENSIONS[extname(file).toLowerCase()];
  if (name === undefined) throw new UsageError(`${file}: cannot tell the format from the extension; give --format ${FORMATS.join('|')}`);
  if (!(FORMATS as readonly string[]).includes(name)) throw new UsageError(`--format: expected one of ${FORMATS.join(', ')}, got ${JSON.stringify(name)}`);
  return name as Format;
}

function isNotFound(error: unknown): boolean {
  return (isKithError(error) || error instanceof KithClientError) && error.code === 'ERR_COLLECTION_NOT_FOUND';
}

/** The collection to import into: existing (its dimension must match --dim if given), or created from --dim/--distance/--hnsw. */
async function resolveCollection(target: Target, options: ImportOptions, dim: number | undefined): Promise<CollectionSummary> {
  try {
    const info = await target.info(options.collection);
    if (dim !== undefined && info.vector_size !== dim) {
      throw new KithError('ERR_BAD_INPUT', `collection "${options.collection}" holds ${info.vector_size}-dimensional vectors, not --dim ${dim}`);
    }
    return info;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    if (dim === undefined) throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${options.collection}" does not exist; give --dim (and --distance, --hnsw) to create it`);
    return target.create({ name: options.collection, vector_size: dim, distance: options.distance, hnsw: options.hnsw === true });
  }
}

/** An error the engine raised for `points[i]…` of a batch, told as the file location of that point. */
function locate(error: unknown, batch: readonly SourcePoint[]): unknown {
  if (!(isKithError(error) || error instanceof KithClientError) || error.code !== 'ERR_BAD_INPUT') return error;
  const m = /^points\[(\d+)\]\.?(.*)$/s.exec(error.message);
  const source = m === null ? undefined : batch[Number(m[1])];
  return source === undefined ? error : new InputFileError(`${source.location}: ${m?.[2]}`);
}

export function registerImportCommand(program: Command): void {
  addTargetOptions(program.command('import').description('load points from a file (JSON Lines, CSV, .fvecs, .bvecs, .npy) into a collection, in durable batches').argument('<file>'))
    .requiredOption('--collection <name>', 'the collection to load into')
    .option('--dim <n>', 'create the collection if it does not exist, with this vector size')
    .option('--distance <name>', 'distance of a created collection: cosine, dot or euclid', 'cosine')
    .option('--hnsw', 'give a created collection an HNSW index (default: exact, flat)')
    .option('--batch <n>', 'points per durable batch', '1000')
    .option('--format <format>', 'file format: jsonl, csv, fvecs, bvecs or npy (default: from the extension .jsonl/.ndjson/.json, .csv, .fvecs, .bvecs, .npy)')
    .option('--ids <file>', '.fvecs/.bvecs/.npy: point ids from this file, one JSON id a line (as kith export --format npy writes FILE.ids.jsonl)')
    .option('--id-column <name>', 'CSV: the column holding point ids (without one, ids are row positions 0, 1, …)', 'id')
    .option('--vector-column <name>', 'CSV: the column holding vectors', 'vector')
    .option('--quiet', 'no progress on stderr')
    .addHelpText(
      'after',
      '\nJSON Lines, each line: {"id": 1, "vector": [0.1, 0.2], "payload": {"lang": "en"}} (payload optional;\n' +
        '"version": "…" as kith export writes it is kept with --db, left out over --url).\n' +
        'CSV: a header row; a vector column (a JSON array, or numbers separated by spaces or semicolons),\n' +
        'an id column, every other column a payload field (true/false, numbers and JSON typed; empty cells left out).\n' +
        '.fvecs, .bvecs (u8 components) and .npy (2-D float32/float64): the id of a vector is its index in\n' +
        'the file (0, 1, …), no payload.\n' +
        'Upserts replace points by id: after an interruption, run the same command again; the result is\n' +
        'the same collection as one uninterrupted run, without duplicates.',
    )
    .action(async (file: string, options: ImportOptions) => {
      const format = formatOf(file, options.format);
      if (options.ids !== undefined && (format === 'jsonl' || format === 'csv')) throw new UsageError(`--ids: only for .fvecs, .bvecs and .npy; a ${format} file names its ids`);
      const batchSize = parsePositiveInt(options.batch, '--batch', 100000);
      const dim = options.dim === undefined ? undefined : parsePositiveInt(options.dim, '--dim', 65536);
      let size: number;
      try {
        size = statSync(file).size;
      } catch (error) {
        throw new KithError('ERR_BAD_INPUT', `${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      }
      const started = performance.now();
      const { points, batches } = await withTarget(
        options,
        async (target) => {
          const info = await resolveCollection(target, options, dim);
          const read = READERS[format](file, basename(file), info.vector_size, options);
          const source = options.ids === undefined ? read : withIds(read, options.ids);
          return importPoints(target, options, source, batchSize, size);
        },
        'create',
      );
      const seconds = (performance.now() - started) / 1000;
      process.stdout.write(
        `imported ${points} points into ${options.collection} from ${file} in ${batches} batch${batches === 1 ? '' : 'es'}, ${seconds.toFixed(1)} s (${Math.round(points / Math.max(seconds, 0.001))} points/s)\n`,
      );
    });
}

async function importPoints(
  target: Target,
  options: ImportOptions,
  source: AsyncIterable<SourcePoint>,
  batchSize: number,
  size: number,
): Promise<{ points: number; batches: number }> {
  const progress = startProgress(size, options.quiet === true);
  let points = 0;
  let batches = 0;
  let batch: SourcePoint[] = [];
  /** Whether the file's points carry versions: decided by the first point, the same for every other. */
  let versioned: boolean | undefined;
  /**
   * One batch is written while the next is read and checked: at most one in flight, so batches
   * still become durable in file order, and a later batch is sent only once the one before it is
   * durable.
   */
  let inFlight: Promise<void> | undefined;
  const write = async (current: SourcePoint[]): Promise<void> => {
    try {
      await target.upsert(options.collection, current.map((s): PointLine => s.point));
    } catch (error) {
      throw locate(error, current);
    }
    points += current.length;
    batches++;
    const last = current[current.length - 1] as SourcePoint;
    progress.update(last.bytesRead, points, `durable through ${last.location}`);
  };
  const settle = async (): Promise<void> => {
    const pending = inFlight;
    inFlight = undefined;
    if (pending !== undefined) await pending;
  };
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const current = batch;
    batch = [];
    await settle();
    const pending = write(current);
    // Handled when settled; without this, a failure while the next batch is read counts as unhandled.
    pending.catch(() => {});
    inFlight = pending;
  };
  try {
    for await (const item of source) {
      const hasVersion = item.point.version !== undefined;
      if (versioned === undefined) {
        versioned = hasVersion;
        if (versioned && !target.keepsVersions) process.stderr.write(`kith: warning: the file's versions are not kept over --url (the server gives each batch a new one); import with --db to keep them\n`);
      } else if (hasVersion !== versioned) {
        throw new InputFileError(`${item.location}: version: ${versioned ? 'required: the first point has one, so every point must' : 'unexpected: the first point has none, so no point may'}`);
      }
      batch.push(item);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    await settle();
  } catch (error) {
    // The batch already sent ends first (its failure, earlier in the file, is the one reported);
    // then the error of the line read after it.
    await settle();
    throw error;
  } finally {
    progress.stop();
  }
  return { points, batches };
}
