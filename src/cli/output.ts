/** How the commands print: aligned text tables for people, JSON (bigint versions as digits) otherwise. */

/** JSON with bigint versions written as their digits (JSON.stringify refuses bigint). */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), indent);
}

/** Columns padded to their widest cell; cells longer than `maxCell` are cut with an ellipsis. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], maxCell = 80): string {
  const cut = (cell: string): string => (cell.length > maxCell ? `${cell.slice(0, maxCell - 1)}…` : cell);
  const all = [headers, ...rows].map((row) => row.map(cut));
  const widths = headers.map((_, c) => Math.max(...all.map((row) => (row[c] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c] as number)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
