/** Small vector helpers used at the edges (validation, normalisation), not in hot loops. */

/** Scales `v` to unit length in place; a zero vector stays zero (so it scores 0 under Cosine). */
export function normalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (sum === 0) return v;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * inv;
  return v;
}
