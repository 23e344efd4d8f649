/**
 * A write as one entry of a shard's log: what every replica applies at that position. JSON text
 * for now (the points already checked by the node that accepted the write); a decoder that
 * refuses what it does not know, so that a replica never applies half an entry.
 */
import type { PayloadOperation } from '../collection/payload-operations.js';
import { UPDATE_MODES, type UpdateMode } from '../collection/collection.js';
import { KithError } from '../core/errors.js';
import { parseJson } from '../core/json-text.js';

export interface ShardPoint {
  readonly id: string;
  readonly vector: number[];
  readonly payload?: Record<string, unknown>;
}

export interface ShardVector {
  readonly id: string;
  readonly vector: number[];
}

export type ShardOperation =
  /**
   * Points to write; with `mode` or `condition` (filter JSON) only those each replica admits when
   * it applies the entry (Collection.upsert's update mode and update filter).
   */
  | { readonly op: 'upsert'; readonly points: readonly ShardPoint[]; readonly mode?: UpdateMode; readonly condition?: Record<string, unknown> }
  | { readonly op: 'delete_ids'; readonly ids: readonly string[] }
  | { readonly op: 'delete_filter'; readonly filter: Record<string, unknown> }
  /**
   * New vectors for the listed points, which keep their payloads; ids a replica does not hold are
   * passed over (as for `payload`), and with `condition` (filter JSON) those not matching it.
   */
  | { readonly op: 'vectors'; readonly points: readonly ShardVector[]; readonly condition?: Record<string, unknown> }
  /**
   * A payload operation on the listed ids or on the points matching `filter`. Listed ids a replica
   * does not hold are passed over: the accepting node refused ids that did not exist when it
   * checked (docs/cluster.md), and a replica never stops on what a later write changed.
   */
  | { readonly op: 'payload'; readonly ids?: readonly string[]; readonly filter?: Record<string, unknown>; readonly operation: PayloadOperation };

const PAYLOAD_OPS: ReadonlySet<unknown> = new Set(['set', 'overwrite', 'delete', 'clear']);

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The entry's bytes. `messageId`, the id the entry is appended under, is kept in it (`msg`): a
 * replica reports which entry it applied at a position, and the writer checks it was its own
 * (cluster-engine.ts, "a stale leader's acknowledgement").
 */
export function encodeShardOperation(operation: ShardOperation, messageId?: string): Uint8Array {
  return encoder.encode(JSON.stringify(messageId === undefined ? operation : { ...operation, msg: messageId }));
}

/** An entry as a replica reads it: the operation and the message id it was appended under, when it says. */
export type ShardEntry = ShardOperation & { readonly msg?: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The entry in `data`; ERR_STORAGE_CORRUPTED naming `where` when it is not one (a replica stops on it). */
export function decodeShardOperation(data: Uint8Array, where: string): ShardEntry {
  const refuse = (why: string): KithError => new KithError('ERR_STORAGE_CORRUPTED', `${where}: not a shard operation (${why})`);
  let value: unknown;
  try {
    value = parseJson(decoder.decode(data));
  } catch (error) {
    throw refuse(error instanceof Error ? error.message : String(error));
  }
  if (!isObject(value)) throw refuse('not an object');
  const operation = operationOf(value, refuse);
  if (value.msg === undefined) return operation;
  if (typeof value.msg !== 'string') throw refuse('msg: expected the message id, a string');
  return { ...operation, msg: value.msg };
}

function operationOf(value: Record<string, unknown>, refuse: (why: string) => KithError): ShardOperation {
  switch (value.op) {
    case 'upsert':
      if (!Array.isArray(value.points) || !value.points.every((p) => isObject(p) && typeof p.id === 'string' && Array.isArray(p.vector)))
        throw refuse('points: expected a list of {id, vector, payload}');
      if (value.mode !== undefined && !UPDATE_MODES.has(value.mode)) throw refuse('mode: expected upsert, insert_only or update_only');
      if (value.condition !== undefined && !isObject(value.condition)) throw refuse('condition: expected a filter');
      return {
        op: 'upsert',
        points: value.points as ShardPoint[],
        ...(value.mode === undefined ? {} : { mode: value.mode as UpdateMode }),
        ...(value.condition === undefined ? {} : { condition: value.condition }),
      };
    case 'vectors':
      if (!Array.isArray(value.points) || !value.points.every((p) => isObject(p) && typeof p.id === 'string' && Array.isArray(p.vector)))
        throw refuse('points: expected a list of {id, vector}');
      if (value.condition !== undefined && !isObject(value.condition)) throw refuse('condition: expected a filter');
      return { op: 'vectors', points: value.points as ShardVector[], ...(value.condition === undefined ? {} : { condition: value.condition }) };
    case 'delete_ids':
      if (!Array.isArray(value.ids) || !value.ids.every((id) => typeof id === 'string')) throw refuse('ids: expected a list of strings');
      return { op: 'delete_ids', ids: value.ids as string[] };
    case 'delete_filter':
      if (!isObject(value.filter)) throw refuse('filter: expected an object');
      return { op: 'delete_filter', filter: value.filter };
    case 'payload': {
      const hasIds = Array.isArray(value.ids) && value.ids.every((id) => typeof id === 'string');
      if (hasIds === isObject(value.filter)) throw refuse('payload: expected ids (a list of strings) or a filter');
      if (!isObject(value.operation) || !PAYLOAD_OPS.has(value.operation.op)) throw refuse('payload: expected an operation');
      const operation = value.operation as unknown as PayloadOperation;
      return hasIds ? { op: 'payload', ids: value.ids as string[], operation } : { op: 'payload', filter: value.filter as Record<string, unknown>, operation };
    }
    default:
      throw refuse(`unknown op ${JSON.stringify(value.op)}`);
  }
}
