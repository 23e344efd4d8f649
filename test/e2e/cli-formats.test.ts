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
      const out = await ok(['import', path, '--collection', collection, '--dim', '6', '--distance', 'euclid', '--hnsw', '--batch', '500', '--db', db, '--quiet']);
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
  // [file, bytes, the error (none: imports), points in the collection afterwards]
  const cases: [string, Buffer, RegExp | undefined, number][] = [
    ['good.fvecs', fvecs(rows), undefined, 1200],
    ['wrongdim.fvecs', Buffer.concat([fvecs(rows.slice(0, 1100)), fvecs([[1, 2, 3]]), fvecs(rows.slice(1101))]), /wrongdim\.fvecs: vector 1100: dimension 3, expected 4/, 1000],
    ['short.fvecs', fvecs(rows).subarray(0, 20 * 1150 + 7), /short\.fvecs: vector 1150: truncated/, 1000],
    ['nan.npy', npy(rows.map((r, i) => (i === 1001 ? [r[0] as number, Number.NaN, 0, 0] : r)), '<f4'), /nan\.npy: row 1001: element 1 is NaN, not a finite number/, 1000],
    ['cut.npy', npy(rows, '<f4').subarray(0, 200), /cut\.npy: the header promises 1200 rows/, 0],
    ['shape.npy', npy(rows, '<f4', '(4800,)'), /shape\.npy: expected a 2-D array/, 0],
    ['cols.npy', npy(rows.map((r) => [...r, 0]), '<f4'), /cols\.npy: rows have 5 numbers, the collection 4/, 0],
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
    assert.equal(await ok(['count', collection, '--db', db]), `${count}\n`, name);
  }
});
