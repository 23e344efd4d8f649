/**
 * The payload operations, one meaning for both ports and the library: set (merge top-level keys,
 * at the root or at a nested `key` path), overwrite, delete keys (nested paths as payload
 * selectors read them) and clear, on the points selected by id or by filter. This file checks an
 * operation and its selection, bounds their cost (request-cost.ts) before any work, and turns the
 * operation into the function `Collection.updatePayloads` applies to each selected payload.
 *
 * Set at a `key` follows Qdrant's `set_payload.key`: the path is walked from the root; a missing
 * member, or one that is not an object, becomes `{}`; `[]` goes into every element of an array
 * and `[i]` into one existing element (neither creates an array, so on anything else nothing is
 * set there); the object reached gets the payload's keys merged in. As in payload selectors and
 * filters, a `key` that is literally a top-level key of a payload names that key.
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { mapInSlices } from '../core/time-slices.js';
import { describeJson, normalizePointId, type PointId } from '../core/point-id.js';
import { type Filter, filterTerms } from '../payload/filter-types.js';
import { checkJsonValue, isPlainObject } from '../payload/json-value.js';
import { PAYLOAD_SELECTOR_LIMITS, type PathItem, type PayloadSelector, parsePayloadPath, patternsOf, selectPayload } from '../payload/payload-selector.js';
import { type FilterInput, toFilter } from '../search/embedded-input.js';
import type { Payload } from '../segment/point-table.js';
import { RequestCost } from '../search/request-cost.js';

/** Payloads are JSON objects, checked when the operation is (a nested value naming its path, e.g. `payload.a[2]`). */
export type PayloadOperation =
  /** Merges `payload`'s top-level keys into each payload, or into the object at `key`. */
  | { readonly op: 'set'; readonly payload: object; readonly key?: string | null }
  /** Replaces each payload by `payload`. */
  | { readonly op: 'overwrite'; readonly payload: object }
  /** Removes the values at these paths (`a`, `a.b`, `a[].b`). */
  | { readonly op: 'delete'; readonly keys: readonly string[] }
  /** Empties each payload. */
  | { readonly op: 'clear' };

/** The points an operation applies to: listed ids (each must exist) or those a filter matches; exactly one of the two (absent and null are not given). */
export interface PointSelection {
  readonly points?: readonly (PointId | number)[] | null;
  readonly filter?: FilterInput | null;
}

/** A checked selection: ids (normalised, as listed) or a parsed filter. */
export type CheckedSelection = readonly PointId[] | Filter;

/** Checks a selection (exactly one of `points` and `filter`), counting its ids and filter terms against the budget. */
export async function checkSelection(selection: PointSelection, cost = new RequestCost()): Promise<CheckedSelection> {
  if (!isPlainObject(selection)) throw badInput('body', `expected {points} or {filter}, got ${describeJson(selection)}`);
  const raw: { readonly points?: unknown; readonly filter?: unknown } = selection;
  const hasPoints = raw.points !== undefined && raw.points !== null;
  const hasFilter = raw.filter !== undefined && raw.filter !== null;
  if (hasPoints === hasFilter) throw badInput('body', 'give exactly one of `points` (ids) or `filter`');
  if (hasPoints) {
    const listed = raw.points;
    if (!Array.isArray(listed)) throw badInput('points', `expected an array of ids, got ${describeJson(listed)}`);
    cost.add('ids', listed.length, 'points');
    return mapInSlices(listed, (id: unknown, i) => normalizePointId(id, childPath('points', i)));
  }
  const filter = toFilter(raw.filter) as Filter;
  cost.add('filterTerms', filterTerms(filter), 'filter');
  return filter;
}

/** A payload as an operation carries it: a JSON object within kith's payload rules. */
function checkedPayload(raw: unknown): Payload {
  if (!isPlainObject(raw)) throw badInput('payload', `expected an object, got ${describeJson(raw)}`);
  checkJsonValue(raw, 'payload');
  return raw as Payload;
}

/** What each selected payload becomes; every field of the operation is checked here, naming its path. */
export function payloadUpdate(operation: PayloadOperation): (payload: Payload) => Payload {
  if (!isPlainObject(operation)) throw badInput('body', `expected a payload operation, got ${describeJson(operation)}`);
  switch (operation.op) {
    case 'set': {
      const payload = checkedPayload(operation.payload);
      const key = operation.key;
      if (key === undefined || key === null) return (current) => ({ ...current, ...payload });
      if (typeof key !== 'string') throw badInput('key', `expected a payload path, got ${describeJson(key)}`);
      if (key.length > PAYLOAD_SELECTOR_LIMITS.patternLength)
        throw badInput('key', `${key.length} characters; the limit is ${PAYLOAD_SELECTOR_LIMITS.patternLength}`);
      // A key that is not a path names only a literal top-level key, as in selectors.
      const items: readonly PathItem[] = parsePayloadPath(key) ?? [{ key }];
      return (current) => setAt(current, Object.hasOwn(current, key) ? [{ key }] : items, 0, payload) as Payload;
    }
    case 'overwrite': {
      const payload = checkedPayload(operation.payload);
      return () => payload;
    }
    case 'delete': {
      // Removing paths is keeping all but them: one pass per payload, the keys grouped once.
      const without: PayloadSelector = { kind: 'exclude', patterns: patternsOf(operation.keys, 'keys') };
      return (current) => selectPayload(current, without) as Payload;
    }
    case 'clear':
      return () => ({});
    default:
      throw badInput('op', `expected "set", "overwrite", "delete" or "clear", got ${describeJson((operation as { op?: unknown }).op)}`);
  }
}

/** `value` with `payload` merged into the object(s) at `items[at…]`; the values on the way are copied, never changed. */
function setAt(value: unknown, items: readonly PathItem[], at: number, payload: Payload): unknown {
  const item = items[at];
  if (item === undefined) return { ...(isPlainObject(value) ? value : {}), ...payload };
  if ('key' in item) {
    const object = isPlainObject(value) ? value : {};
    return { ...object, [item.key]: setAt(object[item.key], items, at + 1, payload) };
  }
  if (!Array.isArray(value)) return value;
  if ('every' in item) return value.map((element) => setAt(element, items, at + 1, payload));
  if (item.index >= value.length) return value;
  const copy = [...value];
  copy[item.index] = setAt(value[item.index], items, at + 1, payload);
  return copy;
}
