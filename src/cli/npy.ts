/** NumPy .npy (format 1.0) as kith export writes it: a header for a 2-D little-endian float32 array, C order. */

/** The header bytes: magic, version 1.0, header length, the dict literal padded with spaces to a multiple of 64 and ended by a newline. */
export function npyHeader(rows: number, columns: number): Uint8Array {
  const dict = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows}, ${columns}), }`;
  const unpadded = 10 + dict.length + 1;
  const text = `${dict}${' '.repeat((64 - (unpadded % 64)) % 64)}\n`;
  const out = Buffer.alloc(10 + text.length);
  out.write('\x93NUMPY', 0, 'latin1');
  out[6] = 1;
  out[7] = 0;
  out.writeUInt16LE(text.length, 8);
  out.write(text, 10, 'latin1');
  return out;
}

/** Where an exported `FILE.npy` keeps its ids: `FILE.ids.jsonl` (the `.npy` replaced). */
export function npyIdsPath(npyPath: string): string {
  return `${npyPath.replace(/\.npy$/i, '')}.ids.jsonl`;
}
