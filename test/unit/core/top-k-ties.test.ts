import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../../src/core/rng.js';
import { TopK } from '../../../src/core/top-k.js';
import { testSeed } from '../../helpers/data.js';

/**
 * A TopK without ids (a search thread's) keeps every entry tied with the k-th similarity, so that
 * the caller's TopK with ids, run over what it kept, picks exactly what a TopK with ids over all
 * entries picks.
 */
test('TopK without ids keeps the boundary ties: re-ranking with ids equals ranking everything with ids', () => {
  const seed = testSeed(4242);
  const rng = new SeededRng(seed);
  for (let run = 0; run < 500; run++) {
    const n = rng.int(200);
    const k = 1 + rng.int(20);
    // Few distinct values: most entries tie with others, including at the k-th place.
    const distinct = 1 + rng.int(6);
    const sims = Array.from({ length: n }, () => rng.int(distinct) / 2);
    const ids = Array.from({ length: n }, (_, slot) => `id-${(slot * 7919) % 1009}-${slot}`);
    const idOf = (slot: number): string => ids[slot] as string;

    const everything = new TopK(k, idOf);
    const withoutIds = new TopK(k, null);
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    for (const slot of order) {
      everything.offer(slot, sims[slot] as number);
      withoutIds.offer(slot, sims[slot] as number);
    }
    const kept = withoutIds.drainSorted();
    const reranked = new TopK(k, idOf);
    for (let i = 0; i < kept.slots.length; i++) reranked.offer(kept.slots[i] as number, kept.sims[i] as number);
    const expected = everything.drainSorted();
    const got = reranked.drainSorted();
    assert.deepEqual(Array.from(got.slots), Array.from(expected.slots), `seed ${seed} run ${run}: n ${n} k ${k}`);
    assert.deepEqual(Array.from(got.sims), Array.from(expected.sims), `seed ${seed} run ${run}`);
    for (let i = 1; i < kept.sims.length; i++) assert.ok((kept.sims[i] as number) <= (kept.sims[i - 1] as number), `seed ${seed}: best first`);
    if (n >= k) assert.ok(kept.slots.length >= k, `seed ${seed}: at least k kept`);
  }
});
