/**
 * Seeded generators of the data real users send and engines mishandle: ids with control
 * characters, long astral-plane ids up to the 1024-byte limit, numeric ids and their string twins,
 * duplicate, zero, tiny and non-negative vectors, and payloads holding every JSON type (-0, 1e300,
 * empty arrays and objects, nesting). Everything is drawn from a SeededRng, so one integer replays it.
 *
 * Payloads and filters reuse the fast-check generators of filter-reference.ts (sampled with a seed
 * drawn from the SeededRng), so the keys and values that filters test really occur in payloads.
 */
import fc from 'fast-check';
import type { SeededRng } from '../../src/core/rng.js';

export { idKey } from './id-key.js';

import { filterArb, type Json, type JsonObject, payloadArb, scalarPayloadArb, simpleFilterArb } from './filter-reference.js';

// ---------------------------------------------------------------------------------------------
// Ids.

/** How an id is written on the wire: numbers and their decimal strings name one point. */
export type RawId = number | string;

/** One id of a sequence's pool: its normalised key, and the raw spellings that name it. */
export interface PoolId {
  readonly key: string;
  readonly raws: readonly RawId[];
  /** Which generator made it (for the failure log and for KITH_MODEL_OFF). */
  readonly kind: IdKind;
}

export type IdKind = 'numeric' | 'plain' | 'control' | 'long-unicode' | 'lookalike' | 'uuid';

/** Bytes of an id's UTF-8 form (the limit is 1024). */
export const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

const ASTRAL = ['\u{1F600}', '\u{10000}', '\u{10FFFF}', '\u{1D11E}', '\u{20000}', '\u{1F468}\u{200D}\u{1F469}'];
const BMP = ['é', '中', 'ß', '\u{FFFD}', '\u{FEFF}', 'Ω', '\u{0301}', 'a', 'Z', '-', ' ', '.', '/'];

function controlChar(rng: SeededRng): string {
  // U+0000–U+0004 more often: those are the bytes binary key encodings use as markers.
  return String.fromCharCode(rng.next() < 0.5 ? rng.int(5) : rng.int(32));
}

/** An id holding control characters: short, or 64+ characters (long keys take other code paths). */
export function controlId(rng: SeededRng, index: number): string {
  const length = rng.next() < 0.5 ? 1 + rng.int(8) : 64 + rng.int(40);
  let s = '';
  while (s.length < length) s += rng.next() < 0.5 ? controlChar(rng) : String.fromCharCode(97 + rng.int(26));
  // A unique tail keeps pool ids distinct; a control character may still start or end it.
  return rng.next() < 0.5 ? `${s}${index}` : `${index}${s}`;
}

/** A long Unicode id mixing astral and BMP characters; about one in three is exactly 1024 bytes. */
export function longUnicodeId(rng: SeededRng, index: number): string {
  const target = rng.next() < 0.35 ? 1024 : 100 + rng.int(900);
  let s = `${index}:`;
  for (;;) {
    const next = rng.next() < 0.5 ? rng.pick(ASTRAL) : rng.pick(BMP);
    if (utf8Bytes(s) + utf8Bytes(next) > target) break;
    s += next;
  }
  // Pad with one-byte characters to land on the target exactly.
  while (utf8Bytes(s) < target) s += 'x';
  return s;
}

/** Strings that look like numbers but are other ids than the numbers (`"07"` is not `7`). */
const LOOKALIKES = ['07', '7.0', ' 7', '7 ', '-7', '1e3', '0x7', '+7', '00', '9007199254740993', '٧'];

/** A pool of ids of every kind, each with its raw spellings. */
export function idPool(rng: SeededRng, size: number, kinds: ReadonlySet<IdKind>): PoolId[] {
  const out: PoolId[] = [];
  const seen = new Set<string>();
  const add = (key: string, raws: RawId[], kind: IdKind): void => {
    if (seen.has(key) || !kinds.has(kind)) return;
    seen.add(key);
    out.push({ key, raws, kind });
  };
  const numeric = (n: number): void => add(String(n), [n, String(n)], 'numeric');
  // The edges first, so that even small pools hold them.
  numeric(0);
  numeric(7);
  numeric(Number.MAX_SAFE_INTEGER);
  add('7.0', ['7.0'], 'lookalike');
  add('07', ['07'], 'lookalike');
  const order: IdKind[] = ['numeric', 'plain', 'control', 'long-unicode', 'lookalike', 'uuid'];
  for (let i = 0; out.length < size && i < size * 20; i++) {
    const kind = rng.pick(order);
    if (!kinds.has(kind)) continue;
    if (kind === 'numeric') numeric(rng.next() < 0.7 ? rng.int(1000) : rng.int(2 ** 31) * 4096 + rng.int(4096));
    else if (kind === 'plain') add(`p${i}`, [`p${i}`], kind);
    else if (kind === 'control') add(controlId(rng, i), [], kind);
    else if (kind === 'long-unicode') add(longUnicodeId(rng, i), [], kind);
    else if (kind === 'uuid') {
      // One UUID is one point whatever its spelling (core/point-id.ts): every spelling names the canonical key.
      const hex = Array.from({ length: 32 }, () => '0123456789abcdef'[rng.int(16)]).join('');
      const u = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      add(u, [u.toUpperCase(), u, `{${u}}`, `urn:uuid:${u.toUpperCase()}`, hex], kind);
    } else add(rng.pick(LOOKALIKES), [], kind);
  }
  // Strings are their own only spelling.
  return out.map((p) => (p.raws.length > 0 ? p : { ...p, raws: [p.key] }));
}

// ---------------------------------------------------------------------------------------------
// Vectors.

/**
 * A sequence's vector family. `int`, `nonneg` and `dupes` hold small integers only, exact in
 * float32 (so Dot and Euclid scores on them are exact); `real` and `nasty` do not.
 */
export type VectorFamily = 'int' | 'nonneg' | 'dupes' | 'real' | 'nasty';
export const FAMILIES: readonly VectorFamily[] = ['int', 'nonneg', 'dupes', 'real', 'nasty'];
export const EXACT_FAMILIES: ReadonlySet<VectorFamily> = new Set(['int', 'nonneg', 'dupes']);

export interface VectorGen {
  readonly family: VectorFamily;
  readonly dim: number;
  /** The few vectors `dupes` repeats (and every family sometimes). */
  readonly bases: readonly number[][];
  /** Generators switched off by KITH_MODEL_OFF. */
  readonly off: ReadonlySet<string>;
}

const ints = (rng: SeededRng, dim: number, min: number, max: number): number[] => Array.from({ length: dim }, () => min + rng.int(max - min + 1));

export function vectorGen(rng: SeededRng, family: VectorFamily, dim: number, off: ReadonlySet<string>): VectorGen {
  const nonneg = family === 'nonneg';
  const bases = Array.from({ length: 1 + rng.int(3) }, () => ints(rng, dim, nonneg ? 0 : -3, 3));
  return { family, dim, bases, off };
}

/** One vector of the family: mostly its own kind, with zeros and repeats everywhere. */
export function drawVector(rng: SeededRng, gen: VectorGen): number[] {
  const { dim, family, off } = gen;
  const r = rng.next();
  if (r < 0.06 && !off.has('zero')) return new Array<number>(dim).fill(0);
  if (((family === 'dupes' && r < 0.75) || r < 0.12) && !off.has('duplicates')) return [...rng.pick(gen.bases)];
  switch (family) {
    case 'int':
    case 'dupes':
      return ints(rng, dim, -3, 3);
    case 'nonneg':
      return ints(rng, dim, 0, 3);
    case 'real': {
      const scale = rng.pick([1, 1, 1e-3, 1e3]);
      return Array.from({ length: dim }, () => rng.gaussian() * scale);
    }
    case 'nasty':
      return nastyVector(rng, dim, off);
  }
}

/** Zeros, one-hots, tiny (1e-30) and huge (1e8) magnitudes, negative zeros, mixed scales. */
function nastyVector(rng: SeededRng, dim: number, off: ReadonlySet<string>): number[] {
  const kind = rng.int(6);
  if (kind === 0 && !off.has('tiny')) return ints(rng, dim, -3, 3).map((x) => x * 1e-30);
  if (kind === 1) {
    const v = new Array<number>(dim).fill(-0);
    v[rng.int(dim)] = rng.pick([1, -1, 1e-30, 1e8]);
    return v;
  }
  if (kind === 2) return Array.from({ length: dim }, () => rng.pick([0, -0, 1, -1, 0.5, 1e-30, 1e8, -1e8, 1e-7]));
  if (kind === 3 && !off.has('nonneg')) return Array.from({ length: dim }, () => Math.abs(rng.gaussian()));
  if (kind === 4) return Array.from({ length: dim }, () => rng.gaussian() * 1e-20);
  return ints(rng, dim, -3, 3);
}

// ---------------------------------------------------------------------------------------------
// Payloads and filters.

/** Values of every JSON type, with the ones that lose something on the way through JSON text. */
const NASTY_VALUES: readonly Json[] = [
  null,
  true,
  false,
  0,
  -0,
  1e300,
  -1e300,
  5e-324,
  Number.MAX_SAFE_INTEGER,
  0.1,
  '',
  '\u0000',
  'a\u0000b',
  '\u{1F600}',
  'é',
  [],
  {},
  [[]],
  [{}],
  [null, -0, 'a'],
  { a: { b: { c: [1, { n: 2 }] } } },
  { '': 1 },
  [1e300, 'red', true],
];

/** Samples one value of a fast-check generator, reproducibly from the SeededRng. */
export function sample<T>(rng: SeededRng, arb: fc.Arbitrary<T>): T {
  return fc.sample(arb, { seed: rng.nextUint32() | 0, numRuns: 1 })[0] as T;
}

const TOP_KEYS = ['a', 'b', 'c', 'n', 't', 'x', ''];

/** A payload: the shared generators' (nested or single-valued), with nasty values mixed in. */
export function drawPayload(rng: SeededRng, off: ReadonlySet<string>): JsonObject {
  const r = rng.next();
  if (r < 0.05) return {};
  const base = sample(rng, r < 0.55 ? payloadArb : scalarPayloadArb);
  if (off.has('nasty-payload')) return base;
  const extra = rng.int(3);
  for (let i = 0; i < extra; i++) base[rng.pick(TOP_KEYS)] = structuredClone(rng.pick(NASTY_VALUES));
  return base;
}

const filterGen = fc.oneof(filterArb(2), simpleFilterArb);

/** A random filter (as request JSON) over the keys payloads hold; sometimes one on a nasty value. */
export function drawFilter(rng: SeededRng, off: ReadonlySet<string>): JsonObject {
  if (!off.has('nasty-payload') && rng.next() < 0.2) {
    const key = rng.pick(['a', 'b', 'c', 'n', 'x']);
    const value = rng.pick([null, true, false, 0, 1e300, '', '\u0000', 'a\u0000b', '\u{1F600}']);
    const condition: JsonObject = rng.next() < 0.3 ? { key, range: { gte: rng.pick([-1e300, 0, 1e299]) } } : { key, match: { value } };
    return rng.next() < 0.5 ? { must: [condition] } : { must_not: [condition] };
  }
  return sample(rng, filterGen);
}
