/**
 * `kith shell` driven through a real pseudo-terminal: tmux runs the shell in a detached session,
 * the test types with send-keys (Tab included) and reads the screen with capture-pane. Against a
 * database file and against a real server process. tmux is required: without it the test fails.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { kith, ok, startInTerminal } from '../helpers/kith-cli.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

/** `kith shell …args` in a terminal, its history in `history`. */
function startShell(t: { after(fn: () => void): void }, args: readonly string[], history: string) {
  return startInTerminal(t, ['shell', ...args], { env: { KITH_HISTORY: history } });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('kith shell on a file: Tab completes commands and collections, JSON with spaces, tables, help, history, Ctrl-D', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const file = join(dir, 'docs.jsonl');
  writeFileSync(
    file,
    [
      { id: 1, vector: [1, 0, 0, 0], payload: { lang: 'en', title: 'one' } },
      { id: 2, vector: [0.9, 0.1, 0, 0], payload: { lang: 'fr', title: 'two' } },
      { id: 3, vector: [0, 0, 1, 0], payload: { lang: 'en', title: 'three' } },
    ]
      .map((p) => JSON.stringify(p))
      .join('\n'),
  );
  await ok(['import', file, '--collection', 'documents', '--dim', '4', '--db', db, '--quiet']);
  await ok(['import', file, '--collection', 'drafts', '--dim', '4', '--db', db, '--quiet']);
  const history = join(dir, 'history');
  writeFileSync(history, 'ls\n');
  const shell = startShell(t, ['--db', db], history);
  await shell.waitFor(/kith shell on .*kith\.db; type help/, 'the banner');
  await shell.waitForLast('kith>', 'the prompt');

  // Tab completes the command, then (two candidates) lists the collections, then completes one.
  await shell.type('sea');
  await shell.keys('Tab');
  await shell.waitForLast('kith> search', 'command completion');
  await shell.type('do');
  await shell.keys('Tab');
  await shell.waitForLast('kith> search documents', 'collection completion');
  await shell.type('[1, 0, 0, 0] --limit 2 --filter {"must": [{"key": "lang", "match": {"value": "en"}}]}');
  await shell.keys('Enter');
  const hits = await shell.waitFor(
    /ID\s+SCORE\s+PAYLOAD\n1\s+1\.00000\s+\{"lang":"en","title":"one"\}\n3\s+0\.00000\s+\{"lang":"en","title":"three"\}\n/,
    'the search table',
  );
  assert.doesNotMatch(hits, /"two"/);

  await shell.type('d');
  await shell.keys('Tab');
  await shell.keys('Tab');
  await shell.waitFor(/delete\s+drop/, 'two candidates listed');
  await shell.keys('C-u');

  await shell.type('upsert documents "an id" [0, 1, 0, 0] {"lang": "x y", "n": 2}');
  await shell.keys('Enter');
  await shell.waitFor(/upserted an id\n/, 'upsert');
  await shell.type("get documents 'an id'");
  await shell.keys('Enter');
  await shell.waitFor(/FIELD\s+VALUE\nid\s+an id\nversion\s+\d+\npayload\s+\{"lang":"x y","n":2\}\nvector\s+\[0,1,0,0\]/, 'get as a table');
  await shell.type('count documents {"must": [{"key": "lang", "match": {"value": "x y"}}]}');
  await shell.keys('Enter');
  await shell.waitFor(/"x y"\}\}\]\}\n1\nkith>/, 'count with a filter');
  await shell.type('ls');
  await shell.keys('Enter');
  await shell.waitFor(/NAME\s+DIM\s+DISTANCE\s+INDEX\s+POINTS\ndocuments\s+4\s+Cosine\s+flat\s+4\ndrafts\s+4\s+Cosine\s+flat\s+3\n/, 'ls table');
  await shell.type('search documents [1, 0');
  await shell.keys('Enter');
  await shell.waitFor(/error: unbalanced \[: \[1, 0\n/, 'an unbalanced bracket');
  await shell.type('info nope');
  await shell.keys('Enter');
  await shell.waitFor(/error: collection "nope" does not exist \[ERR_COLLECTION_NOT_FOUND\]\n/, 'an error, and the shell goes on');
  await shell.type('frobnicate');
  await shell.keys('Enter');
  await shell.waitFor(/unknown command "frobnicate"; type help for the list\n/, 'unknown command');
  await shell.type('help');
  await shell.keys('Enter');
  await shell.waitFor(/COMMAND\s+WHAT IT DOES[\s\S]*search COLLECTION VECTOR \[--limit N\] \[--filter FILTER\][\s\S]*exit\s+leave the shell/, 'help');

  // Up recalls the previous line.
  await shell.keys('Up');
  await shell.waitForLast('kith> help', 'history: Up');
  await shell.keys('C-u');
  await shell.keys('C-d');
  for (let i = 0; i < 100 && shell.alive(); i++) await sleep(50);
  assert.equal(shell.alive(), false, 'Ctrl-D did not end the shell');
  const saved = readFileSync(history, 'utf8').trimEnd().split('\n');
  assert.equal(saved[0], 'ls', 'the history file kept its earlier lines');
  assert.ok(saved.includes('search documents [1, 0, 0, 0] --limit 2 --filter {"must": [{"key": "lang", "match": {"value": "en"}}]}'), saved.join('\n'));
  assert.equal(saved.at(-1), 'help');
  // The upsert went to the file.
  assert.match(await ok(['get', 'documents', 'an id', '--db', db]), /"lang": "x y"/);
});

test('kith shell --url: the same commands against a running server; exit leaves', async (t) => {
  const dir = tempDir(t);
  const server = await startServer(join(dir, 'served.db'));
  t.after(() => server.stop());
  const created = await httpJson(server.url, 'POST', '/collections', { name: 'remote', vector_size: 2, distance: 'dot' });
  assert.equal(created.status, 200, created.raw);
  const history = join(dir, 'history');
  const shell = startShell(t, ['--url', server.url], history);
  await shell.waitFor(/kith shell on http:\/\/127\.0\.0\.1:\d+; type help/, 'banner');
  await shell.type('upsert re');
  await shell.keys('Tab');
  await shell.waitForLast('kith> upsert remote', 'completion of a served collection');
  await shell.type('7 [2, 3] {"tag": "a b"}');
  await shell.keys('Enter');
  await shell.waitFor(/upserted 7\n/, 'upsert over --url');
  await shell.type('search remote [1, 1]');
  await shell.keys('Enter');
  await shell.waitFor(/ID\s+SCORE\s+PAYLOAD\n7\s+5\.00000\s+\{"tag":"a b"\}\n/, 'search over --url');
  const point = await httpJson(server.url, 'GET', '/collections/remote/points/7');
  assert.equal(point.status, 200, point.raw);
  await shell.type('exit');
  await shell.keys('Enter');
  for (let i = 0; i < 100 && shell.alive(); i++) await sleep(50);
  assert.equal(shell.alive(), false, 'exit did not end the shell');
  assert.ok(existsSync(history));
  assert.deepEqual(readFileSync(history, 'utf8').trimEnd().split('\n'), ['upsert remote 7 [2, 3] {"tag": "a b"}', 'search remote [1, 1]', 'exit']);
});

test('kith drop asks on a terminal (n, Ctrl-C keep the collection; y drops it); the shell asks too; without a terminal --yes is required', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'kith.db');
  const file = join(dir, 'docs.jsonl');
  writeFileSync(file, '{"id": 1, "vector": [1, 0]}\n{"id": 2, "vector": [0, 1]}\n{"id": 3, "vector": [1, 1]}\n');
  for (const name of ['keep', 'gone', 'asked', 'piped']) await ok(['import', file, '--collection', name, '--dim', '2', '--db', db, '--quiet']);
  const names = async (): Promise<string[]> => JSON.parse(await ok(['ls', '--json', '--db', db])).map((c: { name: string }) => c.name);

  for (const [answer, keys] of [
    ['n', ['n', 'Enter']],
    ['Ctrl-C', ['C-c']],
    ['an empty line', ['Enter']],
  ] as const) {
    const terminal = startInTerminal(t, ['drop', 'keep', '--db', db], { showExit: true });
    await terminal.waitFor(/drop collection keep and its 3 points \(.*kith\.db\)\? \[y\/N\]/, `the question (${answer})`);
    await terminal.keys(...keys);
    const screen = await terminal.waitFor(/\[exit \d+\]/, `the end (${answer})`);
    assert.match(screen, /kith: keep not dropped\n[\s\S]*\[exit 1\]/, answer);
    assert.ok((await names()).includes('keep'), `${answer} dropped the collection`);
  }
  const yes = startInTerminal(t, ['drop', 'gone', '--db', db], { showExit: true });
  await yes.waitFor(/drop collection gone and its 3 points .*\? \[y\/N\]/, 'the question');
  await yes.type('y');
  await yes.keys('Enter');
  assert.match(await yes.waitFor(/\[exit \d+\]/, 'the end'), /dropped collection gone\n\[exit 0\]/);
  assert.deepEqual((await names()).sort(), ['asked', 'keep', 'piped']);

  // The shell asks at its prompt; --yes does not.
  const shell = startInTerminal(t, ['shell', '--db', db], { env: { KITH_HISTORY: join(dir, 'history') } });
  await shell.waitForLast('kith>', 'the prompt');
  const askDrop = async (what: string): Promise<void> => {
    await shell.type('drop asked');
    await shell.keys('Enter');
    await shell.waitForLast('drop collection asked and its 3 points? [y/N]', what);
  };
  await askDrop('the question');
  await shell.type('n');
  await shell.keys('Enter');
  await shell.waitFor(/\[y\/N\] n\nnot dropped\nkith>/, 'not dropped');
  await askDrop('the question again');
  await shell.keys('C-c');
  await shell.waitFor(/\[y\/N\] \^C *\n+not dropped\nkith>/, 'Ctrl-C answers no');
  await askDrop('the question a third time');
  await shell.type('yes');
  await shell.keys('Enter');
  await shell.waitFor(/\[y\/N\] yes\ndropped asked\nkith>/, 'dropped');
  await shell.type('drop keep --yes');
  await shell.keys('Enter');
  await shell.waitFor(/dropped keep\nkith>/, '--yes');
  await shell.keys('C-d');
  assert.ok(await shell.ended(), 'Ctrl-D did not end the shell');
  assert.deepEqual(await names(), ['piped']);

  // From a pipe there is no one to ask: drop needs --yes.
  const piped = await kith(['shell', '--db', db], { input: 'drop piped\nls\ndrop piped --yes\nls\n' });
  assert.equal(piped.code, 0, piped.stderr);
  assert.match(
    piped.stdout,
    /^not on a terminal, so no one can confirm: write drop piped --yes\nusage: drop COLLECTION \[--yes\]\nNAME .*\npiped .*\ndropped piped\nno collections\n$/,
  );
});
