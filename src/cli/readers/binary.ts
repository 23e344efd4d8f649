/**
 * Binary vector files, read in blocks of whole records: `.fvecs` (each vector is an int32
 * dimension then that many float32, little-endian: the TEXMEX/ANN-benchmarks format), `.bvecs`
 * (the same with one unsigned byte per component, 0–255, as in SIFT1B) and NumPy
 * `.npy` (a 2-D little-endian float32 or float64 array in C order). Neither carries ids nor
 * payloads: a point's id is its index in the file (0, 1, 2, …) and its payload is empty.
 */
import { open } from 'node:fs/promises';
import { InputFileError, type SourcePoint } from './source.js';

const BLOCK_BYTES = 1 << 20;

/** Reads `count` records of `recordBytes` from `start` (count undefined: to the end), each given to `decode`. */
async function* records(
  path: string,
  label: string,
  start: number,
  recordBytes: number,
  count: number | undefined,
  noun: string,
  decode: (buffer: Buffer, at: number, location: string) => number[],
): AsyncGenerator<SourcePoint> {
  const file = await open(path, 'r');
  try {
    const size = (await file.stat()).size;
    const end = count === undefined ? size : start + count * recordBytes;
    if (end > size) throw new InputFileError(`${label}: the header promises ${count} ${noun}s (${end} bytes) but the file has ${size} bytes`);
    const buffer = Buffer.alloc(Math.max(1, Math.floor(BLOCK_BYTES / recordBytes)) * recordBytes);
    let offset = start;
    let index = 0;
    while (offset < end) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, end - offset), offset);
      if (bytesRead === 0) break;
      let at = 0;
      while (at + recordBytes <= bytesRead) {
        const location = `${label}: ${noun} ${index}`;
        const vector = decode(buffer, at, location);
        at += recordBytes;
        yield { location, point: { id: index, vector }, bytesRead: offset + at };
        index++;
      }
      if (at === 0) throw new InputFileError(`${label}: ${noun} ${index}: truncated (the file ends ${bytesRead} bytes into a ${recordBytes}-byte record)`);
      offset += at;
    }
  } finally {
    await file.close();
  }
}

function finite(values: Float32Array | Float64Array, location: string): number[] {
  const out = Array.from(values);
  const bad = out.findIndex((x) => !Number.isFinite(x));
  if (bad >= 0) throw new InputFileError(`${location}: element ${bad} is ${out[bad]}, not a finite number`);
  return out;
}

export function readFvecs(path: string, label: string, dim: number): AsyncGenerator<SourcePoint> {
  return records(path, label, 0, 4 + 4 * dim, undefined, 'vector', (buffer, at, location) => {
    const d = buffer.readInt32LE(at);
    if (d !== dim) throw new InputFileError(`${location}: dimension ${d}, expected ${dim}`);
    // Copied out of the reused block buffer (and aligned, which Float32Array needs).
    const values = new Float32Array(dim);
    for (let i = 0; i < dim; i++) values[i] = buffer.readFloatLE(at + 4 + 4 * i);
    return finite(values, location);
  });
}

export function readBvecs(path: string, label: string, dim: number): AsyncGenerator<SourcePoint> {
  return records(path, label, 0, 4 + dim, undefined, 'vector', (buffer, at, location) => {
    const d = buffer.readInt32LE(at);
    if (d !== dim) throw new InputFileError(`${location}: dimension ${d}, expected ${dim}`);
    return Array.from(buffer.subarray(at + 4, at + 4 + dim));
  });
}

interface NpyHeader {
  readonly dataStart: number;
  readonly rows: number;
  readonly columns: number;
  readonly itemBytes: 4 | 8;
}

/** The .npy header (format versions 1–3): a Python dict literal with descr, fortran_order, shape. */
async function readNpyHeader(path: string, label: string): Promise<NpyHeader> {
  const file = await open(path, 'r');
  let head: Buffer;
  try {
    head = Buffer.alloc(65536 + 12);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    head = head.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
  if (head.length < 10 || head.toString('latin1', 0, 6) !== '\x93NUMPY') throw new InputFileError(`${label}: not a NumPy .npy file (no \\x93NUMPY magic)`);
  const major = head[6] as number;
  const lengthBytes = major === 1 ? 2 : 4;
  const headerLength = major === 1 ? head.readUInt16LE(8) : head.readUInt32LE(8);
  const dataStart = 8 + lengthBytes + headerLength;
  if (head.length < dataStart) throw new InputFileError(`${label}: the .npy header is truncated`);
  const header = head.toString('latin1', 8 + lengthBytes, dataStart);
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr !== '<f4' && descr !== '<f8') throw new InputFileError(`${label}: dtype ${descr ?? '?'} is not supported; expected little-endian float32 (<f4) or float64 (<f8)`);
  if (fortran !== 'False') throw new InputFileError(`${label}: Fortran-order arrays are not supported; save with np.ascontiguousarray`);
  const dims = (shape ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  if (dims.length !== 2 || dims.some((d) => !Number.isSafeInteger(d))) throw new InputFileError(`${label}: expected a 2-D array (points × dimension), got shape (${shape ?? '?'})`);
  return { dataStart, rows: dims[0] as number, columns: dims[1] as number, itemBytes: descr === '<f4' ? 4 : 8 };
}

export async function* readNpy(path: string, label: string, dim: number): AsyncGenerator<SourcePoint> {
  const header = await readNpyHeader(path, label);
  if (header.columns !== dim) throw new InputFileError(`${label}: rows have ${header.columns} numbers, the collection ${dim}`);
  const { itemBytes } = header;
  yield* records(path, label, header.dataStart, dim * itemBytes, header.rows, 'row', (buffer, at, location) => {
    const values = itemBytes === 4 ? new Float32Array(dim) : new Float64Array(dim);
    for (let i = 0; i < dim; i++) values[i] = itemBytes === 4 ? buffer.readFloatLE(at + 4 * i) : buffer.readDoubleLE(at + 8 * i);
    return finite(values, location);
  });
}
