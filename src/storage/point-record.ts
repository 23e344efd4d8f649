/**
 * The bytes of one stored point (the value under its point key, point-key.ts).
 * All integers little-endian; the byte table is in docs/storage.md.
 *
 * | offset | size      | field                                         |
 * |--------|-----------|-----------------------------------------------|
 * | 0      | 1         | magic 0x4B ("K")                              |
 * | 1      | 1         | record format version (1, 2 or 3, below)      |
 * | 2      | 1         | vector encoding: 0 = f32, 1 = sq8             |
 * | 3      | 1         | reserved, 0                                   |
 * | 4      | 4         | dimension (u32)                               |
 * | 8      | 8         | point version (u64, nanoseconds)              |
 * | 16     | 4·dim     | f32: the components                           |
 * | 16     | 8 + dim   | sq8: min (f32), max (f32), one code per dim   |
 * | …      | 4         | formats 2, 3: sparse block length (u32)       |
 * | …      | that      | formats 2, 3: the sparse block (below)        |
 * | …      | 4         | format 3: named block length (u32)            |
 * | …      | that      | format 3: the named block (below)             |
 * | …      | rest      | payload, UTF-8 JSON object                    |
 *
 * The sparse block: u16 count, then per named sparse vector u16 name length, the name (UTF-8),
 * u32 nnz, nnz u32 indices (strictly ascending), nnz f32 values. The named block: u16 count, then
 * per named dense vector u16 name length, the name, u32 rows, u32 size, rows × size f32. A point
 * with neither is written in format 1, with sparse vectors only in format 2, so collections
 * without them keep their bytes.
 */
import { KithError } from '../core/errors.js';
import type { Sq8Codes } from '../core/sq8-codes.js';

const MAGIC = 0x4b;
const FORMAT = 1;
const FORMAT_SPARSE = 2;
const FORMAT_NAMED = 3;
const HEADER_BYTES = 16;

/** How a record holds its vector; the byte at offset 2. */
export type StoredVector = { readonly encoding: 'f32'; readonly values: Float32Array } | ({ readonly encoding: 'sq8' } & Sq8Codes);

const ENCODING_BYTE = { f32: 0, sq8: 1 } as const;

/** A sparse vector as stored: indices strictly ascending, one value each (index/sparse/sparse-vector.ts checks them). */
export interface StoredSparseVector {
  readonly indices: Uint32Array;
  readonly values: Float32Array;
}

/** A point's sparse vectors by name; absent names are vectors the point does not have. */
export type StoredSparseVectors = ReadonlyMap<string, StoredSparseVector>;

/** A named dense vector as stored: `rows` rows (one, or a multi-vector's) of `data.length / rows` floats. */
export interface StoredNamedVector {
  readonly rows: number;
  readonly data: Float32Array;
}

export type StoredNamedVectors = ReadonlyMap<string, StoredNamedVector>;

export interface PointRecord {
  readonly version: bigint;
  readonly vector: StoredVector;
  /** The payload as JSON text (already validated). */
  readonly payloadJson: string;
  /** Named sparse vectors; absent or empty in collections without them. */
  readonly sparse?: StoredSparseVectors | undefined;
  /** Named dense vectors beside the main one; absent or empty in collections without them. */
  readonly named?: StoredNamedVectors | undefined;
}

function vectorBytes(vector: StoredVector): number {
  return vector.encoding === 'f32' ? vector.values.length * 4 : 8 + vector.codes.length;
}

function sparseEntries(sparse: StoredSparseVectors | undefined): Array<[Buffer, StoredSparseVector]> {
  if (sparse === undefined) return [];
  return [...sparse].map(([name, v]) => [Buffer.from(name, 'utf8'), v]);
}

function sparseBlockBytes(entries: ReadonlyArray<readonly [Buffer, StoredSparseVector]>): number {
  let bytes = 2;
  for (const [name, v] of entries) bytes += 2 + name.length + 4 + 8 * v.indices.length;
  return bytes;
}

export function encodePointRecord(record: PointRecord): Buffer {
  const vector = record.vector;
  const dim = vector.encoding === 'f32' ? vector.values.length : vector.codes.length;
  const payloadBytes = Buffer.byteLength(record.payloadJson, 'utf8');
  const sparse = sparseEntries(record.sparse);
  const named = record.named === undefined ? [] : [...record.named].map(([name, v]): [Buffer, StoredNamedVector] => [Buffer.from(name, 'utf8'), v]);
  const format = named.length > 0 ? FORMAT_NAMED : sparse.length > 0 ? FORMAT_SPARSE : FORMAT;
  const sparseBytes = format === FORMAT ? 0 : 4 + sparseBlockBytes(sparse);
  const namedBytes = format === FORMAT_NAMED ? 4 + namedBlockBytes(named) : 0;
  const out = Buffer.allocUnsafe(HEADER_BYTES + vectorBytes(vector) + sparseBytes + namedBytes + payloadBytes);
  out[0] = MAGIC;
  out[1] = format;
  out[2] = ENCODING_BYTE[vector.encoding];
  out[3] = 0;
  out.writeUInt32LE(dim, 4);
  out.writeBigUInt64LE(record.version, 8);
  let at = HEADER_BYTES;
  if (vector.encoding === 'f32') {
    const bytes = new Uint8Array(vector.values.buffer, vector.values.byteOffset, dim * 4);
    out.set(bytes, at);
    at += dim * 4;
  } else {
    out.writeFloatLE(vector.min, at);
    out.writeFloatLE(vector.max, at + 4);
    out.set(vector.codes, at + 8);
    at += 8 + dim;
  }
  if (format !== FORMAT) at = writeSparseBlock(out, at, sparse, sparseBytes - 4);
  if (format === FORMAT_NAMED) at = writeNamedBlock(out, at, named, namedBytes - 4);
  out.write(record.payloadJson, at, 'utf8');
  return out;
}

function namedBlockBytes(entries: ReadonlyArray<readonly [Buffer, StoredNamedVector]>): number {
  let bytes = 2;
  for (const [name, v] of entries) bytes += 2 + name.length + 8 + 4 * v.data.length;
  return bytes;
}

function writeNamedBlock(out: Buffer, start: number, entries: ReadonlyArray<readonly [Buffer, StoredNamedVector]>, blockBytes: number): number {
  let at = start;
  out.writeUInt32LE(blockBytes, at);
  out.writeUInt16LE(entries.length, at + 4);
  at += 6;
  for (const [name, v] of entries) {
    out.writeUInt16LE(name.length, at);
    name.copy(out, at + 2);
    at += 2 + name.length;
    out.writeUInt32LE(v.rows, at);
    out.writeUInt32LE(v.rows === 0 ? 0 : v.data.length / v.rows, at + 4);
    at += 8;
    out.set(new Uint8Array(v.data.buffer, v.data.byteOffset, v.data.byteLength), at);
    at += v.data.byteLength;
  }
  return at;
}

/** Reads the named block at `start` (its length word included). */
function readNamedBlock(buf: Buffer, start: number, where: string): { named: StoredNamedVectors; end: number } {
  if (buf.length < start + 6) throw corrupted(where, 'truncated named vector block');
  const end = start + 4 + buf.readUInt32LE(start);
  if (end > buf.length) throw corrupted(where, 'truncated named vector block');
  const count = buf.readUInt16LE(start + 4);
  const named = new Map<string, StoredNamedVector>();
  let at = start + 6;
  for (let n = 0; n < count; n++) {
    if (at + 2 > end) throw corrupted(where, 'truncated named vector name');
    const nameBytes = buf.readUInt16LE(at);
    if (at + 2 + nameBytes + 8 > end) throw corrupted(where, 'truncated named vector name');
    const name = buf.toString('utf8', at + 2, at + 2 + nameBytes);
    at += 2 + nameBytes;
    const rows = buf.readUInt32LE(at);
    const size = buf.readUInt32LE(at + 4);
    at += 8;
    const floats = rows * size;
    if (at + 4 * floats > end) throw corrupted(where, `truncated named vector "${name}"`);
    const data = new Float32Array(floats);
    new Uint8Array(data.buffer).set(buf.subarray(at, at + 4 * floats));
    at += 4 * floats;
    if (named.has(name)) throw corrupted(where, `named vector "${name}" twice`);
    named.set(name, { rows, data });
  }
  if (at !== end) throw corrupted(where, 'named vector block length does not match its vectors');
  return { named, end };
}

function writeSparseBlock(out: Buffer, start: number, entries: ReadonlyArray<readonly [Buffer, StoredSparseVector]>, blockBytes: number): number {
  let at = start;
  out.writeUInt32LE(blockBytes, at);
  out.writeUInt16LE(entries.length, at + 4);
  at += 6;
  for (const [name, v] of entries) {
    const nnz = v.indices.length;
    out.writeUInt16LE(name.length, at);
    name.copy(out, at + 2);
    at += 2 + name.length;
    out.writeUInt32LE(nnz, at);
    at += 4;
    for (let i = 0; i < nnz; i++) out.writeUInt32LE(v.indices[i] as number, at + 4 * i);
    at += 4 * nnz;
    for (let i = 0; i < nnz; i++) out.writeFloatLE(v.values[i] as number, at + 4 * i);
    at += 4 * nnz;
  }
  return at;
}

/** Reads the sparse block at `start` (its length word included); returns the vectors and the offset after it. */
function readSparseBlock(buf: Buffer, start: number, where: string): { sparse: StoredSparseVectors; end: number } {
  if (buf.length < start + 6) throw corrupted(where, 'truncated sparse block');
  const end = start + 4 + buf.readUInt32LE(start);
  if (end > buf.length) throw corrupted(where, 'truncated sparse block');
  const count = buf.readUInt16LE(start + 4);
  const sparse = new Map<string, StoredSparseVector>();
  let at = start + 6;
  for (let n = 0; n < count; n++) {
    if (at + 2 > end) throw corrupted(where, 'truncated sparse vector name');
    const nameBytes = buf.readUInt16LE(at);
    if (at + 2 + nameBytes + 4 > end) throw corrupted(where, 'truncated sparse vector name');
    const name = buf.toString('utf8', at + 2, at + 2 + nameBytes);
    at += 2 + nameBytes;
    const nnz = buf.readUInt32LE(at);
    at += 4;
    if (at + 8 * nnz > end) throw corrupted(where, `truncated sparse vector "${name}"`);
    const indices = new Uint32Array(nnz);
    const values = new Float32Array(nnz);
    for (let i = 0; i < nnz; i++) indices[i] = buf.readUInt32LE(at + 4 * i);
    at += 4 * nnz;
    for (let i = 0; i < nnz; i++) values[i] = buf.readFloatLE(at + 4 * i);
    at += 4 * nnz;
    for (let i = 1; i < nnz; i++)
      if ((indices[i] as number) <= (indices[i - 1] as number)) throw corrupted(where, `sparse vector "${name}": indices not ascending`);
    if (sparse.has(name)) throw corrupted(where, `sparse vector "${name}" twice`);
    sparse.set(name, { indices, values });
  }
  if (at !== end) throw corrupted(where, 'sparse block length does not match its vectors');
  return { sparse, end };
}

/**
 * Decodes a record written by `encodePointRecord`, checking every length against `dim`.
 * `where` names the key in the corruption error.
 */
export function decodePointRecord(bytes: Uint8Array, dim: number, where: string): PointRecord {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < HEADER_BYTES || buf[0] !== MAGIC) throw corrupted(where, 'bad magic or truncated header');
  if (buf[1] !== FORMAT && buf[1] !== FORMAT_SPARSE && buf[1] !== FORMAT_NAMED) throw corrupted(where, `unknown record format ${buf[1]}`);
  const storedDim = buf.readUInt32LE(4);
  if (storedDim !== dim) throw corrupted(where, `dimension ${storedDim}, collection has ${dim}`);
  const version = buf.readBigUInt64LE(8);
  let at = HEADER_BYTES;
  let vector: StoredVector;
  if (buf[2] === ENCODING_BYTE.f32) {
    if (buf.length < at + dim * 4) throw corrupted(where, 'truncated vector');
    const values = new Float32Array(dim);
    new Uint8Array(values.buffer).set(buf.subarray(at, at + dim * 4));
    vector = { encoding: 'f32', values };
    at += dim * 4;
  } else if (buf[2] === ENCODING_BYTE.sq8) {
    if (buf.length < at + 8 + dim) throw corrupted(where, 'truncated sq8 vector');
    const codes = new Uint8Array(dim);
    codes.set(buf.subarray(at + 8, at + 8 + dim));
    vector = { encoding: 'sq8', min: buf.readFloatLE(at), max: buf.readFloatLE(at + 4), codes };
    at += 8 + dim;
  } else {
    throw corrupted(where, `unknown vector encoding ${buf[2]}`);
  }
  if (buf[1] === FORMAT_SPARSE) {
    const block = readSparseBlock(buf, at, where);
    return { version, vector, payloadJson: buf.toString('utf8', block.end), sparse: block.sparse };
  }
  if (buf[1] === FORMAT_NAMED) {
    const block = readSparseBlock(buf, at, where);
    const named = readNamedBlock(buf, block.end, where);
    return { version, vector, payloadJson: buf.toString('utf8', named.end), sparse: block.sparse, named: named.named };
  }
  return { version, vector, payloadJson: buf.toString('utf8', at) };
}

function corrupted(where: string, problem: string): KithError {
  return new KithError('ERR_STORAGE_CORRUPTED', `point record ${where}: ${problem}`);
}
