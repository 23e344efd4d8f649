import assert from 'node:assert/strict';

/** A hit as either port answers it: the Qdrant port's ids may be numbers, kith's are strings. */
export interface AnyHit {
  readonly id: string | number;
  readonly score: number;
}

/** Two answers to the same search: the same ids (as strings) in the same order, each score within `tolerance` (relative, at least absolute). */
export function sameHits(got: readonly AnyHit[], want: readonly AnyHit[], what: string, tolerance = 1e-5): void {
  assert.deepEqual(
    got.map((h) => String(h.id)),
    want.map((h) => String(h.id)),
    what,
  );
  for (const [i, h] of got.entries()) {
    const other = (want[i] as AnyHit).score;
    assert.ok(Math.abs(h.score - other) <= tolerance * Math.max(1, Math.abs(other)), `${what}: score at ${i}: ${h.score} and ${other}`);
  }
}
