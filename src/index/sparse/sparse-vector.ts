/**
 * A sparse vector (Qdrant's `{indices, values}`): the input check, the dot product and the JSON form.
 *
 * Input rules, as Qdrant applies them: `values` must be as long as `indices`; an index may appear
 * once only, whatever its values (Qdrant counts distinct indices and refuses the vector when the
 * count is short of the length); the order of the pairs is free (Qdrant sorts them by index before
 * scoring); an empty vector is allowed. Indices are u32, values f32. A value that is finite in JSON
 * but overflows float32 (1e39) is refused here rather than stored as an infinity.
 */
import { badInput } from '../../core/errors.js';

/** Indices strictly ascending, `values[i]` the weight of `indices[i]`. */
export interface SparseVector {
  readonly indices: Uint32Array;
  readonly values: Float32Array;
}

const MAX_INDEX = 0xffff_ffff;

/**
 * Checks Qdrant's shape `{indices: number[], values: number[]}` and returns a copy sorted by
 * index. Errors name the field: `${path}.indices`, `${path}.indices[i]`, `${path}.values`,
 * `${path}.values[i]`. Keys other than `indices` and `values` are ignored.
 */
export function parseSparseVector(input: unknown, path: string): SparseVector {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw badInput(path, 'must be an object {"indices": [...], "values": [...]}');
  }
  const { indices, values } = input as { indices?: unknown; values?: unknown };
  if (!Array.isArray(indices)) throw badInput(`${path}.indices`, 'must be an array of integers');
  if (!Array.isArray(values)) throw badInput(`${path}.values`, 'must be an array of numbers');
  const n = indices.length;
  if (values.length !== n) {
    throw badInput(`${path}.values`, `must be the same length as indices (${values.length} values, ${n} indices)`);
  }
  const rawIndices = new Uint32Array(n);
  const rawValues = new Float32Array(n);
  let ascending = true;
  for (let i = 0; i < n; i++) {
    const index: unknown = indices[i];
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > MAX_INDEX) {
      throw badInput(`${path}.indices[${i}]`, `must be an integer from 0 to ${MAX_INDEX}, got ${describe(index)}`);
    }
    rawIndices[i] = index;
    if (i > 0 && index <= (rawIndices[i - 1] as number)) ascending = false;
    const value: unknown = values[i];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw badInput(`${path}.values[${i}]`, `must be a finite number, got ${describe(value)}`);
    }
    const stored = Math.fround(value);
    if (!Number.isFinite(stored)) throw badInput(`${path}.values[${i}]`, `${value} is out of float32 range`);
    rawValues[i] = stored;
  }
  if (ascending) return { indices: rawIndices, values: rawValues };
  // Sort positions by index (stable, so a duplicate's later position comes second).
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (rawIndices[a] as number) - (rawIndices[b] as number) || a - b);
  const sorted = new Uint32Array(n);
  const sortedValues = new Float32Array(n);
  for (let j = 0; j < n; j++) {
    const from = order[j] as number;
    sorted[j] = rawIndices[from] as number;
    sortedValues[j] = rawValues[from] as number;
    if (j > 0 && sorted[j] === sorted[j - 1]) {
      const first = order[j - 1] as number;
      const [earlier, later] = first < from ? [first, from] : [from, first];
      throw badInput(`${path}.indices[${later}]`, `duplicate index ${sorted[j]} (also at indices[${earlier}]); indices must be unique`);
    }
  }
  return { indices: sorted, values: sortedValues };
}

function describe(x: unknown): string {
  if (typeof x === 'number') return String(x);
  if (typeof x === 'string') return JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}…` : x);
  return x === null ? 'null' : Array.isArray(x) ? 'an array' : typeof x;
}

/**
 * Dot product by a merge join over both (sorted) index lists, in float64, summed from 0 in
 * ascending index order: the order the index's search adds terms in, so both give the same
 * float64 for the same pair. 0 when no index is shared (see sharesIndex to tell that from a 0 sum).
 */
export function sparseDot(a: SparseVector, b: SparseVector): number {
  const ai = a.indices;
  const bi = b.indices;
  const av = a.values;
  const bv = b.values;
  let i = 0;
  let j = 0;
  let sum = 0;
  while (i < ai.length && j < bi.length) {
    const x = ai[i] as number;
    const y = bi[j] as number;
    if (x < y) i++;
    else if (x > y) j++;
    else sum += (av[i++] as number) * (bv[j++] as number);
  }
  return sum;
}

/** Whether the two (sorted) vectors have an index in common: the condition for a search hit. */
export function sharesIndex(a: SparseVector, b: SparseVector): boolean {
  const ai = a.indices;
  const bi = b.indices;
  let i = 0;
  let j = 0;
  while (i < ai.length && j < bi.length) {
    const x = ai[i] as number;
    const y = bi[j] as number;
    if (x === y) return true;
    if (x < y) i++;
    else j++;
  }
  return false;
}

export function sparseToJson(v: SparseVector): { indices: number[]; values: number[] } {
  return { indices: Array.from(v.indices), values: Array.from(v.values) };
}
