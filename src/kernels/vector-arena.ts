/**
 * All vectors of one collection in one `WebAssembly.Memory`, addressed by dense internal id
 * (slot): slot `s` lives at float offset `vectorBase + s * dim`. No object per vector, and the
 * distance kernels can read the memory directly.
 *
 * The first bytes of the memory are a scratch area shared by the kernels: the query vector, a
 * list of candidate slots and their scores. A kernel call reads and writes only there, so the
 * JS side pays one boundary crossing per candidate list, not per distance.
 *
 * The memory is created on the first write: V8 reserves address space for every wasm memory,
 * so empty collections must not hold one.
 */
import { KithError } from '../core/errors.js';

const PAGE_BYTES = 65536;
const MAX_PAGES = 65536; // wasm32: 4 GiB
/** Candidate slots scored per kernel call. */
export const SCRATCH_BATCH = 4096;

function alignUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

export class VectorArena {
  /** Byte offset of the query vector in the memory. */
  readonly queryByteOffset = 0;
  readonly idsByteOffset: number;
  readonly scoresByteOffset: number;
  readonly vectorsByteOffset: number;

  private memory: WebAssembly.Memory | undefined;
  private capacity = 0;
  private f32View = new Float32Array(0);
  private u32View = new Uint32Array(0);
  private readonly listeners: Array<() => void> = [];

  constructor(readonly dim: number) {
    this.idsByteOffset = alignUp(dim * 4, 64);
    this.scoresByteOffset = this.idsByteOffset + SCRATCH_BATCH * 4;
    this.vectorsByteOffset = alignUp(this.scoresByteOffset + SCRATCH_BATCH * 4, 64);
  }

  /** Slots the memory holds without growing. */
  get slotCapacity(): number {
    return this.capacity;
  }

  /** The most slots a wasm32 memory can ever hold at this dimension. */
  get maxSlots(): number {
    return Math.floor((MAX_PAGES * PAGE_BYTES - this.vectorsByteOffset) / (this.dim * 4));
  }

  /** The whole memory as floats. Invalidated by growth: re-read after `reserve`. */
  get floats(): Float32Array {
    return this.f32View;
  }

  get uint32s(): Uint32Array {
    return this.u32View;
  }

  /** The wasm memory, created on first use. */
  get wasmMemory(): WebAssembly.Memory {
    this.reserve(1);
    return this.memory as WebAssembly.Memory;
  }

  /** Float offset of a slot's first component. */
  offsetOf(slot: number): number {
    return (this.vectorsByteOffset >> 2) + slot * this.dim;
  }

  /** Runs `listener` after every growth (views over the old buffer are then detached). */
  onGrow(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Makes room for slots `[0, slots)`; throws ERR_CAPACITY beyond 4 GiB. */
  reserve(slots: number): void {
    if (slots <= this.capacity && this.memory !== undefined) return;
    if (slots > this.maxSlots) {
      throw new KithError(
        'ERR_CAPACITY',
        `a collection of dimension ${this.dim} holds at most ${this.maxSlots} vectors in one 4 GiB memory; use sq8 or split the collection`,
      );
    }
    const target = Math.min(this.maxSlots, Math.max(slots, Math.ceil(this.capacity * 1.5), 1024));
    const pages = Math.ceil((this.vectorsByteOffset + target * this.dim * 4) / PAGE_BYTES);
    if (this.memory === undefined) {
      this.memory = new WebAssembly.Memory({ initial: pages, maximum: MAX_PAGES });
    } else {
      const current = this.memory.buffer.byteLength / PAGE_BYTES;
      if (pages > current) this.memory.grow(pages - current);
    }
    this.capacity = Math.floor((this.memory.buffer.byteLength - this.vectorsByteOffset) / (this.dim * 4));
    this.f32View = new Float32Array(this.memory.buffer);
    this.u32View = new Uint32Array(this.memory.buffer);
    for (const listener of this.listeners) listener();
  }

  write(slot: number, vector: Float32Array): void {
    this.f32View.set(vector, this.offsetOf(slot));
  }

  /** A copy of a slot's vector. */
  read(slot: number): Float32Array {
    const start = this.offsetOf(slot);
    return this.f32View.slice(start, start + this.dim);
  }

  /** Copies `query` into the scratch query buffer. */
  setQuery(query: Float32Array): void {
    this.reserve(1);
    this.f32View.set(query, this.queryByteOffset >> 2);
  }
}
