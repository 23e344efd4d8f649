/**
 * The key of a stored point (storage format 2): the collection uid as 4 bytes big-endian, then the
 * point id's UTF-8 bytes, nothing else. Keys are compared as raw bytes by LMDB, so a collection's
 * points are exactly the keys from `uid` (4 bytes) up to `uid + 1` (4 bytes), and no id can be
 * taken for another: UTF-8 is a one-to-one encoding of well-formed strings and the uid part has a
 * fixed length. (Format 1 used lmdb-js's ordered-binary `[uid, id]` keys, which are ambiguous; see
 * format-1-point-key.ts.)
 */
import { KithError } from '../core/errors.js';
import { MAX_POINT_ID_BYTES } from '../core/point-id.js';

const UID_BYTES = 4;
const MAX_UID = 0xffff_ffff;

/** The longest key this encoding makes; LMDB must accept it (checked at open). */
export const MAX_POINT_KEY_BYTES = UID_BYTES + MAX_POINT_ID_BYTES;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function encodePointKey(uid: number, id: string): Buffer {
  checkUid(uid);
  // Ids reach storage validated (core/point-id.ts); a lone surrogate would be written as U+FFFD and
  // read back as another id, so it is refused here too rather than stored under a wrong key.
  if (id.length === 0 || !id.isWellFormed()) {
    throw new KithError('ERR_INTERNAL', `point id ${JSON.stringify(id)} cannot be a storage key`);
  }
  const idBytes = Buffer.byteLength(id, 'utf8');
  if (idBytes > MAX_POINT_ID_BYTES) {
    throw new KithError('ERR_INTERNAL', `point id of ${idBytes} UTF-8 bytes cannot be a storage key (limit ${MAX_POINT_ID_BYTES})`);
  }
  const key = Buffer.allocUnsafe(UID_BYTES + idBytes);
  key.writeUInt32BE(uid, 0);
  key.write(id, UID_BYTES, 'utf8');
  return key;
}

export function decodePointKey(key: Uint8Array): { uid: number; id: string } {
  if (key.length <= UID_BYTES || key.length > MAX_POINT_KEY_BYTES) {
    throw new KithError('ERR_STORAGE_CORRUPTED', `point key ${hex(key)} has ${key.length} bytes`);
  }
  const uid = Buffer.from(key.buffer, key.byteOffset, key.byteLength).readUInt32BE(0);
  let id: string;
  try {
    id = utf8.decode(key.subarray(UID_BYTES));
  } catch {
    throw new KithError('ERR_STORAGE_CORRUPTED', `point key ${hex(key)} of collection uid ${uid} is not UTF-8`);
  }
  return { uid, id };
}

/** The key range holding every point of collection `uid`: start inclusive, end exclusive. */
export function pointKeyRange(uid: number): { start: Buffer; end: Buffer } {
  checkUid(uid);
  const start = Buffer.alloc(UID_BYTES);
  start.writeUInt32BE(uid, 0);
  // uid + 1 overflows 4 bytes only for the last uid; then the range runs to the end of the keys.
  const end = uid === MAX_UID ? Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]) : Buffer.alloc(UID_BYTES);
  if (uid !== MAX_UID) end.writeUInt32BE(uid + 1, 0);
  return { start, end };
}

function checkUid(uid: number): void {
  if (!Number.isInteger(uid) || uid < 0 || uid > MAX_UID) {
    throw new KithError('ERR_INTERNAL', `collection uid ${uid} does not fit a storage key`);
  }
}

export function hex(bytes: Uint8Array): string {
  const all = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  return all.length > 80 ? `${all.slice(0, 80)}…(${bytes.length} bytes)` : all;
}
