/**
 * Colours for a payload field's values in the projection: up to ten categories get a palette
 * colour each (the rest grey), numbers a blue-to-red ramp over their range.
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

export function colourBy(values: readonly unknown[]): Colouring {
  const numbers = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const present = values.filter((v) => v !== undefined && v !== null);
  if (present.length === 0) return { colours: values.map(() => MISSING), legend: { kind: 'none', entries: [] } };
  if (numbers.length === present.length) {
    const min = Math.min(...numbers);
    const max = Math.max(...numbers);
    const span = max - min || 1;
    return {
      colours: values.map((v) => (typeof v === 'number' ? ramp((v - min) / span) : MISSING)),
      legend: {
        kind: 'numbers',
        entries: [
          { label: String(min), colour: ramp(0) },
          { label: String(max), colour: ramp(1) },
        ],
      },
    };
  }
  const counts = new Map<string, number>();
  const keys = values.map((v) => (v === undefined || v === null ? undefined : typeof v === 'string' ? v : JSON.stringify(v)));
  for (const key of keys) if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  const top = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, PALETTE.length - 1);
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
