/**
 * Points ordered by a payload value (Qdrant's `order_by` in scroll and the query API): the matching
 * points by the numbers or date-times at a key, ascending or descending, from `start_from` on.
 *
 * - A number orders by itself; a string that is an RFC 3339 date-time (payload/datetime.ts) by its
 *   instant in microseconds since the epoch, which is also its `order_value` (Qdrant's datetime
 *   index keeps that number). Other values are not ordered; a point without any is left out.
 * - A point appears once per distinct value at the key (an array gives its elements), as in
 *   Qdrant: a page may hold one point more than once.
 * - Ties by id in kith's id order (core/point-id.ts compareIds), reversed when descending, as
 *   Qdrant orders (value, id) pairs.
 * - `start_from` keeps values ≥ it ascending, ≤ it descending. There is no offset: a page goes on
 *   from the last value seen, leaving out the ids already seen at it (Qdrant's way).
 *
 * Exact: every matching point is read (in slices, by the caller's scan) and the best `limit`
 * entries kept, sorted when twice that many have gathered (O(matches · log limit)).
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { compareIds, describeJson, type PointId } from '../core/point-id.js';
import { parseDatetime } from '../payload/datetime.js';
import { parseKeyPath } from '../payload/filter-parse.js';
import type { KeyPath } from '../payload/filter-types.js';
import { someElementAt } from '../payload/json-value.js';

/** `order_by` as the library and both ports take it: a key, or `{key, direction, start_from}`. */
export type OrderByInput =
  | string
  | {
      readonly key: string;
      readonly direction?: 'asc' | 'desc' | null;
      /** A number, or an RFC 3339 date-time. */
      readonly start_from?: number | string | null;
    };

export interface OrderBy {
  readonly key: KeyPath;
  readonly descending: boolean;
  /** In order values (date-times as microseconds). */
  readonly startFrom?: number;
}

/** One place of a point in the order. */
export interface OrderEntry {
  readonly id: PointId;
  readonly value: number;
}

export function checkOrderBy(raw: unknown, path = 'order_by'): OrderBy {
  if (typeof raw === 'string') return { key: parseKeyPath(raw, path), descending: false };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw badInput(path, `expected a payload key or {key, direction, start_from}, got ${describeJson(raw)}`);
  const body = raw as Record<string, unknown>;
  for (const field of Object.keys(body))
    if (field !== 'key' && field !== 'direction' && field !== 'start_from')
      throw badInput(childPath(path, field), 'unknown field (key, direction, start_from)');
  const key = parseKeyPath(body.key, childPath(path, 'key'));
  const direction = body.direction ?? 'asc';
  if (direction !== 'asc' && direction !== 'desc') throw badInput(childPath(path, 'direction'), `expected "asc" or "desc", got ${describeJson(direction)}`);
  const start = body.start_from;
  if (start === undefined || start === null) return { key, descending: direction === 'desc' };
  const startFrom = typeof start === 'number' && Number.isFinite(start) ? start : typeof start === 'string' ? datetimeValue(start) : undefined;
  if (startFrom === undefined) throw badInput(childPath(path, 'start_from'), `expected a number or an RFC 3339 date-time, got ${describeJson(start)}`);
  return { key, descending: direction === 'desc', startFrom };
}

/** A date-time's order value: microseconds since the epoch. */
function datetimeValue(text: string): number | undefined {
  const instant = parseDatetime(text);
  return instant === undefined ? undefined : instant.ms * 1000 + Math.floor(instant.subMsNanos / 1000);
}

/** The distinct order values a payload holds at the key. */
export function orderValues(payload: Record<string, unknown>, key: KeyPath): number[] {
  const values: number[] = [];
  const take = (value: unknown): void => {
    const v = typeof value === 'number' ? value : typeof value === 'string' ? datetimeValue(value) : undefined;
    if (v !== undefined && !values.includes(v)) values.push(v);
  };
  someElementAt(payload, key, (value) => {
    take(value);
    return false;
  });
  return values;
}

/** The first `limit` entries in the order, gathered point by point. */
export class OrderedEntries {
  private entries: OrderEntry[] = [];

  constructor(
    private readonly order: OrderBy,
    private readonly limit: number,
  ) {}

  add(id: PointId, payload: Record<string, unknown>): void {
    const { startFrom, descending } = this.order;
    for (const value of orderValues(payload, this.order.key)) {
      if (startFrom !== undefined && (descending ? value > startFrom : value < startFrom)) continue;
      this.entries.push({ id, value });
    }
    if (this.entries.length >= 2 * this.limit) this.cut();
  }

  /** The first `limit`, in order. */
  first(): OrderEntry[] {
    this.cut();
    return this.entries;
  }

  private cut(): void {
    const sign = this.order.descending ? -1 : 1;
    this.entries.sort((a, b) => sign * (a.value - b.value || compareIds(a.id, b.id)));
    if (this.entries.length > this.limit) this.entries.length = this.limit;
  }
}
