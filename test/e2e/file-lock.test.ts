/**
 * One server process per database file, over real processes: a second server on the same file
 * exits non-zero at once with one line naming the file and the holder's pid, while the first keeps
 * serving and keeps every write; of two servers started at the same moment exactly one serves;
 * after `kill -9` of the holder a new server opens the file at once.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { tempDbPath } from '../helpers/temp-dir.js';
import { httpJson, MAIN_JS, type ServerProcess, startServer } from '../helpers/server-process.js';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  listening: boolean;
  ms: number;
}

interface Run {
  readonly outcome: Promise<Outcome>;
  /** Resolves when the server listens (never, if it exits first). */
  readonly listening: Promise<void>;
  stop(): void;
}

/** Starts a server on `dbPath`; `outcome` resolves when it exits (it is killed after 30 s). */
function spawnServer(dbPath: string): Run {
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN_JS, '-port', '0', '-host', '127.0.0.1', '-db', dbPath], {
    env: { ...process.env, KITH_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let listening = false;
  let onListening = (): void => {};
  const listeningPromise = new Promise<void>((resolve) => {
    onListening = resolve;
  });
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (!listening && stdout.includes('Server listening')) {
      listening = true;
      onListening();
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const outcome = new Promise<Outcome>((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, listening, ms: performance.now() - started });
    });
  });
  return {
    outcome,
    listening: listeningPromise,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}

/** Runs a server on `dbPath` until it exits, or until it listens (then stops it). */
async function runServer(dbPath: string): Promise<Outcome> {
  const run = spawnServer(dbPath);
  void run.listening.then(() => run.stop());
  return run.outcome;
}

function assertRefused(outcome: Outcome, dbPath: string, holderPid: number | undefined): void {
  assert.equal(outcome.listening, false, outcome.stdout);
  assert.notEqual(outcome.code, 0);
  assert.notEqual(outcome.code, null);
  assert.equal(outcome.stdout, '');
  const lines = outcome.stderr.trim().split('\n');
  assert.equal(lines.length, 1, outcome.stderr);
  assert.ok(lines[0]?.includes(dbPath), outcome.stderr);
  if (holderPid !== undefined) assert.ok(lines[0]?.includes(`process ${holderPid}`), outcome.stderr);
  assert.match(lines[0] as string, /in use by process \d+/);
}

async function upsert(server: ServerProcess, ids: number[]): Promise<void> {
  const r = await httpJson(server.url, 'PUT', '/collections/c/points', { points: ids.map((id) => ({ id, vector: [id, 1] })) });
  assert.equal(r.status, 200, r.raw);
}

async function count(server: ServerProcess): Promise<number> {
  const r = await httpJson(server.url, 'GET', '/collections/c');
  assert.equal(r.status, 200, r.raw);
  return r.body.result.points_count;
}

test('a second server on an open file exits at once naming the file and the holder; the holder keeps serving', async (t) => {
  const dbPath = tempDbPath(t);
  const first = await startServer(dbPath);
  t.after(() => first.stop('SIGKILL'));
  assert.equal((await httpJson(first.url, 'POST', '/collections', { name: 'c', vector_size: 2, distance: 'dot' })).status, 200);
  await upsert(first, [1, 2, 3]);

  const second = await runServer(dbPath);
  assertRefused(second, dbPath, first.process.pid);
  // "At once": no waiting for the holder; a node start-up, not a timeout.
  assert.ok(second.ms < 10_000, `the refusal took ${second.ms} ms`);

  await upsert(first, [4, 5]);
  assert.equal(await count(first), 5);
  assert.equal(await first.stop('SIGTERM'), 0);

  const third = await startServer(dbPath);
  t.after(() => third.stop('SIGKILL'));
  assert.equal(await count(third), 5);
  assert.equal(await third.stop('SIGTERM'), 0);
});

test('after kill -9 of the holder a new server opens the file at once, with every acknowledged write', async (t) => {
  const dbPath = tempDbPath(t);
  const first = await startServer(dbPath);
  t.after(() => first.stop('SIGKILL'));
  assert.equal((await httpJson(first.url, 'POST', '/collections', { name: 'c', vector_size: 2, distance: 'dot' })).status, 200);
  await upsert(first, [1, 2, 3, 4]);
  assert.equal(await first.stop('SIGKILL'), 'SIGKILL');

  const second = await startServer(dbPath);
  t.after(() => second.stop('SIGKILL'));
  assert.equal(await count(second), 4);
  const refused = await runServer(dbPath);
  assertRefused(refused, dbPath, second.process.pid);
});

test('of two servers started at the same moment on a new file, exactly one serves', async (t) => {
  for (let round = 0; round < 3; round++) {
    const dbPath = tempDbPath(t);
    const runs = [spawnServer(dbPath), spawnServer(dbPath)];
    // The winner keeps the file until the other has given up (or also listens: the failure).
    await Promise.race([Promise.race(runs.map((r) => r.outcome)), Promise.all(runs.map((r) => r.listening))]);
    for (const run of runs) void run.listening.then(() => run.stop());
    const outcomes = await Promise.all(runs.map((r) => r.outcome));
    const served = outcomes.filter((o) => o.listening);
    assert.equal(served.length, 1, outcomes.map((o) => o.stdout + o.stderr).join('\n---\n'));
    const loser = outcomes.find((o) => !o.listening) as Outcome;
    assertRefused(loser, dbPath, undefined);
  }
});
