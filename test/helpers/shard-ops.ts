/**
 * Random shard operations over data users have (odd ids, zero and repeated vectors, non-negative
 * under Dot, payloads of every JSON type) and the plain in-memory model they are checked against.
 */
import type { ShardOperation, ShardPoint } from '../../src/cluster/shard-operation.js';
import type { SeededRng } from '../../src/core/rng.js';

export const ODD_IDS = ['7', 'α', ' ', 'a/b', 'ünï', '0', 'x'.repeat(200)];
export const PAYLOADS: Record<string, unknown>[] = [
  {},
  { g: 0 },
  { g: 1, s: 'x' },
  { g: 2, n: null, b: true, l: [1, 'two', null], o: { k: 1.5 } },
  { g: 1, e: '' },
];

/**
 * An upsert of 1–6 points (most rolls), a delete of two ids, a delete by filter on `g`, a payload
 * merge of `{tag}` on two ids (one perhaps absent) or on the points with a `g`, or new vectors for
 * two ids (perhaps absent, perhaps the same one twice: the last vector wins).
 */
export function randomShardOperation(rng: SeededRng, ids: readonly string[], dim: number): ShardOperation {
  const pick = <T>(list: readonly T[]): T => list[rng.nextUint32() % list.length] as T;
  const roll = rng.nextUint32() % 13;
  const vector = (): number[] => {
    const kind = rng.nextUint32() % 4;
    return kind === 0
      ? new Array<number>(dim).fill(0)
      : kind === 1
        ? Array.from({ length: dim }, (_, j) => (j < 2 ? 1 : 0))
        : Array.from({ length: dim }, () => rng.nextUint32() % 4);
  };
  if (roll < 7) {
    const points: ShardPoint[] = [];
    for (let i = 1 + (rng.nextUint32() % 6); i > 0; i--) points.push({ id: pick(ids), vector: vector(), payload: pick(PAYLOADS) });
    // One upsert in five is conditional: insert only, update only, or only points whose `g` is a value.
    const conditional = rng.nextUint32() % 15;
    if (conditional === 0) return { op: 'upsert', points, mode: 'insert_only' };
    if (conditional === 1) return { op: 'upsert', points, mode: 'update_only' };
    if (conditional === 2) return { op: 'upsert', points, condition: { must: [{ key: 'g', match: { value: rng.nextUint32() % 3 } }] } };
    return { op: 'upsert', points };
  }
  if (roll === 12)
    return {
      op: 'vectors',
      points: [
        { id: pick(ids), vector: vector() },
        { id: pick(ids), vector: vector() },
      ],
    };
  if (roll < 9) return { op: 'delete_ids', ids: [pick(ids), pick(ids), 'never-there'] };
  const operation = { op: 'set' as const, payload: { tag: rng.nextUint32() % 5 } };
  if (roll === 10) return { op: 'payload', ids: [pick(ids), pick(ids)], operation };
  if (roll === 11) return { op: 'payload', filter: { must: [{ key: 'g', match: { value: rng.nextUint32() % 3 } }] }, operation };
  return { op: 'delete_filter', filter: { must: [{ key: 'g', match: { value: rng.nextUint32() % 3 } }] } };
}

export interface ModelPoint {
  readonly vector: number[];
  readonly payload: Record<string, unknown>;
  readonly version: bigint;
}

/** `operation` applied to the model as the entry at `seq` (its version). */
export function applyToModel(model: Map<string, ModelPoint>, operation: ShardOperation, seq: number): void {
  const version = BigInt(seq);
  if (operation.op === 'upsert') {
    // Within one batch the last point with an id wins, as in kith's upsert; a conditional one writes
    // the points it admits as the model is before it.
    const last = new Map(operation.points.map((p) => [p.id, p]));
    const inCondition = operation.condition === undefined ? undefined : new Set(matching(model, operation.condition));
    for (const p of last.values()) {
      const exists = model.has(p.id);
      if (exists ? operation.mode === 'insert_only' || (inCondition !== undefined && !inCondition.has(p.id)) : operation.mode === 'update_only') continue;
      model.set(p.id, { vector: p.vector, payload: p.payload ?? {}, version });
    }
  } else if (operation.op === 'delete_ids') {
    for (const id of operation.ids) model.delete(id);
  } else if (operation.op === 'delete_filter') {
    for (const id of matching(model, operation.filter)) model.delete(id);
  } else if (operation.op === 'vectors') {
    // Points the model does not hold are passed over, as a replica passes them over.
    for (const { id, vector } of operation.points) {
      const p = model.get(id);
      if (p !== undefined) model.set(id, { vector, payload: p.payload, version });
    }
  } else {
    const set = (operation.operation as { payload: Record<string, unknown> }).payload;
    const ids = operation.ids === undefined ? matching(model, operation.filter ?? {}) : operation.ids;
    for (const id of ids) {
      const p = model.get(id);
      if (p !== undefined) model.set(id, { vector: p.vector, payload: { ...p.payload, ...set }, version });
    }
  }
}

/** The model's ids matching the operations' one filter shape, `g` equal to a value. */
function matching(model: ReadonlyMap<string, ModelPoint>, filter: Record<string, unknown>): string[] {
  const value = (filter.must as { match: { value: number } }[])[0]?.match.value;
  return [...model].filter(([, p]) => p.payload.g === value).map(([id]) => id);
}
