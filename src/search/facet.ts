/**
 * Facets (Qdrant's `POST /collections/{name}/facet`): for a payload key, how many matching points
 * hold each value there — strings, whole numbers and booleans, each counted once per point
 * (arrays give their elements). The answer is the `limit` most frequent values, by count, then by
 * value (false before true before numbers before strings; numbers and strings ascending). Exact:
 * every matching point is read, in slices; the best `limit` are kept in a heap, so a key with a
 * million distinct values is never sorted whole.
 */
import { badInput } from '../core/errors.js';
import { TimeSlices } from '../core/time-slices.js';
import { valuesAt } from '../payload/json-value.js';

export type FacetValue = string | number | boolean;

export interface FacetHit {
  readonly value: FacetValue;
  readonly count: number;
}

export { MAX_FACET_LIMIT } from './facet-limit.js';
/** At most this long a key, as a filter key. */
const MAX_KEY_LENGTH = 1024;

/** The key checked and split as filters split it. */
export function facetKey(key: unknown, path = 'key'): { key: string; parts: string[] } {
  if (typeof key !== 'string' || key === '') throw badInput(path, 'expected a non-empty payload key');
  if (key.length > MAX_KEY_LENGTH) throw badInput(path, `${key.length} characters; the limit is ${MAX_KEY_LENGTH}`);
  return { key, parts: key.split('.') };
}

/** Counts per value over the payloads `scan` visits (one call per matching point). */
export class FacetCounter {
  private readonly counts = new Map<string, { value: FacetValue; count: number }>();
  private readonly seen = new Set<string>();

  constructor(private readonly field: { readonly key: string; readonly parts: readonly string[] }) {}

  add(payload: Record<string, unknown>): void {
    this.seen.clear();
    for (const found of valuesAt(payload, this.field.key, this.field.parts)) {
      for (const value of Array.isArray(found) ? found : [found]) {
        const id = idOf(value);
        if (id === undefined || this.seen.has(id)) continue;
        this.seen.add(id);
        const entry = this.counts.get(id);
        if (entry === undefined) this.counts.set(id, { value: value as FacetValue, count: 1 });
        else entry.count++;
      }
    }
  }

  /** The best `limit` values, in order; a look at the clock between entries. */
  async top(limit: number): Promise<FacetHit[]> {
    const heap: FacetHit[] = [];
    const slices = new TimeSlices();
    let i = 0;
    for (const entry of this.counts.values()) {
      if (slices.due(i++)) await slices.pause();
      if (heap.length < limit) push(heap, { value: entry.value, count: entry.count });
      else if (before(entry, heap[0] as FacetHit)) replaceTop(heap, { value: entry.value, count: entry.count });
    }
    return heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  }
}

/** A value's identity across kinds; undefined for values facets do not count (floats, null, objects). */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'string') return `s${value}`;
  if (typeof value === 'boolean') return value ? 'btrue' : 'bfalse';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return `n${value}`;
  return undefined;
}

const RANK = { boolean: 0, number: 1, string: 2 } as const;

/** Whether `a` comes before `b` in the answer. */
function before(a: FacetHit, b: FacetHit): boolean {
  if (a.count !== b.count) return a.count > b.count;
  const [ra, rb] = [RANK[typeof a.value as keyof typeof RANK], RANK[typeof b.value as keyof typeof RANK]];
  if (ra !== rb) return ra < rb;
  return a.value < b.value;
}

// A binary heap whose root is the entry that comes last in the answer (the first to drop).
function push(heap: FacetHit[], hit: FacetHit): void {
  heap.push(hit);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(heap[parent] as FacetHit, heap[i] as FacetHit)) break;
    [heap[parent], heap[i]] = [heap[i] as FacetHit, heap[parent] as FacetHit];
    i = parent;
  }
}

function replaceTop(heap: FacetHit[], hit: FacetHit): void {
  heap[0] = hit;
  let i = 0;
  for (;;) {
    const [left, right] = [2 * i + 1, 2 * i + 2];
    let last = i;
    if (left < heap.length && before(heap[last] as FacetHit, heap[left] as FacetHit)) last = left;
    if (right < heap.length && before(heap[last] as FacetHit, heap[right] as FacetHit)) last = right;
    if (last === i) return;
    [heap[last], heap[i]] = [heap[i] as FacetHit, heap[last] as FacetHit];
    i = last;
  }
}
