/**
 * `kith shell` driven through a real pseudo-terminal: tmux runs the shell in a detached session,
 * the test types with send-keys (Tab included) and reads the screen with capture-pane. Against a
 * database file and against a real server process. tmux is required: without it the test fails.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { KITH_JS, ok } from '../helpers/kith-cli.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

function tmuxPath(): string {
  const found = spawnSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).stdout.trim();
  assert.ok(found !== '', 'tmux is required for the kith shell tests (apt-get install tmux); it is not on PATH');
  return found;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The shell in a detached tmux session on its own server socket, 200×50. */
function startShell(t: { after(fn: () => void): void }, args: readonly string[], history: string) {
  const tmux = tmuxPath();
  const socket = `kith-shell-test-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const run = (...tmuxArgs: string[]): string => execFileSync(tmux, ['-L', socket, ...tmuxArgs], { encoding: 'utf8' });
  const quote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;
  const command = `env KITH_HISTORY=${quote(history)} KITH_API_KEY= ${quote(process.execPath)} ${quote(KITH_JS)} shell ${args.map(quote).join(' ')}`;
  run('new-session', '-d', '-x', '200', '-y', '50', command);
  t.after(() => {
    spawnSync(tmux, ['-L', socket, 'kill-server']);
    // kill-server leaves the socket file behind: -L names it in tmux's folder for this user.
    rmSync(join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
  });
  const alive = (): boolean => spawnSync(tmux, ['-L', socket, 'has-session'], { stdio: 'ignore' }).status === 0;
  return {
    alive,
    screen: (): string => run('capture-pane', '-p', '-J'),
    /** Keys as tmux names them ("Tab", "Enter", "C-d", "Up") or literal text (-l). */
    async keys(...keys: string[]): Promise<void> {
      run('send-keys', ...keys);
      await sleep(150);
    },
    async type(text: string): Promise<void> {
      run('send-keys', '-l', text);
      await sleep(150);
    },
    /** Waits until the last non-empty line of the screen is `line` (capture-pane drops trailing spaces). */
    async waitForLast(line: string, what: string): Promise<void> {
      let last = '';
      for (let i = 0; i < 200; i++) {
        last = alive() ? (run('capture-pane', '-p', '-J').trimEnd().split('\n').at(-1) ?? '') : last;
        if (last === line) return;
        await sleep(50);
      }
      throw new Error(`${what}: the last line is ${JSON.stringify(last)}, not ${JSON.stringify(line)}`);
    },
    async waitFor(pattern: RegExp, what: string): Promise<string> {
      let screen = '';
      for (let i = 0; i < 200; i++) {
        screen = alive() ? run('capture-pane', '-p', '-J') : screen;
        if (pattern.test(screen)) return screen;
        await sleep(50);
      }
      throw new Error(`${what}: ${pattern} not on the screen:\n${screen}`);
    },
  };
}

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
  const hits = await shell.waitFor(/ID\s+SCORE\s+PAYLOAD\n1\s+1\.00000\s+\{"lang":"en","title":"one"\}\n3\s+0\.00000\s+\{"lang":"en","title":"three"\}\n/, 'the search table');
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
