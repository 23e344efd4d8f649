/**
 * Reads the point keys of a format-1 file, only to migrate them (format-1-migration.ts).
 *
 * Format 1 keyed points by `[uid, id]` in lmdb-js's ordered-binary encoding (ordered-binary 1.6):
 *
 *   9 bytes   the uid as an ordered-binary number: 0x1 (4 bits), the IEEE-754 double (64 bits
 *             big-endian), 0 (4 bits)
 *   1 byte    0x00, the array separator
 *   0–1 byte  0x1B when the id's first UTF-16 unit is below 28
 *   rest      the id: if it has fewer than 64 UTF-16 units, its UTF-8 bytes with every unit
 *             U+0000–U+0004 written as 0x04 then the unit; else its UTF-8 bytes as they are
 *
 * ordered-binary's own reader always unescapes and stops at a byte 0x00–0x03, so a long id holding
 * U+0000–U+0004 came back cut, split or changed (and a delete by the changed id missed the key).
 * The bytes themselves still hold such an id exactly; this reader recovers it. The one loss it
 * cannot undo: a short id with U+0000–U+0004 and the long id spelled by its escaped bytes were one
 * key, so one record; that key is read as the short id, as format 1 itself read it back.
 */
import { KithError } from '../core/errors.js';
import { hex } from './point-key.js';

const UID_BYTES = 9;
const SEPARATOR = 0x00;
const FIRST_UNIT_ESCAPE = 0x1b;
const UNIT_ESCAPE = 0x04;
const SHORT_UNITS = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decodeFormat1PointKey(key: Uint8Array): { uid: number; id: string } {
  const uid = readUid(key);
  if (key[UID_BYTES] !== SEPARATOR || key.length === UID_BYTES + 1) throw corrupted(key, 'no id after the uid');
  let body = key.subarray(UID_BYTES + 1);
  const escapedFirst = body[0] === FIRST_UNIT_ESCAPE;
  if (escapedFirst) body = body.subarray(1);
  const fits = (id: string | undefined): id is string => id !== undefined && id.length > 0 && id.isWellFormed() && id.charCodeAt(0) < 28 === escapedFirst;
  const short = readShort(body);
  if (fits(short) && short.length < SHORT_UNITS) return { uid, id: short };
  const long = readLong(body);
  if (fits(long) && long.length >= SHORT_UNITS) return { uid, id: long };
  throw corrupted(key, 'is not a format-1 point id');
}

/** The uid: the 64 bits between the 4-bit marker and the 4 zero bits, as a double. */
function readUid(key: Uint8Array): number {
  if (key.length < UID_BYTES) throw corrupted(key, 'is shorter than its uid');
  let bits = 0n;
  for (let i = 0; i < UID_BYTES; i++) bits = (bits << 8n) | BigInt(key[i] as number);
  if (bits >> 68n !== 1n || (bits & 0xfn) !== 0n) throw corrupted(key, 'does not start with a positive number');
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, (bits >> 4n) & 0xffff_ffff_ffff_ffffn);
  const uid = view.getFloat64(0);
  if (!Number.isSafeInteger(uid) || uid < 0) throw corrupted(key, `has uid ${uid}`);
  return uid;
}

/** The id as written for fewer than 64 units: unescape 0x04 pairs; a lone 0x00–0x04 is not of it. */
function readShort(body: Uint8Array): string | undefined {
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const byte = body[i] as number;
    if (byte > UNIT_ESCAPE) {
      out.push(byte);
    } else if (byte === UNIT_ESCAPE && i + 1 < body.length && (body[i + 1] as number) <= UNIT_ESCAPE) {
      out.push(body[++i] as number);
    } else {
      return undefined;
    }
  }
  return readLong(Uint8Array.from(out));
}

function readLong(body: Uint8Array): string | undefined {
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

function corrupted(key: Uint8Array, problem: string): KithError {
  return new KithError('ERR_STORAGE_CORRUPTED', `format-1 point key ${hex(key)} ${problem}`);
}
