/**
 * `kith import FILE --collection C`: points from a file into a collection, in batches that are
 * each durable before the next is sent (import/batches.ts). Upserts replace by id, so re-running
 * the same file after an interruption (or twice) gives the same collection; a failed or interrupted
 * import says how many points of the file are durable and the command that goes on from there
 * (`--skip N`), and drops again a collection it created if nothing reached it (import/resume.ts).
 */
import { statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { Command } from 'commander';
import { KithClientError } from '../../api/client/kith-client.js';
import { isKithError, KithError } from '../../core/errors.js';
import { addTargetOptions, type TargetOptions, withTarget } from '../context.js';
import { EXIT_FAILURE, EXIT_USAGE, FailureWithNotes, parsePositiveInt, UsageError } from '../errors.js';
import { ImportInterrupted, newTally, writeBatches } from '../import/batches.js';
import { signalExitCode, watchSignals } from '../import/interrupt.js';
import { afterFailure } from '../import/resume.js';
import { startProgress } from '../progress.js';
import { readBvecs, readFvecs, readNpy } from '../readers/binary.js';
import { readCsv } from '../readers/csv.js';
import { expandVectorColumns, type VectorColumns } from '../readers/csv-columns.js';
import { type ColumnType, parseTypes } from '../readers/csv-types.js';
import { withIds } from '../readers/ids.js';
import { readJsonl, vectorNamesOf } from '../readers/jsonl.js';
import type { SourcePoint } from '../readers/source.js';
import type { CollectionSummary, Target } from '../target.js';

interface ImportOptions extends TargetOptions {
  readonly collection: string;
  readonly dim?: string;
  readonly distance: string;
  readonly hnsw?: boolean;
  readonly sparse: readonly string[];
  readonly vectorName?: string;
  readonly batch: string;
  readonly skip: string;
  readonly format?: string;
  readonly idColumn: string;
  readonly ids?: string;
  readonly vectorColumn?: string;
  readonly vectorColumns?: string;
  readonly vectorPrefix?: string;
  readonly delimiter?: string;
  readonly types?: string;
  readonly quiet?: boolean;
}

const FORMATS = ['jsonl', 'csv', 'tsv', 'fvecs', 'bvecs', 'npy'] as const;
type Format = (typeof FORMATS)[number];

const EXTENSIONS: Record<string, Format> = {
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'jsonl',
  '.csv': 'csv',
  '.tsv': 'tsv',
  '.tab': 'tsv',
  '.fvecs': 'fvecs',
  '.bvecs': 'bvecs',
  '.npy': 'npy',
};

/** What one point of the file is called in the summary and in `--skip`. */
const UNIT: Record<Format, string> = { jsonl: 'line', csv: 'row', tsv: 'row', fvecs: 'vector', bvecs: 'vector', npy: 'row' };

/** The CSV reader's settings, from the options; checked before anything is opened. */
interface CsvSettings {
  readonly idColumn: string;
  readonly vector: VectorColumns;
  readonly delimiter: string;
  readonly types: ReadonlyMap<string, ColumnType>;
}

function formatOf(file: string, given: string | undefined): Format {
  const name = given ?? EXTENSIONS[extname(file).toLowerCase()];
  if (name === undefined) throw new UsageError(`${file}: cannot tell the format from the extension; give --format ${FORMATS.join('|')}`);
  if (!(FORMATS as readonly string[]).includes(name)) throw new UsageError(`--format: expected one of ${FORMATS.join(', ')}, got ${JSON.stringify(name)}`);
  return name as Format;
}

/** `--delimiter`: one character; `tab` or `\t` for a tab. */
function delimiterOf(given: string | undefined, format: Format): string {
  if (given === undefined) return format === 'tsv' ? '\t' : ',';
  const delimiter = given === 'tab' || given === '\\t' ? '\t' : given;
  if ([...delimiter].length !== 1 || delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') {
    throw new UsageError(`--delimiter: expected one character (not a quote or a line break; tab or \\t for a tab), got ${JSON.stringify(given)}`);
  }
  return delimiter;
}

function csvSettings(options: ImportOptions, format: Format): CsvSettings {
  const given = [options.vectorColumn, options.vectorColumns, options.vectorPrefix].filter((o) => o !== undefined);
  if (given.length > 1) throw new UsageError('--vector-column, --vector-columns, --vector-prefix: give one');
  let vector: VectorColumns = { column: options.vectorColumn ?? 'vector' };
  if (options.vectorColumns !== undefined) {
    const columns = expandVectorColumns(options.vectorColumns);
    if (typeof columns === 'string') throw new UsageError(`--vector-columns: ${columns}`);
    vector = { columns };
  } else if (options.vectorPrefix !== undefined) {
    if (options.vectorPrefix === '') throw new UsageError("--vector-prefix: expected the text before each component column's number, e.g. v for v0, v1, …");
    vector = { prefix: options.vectorPrefix };
  }
  return {
    idColumn: options.idColumn,
    vector,
    delimiter: delimiterOf(options.delimiter, format),
    types: options.types === undefined ? new Map() : parseTypes(options.types),
  };
}

/** The options only CSV reads, refused for other formats rather than ignored. */
function checkFormatOptions(command: Command, format: Format): void {
  const csv = format === 'csv' || format === 'tsv';
  const csvOnly = ['idColumn', 'vectorColumn', 'vectorColumns', 'vectorPrefix', 'delimiter', 'types'];
  const given = csvOnly.find((key) => command.getOptionValueSource(key) === 'cli');
  if (!csv && given !== undefined) {
    throw new UsageError(`--${given.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: only for CSV and TSV files, not ${format}`);
  }
  if (csv || format === 'jsonl') {
    if (command.getOptionValueSource('ids') === 'cli') throw new UsageError(`--ids: only for .fvecs, .bvecs and .npy; a ${format} file names its ids`);
  }
}

function readerOf(format: Format, file: string, info: CollectionSummary, csv: CsvSettings, announce: (text: string) => void): AsyncIterable<SourcePoint> {
  const label = basename(file);
  const dim = info.vector_size;
  switch (format) {
    case 'jsonl':
      return readJsonl(file, label, dim, vectorNamesOf(info));
    case 'csv':
    case 'tsv':
      return readCsv(file, label, dim, { ...csv, announce });
    case 'fvecs':
      return readFvecs(file, label, dim);
    case 'bvecs':
      return readBvecs(file, label, dim);
    case 'npy':
      return readNpy(file, label, dim);
  }
}

/** The file's size (for the progress bar); a directory, or a pipe for a format read by position, is refused. */
function sourceSize(file: string, format: Format): number {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(file);
  } catch (error) {
    throw new KithError('ERR_BAD_INPUT', `${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (stats.isDirectory()) throw new KithError('ERR_BAD_INPUT', `${file}: is a directory, not a file`);
  const byPosition = format === 'fvecs' || format === 'bvecs' || format === 'npy';
  if (byPosition && !stats.isFile()) throw new KithError('ERR_BAD_INPUT', `${file}: not a regular file (a ${format} file is read by position)`);
  return stats.size;
}

function isNotFound(error: unknown): boolean {
  return (isKithError(error) || error instanceof KithClientError) && error.code === 'ERR_COLLECTION_NOT_FOUND';
}

type SparseModifier = 'none' | 'idf';

/** `--sparse NAME[:MODIFIER]`, repeatable: a created collection's sparse vectors, by name. */
function sparseOf(given: readonly string[]): Record<string, { modifier: SparseModifier }> | undefined {
  if (given.length === 0) return undefined;
  const out: Record<string, { modifier: SparseModifier }> = Object.create(null);
  for (const text of given) {
    const colon = text.lastIndexOf(':');
    const name = colon === -1 ? text : text.slice(0, colon);
    const modifier = colon === -1 ? 'none' : text.slice(colon + 1);
    if (name === '' || (modifier !== 'none' && modifier !== 'idf'))
      throw new UsageError(`--sparse: expected NAME, NAME:none or NAME:idf, got ${JSON.stringify(text)}`);
    if (Object.hasOwn(out, name)) throw new UsageError(`--sparse: ${JSON.stringify(name)} given twice`);
    out[name] = { modifier };
  }
  return { ...out };
}

/** The vectors a created collection declares: --vector-name and --sparse, checked before anything is opened. */
interface VectorOptions {
  readonly vectorName: string | undefined;
  readonly sparse: Record<string, { modifier: SparseModifier }> | undefined;
}

/** What --vector-name and --sparse ask of an existing collection that it does not have, or undefined. */
function vectorMismatch(info: CollectionSummary, vectors: VectorOptions): string | undefined {
  const dense = info.vector_name ?? '';
  if (vectors.vectorName !== undefined && vectors.vectorName !== dense)
    return `its dense vector is ${dense === '' ? 'unnamed' : `named ${JSON.stringify(dense)}`}, not --vector-name ${JSON.stringify(vectors.vectorName)}`;
  const declared = info.sparse_vectors ?? {};
  for (const [name, { modifier }] of Object.entries(vectors.sparse ?? {})) {
    const held = Object.hasOwn(declared, name) ? declared[name] : undefined;
    if (held === undefined) return `it has no sparse vector ${JSON.stringify(name)} (--sparse)`;
    if (held.modifier !== modifier) return `its sparse vector ${JSON.stringify(name)} has modifier ${held.modifier}, not ${modifier} (--sparse)`;
  }
  return undefined;
}

/**
 * The collection to import into: existing (its dimension must match --dim, and its vectors
 * --vector-name and --sparse, where given), or created from --dim/--distance/--hnsw/--vector-name/--sparse.
 */
async function resolveCollection(
  target: Target,
  options: ImportOptions,
  dim: number | undefined,
  vectors: VectorOptions,
): Promise<{ info: CollectionSummary; created: boolean }> {
  try {
    const info = await target.info(options.collection);
    if (dim !== undefined && info.vector_size !== dim) {
      throw new KithError('ERR_BAD_INPUT', `collection "${options.collection}" holds ${info.vector_size}-dimensional vectors, not --dim ${dim}`);
    }
    const mismatch = vectorMismatch(info, vectors);
    if (mismatch !== undefined) throw new KithError('ERR_BAD_INPUT', `collection "${options.collection}" exists and ${mismatch}`);
    return { info, created: false };
  } catch (error) {
    if (!isNotFound(error)) throw error;
    if (dim === undefined)
      throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${options.collection}" does not exist; give --dim (and --distance, --hnsw) to create it`);
    const { vectorName, sparse } = vectors;
    const info = await target.create({
      name: options.collection,
      vector_size: dim,
      distance: options.distance,
      hnsw: options.hnsw === true,
      ...(vectorName === undefined ? {} : { vector_name: vectorName }),
      ...(sparse === undefined ? {} : { sparse_vectors: sparse }),
    });
    return { info, created: true };
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : noun.endsWith('h') ? 'es' : 's'}`;
}

/** `commandLine`: the words after `kith`, as given, for the command that resumes an import. */
export function registerImportCommand(program: Command, commandLine: readonly string[]): void {
  addTargetOptions(
    program
      .command('import')
      .description('load points from a file (JSON Lines, CSV, TSV, .fvecs, .bvecs, .npy) into a collection, in durable batches')
      .argument('<file>'),
  )
    .requiredOption('--collection <name>', 'the collection to load into')
    .option('--dim <n>', 'create the collection if it does not exist, with this vector size')
    .option('--distance <name>', 'distance of a created collection: cosine, dot or euclid', 'cosine')
    .option('--hnsw', 'give a created collection an HNSW index (default: exact, flat)')
    .option(
      '--sparse <name[:modifier]>',
      'give a created collection a sparse vector NAME, modifier none (default) or idf; repeat for more (e.g. --sparse text:idf --sparse tags)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--vector-name <name>', "a created collection's dense vector name (Qdrant's named vectors; default unnamed)")
    .option('--batch <n>', 'points per durable batch', '1000')
    .option('--skip <n>', 'read the first N points of the file without writing them (to resume: an interrupted import prints the command)', '0')
    .option(
      '--format <format>',
      'file format: jsonl, csv, tsv, fvecs, bvecs or npy (default: from the extension .jsonl/.ndjson/.json, .csv, .tsv/.tab, .fvecs, .bvecs, .npy)',
    )
    .option('--ids <file>', '.fvecs/.bvecs/.npy: point ids from this file, one JSON id a line (as kith export --format npy writes FILE.ids.jsonl)')
    .option('--id-column <name>', 'CSV: the column holding point ids (without one, ids are row positions 0, 1, …)', 'id')
    .option('--vector-column <name>', 'CSV: the column holding whole vectors (default: vector)')
    .option('--vector-columns <list>', 'CSV: one column per component, in order: x,y,z or a range v0..v127')
    .option('--vector-prefix <prefix>', 'CSV: one column per component, every column PREFIX<n> in the order of n (v0, v1, …)')
    .option('--delimiter <char>', 'CSV: the field delimiter (default , and a tab for .tsv; tab or \\t for a tab)')
    .option(
      '--types <list>',
      'CSV: payload column types, e.g. zip:string,score:number (string, number, boolean, json); others are decided from the first 1000 rows',
    )
    .option('--quiet', 'no progress or column types on stderr')
    .addHelpText(
      'after',
      '\nJSON Lines, each line: {"id": 1, "vector": [0.1, 0.2], "payload": {"lang": "en"}} (payload optional;\n' +
        '"version": "…" as kith export writes it is kept with --db, left out over --url; sparse vectors as\n' +
        '"sparse_vectors": {"text": {"indices": [7, 42], "values": [0.5, 1.2]}}, or Qdrant\'s named form\n' +
        '"vector": {"dense": [0.1, 0.2], "text": {"indices": [7], "values": [0.5]}}, by the collection\'s names).\n' +
        'CSV/TSV: a header row; a vector column (a JSON array, or numbers separated by spaces or semicolons)\n' +
        'or one column per component, an id column, every other column a payload field of one type for the\n' +
        'whole column (boolean, number, json or string, from its first 1000 rows or --types; empty cells left out).\n' +
        '.fvecs, .bvecs (u8 components) and .npy (2-D float32/float64): the id of a vector is its index in\n' +
        'the file (0, 1, …), no payload.\n' +
        'A failed or interrupted import prints how many points of the file are durable and the command\n' +
        'that resumes it (--skip N); running the same command again also works: upserts replace by id.\n' +
        'A collection the import created is dropped again if nothing was written to it.',
    )
    .action(async (file: string, options: ImportOptions, command: Command) => {
      const format = formatOf(file, options.format);
      checkFormatOptions(command, format);
      const csv = csvSettings(options, format);
      const batchSize = parsePositiveInt(options.batch, '--batch', 100000);
      const dim = options.dim === undefined ? undefined : parsePositiveInt(options.dim, '--dim', 65536);
      const vectors: VectorOptions = { vectorName: options.vectorName, sparse: sparseOf(options.sparse) };
      if (!/^\d+$/.test(options.skip) || !Number.isSafeInteger(Number(options.skip)))
        throw new UsageError(`--skip: expected a whole number of points, got ${JSON.stringify(options.skip)}`);
      const skip = Number(options.skip);
      const size = sourceSize(file, format);
      const quiet = options.quiet === true;
      const announce = (text: string): void => {
        if (!quiet) process.stderr.write(`kith: ${text}\n`);
      };
      const tally = newTally();
      const started = performance.now();
      const signals = watchSignals();
      try {
        await withTarget(
          options,
          async (target) => {
            const { info, created } = await resolveCollection(target, options, dim, vectors);
            const progress = startProgress(size, quiet);
            try {
              const read = readerOf(format, file, info, csv, announce);
              const source = options.ids === undefined ? read : withIds(read, options.ids);
              await writeBatches(target, source, { collection: options.collection, batchSize, skip, signals, progress }, tally);
            } catch (error) {
              const notes = await afterFailure({ target, collection: options.collection, created, tally, file, rawArgs: commandLine, error });
              const exitCode = error instanceof ImportInterrupted ? signalExitCode(error.signal) : error instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE;
              throw new FailureWithNotes(error, notes, exitCode);
            } finally {
              progress.stop();
            }
          },
          'create',
        );
      } finally {
        signals.stop();
      }
      const seconds = (performance.now() - started) / 1000;
      const skipped = skip === 0 ? '' : `, the first ${skip} skipped`;
      process.stdout.write(
        `imported ${plural(tally.written, 'point')} into ${options.collection} from ${file} (${plural(tally.read, UNIT[format])} read${skipped}) in ${plural(tally.batches, 'batch')}, ${seconds.toFixed(1)} s (${Math.round(tally.written / Math.max(seconds, 0.001))} points/s)\n`,
      );
    });
}
