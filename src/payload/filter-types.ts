/**
 * The parsed filter: what `filter-parse.ts` produces from request JSON and `filter-compile.ts`
 * turns into a predicate. Every node is validated; compile never fails.
 */
import type { RE2JS } from 're2js';
import type { Instant } from './datetime.js';
import type { JsonValue } from './json-value.js';
import { queryWords, type TextIndexParams, type TextMatch } from './text-index.js';

export interface Filter {
  /** All must hold. */
  readonly must: readonly Condition[];
  /** None may hold. */
  readonly mustNot: readonly Condition[];
  /** At least one must hold, when the list is not empty. */
  readonly should: readonly Condition[];
  /** At least `minCount` of `conditions` must hold (Qdrant's `min_should`), when given. */
  readonly minShould?: MinShould;
}

export interface MinShould {
  readonly conditions: readonly Condition[];
  readonly minCount: number;
}

export type Condition = FieldCondition | NestedCondition | HasIdCondition | HasVectorCondition | ElementsCondition;

/** The point's id is one of `ids` (kith ids: numbers given as their decimal strings). */
export interface HasIdCondition {
  readonly kind: 'has_id';
  readonly ids: ReadonlySet<string>;
}

/**
 * The point holds a vector under `name` (Qdrant's `has_vector`): the main vector's name holds for
 * every point, a named or sparse vector's for the points that hold one, any other name for none.
 * Parsed unbound; the engine binds `holders` to the segment searched (search/filter-bind.ts)
 * before the filter is estimated or compiled, and compiling an unbound one is a bug (it throws).
 */
export interface HasVectorCondition {
  readonly kind: 'has_vector';
  readonly name: string;
  readonly holders?: VectorHolders;
}

/** The points of one segment that hold a vector under one name. */
export interface VectorHolders {
  /** How many points hold it. */
  readonly count: number;
  /** Whether the live point with this id holds it. */
  holds(id: string): boolean;
  /** Whether the slot holds it. */
  has(slot: number): boolean;
  /** Each holding slot once, in slot order. */
  forEach(visit: (slot: number) => void): void;
  /** The holding slots as a bitset (core/slot-bits.ts; read-only, shared by the searches between two writes). */
  bits(): Uint32Array;
}

/**
 * Qdrant's `nested`: some object element of the array(s) at `key` satisfies every condition of
 * `filter` by itself (the filter's keys are read inside that element).
 */
export interface ElementsCondition extends KeyPath {
  readonly kind: 'elements';
  readonly filter: Filter;
}

export interface NestedCondition {
  readonly kind: 'nested';
  readonly filter: Filter;
}

/** A payload key and how to walk it. */
export interface KeyPath {
  /** The payload key as written. */
  readonly key: string;
  /** `key` split on dots (a trailing `[]` removed), for the nested walk. */
  readonly parts: readonly string[];
  /** Per part, whether it was written `name[]` (take the array's elements); undefined when none was. */
  readonly projections?: readonly boolean[];
}

type FieldBase = KeyPath;

/** A point on Earth, in degrees. */
export interface GeoPoint {
  readonly lon: number;
  readonly lat: number;
}

export type CountRange = {
  readonly gt?: number;
  readonly gte?: number;
  readonly lt?: number;
  readonly lte?: number;
};

export type NumberRange = {
  readonly kind: 'number';
  readonly gt?: number;
  readonly gte?: number;
  readonly lt?: number;
  readonly lte?: number;
};

export type DatetimeRange = {
  readonly kind: 'datetime';
  readonly gt?: Instant;
  readonly gte?: Instant;
  readonly lt?: Instant;
  readonly lte?: Instant;
};

export type FieldCondition = FieldBase &
  (
    | { readonly kind: 'exact'; readonly value: JsonValue }
    | { readonly kind: 'any'; readonly values: readonly JsonValue[] }
    | { readonly kind: 'except'; readonly values: readonly JsonValue[] }
    | { readonly kind: 'range'; readonly range: NumberRange | DatetimeRange }
    | { readonly kind: 'prefix'; readonly prefix: string }
    | { readonly kind: 'contains'; readonly value: JsonValue }
    | { readonly kind: 'regex'; readonly pattern: string; readonly regex: RE2JS }
    | {
        readonly kind: 'text';
        /** Which of Qdrant's text matches: every token, any token, or the tokens as a phrase. */
        readonly match: TextMatch;
        readonly text: string;
        /** The field's text index, bound by the engine (text-index.ts bindTextIndexes); absent: matched as an unindexed field. */
        readonly index?: TextIndexParams;
      }
    | { readonly kind: 'values_count'; readonly count: CountRange }
    | { readonly kind: 'is_empty' }
    | { readonly kind: 'is_null' }
    | { readonly kind: 'geo_radius'; readonly center: GeoPoint; readonly radius: number }
    | { readonly kind: 'geo_bounding_box'; readonly topLeft: GeoPoint; readonly bottomRight: GeoPoint }
    | { readonly kind: 'geo_polygon'; readonly exterior: readonly GeoPoint[]; readonly interiors: readonly (readonly GeoPoint[])[] }
  );

export function isEmptyFilter(filter: Filter): boolean {
  return filter.must.length === 0 && filter.mustNot.length === 0 && filter.should.length === 0 && filter.minShould === undefined;
}

/**
 * A filter's size for a request's cost (search/request-cost.ts): one per condition at every
 * level, plus the values of its lists that are compared per point (`match.any`/`except`, polygon
 * points, a text query's words after the first). `has_id` is one term whatever its length: a point's id is looked up in its set.
 */
export function filterTerms(filter: Filter): number {
  let terms = 0;
  const lists = [filter.must, filter.mustNot, filter.should, filter.minShould?.conditions ?? []];
  for (const list of lists) {
    for (const condition of list) {
      terms += 1;
      switch (condition.kind) {
        case 'nested':
        case 'elements':
          terms += filterTerms(condition.filter);
          break;
        case 'any':
        case 'except':
          terms += condition.values.length;
          break;
        case 'text':
          // Each query word beyond the first is checked per point, as a list value is.
          terms += Math.max(0, queryWords(condition.text) - 1);
          break;
        case 'geo_polygon':
          terms += condition.exterior.length + condition.interiors.reduce((sum, ring) => sum + ring.length, 0);
          break;
        default:
          break;
      }
    }
  }
  return terms;
}

/** Both filters (a point must match both); either alone when the other is absent: how a prefetch's filter joins the ones above it. */
export function bothFilters(above: Filter | undefined, own: Filter | undefined): Filter | undefined {
  if (above === undefined) return own;
  if (own === undefined) return above;
  return {
    must: [
      { kind: 'nested', filter: above },
      { kind: 'nested', filter: own },
    ],
    mustNot: [],
    should: [],
  };
}

/** `filter` (every point without one) minus the points with these ids: how a query by id or a recommendation leaves its examples out. */
export function excludingIds(filter: Filter | undefined, ids: ReadonlySet<string>): Filter | undefined {
  if (ids.size === 0) return filter;
  const without: Condition = { kind: 'has_id', ids };
  if (filter === undefined) return { must: [], mustNot: [without], should: [] };
  return { must: [{ kind: 'nested', filter }], mustNot: [without], should: [] };
}
