/**
 * `kith import` and `kith export` end to end: a bad line stops the import naming the line with
 * nothing of its batch written; an import killed with SIGKILL mid-way leaves whole batches, and
 * running it again gives exactly the file's points; export → import gives the same points.
 * Spawns the compiled CLI entry from the build folder these tests were compiled into.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { testSeed } from '../helpers/data.js';
import { KITH_JS, kith, ok, withoutVersions } from '../helpers/kith-cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { SeededRng } from '../../src/core/rng.js';
import { compareIds } from '../../src/core/point-id.js';
import { startServer } from '../helpers/server-process.js';

/** Runs an async body with a seeded generator and names the seed when it fails (withSeed is synchronous). */
async function seeded(seed: number, body: (rng: SeededRng) => Promise<void>): Promise<void> {
  try {
    await body(new SeededRng(seed));
  } catch (error) {
    if (error instanceof Error) error.message = `[seed ${seed}] ${error.message}`;
    throw error;
  }
}

interface Line {
  id: string | number;
  vector: number[];
  payload: Record<string, unknown>;
}

function points(rng: SeededRng, n: number, dim: number): Line[] {
  return Array.from({ length: n }, (_, i) => ({
    // Integer and string ids both; vectors with float32-exact values so that they read back as written.
    id: i % 3 === 0 ? `p-${i}` : i,
    vector: Array.from({ length: dim }, () => Math.round((rng.next() * 2 - 1) * 1024) / 1024),
    payload: { i, tag: ['a', 'b', 'ü ✓'][i % 3], nested: { even: i % 2 === 0, list: [i, `${i}`] } },
  }));
}

function writeJsonl(path: string, lines: readonly unknown[]): void {
  writeFileSync(path, `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
}

/** The file's points as an export writes them: ids as strings, sorted by id, the last line of an id winning. */
function expectedExport(lines: readonly Line[]): string {
  const byId = new Map<string, Line>();
  for (const l of lines) byId.set(String(l.id), { ...l, id: String(l.id) });
  return [...byId.keys()]
    .sort()
    .map((id) => `${JSON.stringify(byId.get(id))}\n`)
    .join('');
}

test('a bad line stops the import naming the line; earlier batches stay, nothing of its batch is written', async (t) => {
  await seeded(testSeed(11), async (rng) => {
    const dir = tempDir(t);
    const db = join(dir, 'kith.db');
    const file = join(dir, 'bad.jsonl');
    const good = points(rng, 2500, 4);
    const lines: unknown[] = [...good];
    lines[1699] = { id: 'short', vector: [1, 2, 3] }; // line 1700, in the second batch of 1000
    writeJsonl(file, lines);
    const run = await kith(['import', file, '--collection', 'c', '--dim', '4', '--distance', 'euclid', '--db', db]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /kith: bad\.jsonl:1700: vector: expected 4 numbers, got 3\n/);
    assert.match(run.stderr, /durable through bad\.jsonl:1000 \(1000 points/);
    assert.equal(await ok(['count', 'c', '--db', db]), '1000\n');
    assert.equal(withoutVersions(await ok(['export', 'c', '--db', db])), expectedExport(good.slice(0, 1000)));

    const cases: [unknown, RegExp][] = [
      ['{"id": 1, "vector": [1,2,3,4]', /bad\.jsonl:3: not valid JSON/],
      [{ vector: [1, 2, 3, 4] }, /bad\.jsonl:3: id: required/],
      [{ id: -1, vector: [1, 2, 3, 4] }, /bad\.jsonl:3: id: expected a non-empty string or a non-negative integer, got -1/],
      [{ id: 1, vector: [1, 2, 'x', 4] }, /bad\.jsonl:3: vector\[2\]: expected a finite number, got "x"/],
      [{ id: 1, vector: [1, 2, 3, 4], payload: [1] }, /bad\.jsonl:3: payload: expected an object, got an array/],
      [{ id: 1, vector: [1, 2, 3, 4], extra: true }, /bad\.jsonl:3: extra: unknown field/],
      // Checked by the engine (points[1] of the batch) and told as the file's line.
      [`{"id":1,"vector":[1,2,3,4],"payload":{"d":${'['.repeat(70)}${']'.repeat(70)}}}`, /bad\.jsonl:3: payload\.d(\[0\])+: nesting deeper than 64 levels/],
    ];
    for (const [bad, message] of cases) {
      writeJsonl(file, [{ id: 'x1', vector: [0, 0, 0, 1] }, '', bad]);
      const again = await kith(['import', file, '--collection', 'c', '--db', db, '--quiet']);
      assert.equal(again.code, 1, JSON.stringify(bad));
      assert.match(again.stderr, message);
      assert.equal(await ok(['count', 'c', '--db', db]), '1000\n', `${JSON.stringify(bad)} wrote part of its batch`);
    }
  });
});

test('an import killed mid-way (SIGKILL) leaves whole batches; running it again gives exactly the file', async (t) => {
  await seeded(testSeed(12), async (rng) => {
    const dir = tempDir(t);
    const db = join(dir, 'kith.db');
    const file = join(dir, 'big.jsonl');
    const total = 60000;
    const batch = 200;
    const lines = points(rng, total, 8);
    writeJsonl(file, lines);
    const args = ['import', file, '--collection', 'big', '--dim', '8', '--distance', 'euclid', '--hnsw', '--batch', String(batch), '--db', db];

    const child = spawn(process.execPath, [KITH_JS, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<string | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        // Kill once three batches are durable.
        if ((stderr.match(/durable through/g) ?? []).length >= 3) resolve();
      });
      void exited.then(() => reject(new Error(`import ended before it was killed:\n${stderr}`)));
    });
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');

    const reported = [...stderr.matchAll(/durable through big\.jsonl:(\d+)/g)].map((m) => Number(m[1]));
    const afterKill = Number(await ok(['count', 'big', '--db', db]));
    assert.ok(afterKill >= (reported.at(-1) as number), `${afterKill} points, but ${reported.at(-1)} were reported durable`);
    assert.ok(afterKill < total, `the import finished (${afterKill}) before it was killed: nothing was interrupted`);
    assert.equal(afterKill % batch, 0, `${afterKill} points: a batch was written in part`);

    const resumed = await kith([...args, '--quiet']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`imported ${total} points into big`));
    assert.equal(await ok(['count', 'big', '--db', db]), `${total}\n`);
    assert.equal(withoutVersions(await ok(['export', 'big', '--db', db])), expectedExport(lines));
  });
});

test('export → import gives the same collection (ids, versions, vectors, payloads); over --url the same lines in id order', async (t) => {
  await seeded(testSeed(13), async (rng) => {
    const dir = tempDir(t);
    const first = join(dir, 'first.db');
    const second = join(dir, 'second.db');
    const file = join(dir, 'in.jsonl');
    const lines = points(rng, 1500, 5);
    // A repeated id: the later line wins, in the file as in one batch.
    lines.push({ ...(lines[7] as Line), payload: { replaced: true } });
    writeJsonl(file, lines);
    await ok(['import', file, '--collection', 'c', '--dim', '5', '--distance', 'dot', '--batch', '400', '--db', first, '--quiet']);

    const exported = join(dir, 'out.jsonl');
    const run = await kith(['export', 'c', '--out', exported, '--db', first]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /exported 1500 points of c/);
    const text = readFileSync(exported, 'utf8');
    assert.equal(withoutVersions(text), expectedExport(lines));
    // Batches of 400: four versions, each strictly greater than the last batch's.
    const versions = [...new Set([...text.matchAll(/"version":"(\d+)"/g)].map((m) => BigInt(m[1] as string)))];
    assert.equal(versions.length, 4, `versions ${versions.join(', ')}`);

    // Imported into a file, the versions are kept: the export of the copy is the same bytes.
    await ok(['import', exported, '--collection', 'c', '--dim', '5', '--distance', 'dot', '--db', second, '--quiet']);
    assert.equal(await ok(['export', 'c', '--db', second]), text);
    // Re-running the restore (as after an interruption) changes nothing.
    await ok(['import', exported, '--collection', 'c', '--db', second, '--batch', '333', '--quiet']);
    assert.equal(await ok(['export', 'c', '--db', second]), text);
    const a = JSON.parse(await ok(['info', 'c', '--db', first]));
    const b = JSON.parse(await ok(['info', 'c', '--db', second]));
    assert.deepEqual(b, a);

    // Over --url, from a server on the same file: the same lines, versions included, in the server's id order (two scroll pages).
    const server = await startServer(first);
    t.after(() => server.stop());
    const viaUrl = join(dir, 'url.jsonl');
    const remote = await kith(['export', 'c', '--out', viaUrl, '--url', server.url]);
    assert.equal(remote.code, 0, remote.stderr);
    assert.match(remote.stderr, /exported 1500 points of c/);
    const remoteLines = readFileSync(viaUrl, 'utf8').trimEnd().split('\n');
    const idOf = (line: string): string => JSON.parse(line).id;
    assert.deepEqual(remoteLines.map(idOf), [...remoteLines.map(idOf)].sort(compareIds), 'in id order');
    assert.deepEqual(
      [...remoteLines].sort((a, b) => (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0)),
      text.trimEnd().split('\n'),
    );
    const npyRemote = join(dir, 'url.npy');
    assert.equal((await kith(['export', 'c', '--format', 'npy', '--out', npyRemote, '--url', server.url, '--quiet'])).code, 0);
    assert.equal(readFileSync(npyRemote).length, readFileSync(npyRemote).indexOf(0x0a) + 1 + 1500 * 5 * 4, '1500 rows of 5 float32');
    assert.deepEqual(
      readFileSync(`${npyRemote.slice(0, -4)}.ids.jsonl`, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
      remoteLines.map(idOf),
    );
  });
});
