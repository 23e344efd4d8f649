/**
 * The shortest decimal that reads back as the same float32: what Qdrant (Rust's shortest float
 * formatting of an f32) writes for a stored component or a score. A float32 held in a JavaScript
 * number prints with a double's digits (0.15 stored is 0.15000000596046448); this gives the number
 * whose printing is the float32's own (0.15).
 *
 * If p significant digits read back as the same float32, so do p + 1 (the longer rounding is at
 * least as close), so the shortest p is found by bisection over 1…9 (9 always suffice): three or
 * four `toPrecision` calls.
 */
export function shortestFloat32(x: number): number {
  const f = Math.fround(x);
  // Whole numbers below 2^24 print exactly and shortest already.
  if (!Number.isFinite(f) || (Number.isInteger(f) && Math.abs(f) < 16_777_216)) return f;
  let low = 1;
  let high = 9;
  let best: number | undefined;
  while (low < high) {
    const p = (low + high) >> 1;
    const candidate = Number(f.toPrecision(p));
    if (Math.fround(candidate) === f) {
      best = candidate;
      high = p;
    } else low = p + 1;
  }
  // `best` was found at `high` unless no probe below 9 read back.
  return best ?? Number(f.toPrecision(9));
}

/** Each component as its shortest float32 decimal. */
export function shortestFloat32s(vector: readonly number[]): number[] {
  const out = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = shortestFloat32(vector[i] as number);
  return out;
}
