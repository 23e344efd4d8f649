/**
 * All float32 vectors of one collection in one `WebAssembly.Memory`, addressed by dense internal
 * id (slot): slot `s` lives at float offset `offsetOf(s) = vectorsByteOffset / 4 + s * dim`. No
 * object per vector, and the distance kernels read the memory directly. The scratch area and
 * growth are SlotArena's.
 */
import { type ScratchLayout, SlotArena } from './slot-arena.js';

export { SCRATCH_BATCH } from './slot-arena.js';

export class VectorArena extends SlotArena {
  constructor(dim: number, layout?: ScratchLayout) {
    super(dim, dim * 4, 0, layout);
  }

  /** Bytes from one slot's first component to the next slot's. */
  get strideBytes(): number {
    return this.dim * 4;
  }

  /** Float offset of a slot's first component. */
  offsetOf(slot: number): number {
    return (this.vectorsByteOffset >> 2) + slot * this.dim;
  }

  write(slot: number, vector: Float32Array): void {
    this.floats.set(vector, this.offsetOf(slot));
  }

  /** A copy of a slot's vector. */
  read(slot: number): Float32Array {
    const start = this.offsetOf(slot);
    return this.floats.slice(start, start + this.dim);
  }

  sameVector(a: number, b: number): boolean {
    const floats = this.floats;
    const at = this.offsetOf(a);
    const bt = this.offsetOf(b);
    for (let i = 0; i < this.dim; i++) if (floats[at + i] !== floats[bt + i]) return false;
    return true;
  }

  setQueryFromSlot(slot: number): void {
    const start = this.offsetOf(slot);
    this.floats.copyWithin(this.queryByteOffset >> 2, start, start + this.dim);
    this.queryChanges++;
    this.queryChanged();
  }
}
