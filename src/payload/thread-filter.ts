/**
 * A filter as a search thread runs it: sent as data (`portableFilter`: everything but the compiled
 * regexes, which are compiled again on arrival), evaluated on the payload records in shared memory
 * (payload/shared-payloads.ts), reading only the top-level keys the filter names.
 */
import { RE2JS } from 're2js';
import { compileFilter } from './filter-compile.js';
import type { Condition, ElementsCondition, FieldCondition, Filter, HasVectorCondition, NestedCondition } from './filter-types.js';
import { ProjectionKeys, type SharedPayloadReader } from './shared-payloads.js';

type RegexCondition = Extract<FieldCondition, { kind: 'regex' }>;

export type PortableCondition =
  | Exclude<Condition, RegexCondition | NestedCondition | ElementsCondition | HasVectorCondition>
  | Omit<HasVectorCondition, 'holders'>
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
      // Unbound: a thread cannot answer it (filterReads), and parallel-search.ts keeps such filters here.
      return { kind: 'has_vector', name: condition.name };
    case 'nested':
      return { kind: 'nested', filter: portableFilter(condition.filter) };
    case 'elements':
      return { ...condition, filter: portableFilter(condition.filter) };
    default:
      return condition;
  }
}

/** The filter back, its regexes compiled (patterns that compiled when the request was parsed). */
export function reviveFilter(portable: PortableFilter): Filter {
  return mapConditions(portable, reviveCondition);
}

function reviveCondition(condition: PortableCondition): Condition {
  switch (condition.kind) {
    case 'regex':
      return { ...condition, regex: RE2JS.compile(condition.pattern) };
    case 'nested':
      return { kind: 'nested', filter: reviveFilter(condition.filter) };
    case 'elements':
      return { ...condition, filter: reviveFilter(condition.filter) };
    default:
      return condition;
  }
}

/**
 * What a filter reads of a point: the top-level payload keys (a key as written, which payloads
 * may hold literally, and its first dotted part), whether its id (`has_id`) and whether which
 * vectors it holds (`has_vector`, which threads cannot answer: they hold no vectors but the main one).
 */
export function filterReads(filter: PortableFilter | Filter): { readonly keys: Set<string>; readonly ids: boolean; readonly vectors: boolean } {
  const keys = new Set<string>();
  let ids = false;
  let vectors = false;
  const visit = (f: PortableFilter | Filter): void => {
    for (const c of [...f.must, ...f.mustNot, ...f.should, ...(f.minShould?.conditions ?? [])]) {
      if (c.kind === 'has_id') ids = true;
      else if (c.kind === 'has_vector') vectors = true;
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
  const predicate = compileFilter(reviveFilter(filter));
  const reads = filterReads(filter);
  const keys = new ProjectionKeys(reads.keys);
  const needsId = reads.ids;
  return (slot) => reader.has(slot) && predicate(reader.project(slot, keys), needsId ? reader.idOf(slot) : '');
}
