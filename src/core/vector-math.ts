/** Small vector helpers used at the edges (validation, normalisation, answers), not in hot loops. */

/** Scales `v` to unit length in place; a zero vector stays zero (so it scores 0 under Cosine). */
export function normalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (sum === 0) return v;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * inv;
  return v;
}

/**
 * A stored vector as a plain array (what answers carry). A counted loop: `Array.from` on a typed
 * array walks its iterator, ~7x slower; a 65,536-component vector took ~4 ms that way, and an
 * answer of eight of them held the service thread for tens of ms (the route walk's longest stall).
 */
export function vectorArray(values: ArrayLike<number>): number[] {
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i] as number;
  return out;
}
