/**
 * Response shapes shared by the point routes: Qdrant's `with_payload` / `with_vector` selectors,
 * `Record` and `ScoredPoint`, and `UpdateResult`.
 */
import type { Payload } from '../../collection/point-table.js';
import { childPath } from '../../core/field-path.js';
import { describeJson } from '../../core/point-id.js';
import { formatError, notSupported } from './errors.js';
import { type QdrantId, toQdrantId } from './ids.js';

/** Which payload keys to return: none, all, only some (include) or all but some (exclude). */
export type PayloadSelector = { kind: 'none' } | { kind: 'all' } | { kind: 'include' | 'exclude'; keys: readonly string[] };

function keyList(raw: unknown, path: string): string[] {
  if (!Array.isArray(raw) || raw.some((k) => typeof k !== 'string')) throw formatError(path, `expected an array of payload keys, got ${describeJson(raw)}`);
  return raw as string[];
}

/** Qdrant's `with_payload`: true, false, ["k", …], {include: […]} or {exclude: […]}. */
export function parsePayloadSelector(raw: unknown, path: string, fallback: boolean): PayloadSelector {
  if (raw === undefined || raw === null) return { kind: fallback ? 'all' : 'none' };
  if (typeof raw === 'boolean') return { kind: raw ? 'all' : 'none' };
  if (Array.isArray(raw)) return { kind: 'include', keys: keyList(raw, path) };
  if (typeof raw === 'object') {
    const o = raw as Record<string, unknown>;
    if (Object.hasOwn(o, 'include')) return { kind: 'include', keys: keyList(o.include, childPath(path, 'include')) };
    if (Object.hasOwn(o, 'exclude')) return { kind: 'exclude', keys: keyList(o.exclude, childPath(path, 'exclude')) };
  }
  throw formatError(path, `expected a boolean, a list of keys, {include} or {exclude}, got ${describeJson(raw)}`);
}

/** Qdrant's `with_vector`: a boolean; a list of vector names means named vectors, which kith has not. */
export function parseVectorSelector(raw: unknown, path: string, fallback: boolean): boolean {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw === 'boolean') return raw;
  if (Array.isArray(raw)) throw notSupported(path, 'selecting named vectors');
  throw formatError(path, `expected a boolean, got ${describeJson(raw)}`);
}

/** Applies the selector to top-level keys; a dotted key selects the top-level field it starts with. */
export function selectPayload(payload: Payload, selector: PayloadSelector): Payload | undefined {
  switch (selector.kind) {
    case 'none':
      return undefined;
    case 'all':
      return payload;
    case 'include': {
      const tops = new Set(selector.keys.map((k) => k.split('.')[0] as string));
      return Object.fromEntries(Object.entries(payload).filter(([k]) => tops.has(k)));
    }
    case 'exclude': {
      const drop = new Set(selector.keys);
      return Object.fromEntries(Object.entries(payload).filter(([k]) => !drop.has(k)));
    }
  }
}

export interface QdrantRecord {
  id: QdrantId;
  payload?: Payload;
  vector?: number[];
}

export interface QdrantScoredPoint extends QdrantRecord {
  version: number;
  score: number;
}

export function toRecord(id: string, payload: Payload | undefined, vector: number[] | undefined): QdrantRecord {
  const record: QdrantRecord = { id: toQdrantId(id) };
  if (payload !== undefined) record.payload = payload;
  if (vector !== undefined) record.vector = vector;
  return record;
}

/** Qdrant's operation ids count this process's acknowledged writes; kith has no operation log. */
let lastOperationId = 0;

/** `UpdateResult`: every write is durable before the reply, so it is always "completed". */
export function updateResult(): { operation_id: number; status: 'completed' } {
  lastOperationId += 1;
  return { operation_id: lastOperationId, status: 'completed' };
}
