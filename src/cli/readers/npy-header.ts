/**
 * The header of a NumPy `.npy` file (format versions 1–3): the magic, the version, the header's
 * length, then a Python dict literal `{'descr': '<f4', 'fortran_order': False, 'shape': (R, C), }`.
 * Everything the import relies on is checked before a row is read: a 2-D array of non-negative
 * whole dimensions with at least one column, little-endian float32 or float64 in C order, and a
 * file exactly as long as the header says (a file cut short or with bytes after the rows is not
 * the array its header describes).
 */
import { InputFileError } from './source.js';

export interface NpyHeader {
  readonly dataStart: number;
  readonly rows: number;
  readonly columns: number;
  readonly itemBytes: 4 | 8;
}

const MAGIC = '\x93NUMPY';

/** Bytes to read from the start of a file to hold any header this reader accepts. */
export const NPY_HEAD_BYTES = 65536 + 12;

/** `head`: the first bytes of the file (up to NPY_HEAD_BYTES); `fileSize`: its size. */
export function parseNpyHeader(head: Buffer, fileSize: number, label: string): NpyHeader {
  const fail = (problem: string): never => {
    throw new InputFileError(`${label}: ${problem}`);
  };
  if (head.length < 10 || head.toString('latin1', 0, 6) !== MAGIC) fail('not a NumPy .npy file (no \\x93NUMPY magic)');
  const major = head[6] as number;
  if (major < 1 || major > 3) fail(`.npy format version ${major}.${head[7]} is not supported (1.0 to 3.0 are)`);
  const lengthBytes = major === 1 ? 2 : 4;
  if (head.length < 8 + lengthBytes) fail('the .npy header is truncated');
  const headerLength = major === 1 ? head.readUInt16LE(8) : head.readUInt32LE(8);
  const dataStart = 8 + lengthBytes + headerLength;
  if (dataStart > head.length) fail(`the .npy header is truncated or too long (${headerLength} bytes announced)`);
  const header = head.toString(major === 3 ? 'utf8' : 'latin1', 8 + lengthBytes, dataStart);
  const descr = /['"]descr['"]\s*:\s*['"]([^'"]*)['"]/.exec(header)?.[1];
  const fortran = /['"]fortran_order['"]\s*:\s*(\w+)/.exec(header)?.[1];
  const shape = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || shape === undefined) fail('the .npy header lacks descr, fortran_order or shape');
  if (descr !== '<f4' && descr !== '<f8') fail(`dtype ${descr} is not supported; expected little-endian float32 (<f4) or float64 (<f8)`);
  if (fortran !== 'False') fail('Fortran-order arrays are not supported; save with np.ascontiguousarray');
  const dims = (shape as string)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (dims.length !== 2) fail(`expected a 2-D array (points × dimension), got shape (${shape})`);
  if (dims.some((d) => !/^\d+$/.test(d) || !Number.isSafeInteger(Number(d)))) fail(`shape (${shape}): each dimension must be a whole number ≥ 0`);
  const [rows, columns] = dims.map(Number) as [number, number];
  if (columns === 0) fail(`shape (${shape}): rows of 0 numbers hold no vector`);
  const itemBytes = descr === '<f4' ? 4 : 8;
  const dataBytes = rows * columns * itemBytes;
  const actual = fileSize - dataStart;
  if (actual < dataBytes)
    fail(`the header promises ${rows} rows of ${columns} (${dataBytes} bytes of data) but the file has ${Math.max(0, actual)} bytes of data: truncated`);
  if (actual > dataBytes) fail(`the header promises ${rows} rows of ${columns} (${dataBytes} bytes of data) but the file has ${actual - dataBytes} bytes more`);
  return { dataStart, rows, columns, itemBytes };
}
