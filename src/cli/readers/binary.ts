/**
 * Binary vector files, read in blocks of whole records: `.fvecs` (each vector is an int32
 * dimension then that many float32, little-endian: the TEXMEX/ANN-benchmarks format), `.bvecs`
 * (the same with one unsigned byte per component, 0–255, as in SIFT1B) and NumPy
 * `.npy` (a 2-D little-endian float32 or float64 array in C order, npy-header.ts). Neither carries ids nor
 * payloads: a point's id is its index in the file (0, 1, 2, …) and its payload is empty.
 */
import { open } from 'node:fs/promises';
import { NPY_HEAD_BYTES, type NpyHeader, parseNpyHeader } from './npy-header.js';
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

/** The .npy header, checked against the file's size (npy-header.ts). */
async function readNpyHeader(path: string, label: string): Promise<NpyHeader> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(NPY_HEAD_BYTES);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return parseNpyHeader(head.subarray(0, bytesRead), (await file.stat()).size, label);
  } finally {
    await file.close();
  }
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
