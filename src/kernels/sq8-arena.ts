/**
 * The sq8 vectors of one collection in one `WebAssembly.Memory`: one u8 code per component and a
 * 16-byte parameter record per slot, behind the same scratch area as VectorArena (see
 * slot-arena.ts), so the same callers (FlatIndex, HNSW) fill ids and read scores the same way.
 *
 *   [ scratch | codes: slot s at vectorsByteOffset + s * dim | params: slot s at paramsByteOffset + s * 16 ]
 *
 * A parameter record is [min, step, |v'|², 1/|v'|] as float32, where v' is the dequantized
 * vector v'[i] = min + step · code[i], step = (max − min) / 255 (quantization/sq8.ts). The
 * kernels never dequantize: they score from dot(q, code) and these four numbers.
 *
 * Codes are packed (stride = dim bytes, no padding): sq8 exists to save memory, and SIMD loads
 * need no alignment. The params region follows the codes, so it moves when the memory grows
 * (`paramsByteOffset` changes; it is 16 bytes per slot, cheap to copy at each growth step).
 */
import type { Distance } from '../core/distance.js';
import { dequantizeInto, type Sq8Codes } from '../core/sq8-codes.js';
import { normalizeInPlace } from '../core/vector-math.js';
import { grownArray, sharedArray } from '../core/shared-array.js';
import { alignUp, type ScratchLayout, SlotArena } from './slot-arena.js';

/** Bytes of one slot's parameter record. */
const SQ8_PARAM_BYTES = 16;
const PARAMS_ALIGN = 64;

export class Sq8Arena extends SlotArena {
  private paramsOffset = 0;
  /**
   * max per slot, outside the wasm memory: the kernels need only the float32 step, but
   * dequantizing exactly as the reference does takes the float64 (max − min) / 255.
   */
  /** Each slot's max, as its record stores it; shared so another thread's view can read slots too (`followMaxes`). */
  private maxes: Float32Array<ArrayBufferLike> = sharedArray(Float32Array, 0);
  private qSum = 0;
  private qNormSq = 0;

  constructor(
    dim: number,
    /** Cosine re-normalises dequantized vectors in `read` and `setQueryFromSlot`, as search/vector-input.ts does. */
    readonly distance: Distance,
    layout?: ScratchLayout,
  ) {
    super(dim, dim + SQ8_PARAM_BYTES, PARAMS_ALIGN, layout);
  }

  /** Bytes from one slot's codes to the next slot's. */
  get codeStride(): number {
    return this.dim;
  }

  /** Byte offset of slot 0's parameter record. Changes when the memory grows. */
  get paramsByteOffset(): number {
    return this.paramsOffset;
  }

  /** Byte offset of a slot's first code. */
  codesOffsetOf(slot: number): number {
    return this.vectorsByteOffset + slot * this.dim;
  }

  /** Float offset of a slot's parameter record [min, step, |v'|², 1/|v'|]. */
  paramsOffsetOf(slot: number): number {
    return (this.paramsOffset + slot * SQ8_PARAM_BYTES) >> 2;
  }

  /** sum(q) of the scratch query, float32-rounded, for dot(q, v') = min · sum(q) + step · dot(q, code). */
  get querySum(): number {
    return this.qSum;
  }

  /** |q|² of the scratch query, float32-rounded, for the Euclid expansion. */
  get queryNormSq(): number {
    return this.qNormSq;
  }

  /**
   * Stores a slot's codes and derives its parameters. |v'|² is summed over the float32
   * dequantized components in float64, exactly as core/vector-math.ts normalizeInPlace sums
   * them, so 1/|v'| is the factor the reference path (searchableVector) scales by.
   */
  writeCodes(slot: number, vector: Sq8Codes): void {
    const codes = vector.codes;
    if (codes.length !== this.dim) throw new RangeError(`sq8 codes: expected ${this.dim} bytes, got ${codes.length}`);
    this.bytes.set(codes, this.codesOffsetOf(slot));
    // Records keep min and max as float32; round here too so params and read() agree with them.
    const min = Math.fround(vector.min);
    const max = Math.fround(vector.max);
    const step = (max - min) / 255;
    let normSq = 0;
    for (let i = 0; i < codes.length; i++) {
      const x = Math.fround(min + (codes[i] as number) * step);
      normSq += x * x;
    }
    const p = this.paramsOffsetOf(slot);
    const f32 = this.floats;
    f32[p] = min;
    f32[p + 1] = step;
    f32[p + 2] = normSq;
    // A zero vector stays zero under normalisation, so it scores 0 under Cosine: factor 0.
    f32[p + 3] = normSq === 0 ? 0 : 1 / Math.sqrt(normSq);
    this.maxes[slot] = max;
  }

  /** The slot's quantization range, as its record stores it (float32). */
  minOf(slot: number): number {
    return this.floats[this.paramsOffsetOf(slot)] as number;
  }

  maxOf(slot: number): number {
    return this.maxes[slot] as number;
  }

  /** The vector a slot is searched as: dequantized, and unit length again under Cosine. */
  read(slot: number): Float32Array {
    const out = new Float32Array(this.dim);
    this.dequantizeSlot(slot, out);
    return this.distance === 'Cosine' ? normalizeInPlace(out) : out;
  }

  sameVector(a: number, b: number): boolean {
    if (this.minOf(a) !== this.minOf(b) || this.maxes[a] !== this.maxes[b]) return false;
    const bytes = this.bytes;
    const at = this.codesOffsetOf(a);
    const bt = this.codesOffsetOf(b);
    for (let i = 0; i < this.dim; i++) if (bytes[at + i] !== bytes[bt + i]) return false;
    return true;
  }

  setQueryFromSlot(slot: number): void {
    const q = this.queryByteOffset >> 2;
    const query = this.floats.subarray(q, q + this.dim);
    this.dequantizeSlot(slot, query);
    if (this.distance === 'Cosine') normalizeInPlace(query);
    this.queryChanges++;
    this.queryChanged();
  }

  /** The one dequantization (core/sq8-codes.ts), from the slot's codes in the memory. */
  private dequantizeSlot(slot: number, out: Float32Array): void {
    dequantizeInto(this.minOf(slot), this.maxOf(slot), this.bytes, this.codesOffsetOf(slot), this.dim, out);
  }

  protected override queryChanged(): void {
    const q = this.queryByteOffset >> 2;
    const f32 = this.floats;
    let sum = 0;
    let normSq = 0;
    for (let i = 0; i < this.dim; i++) {
      const x = f32[q + i] as number;
      sum += x;
      normSq += x * x;
    }
    this.qSum = Math.fround(sum);
    this.qNormSq = Math.fround(normSq);
  }

  /** The maxes another thread's view reads slots with; replaced when the arena grows. */
  get sharedMaxes(): Float32Array<ArrayBufferLike> {
    return this.maxes;
  }

  /** A view takes the owner's maxes, to read stored slots (`read`, `setQueryFromSlot`, `sameVector`) as it does. */
  followMaxes(maxes: Float32Array<ArrayBufferLike>): void {
    this.maxes = maxes;
  }

  protected override relayout(previousCapacity: number): void {
    if (this.ownsMemory) {
      this.maxes = grownArray(Float32Array, this.maxes, Math.max(this.slotCapacity, this.maxes.length));
    }
    const from = this.paramsOffset;
    const to = alignUp(this.vectorsByteOffset + this.slotCapacity * this.dim, PARAMS_ALIGN);
    this.paramsOffset = to;
    // A search thread's view only follows: the owning arena has moved the records already.
    if (previousCapacity === 0 || to === from || !this.ownsMemory) return;
    const end = from + previousCapacity * SQ8_PARAM_BYTES;
    // copyWithin is a memmove: the regions may overlap. The vacated bytes become codes of slots
    // not written yet; clear them so those slots read as zeros, not as stale parameters.
    this.bytes.copyWithin(to, from, end);
    this.bytes.fill(0, from, Math.min(end, to));
  }
}
