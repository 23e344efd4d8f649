/**
 * CSV (RFC 4180, csv-records.ts; or TSV, with a tab as the delimiter) with a header row naming the
 * columns (csv-columns.ts):
 *
 * - the vector: one column (`vector`, or --vector-column) holding a JSON array `[0.1, 0.2]` or
 *   numbers separated by spaces or semicolons `0.1 0.2` / `0.1;0.2`; or one column per component
 *   (--vector-columns, --vector-prefix), each a number;
 * - `id` (or --id-column): a non-negative integer becomes a numeric id, anything else a string id;
 *   without an id column, a point's id is its row's position among the data rows (0, 1, …);
 * - every other column is a payload field, of one type for the whole column (csv-types.ts), decided
 *   from the first rows or given with --types; an empty cell leaves the field out.
 */
import type { PointLine } from '../target.js';
import { type CsvRecord, readCsvRecords } from './csv-records.js';
import { type CsvLayout, layoutOf, type VectorColumns } from './csv-columns.js';
import { type ColumnType, convertCell, inferType, TYPE_SAMPLE_ROWS } from './csv-types.js';
import { checkLine } from './jsonl.js';
import { InputFileError, type SourcePoint } from './source.js';
import { parseJson } from '../../core/json-text.js';

export interface CsvOptions {
  readonly idColumn: string;
  readonly vector: VectorColumns;
  readonly delimiter: string;
  /** Types given with --types, by column. */
  readonly types: ReadonlyMap<string, ColumnType>;
  /** Told which type each payload column got, once they are decided (before any point). */
  readonly announce: (text: string) => void;
}

/** A vector component: a number as a CSV writer prints one (`0.5`, `-1e-05`, `.5`, `+2`, `1.`). */
const COMPONENT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^(?:0|[1-9]\d*)$/;

function quoted(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** The vector cell as numbers, or a problem. */
export function vectorCell(text: string, column: string): unknown[] | string {
  const trimmed = text.trim();
  if (trimmed === '') return `${column}: empty`;
  if (trimmed.startsWith('[')) {
    try {
      const value: unknown = parseJson(trimmed);
      return Array.isArray(value) ? value : `${column}: expected a JSON array of numbers`;
    } catch (error) {
      return `${column}: not a valid JSON array (${(error as Error).message})`;
    }
  }
  const parts = trimmed.split(/[\s;]+/);
  const out: unknown[] = [];
  for (const [i, part] of parts.entries()) {
    if (!COMPONENT.test(part)) return `${column}[${i}]: expected a number, got ${quoted(part)}`;
    out.push(Number(part));
  }
  return out;
}

/** One number a column (--vector-columns, --vector-prefix), or a problem. */
function componentCells(fields: readonly string[], components: readonly { at: number; name: string }[]): number[] | string {
  const out: number[] = [];
  for (const { at, name } of components) {
    const text = (fields[at] as string).trim();
    if (text === '') return `${name}: empty (a vector component)`;
    if (!COMPONENT.test(text)) return `${name}: expected a number (a vector component), got ${quoted(text)}`;
    out.push(Number(text));
  }
  return out;
}

function idCell(text: string): string | number {
  if (INTEGER.test(text)) {
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
  }
  return text;
}

interface Typed {
  readonly name: string;
  readonly at: number;
  readonly type: ColumnType;
  /** Whether --types gave the type (else it was decided from the first rows). */
  readonly given: boolean;
  /** Whether the first rows hold a value of the column (a column without one is a string column). */
  readonly seen: boolean;
}

function decideTypes(layout: CsvLayout, sample: readonly CsvRecord[], given: ReadonlyMap<string, ColumnType>): Typed[] {
  return layout.payload.map(({ name, at }) => {
    const type = given.get(name);
    if (type !== undefined) return { name, at, type, given: true, seen: true };
    const inferred = inferType(sample.map((record) => record.fields[at] ?? ''));
    return { name, at, type: inferred ?? 'string', given: false, seen: inferred !== undefined };
  });
}

function describeColumns(label: string, layout: CsvLayout, header: readonly string[], typed: readonly Typed[]): string {
  const ids = layout.idAt < 0 ? "ids are the rows' positions" : `ids from ${JSON.stringify(header[layout.idAt])}`;
  const { vector } = layout;
  const vectors =
    'at' in vector
      ? `vectors from ${JSON.stringify(vector.name)}`
      : `vectors from ${vector.components[0]?.name}…${vector.components.at(-1)?.name} (${vector.components.length} columns)`;
  const note = (t: Typed): string => (t.given ? ' (given)' : t.seen ? '' : ' (no value seen)');
  const fields = typed.length === 0 ? 'no payload columns' : `payload ${typed.map((t) => `${t.name} ${t.type}${note(t)}`).join(', ')}`;
  const inferred = typed.some((t) => !t.given) ? `; types from the first ${TYPE_SAMPLE_ROWS} rows (--types COLUMN:TYPE,… sets them)` : '';
  return `${label}: ${ids}, ${vectors}, ${fields}${inferred}`;
}

/** How a cell that does not fit its column's type is told. */
const TYPE_NOUN: Record<ColumnType, string> = { string: 'text', number: 'a number', boolean: 'true or false', json: 'a JSON object or array' };

export async function* readCsv(path: string, label: string, dim: number, options: CsvOptions): AsyncGenerator<SourcePoint> {
  const records = readCsvRecords(path, label, options.delimiter)[Symbol.asyncIterator]();
  try {
    const first = await records.next();
    if (first.done === true) throw new InputFileError(`${label}: empty file; a header row is required`);
    const header = first.value.fields.map((name) => name.trim());
    const headerAt = `${label}:${first.value.line}`;
    const layout = layoutOf(header, options.idColumn, options.vector, dim, headerAt);
    for (const column of options.types.keys()) {
      const at = header.indexOf(column);
      if (at < 0) throw new InputFileError(`${headerAt}: --types names column ${JSON.stringify(column)}, which the header row does not have`);
      if (!layout.payload.some((p) => p.at === at))
        throw new InputFileError(`${headerAt}: --types: ${JSON.stringify(column)} is the id or a vector column, not a payload field`);
    }
    // The types are decided on the first rows, which are then imported like every other row.
    const sample: CsvRecord[] = [];
    while (sample.length < TYPE_SAMPLE_ROWS) {
      const next = await records.next();
      if (next.done === true) break;
      sample.push(next.value);
    }
    const typed = decideTypes(layout, sample, options.types);
    options.announce(describeColumns(label, layout, header, typed));
    let row = 0;
    const toPoint = (record: CsvRecord): SourcePoint => {
      const location = `${label}:${record.line}`;
      const { fields } = record;
      if (fields.length !== header.length) throw new InputFileError(`${location}: ${fields.length} fields, the header has ${header.length}`);
      const { vector: where } = layout;
      const vector = 'at' in where ? vectorCell(fields[where.at] as string, where.name) : componentCells(fields, where.components);
      if (typeof vector === 'string') throw new InputFileError(`${location}: ${vector}`);
      const payload: Record<string, unknown> = {};
      for (const { name, at, type, given } of typed) {
        const text = fields[at] as string;
        if (text === '') continue;
        const value = convertCell(type, text);
        if (value === undefined) {
          const why = given
            ? `--types ${name}:${type}`
            : `the column is ${type}, from its first ${TYPE_SAMPLE_ROWS} rows; --types ${name}:string keeps every value as text`;
          throw new InputFileError(`${location}: ${name}: ${quoted(text)} is not ${TYPE_NOUN[type]} (${why})`);
        }
        payload[name] = value;
      }
      const id = layout.idAt < 0 ? row : idCell(fields[layout.idAt] as string);
      row++;
      const checked = checkLine({ id, vector, payload }, dim);
      if (typeof checked === 'string') {
        // checkLine names JSON fields; in a CSV the id, vector and payload fields are columns.
        const idName = header[layout.idAt] ?? 'id';
        const named = checked
          .replace(/^id:/, `${idName}:`)
          .replace(/^vector/, 'at' in where ? where.name : 'vector')
          .replace(/^payload\./, '');
        throw new InputFileError(`${location}: ${named}`);
      }
      return { location, point: checked as PointLine, bytesRead: record.bytesRead };
    };
    for (const record of sample) yield toPoint(record);
    for (let next = await records.next(); next.done !== true; next = await records.next()) yield toPoint(next.value);
  } finally {
    await records.return(undefined);
  }
}
