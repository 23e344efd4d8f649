/**
 * Turning request vectors into what a collection stores and searches.
 *
 * Components must be finite float32 values of magnitude at most 1e16: then no squared distance
 * or dot product over even 65536 dimensions can overflow float32, and every score is a finite
 * number that JSON can carry.
 */
import type { Distance } from '../core/distance.js';
import { badInput } from '../core/errors.js';
import { describeJson } from '../core/point-id.js';
import { normalizeInPlace } from '../core/vector-math.js';
import { dequantizeSq8, quantizeSq8 } from '../quantization/sq8.js';
import type { StoredVector } from '../storage/point-record.js';
import type { Quantization } from '../segment/collection-config.js';

const MAX_COMPONENT_MAGNITUDE = 1e16;

/** Validates a request vector of the collection's dimension and converts it to float32. */
export function parseVector(raw: unknown, dim: number, path: string): Float32Array {
  if (!Array.isArray(raw)) throw badInput(path, `expected an array of ${dim} numbers, got ${describeJson(raw)}`);
  if (raw.length !== dim) throw badInput(path, `expected ${dim} numbers, got ${raw.length}`);
  const out = new Float32Array(dim);
  for (let i = 0; i < dim; i++) {
    const x = raw[i];
    if (typeof x !== 'number') throw badInput(`${path}[${i}]`, `expected a number, got ${describeJson(x)}`);
    if (!(Math.abs(x) <= MAX_COMPONENT_MAGNITUDE)) {
      throw badInput(`${path}[${i}]`, `${x} is out of range; components must be finite with magnitude at most 1e16`);
    }
    out[i] = x;
  }
  return out;
}

/** What a collection persists for a validated vector: normalised for Cosine, then quantized for sq8. */
export function toStoredVector(vector: Float32Array, distance: Distance, quantization: Quantization): StoredVector {
  if (distance === 'Cosine') normalizeInPlace(vector);
  if (quantization === 'sq8') return { encoding: 'sq8', ...quantizeSq8(vector) };
  return { encoding: 'f32', values: vector };
}

/**
 * The vector searched in memory for a stored one. The single path from stored bytes to searched
 * floats, used at upsert and at load, so results are identical across restarts.
 */
export function searchableVector(stored: StoredVector, distance: Distance): Float32Array {
  if (stored.encoding === 'f32') return stored.values;
  const v = dequantizeSq8(stored);
  return distance === 'Cosine' ? normalizeInPlace(v) : v;
}

/** A query vector prepared for the kernels: float32, normalised under Cosine. */
export function prepareQuery(raw: unknown, dim: number, distance: Distance, path = 'vector'): Float32Array {
  const q = parseVector(raw, dim, path);
  return distance === 'Cosine' ? normalizeInPlace(q) : q;
}
