/**
 * A collection's vectors as the Qdrant port names them: its main dense vector (unnamed, `""`, or
 * named), its sparse vectors and its other dense vectors (multi-vectors among them). Points and queries name vectors by these names; answers show a point's
 * vectors as Qdrant does: a bare array when the collection has only the unnamed dense vector, else
 * a map of name → vector (`{"text-dense": […], "text-sparse": {indices, values}}`).
 */
import { childPath } from '../../core/field-path.js';
import { shortestFloat32s } from '../../core/float32-text.js';
import { describeJson } from '../../core/point-id.js';
import type { SparseVectorsJson } from '../../segment/sparse-spaces.js';
import { checkSparseVector } from '../../search/sparse-search.js';
import { checkNamedVector } from '../../search/named-search.js';
import type { NamedVectorConfigJson } from '../../segment/named-vector-config.js';
import type { NamedVectorConfig, NamedVectorsJson } from '../../segment/named-vectors.js';
import { formatError, notSupported, QdrantHttpError } from './errors.js';

export interface VectorLayout {
  /** The main dense vector's name ("" for the unnamed vector). */
  readonly dense: string;
  /**
   * The collection has no plain dense vector on this port (sparse vectors or multi-vectors only):
   * kith's main vector is a placeholder (NO_DENSE_VECTOR), named by no point, query or answer.
   */
  readonly denseHidden: boolean;
  readonly sparse: ReadonlySet<string>;
  /** Dense vectors beside the main one (multi-vectors among them), searched exactly. */
  readonly named: ReadonlyMap<string, NamedVectorConfig>;
}

/** A collection with only the unnamed dense vector. */
export const UNNAMED_ONLY: VectorLayout = { dense: '', denseHidden: false, sparse: new Set(), named: new Map() };

/**
 * The main vector's name in kith for a Qdrant collection without a plain dense vector (sparse
 * vectors or multi-vectors only): kith's points always hold one, so each such point holds this
 * one-component zero vector, in a Flat index (4 bytes a point), which the Qdrant port never shows
 * nor lets a request name. A Qdrant collection cannot take the name for a vector of its own.
 */
export const NO_DENSE_VECTOR = 'kith:no-dense-vector';

/** The placeholder's stored value. */
export const NO_DENSE_VALUE: readonly number[] = Object.freeze([0]);

/** The layout of a collection as its facts (kith's collection info) describe it. */
export function layoutOf(facts: {
  readonly vector_name?: string | undefined;
  readonly sparse_vectors?: Readonly<Record<string, unknown>> | undefined;
  readonly named_vectors?: Readonly<Record<string, NamedVectorConfigJson>> | undefined;
}): VectorLayout {
  const sparse = facts.sparse_vectors === undefined ? [] : Object.keys(facts.sparse_vectors);
  const named = facts.named_vectors === undefined ? [] : Object.entries(facts.named_vectors);
  if ((facts.vector_name ?? '') === '' && sparse.length === 0 && named.length === 0) return UNNAMED_ONLY;
  const dense = facts.vector_name ?? '';
  return { dense, denseHidden: dense === NO_DENSE_VECTOR, sparse: new Set(sparse), named: new Map(named) };
}

/** Whether answers show vectors as a map of names (anything but the unnamed vector alone). */
function named(layout: VectorLayout): boolean {
  return layout.dense !== '' || layout.sparse.size > 0 || layout.named.size > 0;
}

/**
 * A collection whose only vector is the unnamed one, a multi-vector: kith holds it as the named
 * vector "" beside the placeholder main vector (collections.ts), and answers show it bare, as
 * Qdrant shows an unnamed vector.
 */
export function unnamedMultiOnly(layout: VectorLayout): boolean {
  return layout.denseHidden && layout.sparse.size === 0 && layout.named.size === 1 && layout.named.get('')?.multivector === true;
}

function knownName(layout: VectorLayout, name: string): boolean {
  return (name === layout.dense && !layout.denseHidden) || layout.sparse.has(name) || layout.named.has(name);
}

/** Qdrant's 400 for a vector name the collection does not have, in its words. */
export function unknownVectorName(name: string): QdrantHttpError {
  return new QdrantHttpError(400, `Wrong input: Not existing vector name error: ${name}`);
}

/**
 * Which vector a query or a prefetch names by `using`: the dense one, a sparse one, or the unnamed
 * one in a collection whose dense vector has a name (`absent`: an error only once a query vector
 * needs it; a fusion of prefetches names none).
 */
export type UsedVector =
  | { readonly kind: 'dense' }
  | { readonly kind: 'sparse'; readonly name: string }
  | { readonly kind: 'named'; readonly name: string; readonly spec: NamedVectorConfig }
  | { readonly kind: 'absent' };

export function usedVector(raw: unknown, layout: VectorLayout, path: string): UsedVector {
  const name = raw === undefined || raw === null ? '' : raw;
  if (typeof name !== 'string') throw formatError(path, `expected a vector name, got ${describeJson(raw)}`);
  if (name === layout.dense) {
    if (layout.denseHidden) throw unknownVectorName(name);
    return { kind: 'dense' };
  }
  if (layout.sparse.has(name)) return { kind: 'sparse', name };
  const spec = layout.named.get(name);
  if (spec !== undefined) return { kind: 'named', name, spec };
  if (name === '') return { kind: 'absent' };
  throw unknownVectorName(name);
}

/** The dense vector `used` names; Qdrant's 400 when it is the unnamed one and the collection has none. */
export function denseUsed(used: UsedVector): void {
  if (used.kind === 'absent') throw unknownVectorName('');
}

/** A sparse vector as Qdrant sends it, `{indices, values}`; the engine checks its contents. */
export function isSparseShape(raw: unknown): raw is { indices: unknown; values: unknown } {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && Object.hasOwn(raw, 'indices');
}

/** What a point's `vector` gives kith: the main dense vector, the sparse ones and the other dense ones by name. */
export interface PointVectors {
  vector?: unknown;
  sparse_vectors?: Record<string, unknown>;
  named_vectors?: Record<string, unknown>;
}

/** `record[name] = value` as an own property, whatever the name (`__proto__` too). */
export function setOwn(record: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(record, name, { value, enumerable: true, configurable: true, writable: true });
}

/**
 * A point's `vector` as Qdrant sends it: an array (the unnamed dense vector), or a map of names
 * (`{"": […]}` too: Python LangChain sends that). Multi-vectors are refused.
 */
export function pointVectors(raw: unknown, layout: VectorLayout, path: string): PointVectors {
  if (Array.isArray(raw) && unnamedMultiOnly(layout)) {
    checkNamedVector(raw, layout.named.get('') as NamedVectorConfig, path);
    const named_vectors: Record<string, unknown> = Object.create(null);
    named_vectors[''] = raw;
    return { named_vectors };
  }
  if (Array.isArray(raw)) {
    if (raw.some((x) => Array.isArray(x))) throw notSupported(path, 'multi-vectors', true);
    if (layout.dense !== '') throw unknownVectorName('');
    return { vector: raw };
  }
  if (typeof raw !== 'object' || raw === null)
    throw formatError(path, `expected a vector (an array of numbers) or a map of named vectors, got ${describeJson(raw)}`);
  if (isSparseShape(raw)) throw formatError(path, 'a sparse vector must be named: {"<name>": {indices, values}}');
  const out: PointVectors = {};
  for (const [name, value] of Object.entries(raw)) {
    const at = childPath(path, name);
    if (name === layout.dense) {
      if (layout.denseHidden) throw unknownVectorName(name);
      if (Array.isArray(value) && value.some((x) => Array.isArray(x))) throw notSupported(at, 'multi-vectors', true);
      if (!Array.isArray(value)) throw formatError(at, `expected a dense vector (an array of numbers), got ${describeJson(value)}`);
      out.vector = value;
    } else if (layout.sparse.has(name)) {
      if (!isSparseShape(value)) throw formatError(at, `expected a sparse vector {indices, values}, got ${describeJson(value)}`);
      checkSparseVector(value, at);
      out.sparse_vectors ??= {};
      setOwn(out.sparse_vectors, name, value);
    } else if (layout.named.has(name)) {
      checkNamedVector(value, layout.named.get(name) as NamedVectorConfig, at);
      out.named_vectors ??= {};
      setOwn(out.named_vectors, name, value);
    } else {
      throw unknownVectorName(name);
    }
  }
  return out;
}

/** `with_vector`: all, none, or the listed names. */
export type VectorSelection = boolean | readonly string[];

/** Qdrant's `with_vector`: a boolean or a list of vector names. */
export function parseVectorSelection(raw: unknown, path: string, fallback: boolean): VectorSelection {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw === 'boolean') return raw;
  if (Array.isArray(raw)) {
    raw.forEach((name, i) => {
      if (typeof name !== 'string') throw formatError(childPath(path, i), `expected a vector name, got ${describeJson(name)}`);
    });
    return raw as string[];
  }
  throw formatError(path, `expected a boolean or a list of vector names, got ${describeJson(raw)}`);
}

/** Whether the engine must read vectors for this selection; names are checked against the layout. */
export function readsVectors(selection: VectorSelection, layout: VectorLayout): boolean {
  if (typeof selection === 'boolean') return selection;
  for (const name of selection) if (!knownName(layout, name)) throw unknownVectorName(name);
  return selection.length > 0;
}

/** A point's vectors as Qdrant shows them (components as their shortest float32 decimals), or undefined when none are asked for. */
export function shownVectors(
  point: {
    readonly vector?: number[] | undefined;
    readonly sparse_vectors?: SparseVectorsJson | undefined;
    readonly named_vectors?: NamedVectorsJson | undefined;
  },
  layout: VectorLayout,
  selection: VectorSelection,
): unknown {
  if (selection === false || point.vector === undefined) return undefined;
  if (selection === true && unnamedMultiOnly(layout)) {
    const rows = point.named_vectors?.[''] as number[][] | undefined;
    return rows === undefined ? {} : rows.map(shortestFloat32s);
  }
  if (selection === true && !named(layout)) return shortestFloat32s(point.vector);
  const wanted = (name: string): boolean => selection === true || selection.includes(name);
  const out: Record<string, unknown> = Object.create(null);
  if (wanted(layout.dense) && !layout.denseHidden) out[layout.dense] = shortestFloat32s(point.vector);
  for (const [name, v] of Object.entries(point.sparse_vectors ?? {})) {
    if (wanted(name)) out[name] = { indices: v.indices, values: shortestFloat32s(v.values) };
  }
  for (const [name, v] of Object.entries(point.named_vectors ?? {})) {
    if (!wanted(name)) continue;
    out[name] = (v as unknown[]).length > 0 && Array.isArray(v[0]) ? (v as number[][]).map(shortestFloat32s) : shortestFloat32s(v as number[]);
  }
  return { ...out };
}
