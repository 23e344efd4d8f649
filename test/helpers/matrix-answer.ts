/**
 * The distance matrix's answers on the Qdrant port (`…/matrix/offsets` and `…/matrix/pairs`) read
 * back as rows of hits, so a test can hold each form against a model's row.
 */
import type { SparseHit } from './sparse-model.js';

export interface OffsetsAnswer {
  readonly offsets_row: readonly number[];
  readonly offsets_col: readonly number[];
  readonly scores: readonly number[];
  readonly ids: readonly unknown[];
}

export interface PairsAnswer {
  readonly pairs: readonly { readonly a: unknown; readonly b: unknown; readonly score: number }[];
}

/** The row of the sampled point `a` (at `row` of the offsets' ids), from each form. */
export function matrixRow(offsets: OffsetsAnswer, pairs: PairsAnswer, a: unknown, row: number): { fromOffsets: SparseHit[]; fromPairs: SparseHit[] } {
  const fromOffsets = offsets.offsets_row
    .map((r, i) => ({ r, i }))
    .filter(({ r }) => r === row)
    .map(({ i }) => ({ id: String(offsets.ids[offsets.offsets_col[i] as number]), score: offsets.scores[i] as number }));
  const fromPairs = pairs.pairs.filter((p) => p.a === a).map((p) => ({ id: String(p.b), score: p.score }));
  return { fromOffsets, fromPairs };
}
