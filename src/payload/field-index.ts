/**
 * The index of one payload field (a top-level key or a dot path): which slots hold which scalar
 * value. Strings up to MAX_KEYWORD_LENGTH are keywords (and, when they are RFC 3339, also
 * datetimes keyed by epoch milliseconds); numbers and booleans have their own structures. An array
 * value indexes each scalar element. Objects, nulls and long strings are not indexed: no lookup
 * this index answers can match them (see payload-estimate.ts), so the index stays complete.
 */
import { parseDatetime } from './datetime.js';
import { NumberIndex } from './number-index.js';
import { PostingSet } from './posting-set.js';

export const MAX_KEYWORD_LENGTH = 256;

export class FieldIndex {
  readonly keywords = new Map<string, PostingSet>();
  readonly numbers = new NumberIndex();
  readonly datetimes = new NumberIndex();
  readonly trues = new PostingSet();
  readonly falses = new PostingSet();
  /** Points that have at least one value at this path. */
  points = 0;
  /** Points that have a value other than null and `[]` here (the rest are `is_empty`). */
  nonEmptyPoints = 0;
  /** Whether some point has several indexed values here (counts are then upper bounds). */
  multiValued = false;
  /** Strings too long to index: while any is held, prefix lookups are not complete. */
  longStrings = 0;

  constructor(readonly key: string) {}

  /** Indexes a point's values at this path (what `valuesAt` returned). */
  add(slot: number, values: readonly unknown[]): void {
    if (values.length === 0) return;
    this.points++;
    if (values.some(isNonEmpty)) this.nonEmptyPoints++;
    let indexed = 0;
    for (const value of values) {
      if (Array.isArray(value)) for (const element of value) indexed += this.addScalar(slot, element);
      else indexed += this.addScalar(slot, value);
    }
    if (indexed > 1) this.multiValued = true;
  }

  remove(slot: number, values: readonly unknown[]): void {
    if (values.length === 0) return;
    this.points--;
    if (values.some(isNonEmpty)) this.nonEmptyPoints--;
    for (const value of values) {
      if (Array.isArray(value)) for (const element of value) this.removeScalar(slot, element);
      else this.removeScalar(slot, value);
    }
  }

  private addScalar(slot: number, value: unknown): number {
    switch (typeof value) {
      case 'string': {
        if (value.length > MAX_KEYWORD_LENGTH) {
          this.longStrings++;
          return 0;
        }
        let slots = this.keywords.get(value);
        if (slots === undefined) {
          slots = new PostingSet();
          this.keywords.set(value, slots);
        }
        slots.add(slot);
        const at = datetimeMs(value);
        if (at !== undefined) this.datetimes.add(at, slot);
        return 1;
      }
      case 'number':
        this.numbers.add(value, slot);
        return 1;
      case 'boolean':
        (value ? this.trues : this.falses).add(slot);
        return 1;
      default:
        return 0;
    }
  }

  private removeScalar(slot: number, value: unknown): void {
    switch (typeof value) {
      case 'string': {
        if (value.length > MAX_KEYWORD_LENGTH) {
          this.longStrings--;
          return;
        }
        const slots = this.keywords.get(value);
        if (slots !== undefined) {
          slots.delete(slot);
          if (slots.size === 0) this.keywords.delete(value);
        }
        const at = datetimeMs(value);
        if (at !== undefined) this.datetimes.remove(at, slot);
        return;
      }
      case 'number':
        this.numbers.remove(value, slot);
        return;
      case 'boolean':
        (value ? this.trues : this.falses).delete(slot);
    }
  }
}

function isNonEmpty(value: unknown): boolean {
  return value !== null && !(Array.isArray(value) && value.length === 0);
}

/** Epoch milliseconds of an RFC 3339 string, undefined for other strings (cheap pre-check first). */
function datetimeMs(text: string): number | undefined {
  if (text.length < 10 || text.charCodeAt(4) !== 45 /* - */ || text.charCodeAt(7) !== 45) return undefined;
  return parseDatetime(text)?.ms;
}
