/**
 * Fusing ranked lists of hits into one (Qdrant's `fusion`): reciprocal rank fusion, optionally
 * weighted, and distribution-based score fusion. Pure functions over (id, score) lists, each list
 * best first; the fused list is sorted by fused score, higher first, ties by id (`compareHits`, the
 * order of every answer), so that equal answers are equal across runs and nodes.
 */
import { compareHits } from '../core/top-k.js';

export interface RankedHit {
  readonly id: string;
  readonly score: number;
}

/** Qdrant's default `k` of reciprocal rank fusion (it keeps the first places from dominating). */
export const DEFAULT_RRF_K = 2;

/**
 * Reciprocal rank fusion: a hit at position p (0-based) of a list of weight w adds
 * 1 / ((p + 1) / w + k − 1) — with w = 1, the classic 1 / (p + k). A weight of 0 or less adds
 * nothing. The lists' own scores are not read, only their order.
 */
export function reciprocalRankFusion(lists: readonly (readonly RankedHit[])[], k = DEFAULT_RRF_K, weights?: readonly number[]): RankedHit[] {
  const fused = new Map<string, number>();
  lists.forEach((list, i) => {
    const weight = weights?.[i] ?? 1;
    if (weight <= 0) return;
    list.forEach((hit, position) => {
      fused.set(hit.id, (fused.get(hit.id) ?? 0) + 1 / ((position + 1) / weight + k - 1));
    });
  });
  return sorted(fused);
}

/**
 * Distribution-based score fusion: each list's scores are mapped onto [0, 1] between its mean
 * minus and plus three (sample) standard deviations — a lone hit, or a list of equal scores,
 * scores 0.5 — then summed per id. `smallerBetter` lists (Euclid distances) are negated first, so
 * that a better hit always normalises higher.
 */
export function distributionFusion(lists: readonly (readonly RankedHit[])[], smallerBetter: boolean | readonly boolean[] = false): RankedHit[] {
  const fused = new Map<string, number>();
  for (const [l, list] of lists.entries()) {
    // Per list: a sparse prefetch's dot products rank larger first even in a Euclid collection.
    const turned = typeof smallerBetter === 'boolean' ? smallerBetter : smallerBetter[l] === true;
    const scores = list.map((hit) => (turned ? -hit.score : hit.score));
    const normalised = normalise(scores);
    list.forEach((hit, i) => {
      fused.set(hit.id, (fused.get(hit.id) ?? 0) + (normalised[i] as number));
    });
  }
  return sorted(fused);
}

function normalise(scores: readonly number[]): number[] {
  if (scores.length === 0) return [];
  if (scores.length === 1) return [0.5];
  const mean = scores.reduce((sum, s) => sum + s, 0) / scores.length;
  const deviation = Math.sqrt(scores.reduce((sum, s) => sum + (s - mean) ** 2, 0) / (scores.length - 1));
  const [low, high] = [mean - 3 * deviation, mean + 3 * deviation];
  if (!(high > low)) return scores.map(() => 0.5);
  return scores.map((s) => (s - low) / (high - low));
}

function sorted(fused: ReadonlyMap<string, number>): RankedHit[] {
  return [...fused].map(([id, score]) => ({ id, score })).sort((a, b) => compareHits(a, b, false));
}
