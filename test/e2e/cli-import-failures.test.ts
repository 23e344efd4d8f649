/**
 * `kith import` when things go wrong, through the real binary against a database file (--db) and a
 * running server (--url): a failed import drops again a collection it created if nothing reached
 * it (and never one the user named); a partly written one is kept and the import prints the exact
 * command that resumes it (`--skip N`), after a bad line, Ctrl-C (SIGINT), SIGTERM or a server
 * that went away; broken files (random bytes, bad UTF-8, a directory, a pipe) are reported with
 * exit 1, never a crash; the summary tells points written from lines read; a BOM is skipped.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { collectionNames, fileAndServer, kith, ok, runPrinted, startKith, withoutVersions } from '../helpers/kith-cli.js';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

function writeLines(path: string, n: number, from = 0): void {
  const lines: string[] = [];
  for (let i = from; i < from + n; i++) lines.push(JSON.stringify({ id: i, vector: [(i % 13) + 1, i % 5, 1, 0], payload: { i } }));
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/** The command a failed import printed to resume it. */
function resumeCommandIn(stderr: string): string {
  const m = /^kith: to resume(?: once the file is fixed)?, run: (kith import .*)$/m.exec(stderr);
  assert.ok(m !== null, `no resume command in:\n${stderr}`);
  return m[1] as string;
}

test('a failed import drops the empty collection it created, never one the user named, and keeps a partial one saying how to resume', async (t) => {
  const dir = tempDir(t);
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"id": 1, "vector": [1, 0, 0, 0]}\n{"id": 2, "vector": [1, 0]}\n');
  const partial = join(dir, 'partial.jsonl');
  for (const where of await fileAndServer(t, dir)) {
    writeLines(partial, 25);
    // Created by this import, nothing written: dropped again.
    const created = await kith(['import', bad, '--collection', 'fresh', '--dim', '4', ...where.args]);
    assert.equal(created.code, 1, where.name);
    assert.equal(
      created.stderr,
      'kith: bad.jsonl:2: vector: expected 4 numbers, got 2\nkith: nothing was written; fresh, which this import created, was dropped again\n',
      where.name,
    );
    assert.deepEqual(await collectionNames(where), [], where.name);

    // An empty collection the user named stays.
    await ok(['import', partial, '--collection', 'mine', '--dim', '4', '--quiet', ...where.args]);
    await ok(['delete', 'mine', '--filter', '{}', ...where.args]);
    const named = await kith(['import', bad, '--collection', 'mine', ...where.args]);
    assert.equal(named.code, 1, where.name);
    assert.match(named.stderr, /\nkith: nothing was written to mine; to import once the file is fixed, run the same command again\n$/, where.name);
    assert.deepEqual(await collectionNames(where), ['mine'], where.name);

    // Created and partly written: kept, with how far it got and the command that goes on.
    writeFileSync(partial, `${readFileSync(partial, 'utf8')}{"id": "x", "vector": "no"}\n`);
    const args = ['import', partial, '--collection', 'part', '--dim', '4', '--distance', 'euclid', '--batch', '10', '--quiet', ...where.args];
    const run = await kith(args);
    assert.equal(run.code, 1, where.name);
    const lines = run.stderr.trimEnd().split('\n');
    assert.equal(lines[0], 'kith: partial.jsonl:26: vector: expected 4 numbers, got "no"', where.name);
    assert.match(
      lines[1] as string,
      /^kith: the first 20 points of .*partial\.jsonl \(through partial\.jsonl:20\) are durable in part, which this import created and keeps with them; the rest is not written$/,
      where.name,
    );
    assert.equal(resumeCommandIn(run.stderr), `kith ${[...args, '--skip', '20'].join(' ')}`, where.name);
    assert.equal(lines[3], `kith: or, to start over: kith drop part --yes ${where.args.join(' ')}`, where.name);
    assert.equal(await ok(['count', 'part', ...where.args]), '20\n', where.name);
    writeLines(partial, 30);
    const resumed = await runPrinted(resumeCommandIn(run.stderr));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /^imported 10 points into part from .*partial\.jsonl \(30 lines read, the first 20 skipped\) in 1 batch/, where.name);
    assert.equal(await ok(['count', 'part', ...where.args]), '30\n', where.name);
    const beyond = await kith([...args, '--skip', '31']);
    assert.equal(beyond.code, 1, where.name);
    assert.match(beyond.stderr, /^kith: --skip 31: the file has only 30 points\n/, where.name);
  }
});

test('Ctrl-C (SIGINT) and SIGTERM stop an import after its batch in flight and print the command that resumes it', async (t) => {
  const seed = testSeed(41);
  const rng = new SeededRng(seed);
  const dir = tempDir(t);
  const file = join(dir, 'big.jsonl');
  const total = 40000;
  const lines: string[] = [];
  for (let i = 0; i < total; i++) lines.push(JSON.stringify({ id: i % 3 === 0 ? `p-${i}` : i, vector: [rng.int(64), rng.int(64), 1, 0], payload: { i } }));
  writeFileSync(file, `${lines.join('\n')}\n`);
  const expected = lines
    .map((line) => JSON.parse(line) as { id: string | number; vector: number[]; payload: unknown })
    .map((p) => ({ ...p, id: String(p.id) }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((p) => `${JSON.stringify(p)}\n`)
    .join('');
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  for (const where of await fileAndServer(t, dir)) {
    for (const signal of signals) {
      const collection = `big-${signal}`;
      const args = ['import', file, '--collection', collection, '--dim', '4', '--distance', 'euclid', '--batch', '500', ...where.args];
      const child = startKith(args);
      await child.waitForStderr(/(durable through[^\n]*\n[\s\S]*){3}/);
      child.child.kill(signal);
      const end = await child.ended;
      const what = `[seed ${seed}] ${where.name} ${signal}`;
      assert.equal(end.code, signal === 'SIGINT' ? 130 : 143, `${what}: ${end.stderr}`);
      assert.match(end.stderr, new RegExp(`kith: ${signal}: stopping after the batch being written`), what);
      assert.match(end.stderr, new RegExp(`\\nkith: interrupted \\(${signal}\\)\\n`), what);
      const durable = Number(/the first (\d+) points of .*big\.jsonl \(through big\.jsonl:\1\) are durable in/.exec(end.stderr)?.[1]);
      const reported = [...end.stderr.matchAll(/durable through big\.jsonl:(\d+)/g)].map((m) => Number(m[1]));
      assert.equal(durable, reported.at(-1), `${what}: the last batch reported durable is where it stopped`);
      assert.ok(durable >= 1500 && durable < total && durable % 500 === 0, `${what}: ${durable} durable`);
      assert.equal(await ok(['count', collection, ...where.args]), `${durable}\n`, what);
      const command = resumeCommandIn(end.stderr);
      assert.equal(command, `kith ${[...args, '--skip', String(durable)].join(' ')}`, what);
      const resumed = await runPrinted(command);
      assert.equal(resumed.code, 0, `${what}: ${resumed.stderr}`);
      assert.equal(await ok(['count', collection, ...where.args]), `${total}\n`, what);
      if (where.name === '--db') assert.equal(withoutVersions(await ok(['export', collection, ...where.args])), expected, what);
    }
  }
});

test('a server that goes away mid-import: the error, what is durable, and the command that resumes against it once it is back', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'served.db');
  const file = join(dir, 'big.jsonl');
  writeLines(file, 60000);
  let server: ServerProcess = await startServer(db);
  t.after(() => server.stop());
  const port = new URL(server.url).port;
  const args = ['import', file, '--collection', 'c', '--dim', '4', '--batch', '500', '--url', server.url];
  const child = startKith(args);
  await child.waitForStderr(/(durable through[^\n]*\n[\s\S]*){3}/);
  await server.stop('SIGKILL');
  const end = await child.ended;
  assert.equal(end.code, 1, end.stderr);
  assert.match(end.stderr, /\nkith: cannot reach http:\/\/127\.0\.0\.1:\d+: /);
  const durable = Number(/the first (\d+) points of .*big\.jsonl .* are durable in c, which this import created and keeps with them/.exec(end.stderr)?.[1]);
  assert.ok(durable >= 1500 && durable < 60000, end.stderr);
  server = await startServer(db, ['-port', port]);
  const resumed = await runPrinted(resumeCommandIn(end.stderr));
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(await ok(['count', 'c', '--url', server.url]), '60000\n');
});

test('no file crashes an import: random bytes, bad UTF-8, a directory, a pipe; each is exit 1 with a message and leaves no collection', async (t) => {
  const seed = testSeed(42);
  const rng = new SeededRng(seed);
  const dir = tempDir(t);
  const random = Buffer.from(Array.from({ length: 5000 }, () => rng.int(256)));
  const files: [string, Buffer | 'dir' | 'fifo', RegExp][] = [
    ['random.jsonl', random, /^kith: random\.jsonl:\d+: not valid (UTF-8|JSON)/],
    ['random.csv', random, /^kith: random\.csv:\d+: /],
    ['random.tsv', random, /^kith: random\.tsv:\d+: /],
    ['random.fvecs', random, /^kith: random\.fvecs: vector 0: dimension -?\d+, expected 4/],
    ['random.bvecs', random, /^kith: random\.bvecs: vector 0: dimension -?\d+, expected 4/],
    [
      'latin1.jsonl',
      Buffer.concat([
        Buffer.from('{"id": 1, "vector": [1, 0, 0, 0]}\n\n'),
        Buffer.from('{"id": 2, "vector": [1, 0, 0, 0], "payload": {"city": "K\u00f6ln"}}\n', 'latin1'),
      ]),
      /^kith: latin1\.jsonl:3: not valid UTF-8/,
    ],
    [
      'latin1.csv',
      Buffer.concat([Buffer.from('id,vector,city\n1,"1 0 0 0",Bonn\n'), Buffer.from('2,"1 0 0 0",K\u00f6ln\n', 'latin1')]),
      /^kith: latin1\.csv:3: not valid UTF-8/,
    ],
    ['nul.jsonl', Buffer.from('\0\0\0\0\n'), /^kith: nul\.jsonl:1: not valid JSON/],
    ['dir.jsonl', 'dir', /^kith: .*dir\.jsonl: is a directory, not a file/],
    ['pipe.npy', 'fifo', /^kith: .*pipe\.npy: not a regular file \(a npy file is read by position\)/],
  ];
  for (const where of await fileAndServer(t, dir)) {
    for (const [name, content, message] of files) {
      const path = join(dir, name);
      if (content === 'dir') mkdirSync(path, { recursive: true });
      else if (content === 'fifo') {
        if (spawnSync('mkfifo', [path]).status !== 0 && where.name === '--db') throw new Error('mkfifo failed');
      } else writeFileSync(path, content);
      const run = await kith(['import', path, '--collection', 'broken', '--dim', '4', '--quiet', ...where.args]);
      assert.equal(run.code, 1, `[seed ${seed}] ${where.name} ${name}: ${run.stderr}`);
      assert.match(run.stderr, message, `[seed ${seed}] ${where.name} ${name}`);
      assert.doesNotMatch(run.stderr, /\n\s+at /, `${name}: a stack trace`);
    }
    assert.deepEqual(await collectionNames(where), [], `${where.name}: a failed import left the collection it created`);
  }
});

test('a named pipe streams JSON Lines; a BOM is skipped; the summary counts points written and lines read', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'bom.jsonl'), '\uFEFF{"id": 1, "vector": [1, 0]}\n{"id": 2, "vector": [0, 1]}\n');
  // Ids 1 and 2 twice each, a blank line: 5 lines, 3 points.
  writeFileSync(
    join(dir, 'dup.jsonl'),
    '{"id": 1, "vector": [1, 0]}\n{"id": 1, "vector": [1, 1]}\n\n{"id": 2, "vector": [0, 1]}\n{"id": "2", "vector": [0, 2]}\n{"id": 3, "vector": [1, 2]}\n',
  );
  const fifo = join(dir, 'pipe.jsonl');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
  for (const where of await fileAndServer(t, dir)) {
    const bom = await ok(['import', join(dir, 'bom.jsonl'), '--collection', 'bom', '--dim', '2', '--quiet', ...where.args]);
    assert.match(bom, /^imported 2 points into bom from .*bom\.jsonl \(2 lines read\) in 1 batch, /, where.name);
    const dup = await ok(['import', join(dir, 'dup.jsonl'), '--collection', 'dup', '--dim', '2', '--quiet', ...where.args]);
    assert.match(dup, /^imported 3 points into dup from .*dup\.jsonl \(5 lines read\) in 1 batch, /, where.name);
    assert.equal(await ok(['count', 'dup', ...where.args]), '3\n', where.name);
    const writer = spawn('sh', ['-c', `cat "${join(dir, 'dup.jsonl')}" > "${fifo}"`]);
    const written = new Promise((resolve) => writer.on('close', resolve));
    const piped = await ok(['import', fifo, '--collection', 'piped', '--dim', '2', '--quiet', ...where.args]);
    await written;
    assert.match(piped, /^imported 3 points into piped from .*pipe\.jsonl \(5 lines read\)/, where.name);
  }
});
