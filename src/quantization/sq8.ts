/**
 * SQ8 scalar quantization, per vector: each component becomes one byte on the vector's own
 * [min, max] scale, so storage takes dim + 8 bytes instead of 4·dim.
 *
 *   code = round((x - min) / (max - min) · 255),   x' = min + code · (max - min) / 255
 *
 * min and max are kept as float32 (what the record stores), and decoding is the one function
 * used both at upsert and at load, so a restarted service scores exactly the same vectors.
 */
import { dequantizeInto, type Sq8Codes } from '../core/sq8-codes.js';

export function quantizeSq8(vector: Float32Array): Sq8Codes {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i] as number;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  min = Math.fround(min);
  max = Math.fround(max);
  const codes = new Uint8Array(vector.length);
  const range = max - min;
  if (range > 0) {
    const scale = 255 / range;
    for (let i = 0; i < vector.length; i++) {
      const code = Math.round(((vector[i] as number) - min) * scale);
      codes[i] = code < 0 ? 0 : code > 255 ? 255 : code;
    }
  }
  return { min, max, codes };
}

export function dequantizeSq8(q: Sq8Codes, out: Float32Array = new Float32Array(q.codes.length)): Float32Array {
  return dequantizeInto(q.min, q.max, q.codes, 0, q.codes.length, out);
}
