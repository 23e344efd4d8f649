/**
 * NumberIndex against a naive model (a plain list of (value, slot) pairs, scanned) under random
 * seeded add/remove sequences long enough to merge the delta into the run several times, with
 * duplicate values, duplicate pairs, and removals of pairs both in the run and in the delta.
 *
 * Checked after every few operations: `size` is the number of pairs; `forEachIn` visits exactly
 * the slots of the pairs in range (as a multiset); `count` is at least the number of pairs in
 * range (so at least the number of points) and at most `size`; with nothing removed it is exact.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SeededRng } from '../../../src/core/rng.js';
import { NumberIndex } from '../../../src/payload/number-index.js';
import { testSeed, withSeed } from '../../helpers/data.js';

type Pair = [value: number, slot: number];

interface Range {
  lo: number | undefined;
  loInc: boolean;
  hi: number | undefined;
  hiInc: boolean;
}

const inRange = (v: number, r: Range): boolean =>
  (r.lo === undefined || (r.loInc ? v >= r.lo : v > r.lo)) && (r.hi === undefined || (r.hiInc ? v <= r.hi : v < r.hi));

const describe = (r: Range): string => `${r.loInc ? '[' : '('}${r.lo ?? '-inf'}, ${r.hi ?? '+inf'}${r.hiInc ? ']' : ')'}`;

function visited(index: NumberIndex, r: Range): number[] {
  const out: number[] = [];
  index.forEachIn(r.lo, r.loInc, r.hi, r.hiInc, (slot) => out.push(slot));
  return out.sort((a, b) => a - b);
}

function expectedSlots(model: readonly Pair[], r: Range): number[] {
  return model
    .filter(([v]) => inRange(v, r))
    .map(([, s]) => s)
    .sort((a, b) => a - b);
}

/** Values with many duplicates, negatives, zero (both signs) and fractions. */
function randomValue(rng: SeededRng): number {
  const k = rng.int(10);
  if (k < 6) return rng.int(41) - 20;
  if (k < 8) return (rng.int(81) - 40) / 4;
  return rng.pick([0, -0, 1e21, -1e21, 0.1, 1e-9]);
}

function randomRange(rng: SeededRng, model: readonly Pair[]): Range {
  const bound = (): number | undefined => {
    const k = rng.int(6);
    if (k === 0) return undefined;
    if (k <= 2 && model.length > 0) return (rng.pick(model) as Pair)[0]; // a held value: the edge cases
    return randomValue(rng) + (rng.int(3) === 0 ? 0.5 : 0);
  };
  let lo = bound();
  let hi = bound();
  if (lo !== undefined && hi !== undefined && lo > hi && rng.int(4) !== 0) [lo, hi] = [hi, lo];
  return { lo, loInc: rng.int(2) === 0, hi, hiInc: rng.int(2) === 0 };
}

function checkRange(index: NumberIndex, model: readonly Pair[], r: Range, context: string): void {
  const want = expectedSlots(model, r);
  assert.deepEqual(visited(index, r), want, `${context}: forEachIn ${describe(r)}`);
  const count = index.count(r.lo, r.loInc, r.hi, r.hiInc);
  const points = new Set(want).size;
  assert.ok(count >= want.length, `${context}: count ${describe(r)} = ${count} < ${want.length} pairs in range`);
  assert.ok(count >= points, `${context}: count ${describe(r)} = ${count} < ${points} points in range`);
  assert.ok(count <= index.size, `${context}: count ${count} > size ${index.size}`);
}

/** Every inclusive/exclusive combination, and open ends, around one held value. */
function edgeRanges(v: number): Range[] {
  const out: Range[] = [];
  for (const loInc of [true, false])
    for (const hiInc of [true, false]) {
      out.push({ lo: v, loInc, hi: v, hiInc });
      out.push({ lo: v - 1, loInc, hi: v, hiInc });
      out.push({ lo: v, loInc, hi: v + 1, hiInc });
      out.push({ lo: v, loInc, hi: undefined, hiInc });
      out.push({ lo: undefined, loInc, hi: v, hiInc });
    }
  out.push({ lo: undefined, loInc: true, hi: undefined, hiInc: true });
  return out;
}

function runSequence(rng: SeededRng, ops: number, removeShare: number, label: string): { merges: number; removedFromRun: number } {
  const index = new NumberIndex();
  const model: Pair[] = [];
  let merges = 0;
  let removedFromRun = 0;
  let lastMerge = 0;
  for (let op = 0; op < ops; op++) {
    // `bytes` tells what happened: +16 an add to the delta, -16 a removal from it, 0 a removal
    // marked in the run; anything else is a merge (the delta folded into a new run).
    const before = index.bytes;
    let expected: number[];
    if (model.length > 0 && rng.next() < removeShare) {
      // Recent pairs are likely still in the delta, old ones in the run.
      const at = rng.next() < 0.5 ? model.length - 1 - rng.int(Math.min(model.length, 20)) : rng.int(model.length);
      const [value, slot] = model[at] as Pair;
      model.splice(at, 1);
      index.remove(value, slot);
      if (index.bytes === before) removedFromRun++;
      expected = [0, -16];
    } else {
      // Sometimes an exact duplicate pair (an array payload like [3, 3]), else a value for some slot.
      const pair: Pair = model.length > 0 && rng.int(8) === 0 ? [...(rng.pick(model) as Pair)] : [randomValue(rng), rng.int(2000)];
      model.push(pair);
      index.add(pair[0], pair[1]);
      expected = [16];
    }
    if (!expected.includes(index.bytes - before)) {
      merges++;
      lastMerge = op;
    }
    assert.equal(index.size, model.length, `${label} op ${op}: size`);
    if (op % 25 === 0 || op - lastMerge < 2) {
      for (let q = 0; q < 4; q++) checkRange(index, model, randomRange(rng, model), `${label} op ${op}`);
    }
    if (op % 250 === 0 && model.length > 0) {
      for (const r of edgeRanges((rng.pick(model) as Pair)[0])) checkRange(index, model, r, `${label} op ${op} edges`);
    }
  }
  for (const r of edgeRanges(0)) checkRange(index, model, r, `${label} end`);
  return { merges, removedFromRun };
}

test('NumberIndex agrees with a naive model under random adds and removes (several merges)', (t) => {
  const seed = testSeed(0x2a11);
  withSeed(seed, (rng) => {
    const growing = runSequence(rng, 6000, 0.25, 'growing');
    const churning = runSequence(rng, 5000, 0.42, 'churning');
    t.diagnostic(`seed ${seed}: merges ${growing.merges} + ${churning.merges}, removals in the run ${growing.removedFromRun} + ${churning.removedFromRun}`);
    assert.ok(growing.merges >= 5, `growing: only ${growing.merges} merges`);
    assert.ok(churning.merges >= 3, `churning: only ${churning.merges} merges`);
    assert.ok(growing.removedFromRun >= 50 && churning.removedFromRun >= 50, 'removals reached pairs in the run');
  });
});

test('count is exact while nothing has been removed, in the run and in the delta alike', () => {
  withSeed(testSeed(0x2a12), (rng) => {
    const index = new NumberIndex();
    const model: Pair[] = [];
    for (let i = 0; i < 1500; i++) {
      const pair: Pair = [randomValue(rng), i];
      model.push(pair);
      index.add(pair[0], pair[1]);
      if (i % 50 === 0 || i === 1499) {
        const r = randomRange(rng, model);
        assert.equal(index.count(r.lo, r.loInc, r.hi, r.hiInc), expectedSlots(model, r).length, `after ${i + 1} adds: ${describe(r)}`);
      }
    }
  });
});

test('equal values, -0 and 0, and a point with one value twice', () => {
  const index = new NumberIndex();
  index.add(0, 1);
  index.add(-0, 2);
  index.add(3, 7);
  index.add(3, 7);
  const all = (lo: number, hi: number): number[] => visited(index, { lo, loInc: true, hi, hiInc: true });
  assert.deepEqual(all(0, 0), [1, 2]);
  assert.deepEqual(all(-0, -0), [1, 2]);
  assert.deepEqual(all(3, 3), [7, 7], 'a duplicate pair is visited twice');
  assert.equal(index.count(3, true, 3, true), 2);
  assert.deepEqual(visited(index, { lo: 0, loInc: false, hi: 3, hiInc: false }), []);
  index.remove(3, 7);
  assert.deepEqual(all(3, 3), [7], 'one removal removes one pair');
  index.remove(3, 7);
  assert.deepEqual(all(3, 3), []);
  assert.equal(index.size, 2);
});
