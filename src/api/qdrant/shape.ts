/**
 * Response shapes shared by the point routes: Qdrant's `with_payload` / `with_vector` selectors,
 * `Record` and `ScoredPoint`, and `UpdateResult`.
 */
import type { Payload } from '../../segment/point-table.js';
import { describeJson } from '../../core/point-id.js';
import { shortestFloat32s } from '../../core/float32-text.js';
import { formatError, notSupported } from './errors.js';
import { type QdrantId, toQdrantId } from './ids.js';

/** Qdrant's `with_vector`: a boolean; a list of vector names means named vectors, which kith has not. */
export function parseVectorSelector(raw: unknown, path: string, fallback: boolean): boolean {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw === 'boolean') return raw;
  if (Array.isArray(raw)) throw notSupported(path, 'selecting named vectors');
  throw formatError(path, `expected a boolean, got ${describeJson(raw)}`);
}

export interface QdrantRecord {
  id: QdrantId;
  payload?: Payload;
  vector?: number[];
  /** The payload value that placed it, in an order_by page. */
  order_value?: number;
}

export interface QdrantScoredPoint extends QdrantRecord {
  version: number;
  score: number;
}

/** A point as Qdrant shows it: its vector's components as their shortest float32 decimals (0.15, not 0.15000000596046448). */
export function toRecord(id: string, payload: Payload | undefined, vector: number[] | undefined): QdrantRecord {
  const record: QdrantRecord = { id: toQdrantId(id) };
  if (payload !== undefined) record.payload = payload;
  if (vector !== undefined) record.vector = shortestFloat32s(vector);
  return record;
}

/** Qdrant's operation ids count this process's acknowledged writes; kith has no operation log. */
let lastOperationId = 0;

/** `UpdateResult`: every write is durable before the reply, so it is always "completed". */
export function updateResult(): { operation_id: number; status: 'completed' } {
  lastOperationId += 1;
  return { operation_id: lastOperationId, status: 'completed' };
}
