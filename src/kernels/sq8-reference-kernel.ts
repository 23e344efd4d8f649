/**
 * The plain-TypeScript sq8 kernel: the fallback where WebAssembly SIMD is unavailable, and the
 * algebra of distance.wat written out once more in TypeScript. It scores from the codes and the
 * per-slot record [min, step, |v'|², 1/|v'|] without dequantizing:
 *
 *   dot(q, v')    = min · sum(q) + step · dot(q, code)
 *   -|q - v'|²    = -max(0, |q|² + |v'|² - 2 · dot(q, v'))
 *   cosine(q, v') = dot(q, v') · 1/|v'|
 *
 * Both are tested against the f32 ReferenceKernel applied to the dequantized vectors.
 */
import { PerSlotKernel } from './per-slot-kernel.js';
import type { Sq8Arena } from './sq8-arena.js';

export class Sq8ReferenceKernel extends PerSlotKernel<Sq8Arena> {
  protected similarityOf(slot: number): number {
    const arena = this.arena;
    const f32 = arena.floats;
    const p = arena.paramsOffsetOf(slot);
    const dot = (f32[p] as number) * arena.querySum + (f32[p + 1] as number) * this.dotCodes(arena.codesOffsetOf(slot));
    if (this.distance === 'Dot') return dot;
    if (this.distance === 'Cosine') return dot * (f32[p + 3] as number);
    return -Math.max(0, arena.queryNormSq + (f32[p + 2] as number) - 2 * dot);
  }

  /** sum q[i] · code[i]; four accumulators let V8 overlap the adds. */
  private dotCodes(codes: number): number {
    const arena = this.arena;
    const f32 = arena.floats;
    const bytes = arena.bytes;
    const q = arena.queryByteOffset >> 2;
    const dim = arena.dim;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let i = 0;
    for (; i + 4 <= dim; i += 4) {
      a0 += (f32[q + i] as number) * (bytes[codes + i] as number);
      a1 += (f32[q + i + 1] as number) * (bytes[codes + i + 1] as number);
      a2 += (f32[q + i + 2] as number) * (bytes[codes + i + 2] as number);
      a3 += (f32[q + i + 3] as number) * (bytes[codes + i + 3] as number);
    }
    for (; i < dim; i++) a0 += (f32[q + i] as number) * (bytes[codes + i] as number);
    return a0 + a1 + a2 + a3;
  }
}
