/**
 * CRC-32 (IEEE) for the checksums of formats kith writes itself (graph snapshots). Uses
 * `zlib.crc32` where Node has it (20.15+), else a table-driven version with the same results.
 */
import * as zlib from 'node:zlib';

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

let table: Uint32Array | undefined;

function crcTable(): Uint32Array {
  if (table !== undefined) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

export function crc32Portable(data: Uint8Array, previous = 0): number {
  const t = crcTable();
  let crc = ~previous >>> 0;
  for (let i = 0; i < data.length; i++) crc = (t[(crc ^ (data[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return ~crc >>> 0;
}

export function crc32(data: Uint8Array, previous = 0): number {
  // Node 20's zlib.crc32 answers 0 for an empty array over an empty buffer, dropping `previous`.
  if (data.length === 0) return previous >>> 0;
  return native !== undefined ? native(data, previous) >>> 0 : crc32Portable(data, previous);
}
