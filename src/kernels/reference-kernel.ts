/**
 * The plain-TypeScript kernel: the reference the WASM kernels are tested against, and the
 * fallback where WebAssembly SIMD is unavailable. Four accumulators let V8 overlap the adds.
 */
import { PerSlotKernel } from './per-slot-kernel.js';
import type { VectorArena } from './vector-arena.js';

export class ReferenceKernel extends PerSlotKernel<VectorArena> {
  protected similarityOf(slot: number): number {
    const offset = this.arena.offsetOf(slot);
    const f32 = this.arena.floats;
    const q = this.arena.queryByteOffset >> 2;
    const dim = this.arena.dim;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let i = 0;
    if (this.distance === 'Euclid') {
      for (; i + 4 <= dim; i += 4) {
        const d0 = (f32[q + i] as number) - (f32[offset + i] as number);
        const d1 = (f32[q + i + 1] as number) - (f32[offset + i + 1] as number);
        const d2 = (f32[q + i + 2] as number) - (f32[offset + i + 2] as number);
        const d3 = (f32[q + i + 3] as number) - (f32[offset + i + 3] as number);
        a0 += d0 * d0;
        a1 += d1 * d1;
        a2 += d2 * d2;
        a3 += d3 * d3;
      }
      for (; i < dim; i++) {
        const d = (f32[q + i] as number) - (f32[offset + i] as number);
        a0 += d * d;
      }
      return -(a0 + a1 + a2 + a3);
    }
    for (; i + 4 <= dim; i += 4) {
      a0 += (f32[q + i] as number) * (f32[offset + i] as number);
      a1 += (f32[q + i + 1] as number) * (f32[offset + i + 1] as number);
      a2 += (f32[q + i + 2] as number) * (f32[offset + i + 2] as number);
      a3 += (f32[q + i + 3] as number) * (f32[offset + i + 3] as number);
    }
    for (; i < dim; i++) a0 += (f32[q + i] as number) * (f32[offset + i] as number);
    return a0 + a1 + a2 + a3;
  }
}
