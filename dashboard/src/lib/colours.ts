/**
 * Colours for a payload field's values in the projection. Labels get categorical colours, one
 * palette colour each: strings, booleans and anything else by how common they are (the nine most
 * common, the rest one "other" colour), and numbers too when they are few distinct integers (a
 * class 0..9, a year), in numeric order. Only numbers that take more values than the palette has,
 * or any fraction, are a quantity: a blue-to-red ramp over their range.
 */
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f'];
export const MISSING = '#c8c8c8';

export interface Legend {
  readonly kind: 'none' | 'categories' | 'numbers';
  readonly entries: readonly { readonly label: string; readonly colour: string }[];
}

export interface Colouring {
  readonly colours: readonly string[];
  readonly legend: Legend;
}

function ramp(t: number): string {
  const r = Math.round(40 + 200 * t);
  const b = Math.round(220 - 190 * t);
  return `rgb(${r}, 90, ${b})`;
}

/** A number of the JSON, a bigint (lib/exact-json.ts) included, or undefined for anything else. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return typeof value === 'bigint' ? Number(value) : undefined;
}

/** A value's category name: strings as they are, everything else as its JSON (bigints by their digits). */
function categoryOf(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value);
}

/**
 * Whether numbers are labels rather than a quantity: integers only (bigints are integers), no more
 * distinct values than the palette has colours.
 */
export function numbersAreLabels(values: readonly (number | bigint)[]): boolean {
  const distinct = new Set<string>();
  for (const v of values) {
    if (typeof v === 'number' && !Number.isInteger(v)) return false;
    distinct.add(String(v));
    if (distinct.size > PALETTE.length) return false;
  }
  return true;
}

export function colourBy(values: readonly unknown[]): Colouring {
  const present = values.filter((v) => v !== undefined && v !== null);
  if (present.length === 0) return { colours: values.map(() => MISSING), legend: { kind: 'none', entries: [] } };
  const allNumbers = present.every((v) => numberOf(v) !== undefined);
  if (allNumbers && !numbersAreLabels(present as (number | bigint)[])) return rampColouring(values);
  return categoryColouring(values, allNumbers);
}

function rampColouring(values: readonly unknown[]): Colouring {
  const numbers = values.map(numberOf);
  const defined = numbers.filter((v): v is number => v !== undefined);
  const min = Math.min(...defined);
  const max = Math.max(...defined);
  const span = max - min || 1;
  return {
    colours: numbers.map((v) => (v === undefined ? MISSING : ramp((v - min) / span))),
    legend: {
      kind: 'numbers',
      entries: [
        { label: String(min), colour: ramp(0) },
        { label: String(max), colour: ramp(1) },
      ],
    },
  };
}

/** One palette colour per category: numeric labels in numeric order (all fit), others by count. */
function categoryColouring(values: readonly unknown[], numeric: boolean): Colouring {
  const counts = new Map<string, number>();
  const keys = values.map((v) => (v === undefined || v === null ? undefined : categoryOf(v)));
  for (const key of keys) if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  const order = numeric
    ? [...counts].sort((a, b) => Number(a[0]) - Number(b[0]) || a[0].localeCompare(b[0]))
    : [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  // Every category its own colour when they fit; else the last colour is "other".
  const top = order.length <= PALETTE.length ? order : order.slice(0, PALETTE.length - 1);
  const colourOf = new Map(top.map(([key], i) => [key, PALETTE[i] as string]));
  const other = PALETTE[PALETTE.length - 1] as string;
  return {
    colours: keys.map((key) => (key === undefined ? MISSING : (colourOf.get(key) ?? other))),
    legend: {
      kind: 'categories',
      entries: [
        ...top.map(([key, n]) => ({ label: `${key} (${n})`, colour: colourOf.get(key) as string })),
        ...(counts.size > top.length ? [{ label: 'other', colour: other }] : []),
      ],
    },
  };
}
