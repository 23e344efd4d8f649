/**
 * A filter as a search thread runs it: sent as data (`portableFilter`: everything but the compiled
 * regexes, which are compiled again on arrival, and a bound `has_vector`'s holders, sent as their
 * bitset over slots), evaluated on the payload records in shared memory
 * (payload/shared-payloads.ts), reading only the top-level keys the filter names.
 */
import { RE2JS } from 're2js';
import { countBits, forEachBit, hasBit } from '../core/slot-bits.js';
import { compileFilter } from './filter-compile.js';
import type { Condition, ElementsCondition, FieldCondition, Filter, HasVectorCondition, NestedCondition, VectorHolders } from './filter-types.js';
import { ProjectionKeys, type SharedPayloadReader } from './shared-payloads.js';

type RegexCondition = Extract<FieldCondition, { kind: 'regex' }>;

export type PortableCondition =
  | Exclude<Condition, RegexCondition | NestedCondition | ElementsCondition | HasVectorCondition>
  /** `bits`: the holders' slots, when the condition was bound (search/filter-bind.ts); a thread answers it by slot. */
  | (Omit<HasVectorCondition, 'holders'> & { readonly bits?: Uint32Array })
  | Omit<RegexCondition, 'regex'>
  | { readonly kind: 'nested'; readonly filter: PortableFilter }
  | (Omit<ElementsCondition, 'filter'> & { readonly filter: PortableFilter });

/** A `Filter` that survives `postMessage` (structured clone): sets, numbers and strings only. */
export type PortableFilter = FilterOf<PortableCondition>;

/** The shape Filter and PortableFilter share, over their condition types. */
interface FilterOf<C> {
  readonly must: readonly C[];
  readonly mustNot: readonly C[];
  readonly should: readonly C[];
  readonly minShould?: { readonly conditions: readonly C[]; readonly minCount: number };
}

function mapConditions<A, B>(filter: FilterOf<A>, map: (condition: A) => B): FilterOf<B> {
  const out: FilterOf<B> = { must: filter.must.map(map), mustNot: filter.mustNot.map(map), should: filter.should.map(map) };
  if (filter.minShould === undefined) return out;
  return { ...out, minShould: { conditions: filter.minShould.conditions.map(map), minCount: filter.minShould.minCount } };
}

export function portableFilter(filter: Filter): PortableFilter {
  return mapConditions(filter, portableCondition);
}

function portableCondition(condition: Condition): PortableCondition {
  switch (condition.kind) {
    case 'regex': {
      const { regex: _compiled, ...rest } = condition;
      return rest;
    }
    case 'has_vector':
      // Bound, its holders go as a bitset (a word per 32 slots, cheap to build and to copy); unbound,
      // a thread cannot answer it (filterReads), and parallel-search.ts keeps such filters here.
      return condition.holders === undefined
        ? { kind: 'has_vector', name: condition.name }
        : { kind: 'has_vector', name: condition.name, bits: condition.holders.bits() };
    case 'nested':
      return { kind: 'nested', filter: portableFilter(condition.filter) };
    case 'elements':
      return { ...condition, filter: portableFilter(condition.filter) };
    default:
      return condition;
  }
}

/**
 * The filter back, its regexes compiled (patterns that compiled when the request was parsed), a
 * bound `has_vector` answered from its bitset for the slot being tested (`slotNow`).
 */
export function reviveFilter(portable: PortableFilter, slotNow: () => number = noSlot): Filter {
  const revive = (condition: PortableCondition): Condition => {
    switch (condition.kind) {
      case 'regex':
        return { ...condition, regex: RE2JS.compile(condition.pattern) };
      case 'nested':
        return { kind: 'nested', filter: reviveFilter(condition.filter, slotNow) };
      case 'elements':
        return { ...condition, filter: reviveFilter(condition.filter, slotNow) };
      case 'has_vector':
        return condition.bits === undefined
          ? { kind: 'has_vector', name: condition.name }
          : { kind: 'has_vector', name: condition.name, holders: slotHolders(condition.bits, slotNow) };
      default:
        return condition;
    }
  };
  return mapConditions(portable, revive);
}

/** A revived filter asked of a bound has_vector outside recordPredicate: a bug, not "no". */
function noSlot(): number {
  throw new Error('a bound has_vector tested without the slot it is tested on (payload/thread-filter.ts recordPredicate)');
}

/**
 * Holders read from their bitset. A compiled filter asks `holds(id)`, and a thread has no id → slot
 * map; it tests one slot at a time (recordPredicate), so the answer is the bit of that slot.
 */
function slotHolders(bits: Uint32Array, slotNow: () => number): VectorHolders {
  return {
    count: countBits(bits),
    holds: () => hasBit(bits, slotNow()),
    has: (slot) => hasBit(bits, slot),
    forEach: (visit) => forEachBit(bits, visit),
    bits: () => bits,
  };
}

/**
 * What a filter reads of a point: the top-level payload keys (a key as written, which payloads
 * may hold literally, and its first dotted part), whether its id (`has_id`) and whether which
 * vectors it holds (`has_vector` unbound to a segment, which threads cannot answer: they hold no
 * vectors but the main one; a bound one they answer from its holders' bitset).
 */
export function filterReads(filter: PortableFilter | Filter): { readonly keys: Set<string>; readonly ids: boolean; readonly vectors: boolean } {
  const keys = new Set<string>();
  let ids = false;
  let vectors = false;
  const visit = (f: PortableFilter | Filter): void => {
    for (const c of [...f.must, ...f.mustNot, ...f.should, ...(f.minShould?.conditions ?? [])]) {
      if (c.kind === 'has_id') ids = true;
      else if (c.kind === 'has_vector') vectors ||= !isBound(c);
      else if (c.kind === 'nested') visit(c.filter);
      else {
        // An elements condition reads inside the array at its key: the key is all it needs.
        keys.add(c.key);
        keys.add(c.parts[0] as string);
      }
    }
  };
  visit(filter);
  return { keys, ids, vectors };
}

/**
 * The filter as a test of a slot's record: false for a slot without one (no live point there).
 * Each call parses only the values the filter reads.
 */
export function recordPredicate(reader: SharedPayloadReader, filter: PortableFilter): (slot: number) => boolean {
  let tested = -1;
  const predicate = compileFilter(reviveFilter(filter, () => tested));
  const reads = filterReads(filter);
  const keys = new ProjectionKeys(reads.keys);
  const needsId = reads.ids;
  return (slot) => {
    tested = slot;
    return reader.has(slot) && predicate(reader.project(slot, keys), needsId ? reader.idOf(slot) : '');
  };
}

/** Whether a `has_vector` is bound: holders on this thread, their bitset on a search thread. */
function isBound(condition: PortableCondition | Condition): boolean {
  return ('holders' in condition && condition.holders !== undefined) || ('bits' in condition && condition.bits !== undefined);
}
