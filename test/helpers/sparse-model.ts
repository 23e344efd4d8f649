/**
 * A plain model of sparse search for tests: every point's sparse vector kept as given, scored by
 * brute force as Qdrant defines it (index/sparse/sparse-index.ts says where from): a hit shares at
 * least one index with the query; its score is Σ query weight × idf × stored weight, idf =
 * ln(1 + (N − df + 0.5) / (df + 0.5)) over the non-empty vectors (N) and those holding the
 * index (df); ties by id. Also nasty sparse vectors to feed it.
 */
import type { SeededRng } from '../../src/core/rng.js';

export interface SparseJson {
  indices: number[];
  values: number[];
}

export interface SparseHit {
  id: string;
  score: number;
}

/** Scores every stored vector against the query; `accept` filters ids. */
export function sparseModelSearch(
  stored: ReadonlyMap<string, SparseJson>,
  query: SparseJson,
  options: { idf: boolean; limit: number; accept?: (id: string) => boolean },
): SparseHit[] {
  const nonEmpty = [...stored.values()].filter((v) => v.indices.length > 0);
  const idfOf = (index: number): number => {
    if (!options.idf) return 1;
    const n = nonEmpty.length;
    const df = nonEmpty.filter((v) => v.indices.includes(index)).length;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  };
  const weights = new Map<number, number>();
  query.indices.forEach((index, i) => {
    weights.set(index, (query.values[i] as number) * idfOf(index));
  });
  const hits: SparseHit[] = [];
  for (const [id, v] of stored) {
    if (options.accept !== undefined && !options.accept(id)) continue;
    let shared = false;
    let score = 0;
    v.indices.forEach((index, i) => {
      const w = weights.get(index);
      if (w === undefined) return;
      shared = true;
      score += w * (v.values[i] as number);
    });
    if (shared) hits.push({ id, score });
  }
  hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return hits.slice(0, options.limit);
}

/**
 * Checks hits against the model's: same ids in the same order where scores differ by more than
 * rounding, and scores equal within `tolerance` (relative); points tied within rounding may come
 * in either order.
 */
export function sameSparseHits(actual: readonly SparseHit[], expected: readonly SparseHit[], context: string, tolerance = 1e-4): void {
  if (actual.length !== expected.length)
    throw new Error(`${context}: ${actual.length} hits, the model has ${expected.length}: ${JSON.stringify({ actual, expected })}`);
  const close = (a: number, b: number): boolean => Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));
  for (let i = 0; i < actual.length; i++) {
    const [a, e] = [actual[i] as SparseHit, expected[i] as SparseHit];
    if (!close(a.score, e.score)) throw new Error(`${context}: position ${i} scores ${a.score}, the model ${e.score}: ${JSON.stringify({ actual, expected })}`);
  }
  // Ids: the same set per run of (nearly) equal scores.
  let from = 0;
  while (from < actual.length) {
    let to = from + 1;
    while (to < actual.length && close((expected[to] as SparseHit).score, (expected[from] as SparseHit).score)) to++;
    const ids = (list: readonly SparseHit[]): string =>
      list
        .slice(from, to)
        .map((h) => h.id)
        .sort()
        .join(',');
    if (ids(actual) !== ids(expected) && to < actual.length)
      throw new Error(`${context}: positions ${from}–${to - 1} hold ${ids(actual)}, the model ${ids(expected)}`);
    from = to;
  }
}

/** A sparse vector users send: empty, one index, duplicate-free random indices (small, or near 2^32), negative and zero values. */
export function nastySparse(rng: SeededRng, vocabulary = 40): SparseJson {
  const roll = rng.int(10);
  if (roll === 0) return { indices: [], values: [] };
  const count = roll === 1 ? 1 : 1 + rng.int(8);
  const indices = new Set<number>();
  while (indices.size < count) indices.add(rng.int(12) === 0 ? 4294967295 - rng.int(3) : rng.int(vocabulary));
  const list = [...indices];
  // Unsorted on purpose: the engine sorts.
  if (rng.int(2) === 0) list.reverse();
  const values = list.map(() => {
    const kind = rng.int(8);
    if (kind === 0) return 0;
    if (kind === 1) return -(1 + rng.int(3));
    return Math.fround(0.25 * (1 + rng.int(12)));
  });
  return { indices: list, values };
}

/** A named dense vector as the model keeps it: its rows as given. */
export type ModelRows = number[][];

/**
 * Brute-force named-vector search: Euclid distance of one row (ascending), or the dot product /
 * cosine summed over query rows of the best stored row (max_sim; descending); ties by id.
 */
export function namedModelSearch(
  stored: ReadonlyMap<string, ModelRows>,
  query: ModelRows,
  options: { distance: 'Euclid' | 'Dot' | 'Cosine'; limit: number; accept?: (id: string) => boolean },
): SparseHit[] {
  const unit = (v: number[]): number[] => {
    const n = Math.hypot(...v);
    return n === 0 ? v : v.map((x) => x / n);
  };
  const prep = (rows: ModelRows): ModelRows => (options.distance === 'Cosine' ? rows.map(unit) : rows).map((r) => r.map(Math.fround));
  const q = prep(query);
  const hits: SparseHit[] = [];
  for (const [id, rows] of stored) {
    if (options.accept !== undefined && !options.accept(id)) continue;
    const d = prep(rows);
    if (options.distance === 'Euclid') {
      hits.push({ id, score: Math.sqrt((q[0] as number[]).reduce((s, x, i) => s + (x - ((d[0] as number[])[i] as number)) ** 2, 0)) });
      continue;
    }
    let score = 0;
    for (const qr of q) score += Math.max(...d.map((dr) => qr.reduce((s, x, i) => s + x * (dr[i] as number), 0)));
    hits.push({ id, score });
  }
  const sign = options.distance === 'Euclid' ? 1 : -1;
  hits.sort((a, b) => sign * (a.score - b.score) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return hits.slice(0, options.limit);
}

/** A sparse vector as kith stores and returns it: indices ascending, values as float32. */
export function storedSparse(v: SparseJson): SparseJson {
  const order = v.indices.map((_, i) => i).sort((a, b) => (v.indices[a] as number) - (v.indices[b] as number));
  return { indices: order.map((i) => v.indices[i] as number), values: order.map((i) => Math.fround(v.values[i] as number)) };
}
