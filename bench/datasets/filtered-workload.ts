/**
 * Payloads and filter shapes for the `filtered` benchmark, per dataset.
 *
 * - mnist10k: the digit label as a keyword payload `label` ("0"…"9"); shapes `label = d` (~10%)
 *   and `label in [d, d+1]` (~20%).
 * - synthetic: fields drawn uniformly from their own seeded stream (the vectors are unchanged),
 *   each built for one selectivity: keywords at 0.1% / 1% / 10% / 50%, an integer for a 3% range,
 *   two independent keywords whose AND matches ~3%, and a 90% `must_not`.
 *
 * Every query gets its own filter value (rotating through the values), so consecutive queries hit
 * different posting sets and no cache of one set flatters the numbers. A shape gives the filter
 * twice, from the same columns: as kith's filter JSON and as a test on a base row (the ground
 * truth and hnswlib's callback); the ground-truth cache hashes the payloads and every filter.
 */
import { SeededRng } from '../../src/core/rng.js';
import type { AnnDataset } from './dataset.js';

/** A filter as the API takes it (parsed by kith's `parseFilter`). */
export type FilterJson = Readonly<Record<string, unknown>>;

export interface FilterShape {
  /** Short and unique: table rows and JSON keys. */
  readonly name: string;
  readonly description: string;
  /** The share of points the shape was designed to match (the measured one comes from the ground truth). */
  readonly nominal: number;
  /** The filter of query `qi`. */
  filter(qi: number): FilterJson;
  /** The same filter as a test on a base row. */
  matcher(qi: number): (row: number) => boolean;
}

export interface FilteredWorkload {
  /** Every parameter that changes payloads or filters: part of the ground-truth cache key. */
  readonly id: string;
  readonly description: string;
  readonly shapes: readonly FilterShape[];
  /** Row `row`'s payload, as upserted into kith. */
  payload(row: number): Record<string, string | number>;
}

export const FILTERED_DATASETS = ['mnist10k', 'synthetic'] as const;
export type FilteredDatasetName = (typeof FILTERED_DATASETS)[number];

function must(...conditions: FilterJson[]): FilterJson {
  return { must: conditions };
}

function keyword(key: string, value: string): FilterJson {
  return { key, match: { value } };
}

/** One keyword shape: `key = values[pick(qi)]` (or its negation) over a column of value codes. */
function keywordShape(name: string, key: string, column: ArrayLike<number>, values: readonly string[], negate = false): FilterShape {
  const count = values.length;
  const code = (qi: number): number => qi % count;
  return {
    name,
    description: `${negate ? 'must_not ' : ''}${key} = <value #(query mod ${count})> (keyword, ${count} values)`,
    nominal: negate ? 1 - 1 / count : 1 / count,
    filter: (qi) => {
      const condition = keyword(key, values[code(qi)] as string);
      return negate ? { must_not: [condition] } : must(condition);
    },
    matcher: (qi) => {
      const v = code(qi);
      return negate ? (row) => column[row] !== v : (row) => column[row] === v;
    },
  };
}

function mnistWorkload(labels: Uint8Array): FilteredWorkload {
  const names = Array.from({ length: 10 }, (_, d) => String(d));
  const pair: FilterShape = {
    name: 'label in [d,d+1]',
    description: 'label in [<query mod 10>, <+1 mod 10>] (keyword, any of two values)',
    nominal: 0.2,
    filter: (qi) => must({ key: 'label', match: { any: [names[qi % 10], names[(qi + 1) % 10]] } }),
    matcher: (qi) => {
      const a = qi % 10;
      const b = (qi + 1) % 10;
      return (row) => labels[row] === a || labels[row] === b;
    },
  };
  return {
    id: 'mnist-label-v1',
    description: 'payload { label: "<digit>" }: the MNIST class as a keyword',
    shapes: [keywordShape('label=d', 'label', labels, names), pair],
    payload: (row) => ({ label: names[labels[row] as number] as string }),
  };
}

/** Distinct from the mixture's streams (centres, base, queries, categories): payloads never move the vectors. */
const PAYLOAD_STREAM = 0x7061_796c;

/** Values per keyword field, i.e. 1 / selectivity. */
const SYN = { kw01: 1000, kw1: 100, kw10: 10, kw50: 2, andA: 4, andB: 8 } as const;
/** The integer field `num` is uniform in [0, NUM_RANGE); the range shape spans RANGE_WIDTH of it (3%). */
const NUM_RANGE = 10_000;
/** Far more than the width, and coprime with the number of start positions (9,701): every start comes up once per 9,701 queries. */
const RANGE_STEP = 2_357;
const RANGE_WIDTH = 300;

function valueNames(prefix: string, count: number): string[] {
  const width = String(count - 1).length;
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(width, '0')}`);
}

function syntheticWorkload(n: number, seed: number): FilteredWorkload {
  const rng = new SeededRng((Math.imul(seed >>> 0, 0x9e3779b9) ^ PAYLOAD_STREAM) >>> 0);
  const kw01 = new Uint16Array(n);
  const kw1 = new Uint8Array(n);
  const kw10 = new Uint8Array(n);
  const kw50 = new Uint8Array(n);
  const num = new Uint16Array(n);
  const andA = new Uint8Array(n);
  const andB = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    kw01[i] = rng.int(SYN.kw01);
    kw1[i] = rng.int(SYN.kw1);
    kw10[i] = rng.int(SYN.kw10);
    kw50[i] = rng.int(SYN.kw50);
    num[i] = rng.int(NUM_RANGE);
    andA[i] = rng.int(SYN.andA);
    andB[i] = rng.int(SYN.andB);
  }
  const names = {
    kw01: valueNames('t', SYN.kw01),
    kw1: valueNames('h', SYN.kw1),
    kw10: valueNames('d', SYN.kw10),
    kw50: valueNames('b', SYN.kw50),
    andA: valueNames('a', SYN.andA),
    andB: valueNames('c', SYN.andB),
  };
  // A different lower bound per query, spread over the whole field (131 is coprime with the span).
  // Consecutive queries' ranges must not overlap: a step of 131 (< the width) let each query find
  // half of its candidates' vectors still in cache from the one before, flattering the exact path.
  const lower = (qi: number): number => (qi * RANGE_STEP) % (NUM_RANGE - RANGE_WIDTH + 1);
  const range: FilterShape = {
    name: 'range 3%',
    description: `num in [lo, lo+${RANGE_WIDTH}) (integer uniform in [0, ${NUM_RANGE}), lo rotating)`,
    nominal: RANGE_WIDTH / NUM_RANGE,
    filter: (qi) => must({ key: 'num', range: { gte: lower(qi), lt: lower(qi) + RANGE_WIDTH } }),
    matcher: (qi) => {
      const lo = lower(qi);
      const hi = lo + RANGE_WIDTH;
      return (row) => (num[row] as number) >= lo && (num[row] as number) < hi;
    },
  };
  // The AND walks every (a, b) pair: a from the query's low bits, b from the next ones.
  const pickA = (qi: number): number => qi % SYN.andA;
  const pickB = (qi: number): number => Math.floor(qi / SYN.andA) % SYN.andB;
  const and: FilterShape = {
    name: 'and 3%',
    description: `and_a = <${SYN.andA} values> AND and_b = <${SYN.andB} values> (independent keywords, ${(100 / SYN.andA).toFixed(0)}% × ${(100 / SYN.andB).toFixed(1)}%)`,
    nominal: 1 / (SYN.andA * SYN.andB),
    filter: (qi) => must(keyword('and_a', names.andA[pickA(qi)] as string), keyword('and_b', names.andB[pickB(qi)] as string)),
    matcher: (qi) => {
      const a = pickA(qi);
      const b = pickB(qi);
      return (row) => andA[row] === a && andB[row] === b;
    },
  };
  return {
    id: `mixture-payload-v2-seed${seed}`,
    description:
      'payload { kw_01, kw_1, kw_10, kw_50: keywords with 1000/100/10/2 values; num: integer 0–9999; and_a, and_b: 4 and 8 values }, uniform, own seeded stream',
    shapes: [
      keywordShape('kw 0.1%', 'kw_01', kw01, names.kw01),
      keywordShape('kw 1%', 'kw_1', kw1, names.kw1),
      keywordShape('kw 10%', 'kw_10', kw10, names.kw10),
      keywordShape('kw 50%', 'kw_50', kw50, names.kw50),
      range,
      and,
      keywordShape('not 90%', 'kw_10', kw10, names.kw10, true),
    ],
    payload: (row) => ({
      kw_01: names.kw01[kw01[row] as number] as string,
      kw_1: names.kw1[kw1[row] as number] as string,
      kw_10: names.kw10[kw10[row] as number] as string,
      kw_50: names.kw50[kw50[row] as number] as string,
      num: num[row] as number,
      and_a: names.andA[andA[row] as number] as string,
      and_b: names.andB[andB[row] as number] as string,
    }),
  };
}

/** The payloads and shapes of a dataset the `filtered` benchmark runs. */
export function filteredWorkload(dataset: AnnDataset, seed: number): FilteredWorkload {
  if (dataset.name === 'mnist10k') {
    if (dataset.baseLabels === undefined) throw new Error('mnist10k: the loader kept no digit labels');
    return mnistWorkload(dataset.baseLabels);
  }
  if (dataset.name === 'synthetic') return syntheticWorkload(dataset.base.count, seed);
  throw new Error(`filtered: no payloads defined for ${dataset.name}`);
}
