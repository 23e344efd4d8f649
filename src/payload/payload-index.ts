/**
 * A collection's payload indexes, built automatically as payloads arrive: one FieldIndex per
 * payload path (top-level keys, and dot paths into nested objects up to MAX_PATH_DEPTH levels),
 * kept in step with every upsert, re-upsert and delete, and rebuilt in the start-up pass that
 * decodes the point records (no separate payload scan).
 *
 * Memory bound: at most MAX_FIELDS paths are indexed per collection (the first ones seen); a path
 * first seen after that is never indexed, so every index that exists covers every point. Each
 * indexed value costs about 24–40 bytes. A collection created with `payload_index: false` has none.
 */
import { FieldIndex } from './field-index.js';
import { isPlainObject, valuesAt } from './json-value.js';
import { NO_TEXT_INDEXES, type TextIndexes } from './text-index.js';

const MAX_FIELDS = 64;
const MAX_PATH_DEPTH = 4;

export class PayloadIndex {
  private readonly fields = new Map<string, FieldIndex>();
  private readonly splitPaths = new Map<string, readonly string[]>();
  private bulkLoading = false;
  /** No path has been turned away by MAX_FIELDS: every path a payload offered has its index. */
  private complete = true;

  /**
   * The text indexes declared on fields (text-index.ts): how `match.text`, `text_any` and `phrase`
   * tokenize each field. Declared, not built: a text condition is still checked point by point.
   */
  textIndexes: TextIndexes = NO_TEXT_INDEXES;

  constructor(readonly enabled: boolean) {}

  /** The index of a filter key, when there is one. */
  field(key: string): FieldIndex | undefined {
    return this.fields.get(key);
  }

  /**
   * Whether the indexes know that no point holds a value at `key` (read as a filter reads it): its
   * index counts no point, or it has none although every path a payload offers up to
   * MAX_PATH_DEPTH parts gets one (indexing on, the MAX_FIELDS bound never reached). A deeper key
   * may be walked to where no index looks, so its absence says nothing.
   */
  holdsNoValue(key: string): boolean {
    const field = this.fields.get(key);
    if (field !== undefined) return field.points === 0;
    return this.enabled && this.complete && key.split('.').length <= MAX_PATH_DEPTH;
  }

  add(slot: number, payload: Record<string, unknown>): void {
    if (!this.enabled) return;
    for (const path of pathsOf(payload)) {
      let field = this.fields.get(path);
      if (field === undefined) {
        if (this.fields.size >= MAX_FIELDS) {
          this.complete = false;
          continue;
        }
        field = new FieldIndex(path);
        if (this.bulkLoading) {
          field.numbers.beginBulk();
          field.datetimes.beginBulk();
        }
        this.fields.set(path, field);
        this.splitPaths.set(path, path.split('.'));
      }
      field.add(slot, valuesAt(payload, path, this.splitPaths.get(path) as readonly string[]));
    }
  }

  remove(slot: number, payload: Record<string, unknown>): void {
    if (!this.enabled) return;
    for (const path of pathsOf(payload)) {
      const field = this.fields.get(path);
      if (field !== undefined) field.remove(slot, valuesAt(payload, path, this.splitPaths.get(path) as readonly string[]));
    }
  }

  /** From here to `endBulk`, numbers and datetimes are appended unsorted and sorted once at the end (a load adds every point). */
  beginBulk(): void {
    this.bulkLoading = true;
    for (const field of this.fields.values()) {
      field.numbers.beginBulk();
      field.datetimes.beginBulk();
    }
  }

  endBulk(): void {
    if (!this.bulkLoading) return;
    this.bulkLoading = false;
    for (const field of this.fields.values()) {
      field.numbers.endBulk();
      field.datetimes.endBulk();
    }
  }
}

/** What filter estimates read of the payload indexes. */
export type PayloadIndexReader = Pick<PayloadIndex, 'field' | 'holdsNoValue'> & { readonly textIndexes: TextIndexes };

/**
 * The paths a payload offers: every top-level key, and `a.b…` through nested objects (also inside
 * arrays). A proposed path may resolve to nothing under the filter's rules (a key containing a
 * dot), which `valuesAt` then reports; it never resolves to values the filter would not see.
 */
function pathsOf(payload: Record<string, unknown>): Set<string> {
  const paths = new Set<string>();
  const walk = (node: Record<string, unknown>, prefix: string | undefined, depth: number): void => {
    for (const key of Object.keys(node)) {
      const path = prefix === undefined ? key : `${prefix}.${key}`;
      paths.add(path);
      if (depth < MAX_PATH_DEPTH) visit(node[key], path, depth + 1);
    }
  };
  // The filter's walk goes through arrays at any nesting, so this one does too.
  const visit = (value: unknown, path: string, depth: number): void => {
    if (isPlainObject(value)) walk(value, path, depth);
    else if (Array.isArray(value)) for (const element of value) visit(element, path, depth);
  };
  walk(payload, undefined, 1);
  return paths;
}
