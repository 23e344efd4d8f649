/**
 * The bytes of one stored point (the value under its point key, point-key.ts).
 * All integers little-endian; the byte table is in docs/storage.md.
 *
 * | offset | size      | field                                         |
 * |--------|-----------|-----------------------------------------------|
 * | 0      | 1         | magic 0x4B ("K")                              |
 * | 1      | 1         | record format version (1)                     |
 * | 2      | 1         | vector encoding: 0 = f32, 1 = sq8             |
 * | 3      | 1         | reserved, 0                                   |
 * | 4      | 4         | dimension (u32)                               |
 * | 8      | 8         | point version (u64, nanoseconds)              |
 * | 16     | 4·dim     | f32: the components                           |
 * | 16     | 8 + dim   | sq8: min (f32), max (f32), one code per dim   |
 * | …      | rest      | payload, UTF-8 JSON object                    |
 */
import { KithError } from '../core/errors.js';
import type { Sq8Codes } from '../core/sq8-codes.js';

const MAGIC = 0x4b;
const FORMAT = 1;
const HEADER_BYTES = 16;

/** How a record holds its vector; the byte at offset 2. */
export type StoredVector = { readonly encoding: 'f32'; readonly values: Float32Array } | ({ readonly encoding: 'sq8' } & Sq8Codes);

const ENCODING_BYTE = { f32: 0, sq8: 1 } as const;

export interface PointRecord {
  readonly version: bigint;
  readonly vector: StoredVector;
  /** The payload as JSON text (already validated). */
  readonly payloadJson: string;
}

function vectorBytes(vector: StoredVector): number {
  return vector.encoding === 'f32' ? vector.values.length * 4 : 8 + vector.codes.length;
}

export function encodePointRecord(record: PointRecord): Buffer {
  const vector = record.vector;
  const dim = vector.encoding === 'f32' ? vector.values.length : vector.codes.length;
  const payloadBytes = Buffer.byteLength(record.payloadJson, 'utf8');
  const out = Buffer.allocUnsafe(HEADER_BYTES + vectorBytes(vector) + payloadBytes);
  out[0] = MAGIC;
  out[1] = FORMAT;
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
  out.write(record.payloadJson, at, 'utf8');
  return out;
}

/**
 * Decodes a record written by `encodePointRecord`, checking every length against `dim`.
 * `where` names the key in the corruption error.
 */
export function decodePointRecord(bytes: Uint8Array, dim: number, where: string): PointRecord {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < HEADER_BYTES || buf[0] !== MAGIC) throw corrupted(where, 'bad magic or truncated header');
  if (buf[1] !== FORMAT) throw corrupted(where, `unknown record format ${buf[1]}`);
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
  return { version, vector, payloadJson: buf.toString('utf8', at) };
}

function corrupted(where: string, problem: string): KithError {
  return new KithError('ERR_STORAGE_CORRUPTED', `point record ${where}: ${problem}`);
}
