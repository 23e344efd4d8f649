/**
 * Properties of the distance kernels on random data: the WASM kernels agree with the plain
 * TypeScript ones, and the sq8 kernels with the f32 reference applied to the dequantized vectors
 * (what search/vector-input.ts searchableVector produces), for dims 1..300 plus 784, random
 * slot lists with repeats, and across memory growth.
 *
 * Tolerance. The reference accumulates in float64 (JS numbers); WASM accumulates in float32, 16
 * lanes in parallel, so its error is at most about (dim/16 + 4)·2^-24 ≈ 3·10^-6 of Σ|qᵢ·vᵢ| at
 * d = 784 (for Euclid, of Σ(qᵢ − vᵢ)², every term being positive). A kernel bug (a lost tail, a
 * wrong lane, a stale parameter) moves a score by a whole term, on average 1/dim ≥ 1.3·10^-3 of
 * that sum. 1e-4 of the sum sits between the two: 30× the worst rounding, 10× below one term.
 * Relative to the sum of magnitudes, not to the score, because a dot product may cancel to ~0.
 *
 * Replay with KITH_SEED=<seed> (the seed is in the test name and in fast-check's report).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Distance } from '../../src/core/distance.js';
import { SeededRng } from '../../src/core/rng.js';
import { normalizeInPlace } from '../../src/core/vector-math.js';
import { ReferenceKernel } from '../../src/kernels/reference-kernel.js';
import { Sq8Arena } from '../../src/kernels/sq8-arena.js';
import { Sq8ReferenceKernel } from '../../src/kernels/sq8-reference-kernel.js';
import { Sq8WasmKernel } from '../../src/kernels/sq8-wasm-kernel.js';
import { VectorArena } from '../../src/kernels/vector-arena.js';
import { WasmKernel } from '../../src/kernels/wasm-kernel.js';
import { quantizeSq8 } from '../../src/quantization/sq8.js';
import { testSeed } from '../helpers/data.js';
import { scoreIds, scoreRange } from '../unit/kernels/harness.js';

const SEED = testSeed(20261121);
const RUNS = 300;
const TOLERANCE = 1e-4;
const DIMS = [1, 3, 4, 7, 8, 15, 16, 17, 25, 128, 784];

interface Case {
  readonly distance: Distance;
  readonly dim: number;
  readonly n: number;
  /** Seeds the vector data, so shrinking works on a few numbers rather than on 784·n floats. */
  readonly dataSeed: number;
  readonly slots: number[];
  readonly start: number;
  readonly count: number;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    distance: fc.constantFrom<Distance>('Dot', 'Cosine', 'Euclid'),
    dim: fc.oneof(fc.constantFrom(...DIMS), fc.integer({ min: 1, max: 300 })),
    n: fc.integer({ min: 1, max: 40 }),
    dataSeed: fc.nat(),
    rawSlots: fc.array(fc.nat(), { maxLength: 300, size: 'max' }),
    rawStart: fc.nat(),
    rawCount: fc.nat(),
  })
  .map(({ rawSlots, rawStart, rawCount, ...c }) => {
    const start = rawStart % c.n;
    return { ...c, slots: rawSlots.map((s) => s % c.n), start, count: rawCount % (c.n - start + 1) };
  });

/**
 * Vectors of mixed scale: mostly N(0, 1), some scaled by 1e3 or 1e-3, some zero, some constant
 * (an sq8 range of zero). Unit length under Cosine, as collections store them.
 */
function vectors(c: Case): Float32Array[] {
  const rng = new SeededRng(c.dataSeed);
  return Array.from({ length: c.n + 1 }, () => {
    const kind = rng.int(10);
    const scale = kind === 0 ? 1e3 : kind === 1 ? 1e-3 : 1;
    const constant = rng.gaussian();
    const v = Float32Array.from({ length: c.dim }, () => (kind === 2 ? 0 : kind === 3 ? constant : rng.gaussian() * scale));
    return c.distance === 'Cosine' ? normalizeInPlace(v) : v;
  });
}

/** Σ|qᵢ·vᵢ| for dot products, Σ(qᵢ − vᵢ)² for Euclid: what the rounding error is relative to. */
function magnitude(distance: Distance, q: Float32Array, v: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < q.length; i++) {
    const a = q[i] as number;
    const b = v[i] as number;
    sum += distance === 'Euclid' ? (a - b) ** 2 : Math.abs(a * b);
  }
  return sum;
}

function assertClose(got: readonly number[], want: readonly number[], scale: readonly number[], what: string): void {
  assert.equal(got.length, want.length, what);
  for (let i = 0; i < want.length; i++) {
    const diff = Math.abs((got[i] as number) - (want[i] as number));
    const bound = TOLERANCE * (scale[i] as number) + 1e-30;
    assert.ok(diff <= bound, `${what}[${i}]: ${got[i]} vs ${want[i]}, |diff| ${diff} > ${bound}`);
  }
}

test(`f32: WASM equals the reference; scoreRange equals scoreIds (seed ${SEED}, ${RUNS} runs)`, () => {
  fc.assert(
    fc.property(caseArb, (c) => {
      const data = vectors(c);
      const arena = new VectorArena(c.dim);
      arena.reserve(c.n);
      for (let s = 0; s < c.n; s++) arena.write(s, data[s] as Float32Array);
      const query = data[c.n] as Float32Array;
      arena.setQuery(query);
      const wasm = new WasmKernel(arena, c.distance);
      const reference = new ReferenceKernel(arena, c.distance);
      const got = scoreIds(arena, wasm, c.slots);
      const scale = c.slots.map((s) => magnitude(c.distance, query, data[s] as Float32Array));
      assertClose(got, scoreIds(arena, reference, c.slots), scale, 'wasm vs reference');
      const range = Array.from({ length: c.count }, (_, i) => c.start + i);
      // The same arithmetic in the same order: equal bit for bit, not just close.
      assert.deepEqual(scoreRange(arena, wasm, c.start, c.count), scoreIds(arena, wasm, range), 'wasm range vs ids');
      assert.deepEqual(scoreRange(arena, reference, c.start, c.count), scoreIds(arena, reference, range), 'reference range vs ids');
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test(`sq8: WASM and TS kernels equal the f32 reference on the dequantized vectors (seed ${SEED + 1}, ${RUNS} runs)`, () => {
  fc.assert(
    fc.property(caseArb, (c) => {
      const data = vectors(c);
      const arena = new Sq8Arena(c.dim, c.distance);
      arena.reserve(c.n);
      for (let s = 0; s < c.n; s++) arena.writeCodes(s, quantizeSq8(data[s] as Float32Array));
      const query = data[c.n] as Float32Array;
      arena.setQuery(query);
      // The oracle: what a collection searches today, the dequantized (re-normalised) vectors in f32.
      const dequantized = new VectorArena(c.dim);
      dequantized.reserve(c.n);
      for (let s = 0; s < c.n; s++) dequantized.write(s, arena.read(s));
      dequantized.setQuery(query);
      const want = scoreIds(dequantized, new ReferenceKernel(dequantized, c.distance), c.slots);
      const wasm = new Sq8WasmKernel(arena, c.distance);
      const ts = new Sq8ReferenceKernel(arena, c.distance);
      const scale = c.slots.map((s) => sq8Magnitude(arena, s, query));
      assertClose(scoreIds(arena, wasm, c.slots), want, scale, 'sq8 wasm vs dequantized');
      assertClose(scoreIds(arena, ts, c.slots), want, scale, 'sq8 ts vs dequantized');
      const range = Array.from({ length: c.count }, (_, i) => c.start + i);
      assert.deepEqual(scoreRange(arena, wasm, c.start, c.count), scoreIds(arena, wasm, range), 'sq8 wasm range vs ids');
      assert.deepEqual(scoreRange(arena, ts, c.start, c.count), scoreIds(arena, ts, range), 'sq8 ts range vs ids');
    }),
    { seed: SEED + 1, numRuns: RUNS },
  );
});

/**
 * What the sq8 error is relative to: the algebraic form sums min·Σq and step·Σqᵢ·codeᵢ, each up
 * to Σ|qᵢ|·(|min| + step·codeᵢ); Euclid adds |q|² + |v′|², which cancel when q is near v′;
 * Cosine multiplies by 1/|v′|.
 */
function sq8Magnitude(arena: Sq8Arena, slot: number, q: Float32Array): number {
  const f32 = arena.floats;
  const p = arena.paramsOffsetOf(slot);
  const [min, step, normSq, invNorm] = [0, 1, 2, 3].map((k) => f32[p + k] as number) as [number, number, number, number];
  const codes = arena.bytes;
  const c = arena.codesOffsetOf(slot);
  let dot = 0;
  for (let i = 0; i < q.length; i++) dot += Math.abs(q[i] as number) * (Math.abs(min) + step * (codes[c + i] as number));
  if (arena.distance === 'Cosine') return dot * invNorm;
  if (arena.distance === 'Euclid') return 2 * dot + arena.queryNormSq + normSq;
  return dot;
}

test(`growth: scores of old slots do not change and new slots score like the reference (seed ${SEED + 2})`, () => {
  fc.assert(
    fc.property(caseArb, fc.integer({ min: 1, max: 4 }), (c, factor) => {
      const data = vectors(c);
      const f32 = new VectorArena(c.dim);
      const sq8 = new Sq8Arena(c.dim, c.distance);
      const query = data[c.n] as Float32Array;
      for (const arena of [f32, sq8]) arena.reserve(c.n);
      for (let s = 0; s < c.n; s++) {
        f32.write(s, data[s] as Float32Array);
        sq8.writeCodes(s, quantizeSq8(data[s] as Float32Array));
      }
      f32.setQuery(query);
      sq8.setQuery(query);
      const kernels = [
        { arena: f32, wasm: new WasmKernel(f32, c.distance), reference: new ReferenceKernel(f32, c.distance) },
        { arena: sq8, wasm: new Sq8WasmKernel(sq8, c.distance), reference: new Sq8ReferenceKernel(sq8, c.distance) },
      ];
      const before = kernels.map((k) => scoreIds(k.arena, k.wasm, c.slots));
      // Grow past the current capacity and write copies of the data at the far end.
      const far = f32.slotCapacity * factor;
      const farSq8 = sq8.slotCapacity * factor;
      f32.reserve(far + c.n);
      sq8.reserve(farSq8 + c.n);
      for (let s = 0; s < c.n; s++) {
        f32.write(far + s, data[s] as Float32Array);
        sq8.writeCodes(farSq8 + s, quantizeSq8(data[s] as Float32Array));
      }
      kernels.forEach((k, i) => {
        const offset = i === 0 ? far : farSq8;
        const farSlots = c.slots.map((s) => s + offset);
        assert.deepEqual(scoreIds(k.arena, k.wasm, c.slots), before[i], `old slots, arena ${i}`);
        assert.deepEqual(scoreIds(k.arena, k.wasm, farSlots), before[i], `copies beyond the old capacity, arena ${i}`);
        const ref = scoreIds(k.arena, k.reference, farSlots);
        const scale = i === 0 ? c.slots.map((s) => magnitude(c.distance, query, data[s] as Float32Array)) : farSlots.map((s) => sq8Magnitude(sq8, s, query));
        assertClose(before[i] as number[], ref, scale, `wasm vs reference after growth, arena ${i}`);
      });
    }),
    { seed: SEED + 2, numRuns: 60 },
  );
});
