/**
 * `kith import` of CSV and TSV columns, through the real binary against a database file (--db) and
 * a running server (--url): one type per payload column (decided from the first rows, said on
 * stderr, or given with --types; a later cell that does not fit stops the import naming it),
 * vectors as one column per component (--vector-columns, --vector-prefix), --delimiter and .tsv,
 * and column names that would poison a payload.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { collectionNames, fileAndServer, kith, ok, runPrinted, type Where } from '../helpers/kith-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Each point's payload and vector as `kith get` shows them. */
async function pointsOf(where: Where, collection: string, ids: readonly (string | number)[]): Promise<Record<string, { payload: unknown; vector: number[] }>> {
  const out: Record<string, { payload: unknown; vector: number[] }> = {};
  for (const id of ids) {
    const point = JSON.parse(await ok(['get', collection, String(id), ...where.args])) as { payload: unknown; vector: number[] };
    out[String(id)] = { payload: point.payload, vector: point.vector };
  }
  return out;
}

async function exists(where: Where, collection: string): Promise<boolean> {
  return (await collectionNames(where)).includes(collection);
}

async function hitIds(where: Where, collection: string, filter: unknown): Promise<string[]> {
  const hits = JSON.parse(await ok(['search', collection, '--vector', '[1, 1]', '--filter', JSON.stringify(filter), '--limit', '10', '--json', ...where.args]));
  return hits.map((h: { id: string }) => h.id).sort();
}

test('CSV: a payload column has one type, decided from its first rows and said on stderr; filters find every row', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'types.csv');
  writeFileSync(
    file,
    'id,vector,zip,flag,n,big,note,blank\n' +
      '1,"1 0",01234,TRUE,1,12345678901234567890,a,\n' +
      '2,"0 1",99999,true,2.5,1,b,\n' +
      '3,"1 1",00042,False,-3,2,,\n',
  );
  for (const where of await fileAndServer(t, dir)) {
    const run = await kith(['import', file, '--collection', 'typed', '--dim', '2', '--distance', 'euclid', ...where.args]);
    assert.equal(run.code, 0, `${where.name}: ${run.stderr}`);
    assert.match(
      run.stderr,
      /^kith: types\.csv: ids from "id", vectors from "vector", payload zip string, flag boolean, n number, big string, note string, blank string \(no value seen\); types from the first 1000 rows \(--types COLUMN:TYPE,… sets them\)\n/,
      where.name,
    );
    assert.deepEqual(
      await pointsOf(where, 'typed', [1, 2, 3]),
      {
        // Leading zeros keep a column text, 99999 included; TRUE and true are one boolean; an integer beyond 2^53 keeps its column text.
        1: { payload: { zip: '01234', flag: true, n: 1, big: '12345678901234567890', note: 'a' }, vector: [1, 0] },
        2: { payload: { zip: '99999', flag: true, n: 2.5, big: '1', note: 'b' }, vector: [0, 1] },
        3: { payload: { zip: '00042', flag: false, n: -3, big: '2' }, vector: [1, 1] },
      },
      where.name,
    );
    // A filter written for the column's type finds every row of it.
    assert.deepEqual(await hitIds(where, 'typed', { must: [{ key: 'zip', match: { value: '99999' } }] }), ['2'], where.name);
    assert.deepEqual(await hitIds(where, 'typed', { must: [{ key: 'flag', match: { value: true } }] }), ['1', '2'], where.name);
    assert.deepEqual(await hitIds(where, 'typed', { must: [{ key: 'big', match: { value: '1' } }] }), ['2'], where.name);

    // --types sets a column's type; a cell that does not fit it stops the import, naming line and column.
    const given = await kith(['import', file, '--collection', 'given', '--dim', '2', '--types', 'zip:number', '--quiet', ...where.args]);
    assert.equal(given.code, 1, where.name);
    assert.match(given.stderr, /^kith: types\.csv:2: zip: "01234" is not a number \(--types zip:number\)\n/, where.name);
    assert.equal(await exists(where, 'given'), false, `${where.name}: the failed import left the collection it created`);
    await ok(['import', file, '--collection', 'given', '--dim', '2', '--types', 'n:string,flag:string', '--quiet', ...where.args]);
    assert.deepEqual((await pointsOf(where, 'given', [2]))['2']?.payload, { zip: '99999', flag: 'true', n: '2.5', big: '1', note: 'b' }, where.name);

    const unknown = await kith(['import', file, '--collection', 'given2', '--dim', '2', '--types', 'nope:string', '--quiet', ...where.args]);
    assert.equal(unknown.code, 1, where.name);
    assert.match(unknown.stderr, /types\.csv:1: --types names column "nope", which the header row does not have/, where.name);
    assert.equal(await exists(where, 'given2'), false, where.name);
    for (const [types, message] of [
      ['zip', /--types: expected COLUMN:TYPE/],
      ['zip:text', /--types: zip: expected one of string, number, boolean, json, got "text"/],
      ['zip:string,zip:number', /--types: zip is given twice/],
    ] as const) {
      const usage = await kith(['import', file, '--collection', 'given3', '--dim', '2', '--types', types, ...where.args]);
      assert.equal(usage.code, 2, `${where.name} ${types}: ${usage.stderr}`);
      assert.match(usage.stderr, message);
    }
    assert.equal(await exists(where, 'given3'), false, where.name);
  }
});

test('CSV: a cell after the first 1000 rows that does not fit its column stops the import naming it; --types and --skip go on', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'late.csv');
  const rows = Array.from({ length: 1500 }, (_, i) => `${i},"${i % 7} 1",${i === 1200 ? 'N/A' : i}`);
  writeFileSync(file, `id,vector,n\n${rows.join('\n')}\n`);
  for (const where of await fileAndServer(t, dir)) {
    const args = ['import', file, '--collection', 'late', '--dim', '2', '--distance', 'euclid', '--batch', '500', '--quiet', ...where.args];
    const run = await kith(args);
    assert.equal(run.code, 1, where.name);
    const lines = run.stderr.split('\n');
    assert.equal(
      lines[0],
      'kith: late.csv:1202: n: "N/A" is not a number (the column is number, from its first 1000 rows; --types n:string keeps every value as text)',
      where.name,
    );
    assert.match(
      lines[1] as string,
      /^kith: the first 1000 points of .*late\.csv \(through late\.csv:1001\) are durable in late, which this import created and keeps with them; the rest is not written$/,
      where.name,
    );
    const resume = /^kith: to resume once the file is fixed, run: (kith import .*late\.csv --collection late .* --skip 1000)$/.exec(lines[2] as string);
    assert.ok(resume !== null, `${where.name}: ${run.stderr}`);
    assert.equal(await ok(['count', 'late', ...where.args]), '1000\n', where.name);

    // Fixed, the printed command writes the rest only.
    writeFileSync(file, `id,vector,n\n${rows.join('\n').replace('N/A', '1200')}\n`);
    const resumed = await runPrinted(resume[1] as string);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /imported 500 points into late from .*late\.csv \(1500 rows read, the first 1000 skipped\) in 1 batch/, where.name);
    assert.deepEqual((await pointsOf(where, 'late', [1200]))['1200']?.payload, { n: 1200 }, where.name);
    assert.equal(await ok(['count', 'late', ...where.args]), '1500\n', where.name);

    // Or the column declared text: every value of it, from the first row.
    writeFileSync(file, `id,vector,n\n${rows.join('\n')}\n`);
    const typed = await ok([...args, '--collection', 'late-text', '--types', 'n:string']);
    assert.match(typed, /imported 1500 points into late-text from .*late\.csv \(1500 rows read\) in 3 batches/, where.name);
    const points = await pointsOf(where, 'late-text', [0, 1200, 1499]);
    assert.deepEqual([points['0']?.payload, points['1200']?.payload, points['1499']?.payload], [{ n: '0' }, { n: 'N/A' }, { n: '1499' }], where.name);
  }
});

test('CSV: a column named __proto__ is refused, naming it; constructor and prototype are kept as fields; a JSON cell with __proto__ names its line', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'proto.csv'), 'id,vector,__proto__\n1,"1 2",x\n');
  writeFileSync(join(dir, 'fields.csv'), 'id,vector,constructor,prototype,toString\n1,"1 2",c,p,t\n');
  writeFileSync(join(dir, 'cell.csv'), 'id,vector,j\n1,"1 2","{""a"": 1}"\n2,"1 2","{""__proto__"": {""polluted"": 1}}"\n');
  for (const where of await fileAndServer(t, dir)) {
    const proto = await kith(['import', join(dir, 'proto.csv'), '--collection', 'proto', '--dim', '2', ...where.args]);
    assert.equal(proto.code, 1, where.name);
    assert.match(
      proto.stderr,
      /^kith: proto\.csv:1: column "__proto__" cannot be a payload field \(kith refuses the key: prototype poisoning\); rename it in the header\n/,
    );
    assert.match(proto.stderr, /nothing was written; proto, which this import created, was dropped again\n/);
    assert.equal(await exists(where, 'proto'), false, where.name);

    await ok(['import', join(dir, 'fields.csv'), '--collection', 'fields', '--dim', '2', '--quiet', ...where.args]);
    assert.deepEqual((await pointsOf(where, 'fields', [1]))['1']?.payload, { constructor: 'c', prototype: 'p', toString: 't' }, where.name);

    const cell = await kith(['import', join(dir, 'cell.csv'), '--collection', 'cell', '--dim', '2', '--quiet', ...where.args]);
    assert.equal(cell.code, 1, where.name);
    assert.match(cell.stderr, /^kith: cell\.csv:3: j\.__proto__: the key "__proto__" is not accepted/, where.name);
    assert.equal(await exists(where, 'cell'), false, where.name);
  }
});

test('CSV and TSV: one column per vector component (--vector-columns, --vector-prefix), --delimiter, .tsv by its extension', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'v.tsv'), 'id\tlang\tv2\tv0\tv1\n1\ten\t.5\t0.5\t1\n2\tfr,de\t3.\t1e-3\t+2\n');
  writeFileSync(join(dir, 'semi.csv'), 'id;x;y;z;note\n1;1;2;3;"a;b"\n2;4;5;6;c\n');
  writeFileSync(join(dir, 'tabs.txt'), 'id\te1\te2\te3\n7\t1\t0\t0\n');
  writeFileSync(join(dir, 'padded.csv'), 'id,f08,f09,f10\n1,1,2,3\n');
  const expectTsv = { 1: { payload: { lang: 'en' }, vector: [0.5, 1, 0.5] }, 2: { payload: { lang: 'fr,de' }, vector: [0.001, 2, 3] } };
  for (const where of await fileAndServer(t, dir)) {
    const common = ['--dim', '3', '--distance', 'euclid', ...where.args];
    const tsv = await kith(['import', join(dir, 'v.tsv'), '--collection', 'tsv', '--vector-prefix', 'v', ...common]);
    assert.equal(tsv.code, 0, tsv.stderr);
    assert.match(tsv.stderr, /^kith: v\.tsv: ids from "id", vectors from v0…v2 \(3 columns\), payload lang string;/, where.name);
    const tsvPoints = await pointsOf(where, 'tsv', [1, 2]);
    assert.deepEqual(tsvPoints['1'], expectTsv[1], where.name);
    assert.deepEqual(tsvPoints['2']?.payload, expectTsv[2].payload, where.name);
    assert.ok(Math.abs((tsvPoints['2']?.vector[0] as number) - 0.001) < 1e-7, where.name);
    await ok(['import', join(dir, 'semi.csv'), '--collection', 'semi', '--vector-columns', 'x,y,z', '--delimiter', ';', '--quiet', ...common]);
    assert.deepEqual(
      await pointsOf(where, 'semi', [1, 2]),
      { 1: { payload: { note: 'a;b' }, vector: [1, 2, 3] }, 2: { payload: { note: 'c' }, vector: [4, 5, 6] } },
      where.name,
    );
    await ok([
      'import',
      join(dir, 'tabs.txt'),
      '--format',
      'csv',
      '--collection',
      'tabs',
      '--vector-columns',
      'e1..e3',
      '--delimiter',
      'tab',
      '--quiet',
      ...common,
    ]);
    assert.deepEqual(await pointsOf(where, 'tabs', [7]), { 7: { payload: {}, vector: [1, 0, 0] } }, where.name);
    await ok(['import', join(dir, 'padded.csv'), '--collection', 'padded', '--vector-columns', 'f08..f10', '--quiet', ...common]);
    assert.deepEqual(await pointsOf(where, 'padded', [1]), { 1: { payload: {}, vector: [1, 2, 3] } }, where.name);
  }
});

test('CSV vector columns: a missing, skipped or extra column and a cell that is no number are named; options out of place are usage errors', async (t) => {
  const dir = tempDir(t);
  const write = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const where = ['--db', join(dir, 'kith.db')];
  const failures: [string[], RegExp][] = [
    [[write('gap.csv', 'id,v0,v1,v3\n1,1,2,3\n'), '--vector-prefix', 'v'], /gap\.csv:1: --vector-prefix: the columns v<n> skip v2 \(found v3\)/],
    [[write('none.csv', 'id,a,b\n1,1,2\n'), '--vector-prefix', 'v'], /none\.csv:1: --vector-prefix: no column is named "v" followed by a number/],
    [
      [write('four.csv', 'id,v0,v1,v2,v3\n1,1,2,3,4\n'), '--vector-prefix', 'v'],
      /four\.csv:1: 4 vector columns \(v0…v3\), the collection's vectors have 3 components/,
    ],
    [[write('missing.csv', 'id,x,y\n1,1,2\n'), '--vector-columns', 'x,y,z'], /missing\.csv:1: --vector-columns: the header row has no column "z"/],
    [[write('word.csv', 'id,x,y,z\n1,1,2,3\n2,1,two,3\n'), '--vector-columns', 'x..z'], /--vector-columns: the header row has no column "x\.\.z"/],
    [
      [write('word2.csv', 'id,x,y,z\n1,1,2,3\n2,1,two,3\n'), '--vector-columns', 'x,y,z'],
      /word2\.csv:3: y: expected a number \(a vector component\), got "two"/,
    ],
    [[write('empty.csv', 'id,x,y,z\n1,1,,3\n'), '--vector-columns', 'x,y,z'], /empty\.csv:2: y: empty \(a vector component\)/],
    [
      [write('noid.csv', 'x,y,z\n1,2,3\n'), '--vector-columns', 'x,y,z', '--id-column', 'x'],
      /noid\.csv:1: column "x" cannot be both the id and a vector column/,
    ],
  ];
  for (const [args, message] of failures) {
    const run = await kith(['import', ...args, '--collection', 'c', '--dim', '3', '--quiet', ...where]);
    assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
  assert.equal(await ok(['ls', ...where]), 'no collections\n', 'a failed import left the collection it created');
  const jsonl = write('p.jsonl', '{"id": 1, "vector": [1, 2, 3]}\n');
  const usage: [string[], RegExp][] = [
    [
      [write('ok.csv', 'id,x,y,z\n1,1,2,3\n'), '--vector-columns', 'x,y,z', '--vector-prefix', 'v'],
      /--vector-column, --vector-columns, --vector-prefix: give one/,
    ],
    [[join(dir, 'ok.csv'), '--delimiter', ';;'], /--delimiter: expected one character/],
    [[join(dir, 'ok.csv'), '--delimiter', '"'], /--delimiter: expected one character/],
    [[join(dir, 'ok.csv'), '--vector-columns', 'x,,z'], /--vector-columns: expected column names separated by commas/],
    [[join(dir, 'ok.csv'), '--vector-columns', 'v9..v2'], /--vector-columns: v9\.\.v2: expected from ≤ to/],
    [[jsonl, '--delimiter', ';'], /--delimiter: only for CSV and TSV files, not jsonl/],
    [[jsonl, '--types', 'a:string'], /--types: only for CSV and TSV files, not jsonl/],
    [[jsonl, '--id-column', 'key'], /--id-column: only for CSV and TSV files, not jsonl/],
  ];
  for (const [args, message] of usage) {
    const run = await kith(['import', ...args, '--collection', 'c', '--dim', '3', '--quiet', ...where]);
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
});
