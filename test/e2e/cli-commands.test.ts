/**
 * The `kith` command line end to end, as a person runs it: the compiled entry that bin/kith.js
 * imports (dist…/src/cli/entry.js, spawned from the build folder these tests were compiled into,
 * since bin/kith.js itself always imports dist/), against a temp database file and against a
 * spawned server (--url). Exit codes: 0 ok, 1 failure, 2 usage.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { KITH_JS, kith, ok } from '../helpers/kith-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

/** The service through the CLI entry (`kith serve …` or `kith -port …`), on a random loopback port. */
async function startService(t: { after(fn: () => Promise<unknown>): void }, args: readonly string[]): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [KITH_JS, ...args, '-port', '0', '-host', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KITH_LOG_LEVEL: 'info', KITH_API_KEY: '' },
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  let output = '';
  return new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m !== null) resolve(m[1] as string);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => reject(new Error(`service exited before listening:\n${output}`)));
  });
}

const LINES = [
  { id: 1, vector: [1, 0, 0, 0], payload: { lang: 'en', n: 1 } },
  { id: 2, vector: [0.9, 0.1, 0, 0], payload: { lang: 'fr', n: 2 } },
  { id: 'doc-3', vector: [0, 1, 0, 0], payload: { lang: 'en', n: 3 } },
  { id: 4, vector: [0, 0, 1, 0], payload: { lang: 'de', n: 4 } },
  { id: 5, vector: [0, 0, 0, 1] },
];
const EN = JSON.stringify({ must: [{ key: 'lang', match: { value: 'en' } }] });

function fixture(dir: string): string {
  const file = join(dir, 'points.jsonl');
  writeFileSync(file, `${LINES.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return file;
}

/** The same commands, the same answers, through --db and --url. */
async function exerciseCommands(where: readonly string[], file: string): Promise<void> {
  const imported = await ok(['import', file, '--collection', 'docs', '--dim', '4', '--distance', 'cosine', '--quiet', ...where]);
  assert.match(imported, /imported 5 points into docs/);

  const ls = (await ok(['ls', ...where])).split('\n');
  assert.match(ls[0] as string, /^NAME\s+DIM\s+DISTANCE\s+INDEX\s+POINTS$/);
  assert.match(ls[1] as string, /^docs\s+4\s+Cosine\s+flat\s+5$/);
  assert.deepEqual(
    JSON.parse(await ok(['ls', '--json', ...where])).map((c: { name: string }) => c.name),
    ['docs'],
  );

  const info = JSON.parse(await ok(['info', 'docs', ...where]));
  assert.equal(info.vector_size, 4);
  assert.equal(info.points_count, 5);

  assert.equal(await ok(['count', 'docs', ...where]), '5\n');
  assert.equal(await ok(['count', 'docs', '--filter', EN, ...where]), '2\n');
  assert.equal(await ok(['count', 'docs', '--filter', JSON.stringify({ must_not: [{ key: 'lang', match: { value: 'en' } }] }), ...where]), '3\n');
  const badFilter = await kith(['count', 'docs', '--filter', '{"must":3}', ...where]);
  assert.equal(badFilter.code, 1, badFilter.stderr);
  assert.match(badFilter.stderr, /filter\.must/);

  const table = (await ok(['search', 'docs', '--vector', '[1, 0.05, 0, 0]', '--limit', '2', ...where])).trimEnd().split('\n');
  assert.match(table[0] as string, /^ID\s+SCORE\s+PAYLOAD$/);
  assert.deepEqual(
    table.slice(1).map((row) => row.split(/\s+/)[0]),
    ['1', '2'],
  );
  assert.match(table[1] as string, /\{"lang":"en","n":1\}$/);
  const filteredHits = JSON.parse(await ok(['search', 'docs', '--vector', '[0, 1, 0, 0]', '--filter', EN, '--json', ...where]));
  assert.deepEqual(
    filteredHits.map((h: { id: string }) => h.id),
    ['doc-3', '1'],
  );

  const point = JSON.parse(await ok(['get', 'docs', 'doc-3', ...where]));
  assert.deepEqual([point.id, point.vector, point.payload], ['doc-3', [0, 1, 0, 0], { lang: 'en', n: 3 }]);
  assert.match(point.version, /^\d+$/);
  const missing = await kith(['get', 'docs', 'nope', ...where]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /point "nope" does not exist.* \[ERR_POINT_NOT_FOUND\]\n$/);

  assert.equal(await ok(['delete', 'docs', '--ids', '1,4', ...where]), 'deleted 2 points\n');
  assert.equal(await ok(['delete', 'docs', '--filter', EN, ...where]), 'deleted 1 point\n');
  assert.equal(await ok(['count', 'docs', ...where]), '2\n');
  // Without a terminal to ask on, drop needs --yes; without it nothing is dropped.
  const unasked = await kith(['drop', 'docs', ...where]);
  assert.equal(unasked.code, 2, unasked.stderr);
  assert.match(unasked.stderr, /^kith: drop: stdin is not a terminal, so no one can confirm; pass --yes to drop docs without asking\n/);
  assert.equal(await ok(['count', 'docs', ...where]), '2\n');
  assert.equal(await ok(['drop', 'docs', '--yes', ...where]), 'dropped collection docs\n');
  assert.equal(await ok(['ls', ...where]), 'no collections\n');
  const gone = await kith(['info', 'docs', ...where]);
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /collection "docs" does not exist.* \[ERR_COLLECTION_NOT_FOUND\]\n$/);
}

test('every command against a database file (--db)', async (t) => {
  const dir = tempDir(t);
  await exerciseCommands(['--db', join(dir, 'kith.db')], fixture(dir));
});

test('every command against a running server (--url), started with kith serve; the file is refused while it runs', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const url = await startService(t, ['serve', '-db', db]);
  await exerciseCommands(['--url', url], fixture(dir));
  const locked = await kith(['ls', '--db', db]);
  assert.equal(locked.code, 1);
  assert.match(locked.stderr, /ERR_DATABASE_LOCKED/);
  assert.match(locked.stderr, /--url/);
});

test('kith with service flags and no command still starts the service', async (t) => {
  const dir = tempDir(t);
  const url = await startService(t, ['-db', join(dir, 'kith.db')]);
  const response = await fetch(`${url}/healthz`);
  assert.equal(response.status, 200);
});

test('usage errors exit 2, failures exit 1, --help exits 0 everywhere', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  await ok(['import', fixture(dir), '--collection', 'docs', '--dim', '4', '--db', db, '--quiet']);
  const usage: [string[], RegExp][] = [
    [['search', 'docs', '--db', db], /required option '--vector <json>'/],
    [['search', 'docs', '--vector', '[1,2', '--db', db], /--vector: not valid JSON/],
    [['search', 'docs', '--vector', '{"a":1}', '--db', db], /--vector: expected a JSON array/],
    [['search', 'docs', '--vector', '[1,0,0,0]', '--limit', 'ten', '--db', db], /--limit: expected an integer/],
    [['count', 'docs', '--filter', '{nope', '--db', db], /--filter: not valid JSON/],
    [['delete', 'docs', '--db', db], /exactly one of --ids or --filter/],
    [['delete', 'docs', '--ids', '1', '--filter', '{}', '--db', db], /exactly one of --ids or --filter/],
    [['ls', '--db', db, '--url', 'http://127.0.0.1:1'], /--db and --url: give one, not both/],
    [['ls', '--url', 'localhost:18080'], /--url: expected http/],
    [['drop', 'docs', '--db', db], /pass --yes/],
    [['ls', '--frobnicate'], /unknown option '--frobnicate'/],
    [['info'], /missing required argument 'collection'/],
    [['import', join(dir, 'x.parquet'), '--collection', 'docs', '--db', db], /cannot tell the format/],
    [['import', fixture(dir), '--collection', 'docs', '--batch', '0', '--db', db], /--batch: expected an integer/],
  ];
  for (const [args, message] of usage) {
    const run = await kith(args);
    assert.equal(run.code, 2, `kith ${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
  const failures: [string[], RegExp][] = [
    [['ls', '--db', join(dir, 'missing.db')], /missing\.db does not exist/],
    [['count', 'nope', '--db', db], /collection "nope" does not exist/],
    [['search', 'docs', '--vector', '[1, 0]', '--db', db], /vector: expected 4 numbers|vector.*4/],
    [['count', 'docs', '--filter', '{"must":[{"key":"lang"}]}', '--db', db], /filter\.must\[0\]/],
    [['ls', '--url', 'http://127.0.0.1:1'], /^kith: cannot reach http:\/\/127\.0\.0\.1:1: /],
    [['import', join(dir, 'absent.jsonl'), '--collection', 'docs', '--db', db], /absent\.jsonl: cannot read \(ENOENT\)/],
    [['import', fixture(dir), '--collection', 'fresh', '--db', db], /collection "fresh" does not exist; give --dim/],
    [['import', fixture(dir), '--collection', 'docs', '--dim', '8', '--db', db], /holds 4-dimensional vectors, not --dim 8/],
  ];
  for (const [args, message] of failures) {
    const run = await kith(args);
    assert.equal(run.code, 1, `kith ${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
  for (const command of ['ls', 'info', 'count', 'search', 'get', 'delete', 'drop', 'import', 'export', 'backup', 'check', 'shell']) {
    const run = await kith([command, '--help']);
    assert.equal(run.code, 0, `kith ${command} --help`);
    assert.match(run.stdout, new RegExp(`^Usage: kith ${command}`));
  }
  const top = await kith(['--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /Commands:/);
  assert.match(top.stdout, /-shutdown-timeout/);
  const serviceHelp = await kith(['-help']);
  assert.equal(serviceHelp.code, 0);
  assert.match(serviceHelp.stdout, /^Usage: kith \[flags\]/);
  const serveHelp = await kith(['serve', '-help']);
  assert.equal(serveHelp.code, 0);
  assert.match(serveHelp.stdout, /-qdrant-port/);
});

test('KITH_URL names the server when neither --db nor --url is given; a flag wins over it', async (t) => {
  const dir = tempDir(t);
  const url = await startService(t, ['serve', '-db', join(dir, 'served.db')]);
  const file = join(dir, 'local.db');
  await ok(['import', fixture(dir), '--collection', 'local', '--dim', '4', '--db', file, '--quiet']);
  const env = { KITH_URL: url };
  // In a folder of its own: a run that missed KITH_URL would write ./kith.db there, not in the repository.
  const run = { env, cwd: dir };
  await ok(['import', fixture(dir), '--collection', 'served', '--dim', '4', '--quiet'], run);
  assert.match(await ok(['ls'], run), /^served\s/m);
  assert.doesNotMatch(await ok(['ls'], run), /^local\s/m);
  assert.match(await ok(['ls', '--db', file], run), /^local\s/m, '--db wins over KITH_URL');
  const other = await kith(['ls', '--url', 'http://127.0.0.1:9'], run);
  assert.match(other.stderr, /cannot reach http:\/\/127\.0\.0\.1:9/, '--url wins over KITH_URL');
  // In a folder without kith.db, no KITH_URL means the default file, which is missing.
  const noUrl = await kith(['ls'], { env: { KITH_URL: '' }, cwd: dir });
  assert.equal(noUrl.code, 1);
  assert.match(noUrl.stderr, /database file kith\.db does not exist/);
  const bad = await kith(['ls'], { env: { KITH_URL: 'localhost:18080' }, cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /KITH_URL: expected http:\/\/HOST:PORT, got "localhost:18080"/);
  // The export from the server holds what the same file imported into a database file holds (its ids sort the same both ways here).
  await ok(['export', 'served', '--out', join(dir, 'served.jsonl'), '--quiet'], run);
  const unversioned = (text: string): string => text.replace(/"version":"\d+",/g, '');
  assert.equal(unversioned(readFileSync(join(dir, 'served.jsonl'), 'utf8')), unversioned(await ok(['export', 'local', '--db', file], run)));
  assert.equal(await ok(['drop', 'served', '--yes'], run), 'dropped collection served\n');
  // kith backup goes to the server too.
  await ok(['backup', join(dir, 'copy.db'), '--quiet'], run);
  assert.equal((await kith(['check', join(dir, 'copy.db')])).code, 0);
});
