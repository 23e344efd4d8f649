/**
 * The parsed filter: what `filter-parse.ts` produces from request JSON and `filter-compile.ts`
 * turns into a predicate. Every node is validated; compile never fails.
 */
import type { RE2JS } from 're2js';
import type { Instant } from './datetime.js';
import type { JsonValue } from './json-value.js';

export interface Filter {
  /** All must hold. */
  readonly must: readonly Condition[];
  /** None may hold. */
  readonly mustNot: readonly Condition[];
  /** At least one must hold, when the list is not empty. */
  readonly should: readonly Condition[];
}

export type Condition = FieldCondition | NestedCondition;

export interface NestedCondition {
  readonly kind: 'nested';
  readonly filter: Filter;
}

interface FieldBase {
  /** The payload key as written. */
  readonly key: string;
  /** `key` split on dots, for the nested walk. */
  readonly parts: readonly string[];
}

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
  );

export function isEmptyFilter(filter: Filter): boolean {
  return filter.must.length === 0 && filter.mustNot.length === 0 && filter.should.length === 0;
}
