/**
 * CSV (RFC 4180, csv-records.ts) with a header row naming the columns:
 *
 * - `vector` (or --vector-column): a JSON array `[0.1, 0.2]`, or numbers separated by spaces or
 *   semicolons `0.1 0.2` / `0.1;0.2` (a comma-separated list must be quoted as one field);
 * - `id` (or --id-column): a non-negative integer becomes a numeric id, anything else a string id;
 *   without an id column, a point's id is its row's position among the data rows (0, 1, …);
 * - every other column is a payload field, typed from its text: `true`/`false` a boolean, a JSON
 *   number literal a number, text starting with `{` or `[` that parses as JSON that value, any other
 *   text a string; an empty cell leaves the field out.
 */
import { parseJson } from '../../core/json-text.js';
import type { PointLine } from '../target.js';
import { readCsvRecords } from './csv-records.js';
import { checkLine } from './jsonl.js';
import { InputFileError, type SourcePoint } from './source.js';

export interface CsvColumns {
  readonly idColumn: string;
  readonly vectorColumn: string;
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const INTEGER = /^(?:0|[1-9]\d*)$/;

/** A payload cell's value (undefined: leave the field out). */
export function typedCell(text: string): unknown {
  if (text === '') return undefined;
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (NUMBER.test(text)) {
    const value = Number(text);
    if (Number.isFinite(value)) return value;
  }
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return parseJson(text);
    } catch {
      return text;
    }
  }
  return text;
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
    if (!NUMBER.test(part)) return `${column}[${i}]: expected a number, got ${JSON.stringify(part.length > 40 ? `${part.slice(0, 40)}…` : part)}`;
    out.push(Number(part));
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

export async function* readCsv(path: string, label: string, dim: number, columns: CsvColumns): AsyncGenerator<SourcePoint> {
  let header: string[] | undefined;
  let idAt = -1;
  let vectorAt = -1;
  let row = 0;
  for await (const record of readCsvRecords(path, label)) {
    const location = `${label}:${record.line}`;
    if (header === undefined) {
      header = record.fields.map((name) => name.trim());
      const seen = new Set<string>();
      for (const name of header) {
        if (name === '') throw new InputFileError(`${location}: the header row has an empty column name`);
        if (seen.has(name)) throw new InputFileError(`${location}: the header row names column ${JSON.stringify(name)} twice`);
        seen.add(name);
      }
      idAt = header.indexOf(columns.idColumn);
      vectorAt = header.indexOf(columns.vectorColumn);
      if (vectorAt < 0) {
        throw new InputFileError(`${location}: the header row has no ${JSON.stringify(columns.vectorColumn)} column (give another with --vector-column); a header row is required`);
      }
      continue;
    }
    const { fields } = record;
    if (fields.length !== header.length) throw new InputFileError(`${location}: ${fields.length} fields, the header has ${header.length}`);
    const vector = vectorCell(fields[vectorAt] as string, columns.vectorColumn);
    if (typeof vector === 'string') throw new InputFileError(`${location}: ${vector}`);
    const payload: Record<string, unknown> = {};
    header.forEach((name, c) => {
      if (c === idAt || c === vectorAt) return;
      const value = typedCell(fields[c] as string);
      if (value !== undefined) payload[name] = value;
    });
    const id = idAt < 0 ? row : idCell(fields[idAt] as string);
    row++;
    const checked = checkLine({ id, vector, payload }, dim);
    if (typeof checked === 'string') {
      // checkLine names JSON fields; in a CSV the id and vector are columns.
      const named = checked.replace(/^id:/, `${columns.idColumn}:`).replace(/^vector/, columns.vectorColumn);
      throw new InputFileError(`${location}: ${named}`);
    }
    yield { location, point: checked as PointLine, bytesRead: record.bytesRead };
  }
  if (header === undefined) throw new InputFileError(`${label}: empty file; a header row is required`);
}
