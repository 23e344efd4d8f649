/**
 * What each column of a CSV header is: the id column, the vector (one column holding the whole
 * vector, or one column per component: `--vector-columns` names them, `--vector-prefix` finds them)
 * and the payload fields, every other column.
 */
import { InputFileError } from './source.js';

/** Where the vector is: one column (`--vector-column`, default `vector`), listed columns, or every `PREFIX<n>` column. */
export type VectorColumns = { readonly column: string } | { readonly columns: readonly string[] } | { readonly prefix: string };

export interface CsvLayout {
  /** The id column's index; -1 without one (ids are the rows' positions). */
  readonly idAt: number;
  /** The vector's column, or its components' columns in order. */
  readonly vector: { readonly at: number; readonly name: string } | { readonly components: readonly { readonly at: number; readonly name: string }[] };
  readonly payload: readonly { readonly at: number; readonly name: string }[];
}

/** Keys the server refuses in a payload (ERR_INVALID_JSON); a column by that name is refused up front. */
const REFUSED_KEYS = new Set(['__proto__']);

/**
 * `--vector-columns x,y,z` or with ranges, `v0..v127` (also `v0..127`): the names in order. A range's
 * numbers keep the first one's zero padding (`v000..v127`).
 */
export function expandVectorColumns(spec: string): string[] | string {
  const names: string[] = [];
  for (const item of spec.split(',').map((s) => s.trim())) {
    if (item === '') return `expected column names separated by commas, got ${JSON.stringify(spec)}`;
    const range = /^(.*?)(\d+)\.\.(.*?)(\d+)$/.exec(item);
    if (range === null) {
      names.push(item);
      continue;
    }
    const [, prefix, from, toPrefix, to] = range as unknown as [string, string, string, string, string];
    if (toPrefix !== '' && toPrefix !== prefix) return `${item}: a range is PREFIX<from>..PREFIX<to> with one prefix`;
    const first = Number(from);
    const last = Number(to);
    if (last < first || last - first >= 65536) return `${item}: expected from ≤ to, at most 65536 columns`;
    const width = from.startsWith('0') ? from.length : 0;
    for (let n = first; n <= last; n++) names.push(`${prefix}${String(n).padStart(width, '0')}`);
  }
  return names;
}

function check(header: readonly string[], location: string): void {
  const seen = new Set<string>();
  for (const name of header) {
    if (name === '') throw new InputFileError(`${location}: the header row has an empty column name`);
    if (seen.has(name)) throw new InputFileError(`${location}: the header row names column ${JSON.stringify(name)} twice`);
    seen.add(name);
  }
}

function vectorOf(header: readonly string[], vector: VectorColumns, location: string): CsvLayout['vector'] {
  if ('column' in vector) {
    const at = header.indexOf(vector.column);
    if (at < 0) {
      throw new InputFileError(
        `${location}: the header row has no ${JSON.stringify(vector.column)} column (give another with --vector-column, or one column per component with --vector-columns or --vector-prefix); a header row is required`,
      );
    }
    return { at, name: vector.column };
  }
  if ('columns' in vector) {
    const components = vector.columns.map((name) => ({ name, at: header.indexOf(name) }));
    const missing = components.filter((c) => c.at < 0).map((c) => c.name);
    if (missing.length > 0)
      throw new InputFileError(
        `${location}: --vector-columns: the header row has no column ${missing
          .slice(0, 5)
          .map((n) => JSON.stringify(n))
          .join(', ')}${missing.length > 5 ? ` (and ${missing.length - 5} more)` : ''}`,
      );
    return { components };
  }
  const numbered = header
    .map((name, at) => ({
      name,
      at,
      n: name.startsWith(vector.prefix) && /^\d+$/.test(name.slice(vector.prefix.length)) ? Number(name.slice(vector.prefix.length)) : -1,
    }))
    .filter((c) => c.n >= 0)
    .sort((a, b) => a.n - b.n);
  if (numbered.length === 0) throw new InputFileError(`${location}: --vector-prefix: no column is named ${JSON.stringify(vector.prefix)} followed by a number`);
  numbered.forEach((c, i) => {
    const expected = (numbered[0] as { n: number }).n + i;
    if (c.n !== expected)
      throw new InputFileError(`${location}: --vector-prefix: the columns ${vector.prefix}<n> skip ${vector.prefix}${expected} (found ${c.name})`);
  });
  return { components: numbered.map(({ name, at }) => ({ name, at })) };
}

/** The header row's layout; `dim` checks the number of component columns. */
export function layoutOf(header: readonly string[], idColumn: string, vector: VectorColumns, dim: number, location: string): CsvLayout {
  check(header, location);
  const layout = vectorOf(header, vector, location);
  if ('components' in layout && layout.components.length !== dim) {
    const { components } = layout;
    const names = components.length > 3 ? `${components[0]?.name}…${components.at(-1)?.name}` : components.map((c) => c.name).join(', ');
    throw new InputFileError(`${location}: ${components.length} vector columns (${names}), the collection's vectors have ${dim} components`);
  }
  const idAt = header.indexOf(idColumn);
  const vectorAts = new Set('components' in layout ? layout.components.map((c) => c.at) : [layout.at]);
  if (vectorAts.has(idAt)) throw new InputFileError(`${location}: column ${JSON.stringify(idColumn)} cannot be both the id and a vector column`);
  const payload = header.map((name, at) => ({ name, at })).filter(({ at }) => at !== idAt && !vectorAts.has(at));
  for (const { name } of payload) {
    if (REFUSED_KEYS.has(name)) {
      throw new InputFileError(
        `${location}: column ${JSON.stringify(name)} cannot be a payload field (kith refuses the key: prototype poisoning); rename it in the header`,
      );
    }
  }
  return { idAt, vector: layout, payload };
}
