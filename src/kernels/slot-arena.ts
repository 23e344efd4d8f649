/**
 * What every vector arena shares: one `WebAssembly.Memory` per collection, growing with the
 * number of slots (dense internal ids), with a scratch area at the front that the distance
 * kernels read and write.
 *
 *   [ query f32[dim] | ids u32[SCRATCH_BATCH] | scores f32[SCRATCH_BATCH] | slot data … ]
 *
 * A kernel call reads and writes only the scratch area and the slot data, so the JS side pays one
 * boundary crossing per candidate list, not per distance. The subclasses decide what a slot holds
 * (float32 components in VectorArena, u8 codes plus a parameter record in Sq8Arena).
 *
 * The memory is created on first use: V8 reserves address space for every wasm memory, so empty
 * collections must not hold one. It is created with maximum 65536 pages (4 GiB) because the
 * kernel module imports `(memory 1 65536 shared)` and instantiation checks that the maximum matches.
 *
 * The memory is shared (a SharedArrayBuffer underneath) so that search threads read the same
 * vectors without a copy (docs/architecture.md, "Search threads"). Each thread needs its own
 * query and score lists, so the front holds one scratch area per thread (`scratchAreas`); an
 * arena built with `attachTo` is a search thread's view of another arena's memory, using scratch
 * area `scratchIndex`, and never grows it: the owner grows, the views re-read the buffer.
 *
 *   [ scratch 0 | scratch 1 | … | slot data … ]
 */
import { KithError } from '../core/errors.js';

const PAGE_BYTES = 65536;
const MAX_PAGES = 65536; // wasm32: 4 GiB
/** Candidate slots scored per kernel call. */
export const SCRATCH_BATCH = 4096;

/** Capacity factor of each growth. */
const GROWTH = 1.125;

/**
 * Guards a kernel call: scores beyond the scratch area would overwrite slot data (the WASM
 * kernels write wherever they are told), so a caller's oversized batch must fail loudly.
 */
export function checkBatch(count: number): void {
  if (!(count >= 0 && count <= SCRATCH_BATCH)) throw new RangeError(`kernel batch of ${count}: at most ${SCRATCH_BATCH} per call`);
}

export function alignUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** Where an arena's scratch areas are, and which one this view uses. */
export interface ScratchLayout {
  /** Scratch areas at the front of the memory: one per thread that scores against it. */
  readonly scratchAreas: number;
  /** The area this arena object scores with (0: the owner's). */
  readonly scratchIndex: number;
  /** Another arena's memory to read (a search thread's view); absent: the arena owns its memory. */
  readonly memory?: WebAssembly.Memory;
}

/** Bytes of one scratch area: the query padded to a cache line, then the id and score lists. */
function scratchBytesFor(dim: number): number {
  return alignUp(alignUp(dim * 4, 64) + 2 * SCRATCH_BATCH * 4, 64);
}

export abstract class SlotArena {
  /** Byte offset of this view's query vector in the memory. */
  readonly queryByteOffset: number;
  readonly idsByteOffset: number;
  readonly scoresByteOffset: number;
  /** Byte offset of slot 0's data. */
  readonly vectorsByteOffset: number;

  private memory: WebAssembly.Memory | undefined;
  private capacity = 0;
  private f32View = new Float32Array(0);
  private u32View = new Uint32Array(0);
  private u8View = new Uint8Array(0);
  private readonly listeners: Array<() => void> = [];
  /** Bumped by every change of the scratch query (subclasses' setQueryFromSlot too). */
  protected queryChanges = 0;

  /** Scratch areas at the front of the memory. */
  readonly scratchAreas: number;
  /** False for a search thread's view of another arena's memory. */
  readonly ownsMemory: boolean;

  /**
   * @param slotBytes bytes of memory each slot needs
   * @param fixedBytes bytes after the scratch area that do not scale with slots (alignment slack)
   */
  constructor(
    readonly dim: number,
    readonly slotBytes: number,
    private readonly fixedBytes = 0,
    layout: ScratchLayout = { scratchAreas: 1, scratchIndex: 0 },
  ) {
    if (!(layout.scratchIndex >= 0 && layout.scratchIndex < layout.scratchAreas)) {
      throw new RangeError(`scratch area ${layout.scratchIndex} of ${layout.scratchAreas}`);
    }
    const scratchBytes = scratchBytesFor(dim);
    this.scratchAreas = layout.scratchAreas;
    // The query area is padded to 16 floats so the scratch lists start on a cache line.
    this.queryByteOffset = layout.scratchIndex * scratchBytes;
    this.idsByteOffset = this.queryByteOffset + alignUp(dim * 4, 64);
    this.scoresByteOffset = this.idsByteOffset + SCRATCH_BATCH * 4;
    this.vectorsByteOffset = layout.scratchAreas * scratchBytes;
    this.ownsMemory = layout.memory === undefined;
    // A view reads the buffer at its first `refreshViews` (subclass fields do not exist yet here).
    this.memory = layout.memory;
  }

  /** Slots the memory holds without growing. */
  get slotCapacity(): number {
    return this.capacity;
  }

  /** The most slots a wasm32 memory can ever hold at this dimension. */
  get maxSlots(): number {
    return Math.floor((MAX_PAGES * PAGE_BYTES - this.vectorsByteOffset - this.fixedBytes) / this.slotBytes);
  }

  /** The whole memory as floats. Invalidated by growth: re-read after `reserve`. */
  get floats(): Float32Array {
    return this.f32View;
  }

  /** The whole memory as u32 (slot lists). Invalidated by growth. */
  get uint32s(): Uint32Array {
    return this.u32View;
  }

  /** The whole memory as bytes. Invalidated by growth. */
  get bytes(): Uint8Array {
    return this.u8View;
  }

  /** The wasm memory, created on first use. The same object for the arena's lifetime: growth keeps it. */
  get wasmMemory(): WebAssembly.Memory {
    this.reserve(1);
    return this.memory as WebAssembly.Memory;
  }

  /** Runs `listener` after every growth (views over the old buffer are then detached). */
  onGrow(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Makes room for slots `[0, slots)`; throws ERR_CAPACITY beyond 4 GiB. */
  reserve(slots: number): void {
    if (slots <= this.capacity && this.memory !== undefined) return;
    if (!this.ownsMemory) {
      // A view: the owner has grown the memory (or will never hold these slots).
      this.refreshViews(this.capacity);
      if (slots > this.capacity) throw new RangeError(`a view of ${this.capacity} slots cannot hold ${slots}`);
      return;
    }
    if (slots > this.maxSlots) {
      throw new KithError(
        'ERR_CAPACITY',
        `a collection of dimension ${this.dim} holds at most ${this.maxSlots} vectors in one 4 GiB memory; use sq8 or split the collection`,
      );
    }
    const previous = this.capacity;
    // A memory declared with a maximum grows in place (V8 reserves its address space), so a small
    // geometric step wastes little: at most 1/8 of the vectors' memory is ever unused. It stays
    // geometric because an sq8 arena copies its parameter region on each growth.
    const target = Math.min(this.maxSlots, Math.max(slots, Math.ceil(this.capacity * GROWTH), 1024));
    const pages = Math.ceil((this.vectorsByteOffset + this.fixedBytes + target * this.slotBytes) / PAGE_BYTES);
    if (this.memory === undefined) {
      this.memory = new WebAssembly.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
    } else {
      const current = this.memory.buffer.byteLength / PAGE_BYTES;
      if (pages > current) this.memory.grow(pages - current);
    }
    this.refreshViews(previous);
  }

  /**
   * Re-reads the memory's buffer after growth (by this arena or, for a view, by its owner):
   * capacity and views follow the buffer's length, so owner and views agree on the layout.
   */
  refreshViews(previousCapacity: number): void {
    const memory = this.memory;
    if (memory === undefined) return;
    const buffer = memory.buffer;
    if (buffer.byteLength === this.u8View.byteLength) return;
    this.capacity = Math.min(this.maxSlots, Math.floor((buffer.byteLength - this.vectorsByteOffset - this.fixedBytes) / this.slotBytes));
    this.f32View = new Float32Array(buffer);
    this.u32View = new Uint32Array(buffer);
    this.u8View = new Uint8Array(buffer);
    this.relayout(previousCapacity);
    for (const listener of this.listeners) listener();
  }

  /** Counts changes of the scratch query, so kernels can cache what they derive from it. */
  get queryVersion(): number {
    return this.queryChanges;
  }

  /** Copies `query` into the scratch query buffer. */
  setQuery(query: Float32Array): void {
    this.reserve(1);
    this.f32View.set(query, this.queryByteOffset >> 2);
    this.queryChanges++;
    this.queryChanged();
  }

  /**
   * Makes a stored slot the query (graph construction searches for the neighbours of a point
   * already in the arena): the scratch query then equals `read(slot)`.
   */
  abstract setQueryFromSlot(slot: number): void;

  /** A copy of the vector a slot is searched as. */
  abstract read(slot: number): Float32Array;

  /** Whether two slots hold exactly the same stored vector (graph construction treats such duplicates apart). */
  abstract sameVector(a: number, b: number): boolean;

  /** Called after growth, with the views already renewed: move regions whose offsets depend on capacity. */
  protected relayout(_previousCapacity: number): void {}

  /** Called after the query scratch changed: derive whatever the kernels need from it. */
  protected queryChanged(): void {}
}
