/**
 * The type of each CSV payload column, decided once for the whole column (never cell by cell, which
 * put `"01234"` and `99999`, or `"TRUE"` and `true`, in one field and made filters miss rows):
 *
 * - `boolean`: every value is true or false, in any case (`TRUE`, `False`);
 * - `number`: every value is a JSON number (`3`, `-2.5e1`; not `007`, `1.` or `+1`), and an integer
 *   is exact as one (at most 2^53: longer digit strings are ids, kept as text);
 * - `json`: every value is a JSON object or array (`{"k": 1}`, `[1, 2]`);
 * - `string`: anything else: the text as written.
 *
 * The type is the first of boolean, number, json that every non-empty cell of the sample (the
 * first TYPE_SAMPLE_ROWS data rows) fits, else string; a column with no value in the sample is a
 * string column. `--types COLUMN:TYPE,…` sets a column's type instead. A later cell that does not fit
 * its column's type stops the import naming its line and column. An empty cell leaves the field out.
 */
import { UsageError } from '../errors.js';
import { parseJson } from '../../core/json-text.js';

export const COLUMN_TYPES = ['string', 'number', 'boolean', 'json'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

/** Data rows read before the types are decided. */
export const TYPE_SAMPLE_ROWS = 1000;

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const INTEGER = /^-?\d+$/;
const BOOLEAN = /^(?:true|false)$/i;

function asNumber(text: string): number | undefined {
  if (!NUMBER.test(text)) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value)) return undefined;
  if (INTEGER.test(text) && !Number.isSafeInteger(value)) return undefined;
  return value;
}

function asJson(text: string): object | undefined {
  if (!text.startsWith('{') && !text.startsWith('[')) return undefined;
  try {
    const value: unknown = parseJson(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A non-empty cell as a value of the type, or undefined when it does not fit. */
export function convertCell(type: ColumnType, text: string): unknown {
  switch (type) {
    case 'string':
      return text;
    case 'boolean':
      return BOOLEAN.test(text) ? text.toLowerCase() === 'true' : undefined;
    case 'number':
      return asNumber(text);
    case 'json':
      return asJson(text);
  }
}

/** The narrowest type every non-empty cell fits; `undefined` when the column has no value. */
export function inferType(cells: Iterable<string>): ColumnType | undefined {
  const fitting = new Set<ColumnType>(['boolean', 'number', 'json']);
  let seen = false;
  for (const text of cells) {
    if (text === '') continue;
    seen = true;
    for (const type of fitting) if (convertCell(type, text) === undefined) fitting.delete(type);
    if (fitting.size === 0) return 'string';
  }
  if (!seen) return undefined;
  return COLUMN_TYPES.find((type) => fitting.has(type)) ?? 'string';
}

/** `--types zip:string,score:number` as a map; a usage error for anything else. */
export function parseTypes(spec: string): Map<string, ColumnType> {
  const types = new Map<string, ColumnType>();
  for (const item of spec.split(',')) {
    const at = item.lastIndexOf(':');
    const column = item.slice(0, at).trim();
    const type = item.slice(at + 1).trim();
    if (at < 0 || column === '') throw new UsageError(`--types: expected COLUMN:TYPE,… (TYPE one of ${COLUMN_TYPES.join(', ')}), got ${JSON.stringify(item)}`);
    if (!(COLUMN_TYPES as readonly string[]).includes(type))
      throw new UsageError(`--types: ${column}: expected one of ${COLUMN_TYPES.join(', ')}, got ${JSON.stringify(type)}`);
    if (types.has(column)) throw new UsageError(`--types: ${column} is given twice`);
    types.set(column, type as ColumnType);
  }
  return types;
}
