/**
 * A write as one entry of a shard's log: what every replica applies at that position. JSON text
 * for now (the points already checked by the node that accepted the write); a decoder that
 * refuses what it does not know, so that a replica never applies half an entry.
 */
import { KithError } from '../core/errors.js';
import { parseJson } from '../core/json-text.js';

export interface ShardPoint {
  readonly id: string;
  readonly vector: number[];
  readonly payload?: Record<string, unknown>;
}

export type ShardOperation =
  | { readonly op: 'upsert'; readonly points: readonly ShardPoint[] }
  | { readonly op: 'delete_ids'; readonly ids: readonly string[] }
  | { readonly op: 'delete_filter'; readonly filter: Record<string, unknown> };

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeShardOperation(operation: ShardOperation): Uint8Array {
  return encoder.encode(JSON.stringify(operation));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The operation in `data`; ERR_STORAGE_CORRUPTED naming `where` when it is not one (a replica stops on it). */
export function decodeShardOperation(data: Uint8Array, where: string): ShardOperation {
  const refuse = (why: string): KithError => new KithError('ERR_STORAGE_CORRUPTED', `${where}: not a shard operation (${why})`);
  let value: unknown;
  try {
    value = parseJson(decoder.decode(data));
  } catch (error) {
    throw refuse(error instanceof Error ? error.message : String(error));
  }
  if (!isObject(value)) throw refuse('not an object');
  switch (value.op) {
    case 'upsert':
      if (!Array.isArray(value.points) || !value.points.every((p) => isObject(p) && typeof p.id === 'string' && Array.isArray(p.vector)))
        throw refuse('points: expected a list of {id, vector, payload}');
      return { op: 'upsert', points: value.points as ShardPoint[] };
    case 'delete_ids':
      if (!Array.isArray(value.ids) || !value.ids.every((id) => typeof id === 'string')) throw refuse('ids: expected a list of strings');
      return { op: 'delete_ids', ids: value.ids as string[] };
    case 'delete_filter':
      if (!isObject(value.filter)) throw refuse('filter: expected an object');
      return { op: 'delete_filter', filter: value.filter };
    default:
      throw refuse(`unknown op ${JSON.stringify(value.op)}`);
  }
}
