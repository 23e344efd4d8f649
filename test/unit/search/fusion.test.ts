/**
 * Fusion (search/fusion.ts) against the formulas written out plainly (Qdrant's own test helpers
 * compute them so): random lists with shared and repeated ids, ties, weights of zero, single hits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../../src/core/rng.js';
import { DEFAULT_RRF_K, distributionFusion, type RankedHit, reciprocalRankFusion } from '../../../src/search/fusion.js';

function randomLists(rng: SeededRng): RankedHit[][] {
  return Array.from({ length: 1 + rng.int(4) }, () => {
    const ids = new Set<string>();
    const size = rng.int(8);
    while (ids.size < size) ids.add(`p${rng.int(12)}`);
    // Scores best first, with ties.
    let score = rng.next() * 10;
    return [...ids].map((id) => {
      if (rng.next() < 0.7) score -= rng.int(3) * 0.25;
      return { id, score };
    });
  });
}

function inOrder(fused: Map<string, number>): RankedHit[] {
  return [...fused].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function plainRrf(lists: RankedHit[][], k: number, weights?: number[]): RankedHit[] {
  const fused = new Map<string, number>();
  for (let l = 0; l < lists.length; l++) {
    const w = weights === undefined ? 1 : (weights[l] as number);
    for (let i = 0; i < (lists[l] as RankedHit[]).length; i++) {
      const id = (lists[l] as RankedHit[])[i]?.id as string;
      const add = w <= 0 ? 0 : 1 / ((i + 1) / w + k - 1);
      if (w > 0 || fused.has(id)) fused.set(id, (fused.get(id) ?? 0) + add);
    }
  }
  return inOrder(fused);
}

function plainDbsf(lists: RankedHit[][]): RankedHit[] {
  const fused = new Map<string, number>();
  for (const list of lists) {
    const n = list.length;
    const mean = list.reduce((s, h) => s + h.score, 0) / n;
    const sd = Math.sqrt(list.reduce((s, h) => s + (h.score - mean) ** 2, 0) / (n - 1));
    const [lo, hi] = [mean - 3 * sd, mean + 3 * sd];
    for (const h of list) {
      const norm = n === 1 || lo === hi ? 0.5 : (h.score - lo) / (hi - lo);
      fused.set(h.id, (fused.get(h.id) ?? 0) + norm);
    }
  }
  return inOrder(fused);
}

function assertClose(got: RankedHit[], want: RankedHit[], what: string): void {
  assert.deepEqual(
    got.map((h) => h.id),
    want.map((h) => h.id),
    what,
  );
  got.forEach((h, i) => {
    assert.ok(Math.abs(h.score - (want[i] as RankedHit).score) < 1e-12, `${what}: ${h.id} ${h.score} vs ${(want[i] as RankedHit).score}`);
  });
}

test('reciprocal rank fusion, plain and weighted, equals the formula on random lists', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const rng = new SeededRng(seed);
    const lists = randomLists(rng);
    assertClose(reciprocalRankFusion(lists), plainRrf(lists, DEFAULT_RRF_K), `seed ${seed}, k 2`);
    const k = 1 + rng.int(60);
    const weights = lists.map(() => (rng.next() < 0.2 ? 0 : rng.next() * 5));
    assertClose(reciprocalRankFusion(lists, k, weights), plainRrf(lists, k, weights), `seed ${seed}, k ${k}, weights ${weights}`);
  }
  // The classic numbers: first places of two lists, k 2.
  assert.deepEqual(
    reciprocalRankFusion([
      [
        { id: 'a', score: 9 },
        { id: 'b', score: 1 },
      ],
      [{ id: 'b', score: 5 }],
    ]),
    [
      { id: 'b', score: 1 / 3 + 1 / 2 },
      { id: 'a', score: 1 / 2 },
    ],
  );
});

test('distribution-based score fusion equals the formula; single hits and equal scores take 0.5; distances are turned around', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const lists = randomLists(new SeededRng(seed));
    assertClose(distributionFusion(lists), plainDbsf(lists), `seed ${seed}`);
  }
  assert.deepEqual(distributionFusion([[{ id: 'x', score: 3 }], []]), [{ id: 'x', score: 0.5 }]);
  assert.deepEqual(
    distributionFusion([
      [
        { id: 'x', score: 1 },
        { id: 'y', score: 1 },
      ],
    ]).map((h) => h.score),
    [0.5, 0.5],
  );
  // Distances, best (smallest) first: the nearest normalises highest.
  const near = distributionFusion(
    [
      [
        { id: 'near', score: 0.1 },
        { id: 'mid', score: 0.5 },
        { id: 'far', score: 2 },
      ],
    ],
    true,
  );
  assert.deepEqual(
    near.map((h) => h.id),
    ['near', 'mid', 'far'],
  );
});
