/**
 * Typed arrays other threads read and write (search and insert threads), over growable
 * SharedArrayBuffers: growing one grows its buffer in place and returns a new view of the same
 * memory. Nothing is copied, and a thread still holding the old view keeps no second copy alive:
 * before this, every growth left the previous arrays to each thread's garbage collector, which
 * held on to several generations of a graph (tens of MiB at 100k points).
 *
 * The views are fixed-length (a view that tracks its buffer's length is several times slower in
 * hot loops in Node 20). Each buffer reserves address space up to MAX_BYTES, not memory: pages are
 * committed as it grows. An array that must outgrow that reservation is copied into a new one.
 */

/** The most a growable SharedArrayBuffer may reserve in Node 20 (4 GiB). */
const MAX_BYTES = 2 ** 32;

export type SharedView = Int8Array | Uint8Array | Int32Array | Float32Array | Float64Array;

interface SharedViewConstructor<T extends SharedView> {
  new (buffer: SharedArrayBuffer, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/** A zeroed array of `length` over a growable SharedArrayBuffer. */
export function sharedArray<T extends SharedView>(type: SharedViewConstructor<T>, length: number): T {
  const bytes = length * type.BYTES_PER_ELEMENT;
  const buffer = bytes > MAX_BYTES ? new SharedArrayBuffer(bytes) : new SharedArrayBuffer(bytes, { maxByteLength: MAX_BYTES });
  return new type(buffer, 0, length);
}

/**
 * `view` grown to `length` (≥ its length): the same memory, longer, when its buffer can grow that
 * far; else a new growable array holding a copy. New elements are zero.
 */
export function grownArray<T extends SharedView>(type: SharedViewConstructor<T>, view: T, length: number): T {
  const bytes = length * type.BYTES_PER_ELEMENT;
  const buffer = view.buffer;
  if (buffer instanceof SharedArrayBuffer && buffer.growable && view.byteOffset === 0 && bytes <= buffer.maxByteLength) {
    if (bytes > buffer.byteLength) buffer.grow(bytes);
    return new type(buffer, 0, length);
  }
  const grown = sharedArray(type, length);
  (grown as { set(source: ArrayLike<number>): void }).set(view);
  return grown;
}
