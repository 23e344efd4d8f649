/**
 * A write's input checked and converted before it is queued: points (ids normalised, vectors
 * parsed and converted as stored, payloads checked and copied) and ids to delete. A loop over a
 * batch as large as the body limit allows (50,000 points of 128 numbers, millions of ids) takes
 * hundreds of milliseconds, so it runs in slices (core/time-slices.ts).
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { canonicalUuid, normalizePointId, type PointId } from '../core/point-id.js';
import { ShardedMap } from '../core/sharded-map.js';
import { TimeSlices } from '../core/time-slices.js';
import { checkJsonValue, isPlainObject } from '../payload/json-value.js';
import type { StoredVector } from '../storage/point-record.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import { checkPointShape } from '../search/embedded-input.js';
import type { Payload, PointTable } from '../segment/point-table.js';
import { parseVector, toStoredVector } from '../search/vector-input.js';
import { parseJson } from '../core/json-text.js';
import { parseSparseVector } from '../index/sparse/sparse-vector.js';
import type { SparseVectors } from '../segment/sparse-spaces.js';
import { parseNamedVector } from '../search/named-input.js';
import type { NamedVectors } from '../segment/named-vectors.js';

/** A point validated and converted, ready to be written. */
export interface PreparedPoint {
  readonly id: PointId;
  readonly stored: StoredVector;
  readonly payload: Payload;
  readonly payloadJson: string;
  /** Its sparse vectors by name; undefined when it has none. */
  readonly sparse?: SparseVectors | undefined;
  /** Its named dense vectors beside the main one; undefined when it has none. */
  readonly named?: NamedVectors | undefined;
}

/** What an upsert names: the REST API's JSON, checked here. */
export interface PointInput {
  readonly id: unknown;
  readonly vector: unknown;
  readonly payload?: unknown;
  /** Sparse vectors by name: `{name: {indices, values}}`, names the collection has. */
  readonly sparse_vectors?: unknown;
  /** Named dense vectors beside the main one: `{name: [..] | [[..], ..]}`, names the collection has. */
  readonly named_vectors?: unknown;
}

/**
 * What a vector update names: an existing point's id and its new dense vector, its new sparse
 * vectors, or both; the vectors it does not name stay as they are.
 */
export interface VectorInput {
  readonly id: unknown;
  readonly vector?: unknown;
  readonly sparse_vectors?: unknown;
  readonly named_vectors?: unknown;
}

/** A vector update validated and converted; the payload (and what is not named) is the point's own, read when the write runs. */
export interface PreparedVector {
  readonly id: PointId;
  readonly stored?: StoredVector | undefined;
  readonly sparse?: SparseVectors | undefined;
  readonly named?: NamedVectors | undefined;
}

/** A point's named dense vectors, checked against the collection's names, sizes and kinds; undefined when absent or empty. */
export function parseNamedVectors(raw: unknown, config: CollectionConfig, path: string): NamedVectors | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isPlainObject(raw)) throw badInput(path, 'expected an object of named vectors');
  const out = new Map<string, ReturnType<typeof parseNamedVector>>();
  for (const name of Object.keys(raw)) {
    const at = childPath(path, name);
    const spec = config.namedVectors.get(name);
    if (spec === undefined) {
      const known = [...config.namedVectors.keys()].map((n) => JSON.stringify(n)).join(', ');
      throw badInput(at, `the collection has no named vector ${JSON.stringify(name)}${known === '' ? '' : ` (it has ${known})`}`);
    }
    out.set(name, parseNamedVector(raw[name], spec, at));
  }
  return out.size === 0 ? undefined : out;
}

/**
 * A point's sparse vectors, checked: an object of names the collection has, each Qdrant's
 * `{indices, values}` (index/sparse/sparse-vector.ts). Undefined when absent, null or empty.
 */
export function parseSparseVectors(raw: unknown, config: CollectionConfig, path: string): SparseVectors | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isPlainObject(raw)) throw badInput(path, 'expected an object of sparse vectors by name');
  const out = new Map<string, ReturnType<typeof parseSparseVector>>();
  for (const name of Object.keys(raw)) {
    const at = childPath(path, name);
    if (!config.sparseVectors.has(name)) {
      const known = [...config.sparseVectors.keys()].map((n) => JSON.stringify(n)).join(', ');
      throw badInput(at, `the collection has no sparse vector named ${JSON.stringify(name)}${known === '' ? '' : ` (it has ${known})`}`);
    }
    out.set(name, parseSparseVector(raw[name], at));
  }
  return out.size === 0 ? undefined : out;
}

/**
 * Checks and converts every vector update as `preparePoints` checks an upsert's points (objects of
 * `id` and `vector` only); a repeated id: its last vector, in that place.
 */
export async function prepareVectors(points: readonly VectorInput[], config: CollectionConfig): Promise<PreparedVector[]> {
  if (!Array.isArray(points)) throw badInput('points', `expected an array of points, got ${typeof points}`);
  const slices = new TimeSlices();
  const at = new ShardedMap<number>();
  const prepared: Array<PreparedVector | undefined> = [];
  for (let i = 0; i < points.length; i++) {
    if (slices.due(i)) await slices.pause();
    if (!(i in points)) continue;
    const point = points[i] as VectorInput;
    const path = childPath('points', i);
    if (!isPlainObject(point)) throw badInput(path, 'expected an object of id and vector');
    for (const key of Object.keys(point))
      if (key !== 'id' && key !== 'vector' && key !== 'sparse_vectors' && key !== 'named_vectors') throw badInput(childPath(path, key), 'unknown field');
    const id = normalizePointId(point.id, childPath(path, 'id'));
    const hasDense = point.vector !== undefined && point.vector !== null;
    const stored = hasDense
      ? toStoredVector(parseVector(point.vector, config.vectorSize, childPath(path, 'vector')), config.distance, config.quantization)
      : undefined;
    const sparse = parseSparseVectors(point.sparse_vectors, config, childPath(path, 'sparse_vectors'));
    const named = parseNamedVectors(point.named_vectors, config, childPath(path, 'named_vectors'));
    if (stored === undefined && sparse === undefined && named === undefined)
      throw badInput(childPath(path, 'vector'), 'expected a vector (or sparse_vectors, named_vectors) to update');
    const earlier = at.get(id);
    if (earlier !== undefined) prepared[earlier] = undefined;
    at.set(id, prepared.length);
    prepared.push({ id, stored, sparse, named });
  }
  return prepared.filter((p): p is PreparedVector => p !== undefined);
}

/**
 * Checks and converts every point; throws ERR_BAD_INPUT naming the first bad field. A repeated id:
 * the last occurrence wins, as if the batch were applied in order (and takes that place in it).
 */
export async function preparePoints(points: readonly PointInput[], config: CollectionConfig): Promise<PreparedPoint[]> {
  const dim = config.vectorSize;
  const slices = new TimeSlices();
  const prepared: Array<PreparedPoint | undefined> = [];
  const at = new ShardedMap<number>();
  let repeated = 0;
  for (let i = 0; i < points.length; i++) {
    if (slices.due(i)) await slices.pause();
    // Holes (an embedded caller's sparse array) are passed over, as `forEach` did.
    if (!(i in points)) continue;
    const point = points[i] as PointInput;
    const path = childPath('points', i);
    checkPointShape(point, path);
    const id = normalizePointId(point.id, childPath(path, 'id'));
    const vector = parseVector(point.vector, dim, childPath(path, 'vector'));
    const payloadPath = childPath(path, 'payload');
    const payload = point.payload ?? {};
    if (!isPlainObject(payload)) throw badInput(payloadPath, 'expected an object');
    checkJsonValue(payload, payloadPath);
    const stored = toStoredVector(vector, config.distance, config.quantization);
    const sparse = parseSparseVectors(point.sparse_vectors, config, childPath(path, 'sparse_vectors'));
    const named = parseNamedVectors(point.named_vectors, config, childPath(path, 'named_vectors'));
    const earlier = at.get(id);
    if (earlier !== undefined) {
      prepared[earlier] = undefined;
      repeated++;
    }
    at.set(id, prepared.length);
    // Memory holds what the record holds, parsed back (storedPayload says why).
    const payloadJson = JSON.stringify(payload);
    prepared.push({ id, stored, payload: parseJson(payloadJson) as Payload, payloadJson, sparse, named });
  }
  if (repeated === 0) return prepared as PreparedPoint[];
  const kept: PreparedPoint[] = [];
  for (let i = 0; i < prepared.length; i++) {
    if (slices.due(i)) await slices.pause();
    const point = prepared[i];
    if (point !== undefined) kept.push(point);
  }
  return kept;
}

/**
 * A checked payload as stored: its JSON, and the object memory holds, parsed back from it (as
 * `preparePoints` does inline). A caller changing its object later changes nothing, and answers
 * are the same before and after a restart (-0 becomes 0 in both).
 */
export function storedPayload(payload: Payload): { readonly payload: Payload; readonly payloadJson: string } {
  const payloadJson = JSON.stringify(payload);
  return { payload: parseJson(payloadJson) as Payload, payloadJson };
}

/**
 * Checks every id (`normalizePointId`), naming `points[i]` when one is bad; holes in a sparse array
 * are passed over. Nothing is kept: a delete at the body limit names millions of ids, and a
 * normalised copy of them would live until the write ends, a heap a major GC must walk
 * (docs/decisions.md, "Large deletes keep only the ids that exist"). `existingIdsOf` normalises
 * again in the write queue, keeping only the ids that exist.
 */
export async function checkIds(rawIds: readonly unknown[]): Promise<void> {
  const slices = new TimeSlices();
  for (let i = 0; i < rawIds.length; i++) {
    if (slices.due(i)) await slices.pause();
    if (i in rawIds) normalizePointId(rawIds[i], childPath('points', i));
  }
}

/**
 * The distinct ids of `rawIds` (checked by `checkIds`) that name a point of `table`, each as the
 * table's own string: the normalised spelling made here dies young, so only as many ids as the
 * collection holds outlive the loop. Duplicates are found by slot.
 */
/** Ids in a delete from which duplicates are found with a byte per slot rather than a set (whose growth rehashes it whole). */
const BYTE_PER_SLOT_FROM = 65_536;

export async function existingIdsOf(rawIds: readonly unknown[], table: Pick<PointTable, 'slotCount' | 'slotOf' | 'idOf'>): Promise<PointId[]> {
  const slices = new TimeSlices();
  // A byte per slot for a long list; a set of slots for a short one, so that a delete of a few ids
  // does not allocate a byte for every slot of a large collection.
  const bytes = rawIds.length > BYTE_PER_SLOT_FROM ? new Uint8Array(table.slotCount) : undefined;
  const slots = bytes === undefined ? new Set<number>() : undefined;
  const existing: PointId[] = [];
  for (let i = 0; i < rawIds.length; i++) {
    if (slices.due(i)) await slices.pause();
    const raw = rawIds[i];
    // Checked before the write was queued; a value a caller swapped in since names no point.
    const id = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? (canonicalUuid(raw) ?? raw) : undefined;
    const slot = id === undefined ? undefined : table.slotOf(id);
    if (slot === undefined) continue;
    if (bytes !== undefined) {
      if (bytes[slot] === 1) continue;
      bytes[slot] = 1;
    } else if (slots !== undefined) {
      if (slots.has(slot)) continue;
      slots.add(slot);
    }
    existing.push(table.idOf(slot));
  }
  return existing;
}
