/**
 * shortestFloat32 against the definition: the result reads back as the same float32, and no
 * fewer significant digits do (checked by trying every shorter precision), over seeded random
 * float32s of every magnitude and the edges (whole numbers past 2^24, subnormals, the largest).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shortestFloat32 } from '../../../src/core/float32-text.js';
import { SeededRng } from '../../../src/core/rng.js';

function digits(x: number): number {
  return x.toExponential().split('e')[0]?.replace(/[-.]/g, '').replace(/0+$/, '').length ?? 0;
}

test('shortestFloat32: the shortest decimal that reads back as the same float32', () => {
  const seed = 20261129;
  const rng = new SeededRng(seed);
  const edges = [0.15, 0.1, 1 / 3, 123456789, 16777217, 3.4e38, Math.fround(3.4028234e38), 1e-45, 1.17549435e-38, -2.5, 0, 7];
  const values = [...edges, ...Array.from({ length: 20000 }, () => (rng.next() - 0.5) * 10 ** (rng.int(83) - 45))];
  for (const raw of values) {
    const f = Math.fround(raw);
    const s = shortestFloat32(raw);
    assert.equal(Math.fround(s), f, `seed ${seed}: ${raw} → ${s} does not read back`);
    for (let p = 1; p < digits(s); p++) {
      assert.notEqual(Math.fround(Number(f.toPrecision(p))), f, `seed ${seed}: ${raw} → ${s}, but ${p} digits (${f.toPrecision(p)}) read back too`);
    }
  }
  assert.equal(shortestFloat32(0.15000000596046448), 0.15);
  assert.equal(shortestFloat32(1.406300067901611), 1.4063001);
  assert.equal(String(shortestFloat32(123456789)), '123456790');
});
