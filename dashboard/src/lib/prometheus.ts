/**
 * A parser for the Prometheus text exposition format (what GET /metrics answers): one sample per
 * line, `name{label="value",…} number [timestamp]`; `#` lines (HELP, TYPE) are skipped.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const NAME = /^[A-Za-z_:][A-Za-z0-9_:]*/;

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  return Number(text);
}

/** Labels from just after `{`; returns them and the index just after `}`. */
function parseLabels(line: string, from: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = from;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === ',') i++;
    if (line[i] === '}') return { labels, end: i + 1 };
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(line.slice(i))?.[0];
    if (name === undefined || line[i + name.length] !== '=' || line[i + name.length + 1] !== '"') {
      throw new Error(`bad label at column ${i + 1}: ${line}`);
    }
    i += name.length + 2;
    let value = '';
    while (i < line.length && line[i] !== '"') {
      if (line[i] === '\\') {
        const next = line[i + 1];
        value += next === 'n' ? '\n' : (next ?? '');
        i += 2;
      } else {
        value += line[i];
        i++;
      }
    }
    if (line[i] !== '"') throw new Error(`unterminated label value: ${line}`);
    labels[name] = value;
    i++;
  }
  throw new Error(`unterminated label set: ${line}`);
}

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (name === undefined) throw new Error(`bad metric line: ${line}`);
    let rest = name.length;
    let labels: Record<string, string> = {};
    if (line[rest] === '{') ({ labels, end: rest } = parseLabels(line, rest + 1));
    const value = line.slice(rest).trim().split(/\s+/)[0] ?? '';
    samples.push({ name, labels, value: parseValue(value) });
  }
  return samples;
}

/** The sum of every sample of a metric whose labels pass `where`. */
export function total(samples: readonly Sample[], name: string, where: (labels: Readonly<Record<string, string>>) => boolean = () => true): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && where(s.labels)) sum += s.value;
  return sum;
}
