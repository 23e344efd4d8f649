/**
 * One vector in 8-bit scalar quantization, as every layer sees it: quantization/sq8.ts makes it,
 * point records store it, the sq8 arena holds it. And the one way back to floats, shared by the
 * upsert path, the load path and the arena, so that all of them search exactly the same vectors.
 */

export interface Sq8Codes {
  /** float32, as the record stores it. */
  readonly min: number;
  /** float32, as the record stores it. */
  readonly max: number;
  /** One code per component: x ≈ min + code · (max − min) / 255. */
  readonly codes: Uint8Array;
}

/**
 * Writes the `dim` components coded at `codes[at…]` into `out`: min + code · step, the step
 * (max − min) / 255 taken in float64, each component rounded to float32 by the array.
 */
export function dequantizeInto(min: number, max: number, codes: ArrayLike<number>, at: number, dim: number, out: Float32Array): Float32Array {
  const step = (max - min) / 255;
  for (let i = 0; i < dim; i++) out[i] = min + (codes[at + i] as number) * step;
  return out;
}
