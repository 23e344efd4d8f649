/**
 * Response shapes shared by the point routes: Qdrant's `with_payload` / `with_vector` selectors,
 * `Record` and `ScoredPoint`, and `UpdateResult`.
 */
import type { Payload } from '../../segment/point-table.js';
import type { PointId } from '../../core/point-id.js';
import { shortestFloat32 } from '../../core/float32-text.js';
import type { SparseVectorsJson } from '../../segment/sparse-spaces.js';
import { type QdrantId, toQdrantId } from './ids.js';
import { shownVectors, type VectorLayout, type VectorSelection } from './vector-layout.js';

export interface QdrantRecord {
  id: QdrantId;
  payload?: Payload;
  /** A bare array, or a map of vector names (vector-layout.ts). */
  vector?: unknown;
  /** The payload value that placed it, in an order_by page. */
  order_value?: number;
}

export interface QdrantScoredPoint extends QdrantRecord {
  version: number;
  score: number;
}

/** What the engine answers of a point: its payload and vectors as asked for. */
export interface EnginePoint {
  readonly id: PointId;
  readonly payload?: Payload | undefined;
  readonly vector?: number[] | undefined;
  readonly sparse_vectors?: SparseVectorsJson | undefined;
}

/** How answers show vectors: the collection's names, and which of them were asked for. */
export interface VectorView {
  readonly layout: VectorLayout;
  readonly selection: VectorSelection;
}

/** A point as Qdrant shows it: its vectors' components as their shortest float32 decimals (0.15, not 0.15000000596046448). */
export function toRecord(point: EnginePoint, view: VectorView): QdrantRecord {
  const record: QdrantRecord = { id: toQdrantId(point.id) };
  if (point.payload !== undefined) record.payload = point.payload;
  const vector = shownVectors(point, view.layout, view.selection);
  if (vector !== undefined) record.vector = vector;
  return record;
}

/** A hit as Qdrant shows it; scores too as Qdrant writes its f32s, the shortest decimal of each. */
export function scoredPoint(hit: EnginePoint & { readonly version: bigint; readonly score: number }, view: VectorView): QdrantScoredPoint {
  const out: QdrantScoredPoint = { id: toQdrantId(hit.id), version: Number(hit.version), score: shortestFloat32(hit.score) };
  if (hit.payload !== undefined) out.payload = hit.payload;
  const vector = shownVectors(hit, view.layout, view.selection);
  if (vector !== undefined) out.vector = vector;
  return out;
}

/** Qdrant's operation ids count this process's acknowledged writes; kith has no operation log. */
let lastOperationId = 0;

/** `UpdateResult`: every write is durable before the reply, so it is always "completed". */
export function updateResult(): { operation_id: number; status: 'completed' } {
  lastOperationId += 1;
  return { operation_id: lastOperationId, status: 'completed' };
}
