/**
 * JSON value helpers for payloads and filters: equality (numbers compared numerically, objects by
 * key set), the dot-path walk, and the input checks every stored payload passes.
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON equality: `1` equals `1.0`, objects compare by keys regardless of order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const key of ka) {
    if (!Object.hasOwn(b, key)) return false;
    if (!jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * Calls `test` on each value the key names in `payload` until one returns true. A top-level key
 * with that exact name wins; otherwise the dot-separated parts walk into nested objects, and an
 * array met on the way is walked element by element. A part written `name[]` (`projections[i]`)
 * takes the elements of the array found there, and nothing when it is not an array. Own
 * properties only, so `constructor` or `__proto__` never reach `Object.prototype`.
 */
export function someValueAt(
  payload: Record<string, unknown>,
  key: string,
  parts: readonly string[],
  test: (value: unknown) => boolean,
  projections?: readonly boolean[],
): boolean {
  if (Object.hasOwn(payload, key)) return test(payload[key]);
  if (projections === undefined) {
    if (parts.length < 2) return false;
    return walk(payload, parts, 0, test);
  }
  return walkProjected(payload, parts, projections, 0, test);
}

function walk(node: unknown, parts: readonly string[], depth: number, test: (value: unknown) => boolean): boolean {
  if (Array.isArray(node)) {
    for (const element of node) if (walk(element, parts, depth, test)) return true;
    return false;
  }
  if (!isPlainObject(node)) return false;
  const part = parts[depth] as string;
  if (!Object.hasOwn(node, part)) return false;
  const next = node[part];
  return depth + 1 === parts.length ? test(next) : walk(next, parts, depth + 1, test);
}

/** `walk` for keys with `[]` parts: at such a part only an array continues, element by element. */
function walkProjected(node: unknown, parts: readonly string[], projections: readonly boolean[], depth: number, test: (value: unknown) => boolean): boolean {
  if (Array.isArray(node)) {
    for (const element of node) if (walkProjected(element, parts, projections, depth, test)) return true;
    return false;
  }
  if (!isPlainObject(node)) return false;
  const part = parts[depth] as string;
  if (!Object.hasOwn(node, part)) return false;
  const next = node[part];
  const last = depth + 1 === parts.length;
  if (projections[depth] !== true) return last ? test(next) : walkProjected(next, parts, projections, depth + 1, test);
  if (!Array.isArray(next)) return false;
  for (const element of next) {
    if (last ? test(element) : walkProjected(element, parts, projections, depth + 1, test)) return true;
  }
  return false;
}

/**
 * Why an object key may not be stored, or undefined if it may. `__proto__` and a `constructor`
 * object holding `prototype` are the keys that poison prototypes when JSON is merged into objects
 * (the same rule as Fastify's secure-json-parse); kith refuses them instead of dropping them.
 */
export function forbiddenKeyReason(key: string, value: unknown): string | undefined {
  if (key === '__proto__') return 'the key "__proto__" is not accepted (prototype poisoning)';
  if (key === 'constructor' && isPlainObject(value) && Object.hasOwn(value, 'prototype')) {
    return 'a "constructor" object with a "prototype" key is not accepted (prototype poisoning)';
  }
  return undefined;
}

/**
 * Calls `visit` on each value the key names in `payload`, an array's elements one by one (one
 * level), until it returns true: how grouping and ordering read a key's values.
 */
export function someElementAt(
  payload: Record<string, unknown>,
  key: { readonly key: string; readonly parts: readonly string[]; readonly projections?: readonly boolean[] },
  visit: (value: unknown) => boolean,
): boolean {
  return someValueAt(payload, key.key, key.parts, (value) => (Array.isArray(value) ? value.some(visit) : visit(value)), key.projections);
}

/** Every value the key names in `payload` (the values `someValueAt` would test), in walk order. */
export function valuesAt(payload: Record<string, unknown>, key: string, parts: readonly string[]): unknown[] {
  const out: unknown[] = [];
  someValueAt(payload, key, parts, (value) => {
    out.push(value);
    return false;
  });
  return out;
}

/** Deepest object/array nesting accepted in payloads and filter values. */
export const MAX_JSON_DEPTH = 64;

/**
 * Checks a parsed JSON value before it is stored: nesting at most MAX_JSON_DEPTH, every number
 * finite (JSON.parse turns `1e400` into Infinity, which JSON cannot carry back out), no key that
 * `forbiddenKeyReason` refuses. Iterative, so hostile nesting cannot overflow the stack.
 */
export function checkJsonValue(value: unknown, path: string): void {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw notFinite(path);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  // Containers only: scalars are checked in place, and child paths are built for containers.
  const stack: Array<{ node: object; path: string; depth: number }> = [{ node: value, path, depth: 1 }];
  while (stack.length > 0) {
    const { node, path: at, depth } = stack.pop() as { node: object; path: string; depth: number };
    if (depth > MAX_JSON_DEPTH) throw badInput(at, `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`);
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) visitChild(node[i], at, i, depth, stack);
    } else {
      for (const key of Object.keys(node)) {
        const child = (node as Record<string, unknown>)[key];
        const reason = forbiddenKeyReason(key, child);
        if (reason !== undefined) throw badInput(childPath(at, key), reason);
        visitChild(child, at, key, depth, stack);
      }
    }
  }
}

function visitChild(
  child: unknown,
  parentPath: string,
  key: string | number,
  depth: number,
  stack: Array<{ node: object; path: string; depth: number }>,
): void {
  if (typeof child === 'number') {
    if (!Number.isFinite(child)) throw notFinite(childPath(parentPath, key));
  } else if (typeof child === 'object' && child !== null) {
    stack.push({ node: child, path: childPath(parentPath, key), depth: depth + 1 });
  }
}

function notFinite(path: string): Error {
  return badInput(path, 'numbers must be finite (this one overflows a double)');
}
