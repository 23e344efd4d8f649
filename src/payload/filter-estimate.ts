/**
 * Cardinality of a filter from the payload indexes, and the candidate slots they can name.
 *
 * Every estimate brackets the true number of matching points: min ≤ actual ≤ max. A condition on
 * a key the indexes know no point holds a value at is exact: every point is judged as an empty
 * payload is (`is_empty` holds for all, `exact` for none). Conditions the indexes cannot answer
 * (regex, substrings, `except`, geo, `nested`, non-scalar values, keys without an index, keys with
 * `[]`) are unknown: [0, points having the key (or all points)], expected half of that, and the
 * estimate says it was not counted (`counted`). `has_id` is answered exactly from the point table,
 * a bound `has_vector` from the vector's holders,
 * `is_empty` from the count of points holding a non-empty value, `values_count` and `min_should`
 * within brackets.
 *
 * Candidates are a superset of the matching slots: callers always re-check the full predicate, so
 * an index only has to be complete (never miss a match), never exact. AND takes the smallest
 * child's candidates, OR needs candidates from every child, NOT gives none.
 */
import { bitsToArray, bitsWords, countBits, forEachBit, hasBit } from '../core/slot-bits.js';
import { type FieldIndex, MAX_KEYWORD_LENGTH } from './field-index.js';
import { compileFilter, countTest } from './filter-compile.js';
import type { Condition, ElementsCondition, FieldCondition, Filter, HasIdCondition, HasVectorCondition, MinShould } from './filter-types.js';
import type { PayloadIndexReader } from './payload-index.js';
import type { PostingSet } from './posting-set.js';

export interface Estimate {
  readonly min: number;
  readonly expected: number;
  readonly max: number;
}

export interface Candidates {
  /** An upper bound on how many slots `forEach` visits (repeats included). */
  readonly count: number;
  /** `count` is exactly how many distinct slots there are, not only a bound. */
  readonly counted?: boolean;
  forEach(visit: (slot: number) => void): void;
  /**
   * Set when the candidates are exactly the matching points, each visited once (one indexed
   * condition answered completely): callers may then skip re-checking the filter.
   */
  readonly exact?: boolean;
  /** O(1) membership, when the candidates are posting sets (for walks that test many slots). */
  has?(slot: number): boolean;
  /** The candidates as one shared, read-only array, when that costs nothing (one posting set). */
  array?(): Int32Array;
  /** The candidates as a bitset (core/slot-bits.ts; read-only, may be shared), when posting sets give it cheaply. */
  bits?(): Uint32Array;
}

export interface FilterEstimate {
  readonly estimate: Estimate;
  /**
   * False when some condition was not counted (its key has no index, or the indexes cannot answer
   * its kind) and the bracket is not a single number: then min and max bound the matches, and
   * `expected` is a midpoint standing in for what was not counted, not a count.
   */
  readonly counted: boolean;
  readonly candidates?: Candidates;
  /** Keys whose indexes were consulted. */
  readonly indexedKeys: ReadonlySet<string>;
  /** Per condition, for ordering the predicate's checks. */
  readonly conditions: ReadonlyMap<Condition, Estimate>;
}

interface Part {
  readonly estimate: Estimate;
  readonly candidates?: Candidates;
}

/** The live slot of a point id, when the point exists (the collection's point table). */
export type SlotOfId = (id: string) => number | undefined;

/** What one estimate reads: the indexes, the live point count, the point table for `has_id`. */
interface Context {
  readonly index: PayloadIndexReader;
  readonly n: number;
  readonly slotOf: SlotOfId | undefined;
  readonly keys: Set<string>;
  readonly seen: Map<Condition, Estimate>;
  /** Some condition was estimated as unknown (`unknown`). */
  guessed: boolean;
}

/** `slotOf` answers `has_id` exactly; without it `has_id` is estimated from its list's length. */
export function estimateFilter(filter: Filter, index: PayloadIndexReader, n: number, slotOf?: SlotOfId): FilterEstimate {
  const context: Context = { index, n, slotOf, keys: new Set(), seen: new Map(), guessed: false };
  const part = filterPart(filter, context);
  const counted = !context.guessed || part.estimate.min === part.estimate.max;
  return { ...part, counted, indexedKeys: context.keys, conditions: context.seen };
}

function filterPart(filter: Filter, context: Context): Part {
  const n = context.n;
  const conjuncts: Part[] = [];
  for (const c of filter.must) conjuncts.push(conditionPart(c, context));
  for (const c of filter.mustNot) conjuncts.push({ estimate: not(conditionPart(c, context).estimate, n) });
  if (filter.should.length > 0)
    conjuncts.push(
      or(
        filter.should.map((c) => conditionPart(c, context)),
        n,
      ),
    );
  if (filter.minShould !== undefined) conjuncts.push(minShouldPart(filter.minShould, context));
  return conjuncts.length === 0 ? { estimate: exactly(n), candidates: undefined } : and(conjuncts, n);
}

function conditionPart(condition: Condition, context: Context): Part {
  let part: Part;
  switch (condition.kind) {
    case 'nested':
      part = filterPart(condition.filter, context);
      break;
    case 'has_id':
      part = hasIdPart(condition, context);
      break;
    case 'has_vector':
      part = hasVectorPart(condition, context);
      break;
    case 'elements': {
      if (holdsNoValue(condition, context)) {
        part = absentPart(condition, context);
        break;
      }
      // The inner filter reads array elements, not points: its estimates do not apply. A match
      // needs a value at the key, so the key's point count bounds it (when the key is indexed as written).
      const field = condition.projections === undefined ? context.index.field(condition.key) : undefined;
      part = { estimate: unknown(field === undefined ? context.n : Math.min(context.n, field.points), context) };
      break;
    }
    default:
      part = fieldPart(condition, context);
  }
  context.seen.set(condition, part.estimate);
  return part;
}

/** Exactly the listed ids that exist, from the point table. */
function hasIdPart(c: HasIdCondition, context: Context): Part {
  const slotOf = context.slotOf;
  if (slotOf === undefined) return { estimate: unknown(Math.min(context.n, c.ids.size), context) };
  const slots: number[] = [];
  for (const id of c.ids) {
    const slot = slotOf(id);
    if (slot !== undefined) slots.push(slot);
  }
  const found = new Set(slots);
  const array = Int32Array.from(slots);
  return {
    estimate: exactly(slots.length),
    candidates: {
      count: slots.length,
      counted: true,
      exact: true,
      forEach(visit) {
        for (const slot of array) visit(slot);
      },
      has: (slot) => found.has(slot),
      array: () => array,
    },
  };
}

/** Exactly the points holding the vector, when the condition is bound to the segment (filter-bind.ts). */
function hasVectorPart(c: HasVectorCondition, context: Context): Part {
  const holders = c.holders;
  if (holders === undefined) return { estimate: unknown(context.n, context) };
  return {
    estimate: exactly(holders.count),
    candidates: {
      count: holders.count,
      counted: true,
      exact: true,
      forEach: (visit) => holders.forEach(visit),
      has: (slot) => holders.has(slot),
      bits: () => holders.bits(),
    },
  };
}

/**
 * At least k of c conditions. Summing the conditions' matches over the points: every matching
 * point holds at most c, every other at most k − 1, so matches ≥ (Σmin − (k−1)·n) / (c − k + 1);
 * every matching point holds at least k, so matches ≤ Σmax / k. Candidates: those of an OR, a
 * superset when k ≥ 1.
 */
function minShouldPart(m: MinShould, context: Context): Part {
  const n = context.n;
  const parts = m.conditions.map((c) => conditionPart(c, context));
  const k = m.minCount;
  const c = parts.length;
  if (k === 0) return { estimate: exactly(n) };
  if (k > c) return { estimate: exactly(0) };
  let sumMin = 0;
  let sumMax = 0;
  for (const p of parts) {
    sumMin += p.estimate.min;
    sumMax += p.estimate.max;
  }
  const min = Math.max(0, Math.ceil((sumMin - (k - 1) * n) / (c - k + 1)));
  const max = Math.min(n, Math.floor(sumMax / k));
  const any = or(parts, n);
  const candidates = any.candidates === undefined ? undefined : { ...any.candidates, exact: false, counted: false };
  return { estimate: clamp(Math.min(min, max), any.estimate.expected / k, max), candidates };
}

/** Whether the indexes know that no point holds a value at the condition's key (never for keys with `[]`). */
function holdsNoValue(c: FieldCondition | ElementsCondition, context: Context): boolean {
  return c.projections === undefined && context.index.holdsNoValue(c.key);
}

/**
 * A condition on a key no point holds a value at: every point is judged as an empty payload is,
 * by the compiled condition itself, so all match or none does (none with empty, exact candidates).
 */
function absentPart(c: FieldCondition | ElementsCondition, context: Context): Part {
  context.keys.add(c.key);
  const matchesEmpty = compileFilter({ must: [c], mustNot: [], should: [] })({}, '');
  return matchesEmpty ? { estimate: exactly(context.n) } : setsPart([], false);
}

function fieldPart(c: FieldCondition, context: Context): Part {
  const n = context.n;
  if (holdsNoValue(c, context)) return absentPart(c, context);
  // A key with `[]` reads values no index path holds as written: unknown.
  const field = c.projections === undefined ? context.index.field(c.key) : undefined;
  if (field === undefined) return { estimate: unknown(n, context) };
  context.keys.add(c.key);
  const bounded = (): Part => ({ estimate: unknown(Math.min(n, field.points), context) });
  switch (c.kind) {
    case 'is_empty': {
      // Exactly the points holding no non-empty value at the key.
      const count = Math.max(0, n - field.nonEmptyPoints);
      return { estimate: exactly(count) };
    }
    case 'values_count': {
      // A point without a value at the key counts 0: it matches exactly when 0 is within the bounds.
      const absent = Math.max(0, n - field.points);
      if (countTest(c.count)(0)) {
        // The points holding a value are not counted: half of them stands in.
        context.guessed = true;
        return { estimate: clamp(absent, absent + field.points / 2, n) };
      }
      return bounded();
    }
    case 'exact':
      return scalarPostings(field, [c.value]) ?? bounded();
    case 'any':
      return scalarPostings(field, c.values) ?? bounded();
    case 'contains':
      // Array elements equal to a scalar are in the postings; a substring match is not.
      if (typeof c.value === 'string') return bounded();
      return loosen(scalarPostings(field, [c.value])) ?? bounded();
    case 'range': {
      const r = c.range;
      if (r.kind === 'number') {
        const lo = tighter(r.gt, r.gte, 'lower');
        const hi = tighter(r.lt, r.lte, 'upper');
        return numberRange(field.numbers, field.multiValued, lo?.value, lo?.inclusive ?? true, hi?.value, hi?.inclusive ?? true);
      }
      // Keyed by epoch milliseconds: the inclusive millisecond range is a superset of the instants.
      const lo = maxOf(r.gt?.ms, r.gte?.ms);
      const hi = minOf(r.lt?.ms, r.lte?.ms);
      const count = field.datetimes.count(lo, true, hi, true);
      return { estimate: { min: 0, expected: count, max: count }, candidates: rangeCandidates(field.datetimes, lo, true, hi, true, count) };
    }
    case 'prefix': {
      if (field.longStrings > 0 || field.keywords.size > 100_000) return bounded();
      const matching: PostingSet[] = [];
      for (const [key, slots] of field.keywords) if (key.startsWith(c.prefix)) matching.push(slots);
      return setsPart(matching, field.multiValued);
    }
    default:
      return bounded();
  }
}

/** Points whose value (or an element) equals one of `values`, when every value is indexable. */
function scalarPostings(field: FieldIndex, values: readonly unknown[]): Part | undefined {
  const sets: PostingSet[] = [];
  const ranges: number[] = [];
  for (const v of values) {
    if (typeof v === 'string') {
      if (v.length > MAX_KEYWORD_LENGTH) return undefined;
      const slots = field.keywords.get(v);
      if (slots !== undefined && !sets.includes(slots)) sets.push(slots);
    } else if (typeof v === 'boolean') {
      const slots = v ? field.trues : field.falses;
      if (!sets.includes(slots)) sets.push(slots);
    } else if (typeof v === 'number') {
      ranges.push(v);
    } else {
      return undefined;
    }
  }
  // Distinct values of a field that holds one value per point name disjoint sets.
  const setPart = setsPart(sets, field.multiValued);
  if (ranges.length === 0) return setPart;
  let count = setPart.estimate.max;
  for (const v of new Set(ranges)) count += field.numbers.count(v, true, v, true);
  const exact = !field.multiValued && values.length === 1;
  // The run may still hold removed pairs: they bound the count from above, not below.
  const min = exact ? Math.max(0, count - field.numbers.removedHeld) : 0;
  return {
    estimate: { min, expected: count, max: count },
    candidates: {
      count,
      exact,
      forEach(visit) {
        setPart.candidates?.forEach(visit);
        for (const v of new Set(ranges)) field.numbers.forEachIn(v, true, v, true, visit);
      },
    },
  };
}

/** The union of posting sets; exact when one point has one value (disjoint sets). */
function setsPart(sets: readonly PostingSet[], overlapping: boolean): Part {
  let sum = 0;
  let largest = 0;
  for (const s of sets) {
    sum += s.size;
    largest = Math.max(largest, s.size);
  }
  const estimate = { min: overlapping ? largest : sum, expected: sum, max: sum };
  const only = sets.length === 1 ? (sets[0] as PostingSet) : undefined;
  if (only !== undefined) {
    const array = (): Int32Array => only.toArray();
    return {
      estimate,
      candidates: {
        count: sum,
        exact: true,
        forEach(visit) {
          for (const slot of array()) visit(slot);
        },
        has: (slot) => only.has(slot),
        array,
        bits: () => only.toBits(),
      },
    };
  }
  return {
    estimate,
    candidates: {
      count: sum,
      exact: !overlapping,
      forEach(visit) {
        for (const s of sets) for (const slot of s.toArray()) visit(slot);
      },
      has: (slot) => sets.some((s) => s.has(slot)),
      bits: () => {
        let span = 0;
        for (const s of sets) span = Math.max(span, s.span);
        const out = new Uint32Array(bitsWords(span));
        for (const s of sets) s.orInto(out);
        return out;
      },
    },
  };
}

function numberRange(
  numbers: FieldIndex['numbers'],
  multiValued: boolean,
  lo: number | undefined,
  loInc: boolean,
  hi: number | undefined,
  hiInc: boolean,
): Part {
  const count = numbers.count(lo, loInc, hi, hiInc);
  const candidates = { ...rangeCandidates(numbers, lo, loInc, hi, hiInc, count), exact: !multiValued };
  // Removed pairs not yet merged away may be counted: they lower the minimum, not the maximum.
  const min = multiValued ? 0 : Math.max(0, count - numbers.removedHeld);
  return { estimate: { min, expected: count, max: count }, candidates };
}

function rangeCandidates(
  numbers: FieldIndex['numbers'],
  lo: number | undefined,
  loInc: boolean,
  hi: number | undefined,
  hiInc: boolean,
  count: number,
): Candidates {
  return { count, forEach: (visit) => numbers.forEachIn(lo, loInc, hi, hiInc, visit) };
}

/** The tighter of a strict and an inclusive bound on one side (undefined when neither is set). */
function tighter(strict: number | undefined, inclusive: number | undefined, side: 'lower' | 'upper'): { value: number; inclusive: boolean } | undefined {
  if (strict === undefined) return inclusive === undefined ? undefined : { value: inclusive, inclusive: true };
  if (inclusive === undefined) return { value: strict, inclusive: false };
  const strictWins = side === 'lower' ? strict >= inclusive : strict <= inclusive;
  return strictWins ? { value: strict, inclusive: false } : { value: inclusive, inclusive: true };
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

function minOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** Candidates stay a superset, but neither exact nor a lower bound any more. */
function loosen(part: Part | undefined): Part | undefined {
  if (part === undefined) return undefined;
  const candidates = part.candidates === undefined ? undefined : { ...part.candidates, exact: false };
  return { estimate: { ...part.estimate, min: 0 }, candidates };
}

function exactly(count: number): Estimate {
  return { min: count, expected: count, max: count };
}

/** Anywhere in [0, max]: the middle stands in, and the estimate is marked as not counted. */
function unknown(max: number, context: Context): Estimate {
  context.guessed = true;
  return { min: 0, expected: max / 2, max };
}

function not(e: Estimate, n: number): Estimate {
  return { min: n - e.max, expected: n - e.expected, max: n - e.min };
}

function and(parts: readonly Part[], n: number): Part {
  let min = 0;
  let max = n;
  let expected = n;
  let best: Candidates | undefined;
  for (const p of parts) {
    min += p.estimate.min;
    max = Math.min(max, p.estimate.max);
    expected *= n === 0 ? 0 : p.estimate.expected / n;
    if (p.candidates !== undefined && (best === undefined || p.candidates.count < best.count)) best = p.candidates;
  }
  min = Math.max(0, min - (parts.length - 1) * n);
  if (best === undefined || parts.length === 1) return { estimate: clamp(min, expected, max), candidates: best };
  const candidates = intersect(parts, best);
  // Candidates are a superset of the matches: their count bounds the maximum, and is the answer when exact.
  if (candidates.exact === true && candidates.counted === true) return { estimate: exactly(candidates.count), candidates };
  max = Math.min(max, candidates.count);
  return { estimate: clamp(Math.min(min, max), Math.min(expected, max), max), candidates };
}

/**
 * Candidates of an AND: the smallest child's, narrowed by the membership tests of the children
 * that have them. Exact when every child is an exact posting-set answer.
 */
function intersect(parts: readonly Part[], smallest: Candidates): Candidates {
  const others = parts.map((p) => p.candidates).filter((c): c is Candidates => c !== undefined && c !== smallest && c.exact === true && c.has !== undefined);
  const exact = smallest.exact === true && others.length === parts.length - 1;
  if (others.length === 0) return { ...smallest, exact: false, array: undefined };
  const smallestBits = smallest.bits;
  if (smallestBits !== undefined && others.every((c) => c.bits !== undefined)) return intersectBits(exact, smallestBits, others);
  // A bitset answers with one array read; otherwise the posting sets' own membership.
  const tests = others.map((c): ((slot: number) => boolean) => {
    const bits = c.bits?.();
    return bits === undefined ? (c.has as (slot: number) => boolean) : (slot) => hasBit(bits, slot);
  });
  const passes = (slot: number): boolean => {
    for (const test of tests) if (!test(slot)) return false;
    return true;
  };
  // Materialised once per search, on first use: walks test membership, scans read the array.
  let kept: Int32Array | undefined;
  const array = (): Int32Array => {
    if (kept !== undefined) return kept;
    const out: number[] = [];
    const source = smallest.array?.();
    if (source !== undefined) {
      for (let i = 0; i < source.length; i++) if (passes(source[i] as number)) out.push(source[i] as number);
    } else {
      smallest.forEach((slot) => {
        if (passes(slot)) out.push(slot);
      });
    }
    kept = Int32Array.from(out);
    return kept;
  };
  const has = smallest.has;
  return {
    count: smallest.count,
    exact,
    array,
    forEach(visit) {
      for (const slot of array()) visit(slot);
    },
    ...(has === undefined || !exact ? {} : { has: (slot: number) => has(slot) && passes(slot) }),
  };
}

/**
 * An AND of posting-set answers as one bitset, computed word by word (n/32 words per child, a few
 * microseconds at 100k points), so its count is the true size of the intersection.
 */
function intersectBits(exact: boolean, smallest: () => Uint32Array, others: readonly Candidates[]): Candidates {
  const bits = Uint32Array.from(smallest());
  for (const c of others) {
    const other = (c.bits as () => Uint32Array)();
    for (let w = 0; w < bits.length; w++) bits[w] = (bits[w] as number) & ((other[w] as number | undefined) ?? 0);
  }
  const count = countBits(bits);
  let array: Int32Array | undefined;
  const toArray = (): Int32Array => {
    array ??= bitsToArray(bits);
    return array;
  };
  return {
    count,
    counted: true,
    exact,
    array: toArray,
    bits: () => bits,
    forEach(visit) {
      forEachBit(bits, visit);
    },
    ...(exact ? { has: (slot: number) => hasBit(bits, slot) } : {}),
  };
}

function or(parts: readonly Part[], n: number): Part {
  let min = 0;
  let max = 0;
  let none = 1;
  for (const p of parts) {
    min = Math.max(min, p.estimate.min);
    max += p.estimate.max;
    none *= n === 0 ? 1 : 1 - p.estimate.expected / n;
  }
  max = Math.min(n, max);
  const all = parts.every((p) => p.candidates !== undefined);
  const candidates: Candidates | undefined = all
    ? {
        count: parts.reduce((sum, p) => sum + (p.candidates as Candidates).count, 0),
        forEach(visit) {
          for (const p of parts) (p.candidates as Candidates).forEach(visit);
        },
      }
    : undefined;
  return { estimate: clamp(min, n * (1 - none), max), candidates };
}

function clamp(min: number, expected: number, max: number): Estimate {
  return { min, expected: Math.min(max, Math.max(min, expected)), max };
}
