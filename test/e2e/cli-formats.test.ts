/**
 * `kith import` of binary vector files: `.fvecs` and NumPy `.npy` (float32 and float64), written
 * here byte by byte as their formats define them. Ids are the index in the file; a bad record stops
 * the import naming it, with nothing of its batch written.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { kith, ok, withoutVersions } from '../helpers/kith-cli.js';
import { startServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Float32-exact vectors, so that what is read back equals what was written. */
function vectors(seed: number, n: number, dim: number): number[][] {
  const rng = new SeededRng(seed);
  return Array.from({ length: n }, () => Array.from({ length: dim }, () => Math.fround(rng.gaussian())));
}

function fvecs(rows: readonly number[][]): Buffer {
  return Buffer.concat(
    rows.map((row) => {
      const b = Buffer.alloc(4 + 4 * row.length);
      b.writeInt32LE(row.length, 0);
      for (let i = 0; i < row.length; i++) b.writeFloatLE(row[i] as number, 4 + 4 * i);
      return b;
    }),
  );
}

function npy(rows: readonly number[][], dtype: '<f4' | '<f8', shape = `(${rows.length}, ${rows[0]?.length ?? 0})`): Buffer {
  let header = `{'descr': '${dtype}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Version 1.0: magic, version, uint16 header length; data 64-byte aligned, header ends with \n.
  header += `${' '.repeat(63 - ((10 + header.length) % 64))}\n`;
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const size = dtype === '<f4' ? 4 : 8;
  const data = Buffer.alloc(rows.length * (rows[0]?.length ?? 0) * size);
  let at = 0;
  for (const row of rows) {
    for (const x of row) {
      if (size === 4) data.writeFloatLE(x, at);
      else data.writeDoubleLE(x, at);
      at += size;
    }
  }
  return Buffer.concat([prefix, Buffer.from(header, 'latin1'), data]);
}

function expectedExport(rows: readonly number[][]): string {
  return rows
    .map((vector, i) => ({ id: String(i), vector, payload: {} }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((p) => `${JSON.stringify(p)}\n`)
    .join('');
}

test('.fvecs and .npy (float32, float64) import with ids 0…n-1, and a second run changes nothing', async (t) => {
  const seed = testSeed(21);
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const rows = vectors(seed, 2345, 6);
  const files: [string, Buffer][] = [
    ['base.fvecs', fvecs(rows)],
    ['f4.npy', npy(rows, '<f4')],
    ['f8.npy', npy(rows, '<f8')],
  ];
  for (const [name, bytes] of files) {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    const collection = name.replace('.', '_');
    for (let run = 0; run < 2; run++) {
      const out = await ok([
        'import',
        path,
        '--collection',
        collection,
        '--dim',
        '6',
        '--distance',
        'euclid',
        '--hnsw',
        '--batch',
        '500',
        '--db',
        db,
        '--quiet',
      ]);
      assert.match(out, /imported 2345 points .* in 5 batches/, `[seed ${seed}] ${name}`);
    }
    assert.equal(withoutVersions(await ok(['export', collection, '--db', db])), expectedExport(rows), `[seed ${seed}] ${name}`);
  }
});

test('a bad record stops a binary import naming it, with nothing of its batch written', async (t) => {
  const seed = testSeed(22);
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const rows = vectors(seed, 1200, 4);
  // [file, bytes, the error (none: imports), points in the collection afterwards (0: the import created none)]
  const cases: [string, Buffer, RegExp | undefined, number][] = [
    ['good.fvecs', fvecs(rows), undefined, 1200],
    [
      'wrongdim.fvecs',
      Buffer.concat([fvecs(rows.slice(0, 1100)), fvecs([[1, 2, 3]]), fvecs(rows.slice(1101))]),
      /wrongdim\.fvecs: vector 1100: dimension 3, expected 4/,
      1000,
    ],
    ['short.fvecs', fvecs(rows).subarray(0, 20 * 1150 + 7), /short\.fvecs: vector 1150: truncated/, 1000],
    [
      'nan.npy',
      npy(
        rows.map((r, i) => (i === 1001 ? [r[0] as number, Number.NaN, 0, 0] : r)),
        '<f4',
      ),
      /nan\.npy: row 1001: element 1 is NaN, not a finite number/,
      1000,
    ],
    ['cut.npy', npy(rows, '<f4').subarray(0, 200), /cut\.npy: the header promises 1200 rows/, 0],
    ['shape.npy', npy(rows, '<f4', '(4800,)'), /shape\.npy: expected a 2-D array/, 0],
    [
      'cols.npy',
      npy(
        rows.map((r) => [...r, 0]),
        '<f4',
      ),
      /cols\.npy: rows have 5 numbers, the collection 4/,
      0,
    ],
    ['int.npy', Buffer.from(npy(rows, '<f4').toString('latin1').replace("'<f4'", "'<i4'"), 'latin1'), /int\.npy: dtype <i4 is not supported/, 0],
  ];
  for (const [name, bytes, message, count] of cases) {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    const collection = name.replace('.', '_');
    const run = await kith(['import', path, '--collection', collection, '--dim', '4', '--distance', 'euclid', '--db', db, '--quiet']);
    if (message === undefined) {
      assert.equal(run.code, 0, run.stderr);
    } else {
      assert.equal(run.code, 1, `${name}: ${run.stderr}`);
      assert.match(run.stderr, message);
    }
    if (count === 0) {
      // Nothing was written: the collection the import created is gone again.
      assert.match(run.stderr, new RegExp(`nothing was written; ${collection}, which this import created, was dropped again`), name);
      assert.equal((await kith(['count', collection, '--db', db])).code, 1, name);
    } else {
      assert.equal(await ok(['count', collection, '--db', db]), `${count}\n`, name);
    }
  }
});

/** A .npy file of `rows` float32 rows with any header text: the header may say what it likes. */
function npyWithHeader(dict: string, data: Buffer, version: [number, number] = [1, 0]): Buffer {
  const padded = `${dict}${' '.repeat(63 - ((10 + dict.length) % 64))}\n`;
  const prefix = Buffer.alloc(version[0] === 1 ? 10 : 12);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = version[0];
  prefix[7] = version[1];
  if (version[0] === 1) prefix.writeUInt16LE(padded.length, 8);
  else prefix.writeUInt32LE(padded.length, 8);
  return Buffer.concat([prefix, Buffer.from(padded, 'latin1'), data]);
}

test('a .npy whose header does not describe its data is refused with exit 1 before anything is written, against a file and a server', async (t) => {
  const dir = tempDir(t);
  const server = await startServer(join(dir, 'served.db'));
  t.after(() => server.stop());
  const data = Buffer.alloc(4 * 2 * 4); // 4 rows of 2 float32 zeros
  const dict = (shape: string, descr = '<f4', fortran = 'False'): string => `{'descr': '${descr}', 'fortran_order': ${fortran}, 'shape': ${shape}, }`;
  const cases: [string, Buffer, RegExp][] = [
    ['minus.npy', npyWithHeader(dict('(-1, 2)'), data), /minus\.npy: shape \(-1, 2\): each dimension must be a whole number ≥ 0/],
    ['negcols.npy', npyWithHeader(dict('(4, -2)'), data), /negcols\.npy: shape \(4, -2\): each dimension must be a whole number ≥ 0/],
    ['zerocols.npy', npyWithHeader(dict('(4, 0)'), data), /zerocols\.npy: shape \(4, 0\): rows of 0 numbers hold no vector/],
    ['float.npy', npyWithHeader(dict('(1e1, 2)'), data), /float\.npy: shape \(1e1, 2\): each dimension must be a whole number/],
    ['three.npy', npyWithHeader(dict('(2, 2, 2)'), data), /three\.npy: expected a 2-D array \(points × dimension\), got shape \(2, 2, 2\)/],
    ['scalar.npy', npyWithHeader(dict('()'), data), /scalar\.npy: expected a 2-D array/],
    ['fortran.npy', npyWithHeader(dict('(4, 2)', '<f4', 'True'), data), /fortran\.npy: Fortran-order arrays are not supported/],
    ['big.npy', npyWithHeader(dict('(4, 2)', '>f4'), data), /big\.npy: dtype >f4 is not supported/],
    ['int.npy', npyWithHeader(dict('(4, 2)', '<i8'), data), /int\.npy: dtype <i8 is not supported/],
    ['noshape.npy', npyWithHeader("{'descr': '<f4', 'fortran_order': False, }", data), /noshape\.npy: the \.npy header lacks descr, fortran_order or shape/],
    ['version.npy', npyWithHeader(dict('(4, 2)'), data, [4, 0]), /version\.npy: \.npy format version 4\.0 is not supported/],
    [
      'short.npy',
      npyWithHeader(dict('(5, 2)'), data),
      /short\.npy: the header promises 5 rows of 2 \(40 bytes of data\) but the file has 32 bytes of data: truncated/,
    ],
    ['long.npy', npyWithHeader(dict('(3, 2)'), data), /long\.npy: the header promises 3 rows of 2 \(24 bytes of data\) but the file has 8 bytes more/],
    ['huge.npy', npyWithHeader(dict('(4000000000000, 2)'), data), /huge\.npy: the header promises 4000000000000 rows of 2 .* truncated/],
    ['cuthead.npy', npyWithHeader(dict('(4, 2)'), data).subarray(0, 40), /cuthead\.npy: the \.npy header is truncated/],
    ['magic.npy', Buffer.from('not numpy at all'), /magic\.npy: not a NumPy \.npy file/],
    ['empty.npy', Buffer.alloc(0), /empty\.npy: not a NumPy \.npy file/],
  ];
  for (const where of [
    ['--db', join(dir, 'kith.db')],
    ['--url', server.url],
  ]) {
    for (const [name, bytes, message] of cases) {
      writeFileSync(join(dir, name), bytes);
      const run = await kith(['import', join(dir, name), '--collection', 'n', '--dim', '2', '--quiet', ...where]);
      assert.equal(run.code, 1, `${name} ${where[0]}: ${run.stderr}`);
      assert.match(run.stderr, message, `${name} ${where[0]}`);
      assert.doesNotMatch(run.stderr, /\n\s+at /, `${name}: a stack trace`);
    }
    assert.equal(await ok(['ls', ...where]), 'no collections\n', `${where[0]}: a failed import left the collection it created`);
    // Version 2.0 headers, and an empty array (what kith export writes for an empty collection), are fine.
    writeFileSync(join(dir, 'v2.npy'), npyWithHeader(dict('(4, 2)'), Buffer.from(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer), [2, 0]));
    assert.match(
      await ok(['import', join(dir, 'v2.npy'), '--collection', 'v2', '--dim', '2', '--distance', 'euclid', '--quiet', ...where]),
      /imported 4 points into v2 .*\(4 rows read\)/,
    );
    assert.deepEqual(JSON.parse(await ok(['get', 'v2', '3', ...where])).vector, [7, 8]);
    writeFileSync(join(dir, 'none.npy'), npyWithHeader(dict('(0, 2)'), Buffer.alloc(0)));
    assert.match(
      await ok(['import', join(dir, 'none.npy'), '--collection', 'none', '--dim', '2', '--quiet', ...where]),
      /imported 0 points into none .*\(0 rows read\) in 0 batches/,
    );
  }
});
