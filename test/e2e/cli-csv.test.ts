/**
 * `kith import` of CSV (RFC 4180: quoted fields with commas, quotes and line breaks; a header row;
 * vector and id columns; typed payload columns) and `.bvecs`; `kith export --format npy` and its
 * ids file read back by `kith import --ids`. Bad rows name FILE:LINE with nothing of their batch
 * written; an interrupted CSV import resumes by running it again.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { KITH_JS, kith, ok, withoutVersions } from '../helpers/kith-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A CSV field as a writer quotes it: quoted when it holds a comma, quote, CR or LF. */
function field(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function exportLines(points: readonly { id: string; vector: number[]; payload: Record<string, unknown> }[]): string {
  return [...points]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((p) => `${JSON.stringify(p)}\n`)
    .join('');
}

test('CSV: quoted fields with commas, quotes and line breaks, vectors as JSON or separated numbers, typed payload columns', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const file = join(dir, 'points.csv');
  // BOM, CRLF records, a field spanning lines, doubled quotes, an empty cell, a quoted header.
  const text =
    '\uFEFFid,"vector",title,score,ok,tags,empty\r\n' +
    '1,"[0.5, 0.25, 0]","plain",3,true,"[""a"",""b""]",\r\n' +
    'doc-2,0 1 0.125,"comma, inside",-2.5e1,false,"{""k"": 1}",\r\n' +
    '"id ""3""",0;0;1,"two\r\nlines and ""quotes""",007,TRUE,[not json,x\r\n' +
    '42,"1 1 1","",,,,\r\n';
  writeFileSync(file, text);
  const out = await ok(['import', file, '--collection', 'c', '--dim', '3', '--distance', 'euclid', '--db', db]);
  assert.match(out, /imported 4 points into c/);
  // One type per column: score has 007 (no JSON number), so all of it is text; ok is boolean in any
  // case; tags has a cell that is not JSON, so all of it is text.
  const expected = exportLines([
    { id: '1', vector: [0.5, 0.25, 0], payload: { title: 'plain', score: '3', ok: true, tags: '["a","b"]' } },
    { id: 'doc-2', vector: [0, 1, 0.125], payload: { title: 'comma, inside', score: '-2.5e1', ok: false, tags: '{"k": 1}' } },
    { id: 'id "3"', vector: [0, 0, 1], payload: { title: 'two\r\nlines and "quotes"', score: '007', ok: true, tags: '[not json', empty: 'x' } },
    { id: '42', vector: [1, 1, 1], payload: {} },
  ]);
  assert.equal(withoutVersions(await ok(['export', 'c', '--db', db])), expected);

  // Other column names; without an id column the ids are the data rows' positions.
  const renamed = join(dir, 'renamed.csv');
  writeFileSync(renamed, 'emb,lang\n"[1,2]",en\n"[3,4]",fr\n');
  await ok(['import', renamed, '--collection', 'r', '--dim', '2', '--distance', 'dot', '--vector-column', 'emb', '--db', db, '--quiet']);
  assert.equal(
    withoutVersions(await ok(['export', 'r', '--db', db])),
    exportLines([
      { id: '0', vector: [1, 2], payload: { lang: 'en' } },
      { id: '1', vector: [3, 4], payload: { lang: 'fr' } },
    ]),
  );
});

test('CSV: a bad row names FILE:LINE (counting the lines of multi-line fields) and nothing of its batch is written', async (t) => {
  await runSeeded(testSeed(31), async (rng) => {
    const dir = tempDir(t);
    const db = join(dir, 'kith.db');
    const file = join(dir, 'bad.csv');
    const rows = Array.from(
      { length: 25 },
      (_, i) => `${i},"${[rng.next(), rng.next()].map((x) => Math.fround(x)).join(' ')}",${field(`note ${i}\nsecond line`)}`,
    );
    const write = (bad: string, at: number): void => {
      const lines = [...rows];
      lines[at] = bad;
      writeFileSync(file, `id,vector,note\n${lines.join('\n')}\n`);
    };
    // Row 22 (0-based) starts on line 2 + 2·22 = 46: every earlier row spans two lines. Batches of 10: two stay.
    const cases: [string, RegExp][] = [
      ['22,"1 2",x,extra', /bad\.csv:46: 4 fields, the header has 3/],
      ['22,"1 x",y', /bad\.csv:46: vector\[1\]: expected a number, got "x"/],
      ['22,"[1, 2, 3]",y', /bad\.csv:46: vector: expected 2 numbers, got 3/],
      ['22,"[1, 2",y', /bad\.csv:46: vector: not a valid JSON array/],
      [',"1 2",y', /bad\.csv:46: id: expected a non-empty string or a non-negative integer/],
      ['22,"1 2",y"z', /bad\.csv:46: a quote inside an unquoted field/],
      ['22,"1 2"x,y', /bad\.csv:46: unexpected "x" after a closing quote/],
    ];
    for (const [bad, message] of cases) {
      write(bad, 22);
      const run = await kith(['import', file, '--collection', 'c', '--dim', '2', '--distance', 'euclid', '--batch', '10', '--db', db, '--quiet']);
      assert.equal(run.code, 1, `${bad}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(await ok(['count', 'c', '--db', db]), '20\n', `${bad}: part of the bad batch was written`);
    }
    // A quote opened on line 3 and never closed: the error names the line it opened on.
    writeFileSync(join(dir, 'open.csv'), 'id,vector\n1,"1 2"\n2,"1 2\n3,4\n');
    const open = await kith(['import', join(dir, 'open.csv'), '--collection', 'c', '--db', db, '--quiet']);
    assert.equal(open.code, 1);
    assert.match(open.stderr, /open\.csv:3: a quoted field is not closed before the end of the file/);
    writeFileSync(join(dir, 'nohead.csv'), '1,"1 2"\n');
    const noHeader = await kith(['import', join(dir, 'nohead.csv'), '--collection', 'c', '--db', db, '--quiet']);
    assert.equal(noHeader.code, 1);
    assert.match(noHeader.stderr, /nohead\.csv:1: the header row has no "vector" column .* a header row is required/);

    // Fixed, the same command finishes the import: every row once.
    writeFileSync(file, `id,vector,note\n${rows.join('\n')}\n`);
    await ok(['import', file, '--collection', 'c', '--batch', '10', '--db', db, '--quiet']);
    assert.equal(await ok(['count', 'c', '--db', db]), '25\n');
  });
});

test('CSV: an import killed mid-way (SIGKILL) leaves whole batches; running it again gives exactly the file', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const file = join(dir, 'big.csv');
  const total = 40000;
  const lines = ['id,vector,n,text'];
  const points: { id: string; vector: number[]; payload: Record<string, unknown> }[] = [];
  for (let i = 0; i < total; i++) {
    const vector = [i % 97, (i * 7) % 13, i % 5, 1];
    lines.push(`${i},"${vector.join(';')}",${i},${field(`row, ${i}`)}`);
    points.push({ id: String(i), vector, payload: { n: i, text: `row, ${i}` } });
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  const args = ['import', file, '--collection', 'big', '--dim', '4', '--distance', 'euclid', '--hnsw', '--batch', '250', '--db', db];
  const child = spawn(process.execPath, [KITH_JS, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<string | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if ((stderr.match(/durable through/g) ?? []).length >= 3) resolve();
    });
    void exited.then(() => reject(new Error(`import ended before it was killed:\n${stderr}`)));
  });
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
  const afterKill = Number(await ok(['count', 'big', '--db', db]));
  assert.ok(afterKill >= 750 && afterKill < total, `${afterKill} points after the kill`);
  assert.equal(afterKill % 250, 0, `${afterKill} points: a batch was written in part`);
  await ok([...args, '--quiet']);
  assert.equal(withoutVersions(await ok(['export', 'big', '--db', db])), exportLines(points));
});

function bvecs(rows: readonly number[][]): Buffer {
  return Buffer.concat(rows.map((row) => Buffer.concat([Buffer.from(new Int32Array([row.length]).buffer), Buffer.from(row)])));
}

test('.bvecs: u8 components, ids 0…n-1; a record of another dimension or a truncated file is named', async (t) => {
  const seed = testSeed(32);
  const rng = new SeededRng(seed);
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const rows = Array.from({ length: 1300 }, () => Array.from({ length: 8 }, () => rng.int(256)));
  rows[0] = [0, 255, 0, 255, 1, 2, 3, 4];
  writeFileSync(join(dir, 'base.bvecs'), bvecs(rows));
  await ok(['import', join(dir, 'base.bvecs'), '--collection', 'b', '--dim', '8', '--distance', 'euclid', '--db', db, '--quiet']);
  assert.equal(
    withoutVersions(await ok(['export', 'b', '--db', db])),
    exportLines(rows.map((vector, i) => ({ id: String(i), vector, payload: {} }))),
    `[seed ${seed}]`,
  );
  const bad: [string, Buffer, RegExp][] = [
    ['dim.bvecs', bvecs([...rows.slice(0, 1100), [1, 2, 3], ...rows.slice(1101)]), /dim\.bvecs: vector 1100: dimension 3, expected 8/],
    ['cut.bvecs', bvecs(rows).subarray(0, 12 * 1200 + 5), /cut\.bvecs: vector 1200: truncated/],
  ];
  for (const [name, bytes, message] of bad) {
    writeFileSync(join(dir, name), bytes);
    const run = await kith(['import', join(dir, name), '--collection', name.replace('.', '_'), '--dim', '8', '--batch', '1000', '--db', db, '--quiet']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, message);
    assert.equal(await ok(['count', name.replace('.', '_'), '--db', db]), '1000\n');
  }
});

test('export --format npy: a float32 .npy and its ids; importing both gives the same ids and vectors', async (t) => {
  const seed = testSeed(33);
  const rng = new SeededRng(seed);
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const source = join(dir, 'in.jsonl');
  const points = Array.from({ length: 2100 }, (_, i) => ({
    id: i % 2 === 0 ? `doc-${i}` : String(i),
    vector: Array.from({ length: 5 }, () => Math.fround(rng.gaussian())),
    payload: { i },
  }));
  writeFileSync(source, points.map((p) => JSON.stringify(p)).join('\n'));
  await ok(['import', source, '--collection', 'c', '--dim', '5', '--distance', 'euclid', '--hnsw', '--db', db, '--quiet']);

  const npyPath = join(dir, 'out.npy');
  const run = await kith(['export', 'c', '--format', 'npy', '--out', npyPath, '--db', db]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /exported 2100 points of c to .*out\.npy \(ids in .*out\.ids\.jsonl\)/);
  // The file as NumPy reads it: magic, version 1.0, a header padded to 64 bytes, then rows of <f4.
  const bytes = readFileSync(npyPath);
  assert.equal(bytes.toString('latin1', 0, 8), '\x93NUMPY\x01\x00');
  const headerLength = bytes.readUInt16LE(8);
  assert.equal((10 + headerLength) % 64, 0);
  assert.match(bytes.toString('latin1', 10, 10 + headerLength), /^\{'descr': '<f4', 'fortran_order': False, 'shape': \(2100, 5\), \} *\n$/);
  assert.equal(bytes.length, 10 + headerLength + 2100 * 5 * 4);
  const ids = readFileSync(join(dir, 'out.ids.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as string);
  assert.equal(ids.length, 2100);
  const byId = new Map(points.map((p) => [p.id, p]));
  ids.forEach((id, row) => {
    const vector = Array.from({ length: 5 }, (_, c) => bytes.readFloatLE(10 + headerLength + 4 * (row * 5 + c)));
    assert.deepEqual(vector, byId.get(id)?.vector, `[seed ${seed}] row ${row} (${id})`);
  });

  await ok(['import', npyPath, '--ids', join(dir, 'out.ids.jsonl'), '--collection', 'copy', '--dim', '5', '--distance', 'euclid', '--db', db, '--quiet']);
  assert.equal(withoutVersions(await ok(['export', 'copy', '--db', db])), exportLines(points.map((p) => ({ ...p, payload: {} }))), `[seed ${seed}]`);
  // An ids file of another length is refused, naming it.
  writeFileSync(
    join(dir, 'short.ids.jsonl'),
    ids
      .slice(0, 10)
      .map((id) => JSON.stringify(id))
      .join('\n'),
  );
  const short = await kith(['import', npyPath, '--ids', join(dir, 'short.ids.jsonl'), '--collection', 'copy', '--db', db, '--quiet']);
  assert.equal(short.code, 1);
  assert.match(short.stderr, /short\.ids\.jsonl: 10 ids, but the vectors go on/);
  const noOut = await kith(['export', 'c', '--format', 'npy', '--db', db]);
  assert.equal(noOut.code, 2);
  assert.match(noOut.stderr, /--format npy: give the file with --out/);
});

/** Runs an async body with a seeded generator and names the seed when it fails. */
async function runSeeded(seed: number, body: (rng: SeededRng) => Promise<void>): Promise<void> {
  try {
    await body(new SeededRng(seed));
  } catch (error) {
    if (error instanceof Error) error.message = `[seed ${seed}] ${error.message}`;
    throw error;
  }
}
