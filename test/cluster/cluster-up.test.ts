/**
 * scripts/cluster-up.mjs as a person runs it: three NATS servers and three kith nodes from one
 * command, on a temp --dir and free ports. A collection of 3 shards × 2 replicas is created
 * through node 1, written through node 2 and searched through node 3 (strong consistency). Then
 * SIGINT: the script exits 0 and every process its ready block named is gone.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { httpJson, MAIN_JS } from '../helpers/server-process.js';

const SCRIPT = fileURLToPath(new URL('../../../scripts/cluster-up.mjs', import.meta.url));
/** The build output these tests run from (dist/, or KITH_DIST's folder): the script starts its main.js. */
const DIST = dirname(dirname(MAIN_JS));
const DIM = 4;

/** Whether a process with this PID still exists (signal 0 checks without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The first of `count` consecutive ports, all free on 127.0.0.1 when checked. Drawn below the
 * ephemeral range (32768 and up), where the other tests' `port 0` listeners never land.
 */
async function freeRun(count: number): Promise<number> {
  const listen = (port: number): Promise<Server | undefined> =>
    new Promise((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, '127.0.0.1', () => resolve(server));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * (32_000 - 20_000 - count));
    const held: Server[] = [];
    for (let port = base; port < base + count; port++) {
      const server = await listen(port);
      if (server === undefined) break;
      held.push(server);
    }
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
    if (held.length === count) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

interface Script {
  readonly process: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  readonly output: () => string;
  /** Its exit code, or the signal that ended it. */
  readonly exited: Promise<number | string>;
  running(): boolean;
}

function runScript(args: string[]): Script {
  const child = spawn(process.execPath, [SCRIPT, ...args], { env: { ...process.env, KITH_DIST: DIST }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let ended = false;
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = true;
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { process: child, output: () => output, exited, running: () => !ended };
}

const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  Promise.race([promise, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref())]);

/** Waits for the ready block (its last line is the Ctrl-C hint) and reads the processes it lists. */
async function waitForReady(script: Script, timeoutMs: number): Promise<{ kind: string; name: string; url: string; pid: number }[]> {
  const deadline = Date.now() + timeoutMs;
  while (!script.output().includes('Ctrl-C stops them all')) {
    if (!script.running()) throw new Error(`cluster-up exited (${await script.exited}) before it was ready:\n${script.output()}`);
    if (Date.now() > deadline) throw new Error(`cluster-up not ready within ${timeoutMs} ms:\n${script.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return [...script.output().matchAll(/^ {2}(nats|kith) (n\d+) {2}(\S+) {2}pid (\d+)/gm)].map((m) => ({
    kind: m[1] as string,
    name: m[2] as string,
    url: m[3] as string,
    pid: Number(m[4]),
  }));
}

test('scripts/cluster-up.mjs starts three NATS servers and three kith nodes, and stops them on SIGINT', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kith-cluster-up-'));
  const base = await freeRun(9);
  const args = ['--dir', dir, '--port', String(base), '--nats-port', String(base + 3), '--route-port', String(base + 6), '--threads', '0'];
  t.diagnostic(`cluster-up ${args.join(' ')}`);
  const script = runScript(args);
  try {
    const startedAt = Date.now();
    // Longer than the script's own 60 s wait for JetStream, so that a start that fails shows the script's reason (its last error).
    const processes = await waitForReady(script, 90_000);
    t.diagnostic(`ready after ${Date.now() - startedAt} ms`);
    const kith = processes.filter((p) => p.kind === 'kith');
    assert.deepEqual(
      processes.map((p) => `${p.kind} ${p.name}`),
      ['nats n1', 'nats n2', 'nats n3', 'kith n1', 'kith n2', 'kith n3'],
      script.output(),
    );
    assert.deepEqual(
      kith.map((p) => p.url),
      [0, 1, 2].map((i) => `http://127.0.0.1:${base + i}`),
    );
    const [n1, n2, n3] = kith.map((p) => p.url) as [string, string, string];

    const created = await httpJson(n1, 'POST', '/collections', { name: 'docs', vector_size: DIM, distance: 'dot', shard_number: 3, replication_factor: 2 });
    assert.equal(created.status, 200, created.raw);
    assert.equal(created.body.result.cluster.shard_number, 3);
    assert.equal(created.body.result.cluster.replication_factor, 2);

    // Distinct scores against the query below, so the expected order has no ties.
    const points = Array.from({ length: 40 }, (_, i) => ({ id: `p${i}`, vector: [i, (i * 7) % 13, 1, -i / 2], payload: { i } }));
    const upserted = await httpJson(n2, 'PUT', '/collections/docs/points', { points });
    assert.equal(upserted.status, 200, upserted.raw);
    assert.equal(upserted.body.result.upserted, points.length);

    const query = [1, 0.5, 0, 0.25];
    const dot = (v: number[]): number => v.reduce((sum, x, k) => sum + x * (query[k] as number), 0);
    const want = points
      .map((p) => ({ id: p.id, score: dot(p.vector), i: p.payload.i }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 5);
    const found = await httpJson(n3, 'POST', '/collections/docs/points/search?consistency=strong', { vector: query, limit: 5, params: { exact: true } });
    assert.equal(found.status, 200, found.raw);
    assert.deepEqual(
      found.body.result.map((hit: { id: string }) => hit.id),
      want.map((w) => w.id),
    );
    for (const [k, hit] of (found.body.result as { score: number; payload: { i: number } }[]).entries()) {
      assert.ok(Math.abs(hit.score - (want[k]?.score as number)) < 1e-4, `hit ${k}: score ${hit.score}, want ${want[k]?.score}`);
      assert.deepEqual(hit.payload, { i: want[k]?.i });
    }

    const stoppedAt = Date.now();
    script.process.kill('SIGINT');
    const code = await within(script.exited, 30_000);
    t.diagnostic(`stopped after ${Date.now() - stoppedAt} ms`);
    assert.equal(code, 0, script.output());
    assert.match(script.output(), /cluster-up: stopped$/m);
    for (const p of processes) assert.equal(alive(p.pid), false, `${p.kind} ${p.name} (pid ${p.pid}) still running after cluster-up exited`);
  } finally {
    // A failed test must leave nothing running: the script is asked to stop its children, and
    // any it named (each start line has its PID) that still runs is killed by that PID.
    if (script.running()) {
      script.process.kill('SIGINT');
      if ((await within(script.exited, 30_000)) === 'timeout') script.process.kill('SIGKILL');
    }
    for (const m of script.output().matchAll(/pid (\d+)/g)) if (alive(Number(m[1]))) process.kill(Number(m[1]), 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
