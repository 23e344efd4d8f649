/**
 * Which parts of a payload an answer carries: all, none, only some paths (include) or all but some
 * (exclude). Both ports and the library select through here, with Qdrant's semantics:
 *
 * - A path is Qdrant's JSON path: `country.name`, `cities[].name`, `a[0]`, `"key.with.dots".b`.
 *   Every value of the payload has a path: object members add `.key`, array elements add `[]`
 *   (never an index, so `a[0]` in a pattern matches no element, as in Qdrant).
 * - include: a value is kept when its path and some pattern agree on their common length (the
 *   pattern names it, an ancestor of it, or a descendant of it); what a pattern names is kept whole,
 *   and an ancestor keeps only its selected members.
 * - exclude: a value is dropped when some pattern is a prefix of its path.
 * - As in kith's filters, a pattern that is literally a top-level key of the payload names that key
 *   (so a key with dots in it can be selected as written); otherwise it is read as a path. A pattern
 *   that is not a valid path (the empty key `""` among them) names only such a literal key.
 *
 * The cost of selecting is about (values visited) × (patterns); a request bounds hits × patterns
 * (search/request-cost.ts).
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import { isPlainObject, type JsonValue } from './json-value.js';

type Payload = Record<string, unknown>;

/** One step of a path: a member, an element by index, or every element (`[]`). */
export type PathItem = { readonly key: string } | { readonly index: number } | { readonly every: true };

export interface PayloadPattern {
  /** The pattern as written. */
  readonly text: string;
  /** Its steps read as a JSON path; undefined when the text is not one (it then names only a literal top-level key). */
  readonly items?: readonly PathItem[];
}

export type PayloadSelector =
  | { readonly kind: 'all' }
  | { readonly kind: 'none' }
  | { readonly kind: 'include' | 'exclude'; readonly patterns: readonly PayloadPattern[] };

export const ALL_PAYLOAD: PayloadSelector = { kind: 'all' };
export const NO_PAYLOAD: PayloadSelector = { kind: 'none' };

/** Patterns in one selector, and characters in one pattern. */
export const PAYLOAD_SELECTOR_LIMITS = { patterns: 1000, patternLength: 1024 } as const;

const RAW_KEY = /^[\p{L}\p{N}_-]+/u;

/** Qdrant's JSON path grammar; undefined when `text` is not a path. */
export function parsePayloadPath(text: string): PathItem[] | undefined {
  const items: PathItem[] = [];
  let rest = text;
  const key = (): boolean => {
    const raw = RAW_KEY.exec(rest);
    if (raw !== null) {
      items.push({ key: raw[0] });
      rest = rest.slice(raw[0].length);
      return true;
    }
    // A quoted key: any characters but `"` and `\`.
    const quoted = /^"([^"\\]*)"/.exec(rest);
    if (quoted === null) return false;
    items.push({ key: quoted[1] as string });
    rest = rest.slice(quoted[0].length);
    return true;
  };
  if (!key()) return undefined;
  while (rest.length > 0) {
    if (rest.startsWith('.')) {
      rest = rest.slice(1);
      if (!key()) return undefined;
    } else if (rest.startsWith('[]')) {
      items.push({ every: true });
      rest = rest.slice(2);
    } else {
      const index = /^\[([0-9]+)\]/.exec(rest);
      if (index === null) return undefined;
      items.push({ index: Number(index[1]) });
      rest = rest.slice(index[0].length);
    }
  }
  return items;
}

/** The patterns of a list of payload paths, each checked and named `path[i]`. */
export function patternsOf(raw: unknown, path: string): PayloadPattern[] {
  if (!Array.isArray(raw)) throw badInput(path, `expected a list of payload paths, got ${describeJson(raw)}`);
  if (raw.length > PAYLOAD_SELECTOR_LIMITS.patterns) {
    throw badInput(path, `${raw.length} paths; the limit is ${PAYLOAD_SELECTOR_LIMITS.patterns}`);
  }
  return raw.map((text: unknown, i) => {
    const at = childPath(path, i);
    if (typeof text !== 'string') throw badInput(at, `expected a payload path (a string), got ${describeJson(text)}`);
    if (text.length > PAYLOAD_SELECTOR_LIMITS.patternLength) {
      throw badInput(at, `${text.length} characters long; the limit is ${PAYLOAD_SELECTOR_LIMITS.patternLength}`);
    }
    const items = parsePayloadPath(text);
    return items === undefined ? { text } : { text, items };
  });
}

/**
 * `with_payload` as both ports take it: true, false, a list of paths (include), `{include: […]}`
 * or `{exclude: […]}`; absent or null gives `fallback`.
 */
export function parsePayloadSelector(raw: unknown, path: string, fallback: boolean): PayloadSelector {
  if (raw === undefined || raw === null) return fallback ? ALL_PAYLOAD : NO_PAYLOAD;
  if (typeof raw === 'boolean') return raw ? ALL_PAYLOAD : NO_PAYLOAD;
  if (Array.isArray(raw)) return { kind: 'include', patterns: patternsOf(raw, path) };
  if (isPlainObject(raw)) {
    const keys = Object.keys(raw);
    if (keys.length === 1 && keys[0] === 'include') return { kind: 'include', patterns: patternsOf(raw.include, childPath(path, 'include')) };
    if (keys.length === 1 && keys[0] === 'exclude') return { kind: 'exclude', patterns: patternsOf(raw.exclude, childPath(path, 'exclude')) };
  }
  throw badInput(path, `expected true, false, a list of payload paths, {"include": […]} or {"exclude": […]}, got ${describeJson(raw)}`);
}

function isSelector(raw: unknown): raw is PayloadSelector {
  if (!isPlainObject(raw)) return false;
  const kind = raw.kind;
  return kind === 'all' || kind === 'none' || ((kind === 'include' || kind === 'exclude') && Array.isArray(raw.patterns));
}

/** A selector already parsed (the engine's own form, with `kind`), or `with_payload` as the wire gives it. */
export function toPayloadSelector(raw: unknown, path: string, fallback: boolean): PayloadSelector {
  return isSelector(raw) ? raw : parsePayloadSelector(raw, path, fallback);
}

/** `with_payload` as the wire carries it: what payloadSelectorToJson writes. */
export type PayloadSelectorJson = boolean | { readonly include: string[] } | { readonly exclude: string[] };

/**
 * The selector as `with_payload` JSON that parsePayloadSelector (and toPayloadSelector) read back to
 * an equal selector, for a node that sends a parsed request on: each pattern as written (its path
 * steps are read from the text again). An include list is written `{"include": […]}`, never a bare
 * list, so both of its spellings come out one way.
 */
export function payloadSelectorToJson(selector: PayloadSelector): PayloadSelectorJson {
  switch (selector.kind) {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'include':
      return { include: selector.patterns.map((p) => p.text) };
    case 'exclude':
      return { exclude: selector.patterns.map((p) => p.text) };
  }
}

/** How many patterns a selector checks per value (its share of a request's cost). */
export function selectorPatterns(selector: PayloadSelector): number {
  return selector.kind === 'include' || selector.kind === 'exclude' ? selector.patterns.length : 0;
}

/** The payload as the selector shows it; undefined for `none`. Kept values are shared, not copied: callers must not change them. */
export function selectPayload(payload: Payload, selector: PayloadSelector): Payload | undefined {
  switch (selector.kind) {
    case 'none':
      return undefined;
    case 'all':
      return payload;
    case 'include':
    case 'exclude': {
      const include = selector.kind === 'include';
      const { byText, byFirstStep } = compiled(selector.patterns);
      const out: Payload = {};
      for (const key of Object.keys(payload)) {
        const live: Steps[] = [];
        // A pattern that is literally this key names it; one read as a path applies unless its text is a key of this payload.
        for (const steps of byText.get(key) ?? []) live.push(steps);
        for (const { text, items } of byFirstStep.get(key) ?? []) if (!Object.hasOwn(payload, text)) live.push(items);
        const value = payload[key];
        const kept = include ? keepIncluded(value, live, 1) : keepExcluded(value, live, 1);
        if (kept !== DROP) out[key] = kept;
      }
      return out;
    }
  }
}

/** A pattern's steps, as they apply to one payload (a literal top-level key wins over the path reading). */
type Steps = readonly PathItem[];

interface Compiled {
  /** Patterns by their text, as literal top-level keys (`[{key: text}]`). */
  readonly byText: ReadonlyMap<string, Steps[]>;
  /** Patterns read as paths, by their first step's key. */
  readonly byFirstStep: ReadonlyMap<string, { text: string; items: Steps }[]>;
}

/** Each selector is grouped once (the same patterns select every hit of a request). */
const compiledSelectors = new WeakMap<readonly PayloadPattern[], Compiled>();

function compiled(patterns: readonly PayloadPattern[]): Compiled {
  let found = compiledSelectors.get(patterns);
  if (found === undefined) {
    const byText = new Map<string, Steps[]>();
    const byFirstStep = new Map<string, { text: string; items: Steps }[]>();
    for (const { text, items } of patterns) {
      pushTo(byText, text, [{ key: text }]);
      const first = items?.[0];
      if (items !== undefined && first !== undefined && 'key' in first) pushTo(byFirstStep, first.key, { text, items });
    }
    found = { byText, byFirstStep };
    compiledSelectors.set(patterns, found);
  }
  return found;
}

function pushTo<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

const DROP = Symbol('drop');

/**
 * include: `live` are the patterns agreeing with the value's path on its first `depth` steps
 * (the value is kept when there is one); one no longer than the path keeps everything below.
 */
function keepIncluded(value: unknown, live: readonly Steps[], depth: number): unknown {
  if (live.length === 0) return DROP;
  if (live.some((steps) => steps.length <= depth)) return value;
  return mapChildren(value, live, depth, keepIncluded);
}

/** exclude: `live` are the patterns whose first `depth` steps are the value's path; one that ends here drops it. */
function keepExcluded(value: unknown, live: readonly Steps[], depth: number): unknown {
  if (live.some((steps) => steps.length <= depth)) return DROP;
  if (live.length === 0) return value;
  return mapChildren(value, live, depth, keepExcluded);
}

const NONE: readonly Steps[] = [];

/** The value with its children kept or dropped by `keep`; scalars are kept as they are. */
function mapChildren(value: unknown, live: readonly Steps[], depth: number, keep: typeof keepIncluded): unknown {
  if (Array.isArray(value)) {
    // Elements are reached by `[]` only (never by an index, as in Qdrant).
    const next = live.filter((steps) => 'every' in (steps[depth] as PathItem));
    const out: unknown[] = [];
    for (const element of value as JsonValue[]) {
      const kept = keep(element, next, depth + 1);
      if (kept !== DROP) out.push(kept);
    }
    return out;
  }
  if (isPlainObject(value)) {
    // The live patterns by the key of their next step: one lookup per member.
    const byKey = new Map<string, Steps[]>();
    for (const steps of live) {
      const step = steps[depth] as PathItem;
      if ('key' in step) pushTo(byKey, step.key, steps);
    }
    const out: Payload = {};
    for (const key of Object.keys(value)) {
      const kept = keep(value[key], byKey.get(key) ?? NONE, depth + 1);
      if (kept !== DROP) out[key] = kept;
    }
    return out;
  }
  return value;
}
