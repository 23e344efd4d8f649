/**
 * No file, however broken, crashes a tool. A real kith database (a Flat collection with nasty ids
 * and payloads, an HNSW one with its graph snapshot, an sq8 one with payloads too big for a page;
 * enough points for branch pages, overflow runs and free pages) is damaged in seeded ways:
 * truncations (at page boundaries and anywhere), byte flips in every region (test/helpers/
 * lmdb-file.ts labels each byte), and files that are no database at all. Each variant lies alone
 * in a folder, and `kith check`, `kith ls --db` (and, for a subset, the server) run on it as child
 * processes. For every run:
 *
 * - it is never killed by a signal, and exits 0 or 1; on 1 it printed a `kith: …` message;
 * - it created nothing beside the file (a server that accepted the file may add its lock file);
 * - exit 0 after a flip in unused space (a free page, the gap in a page, a meta page past its
 *   meta) must print exactly what it prints for the sound file: such a file is fine;
 * - exit 0 after a flip in LMDB's structure must print exactly that too: a change LMDB does not
 *   act on (a page's txnid lowered, say) is harmless, any other must be refused;
 * - exit 0 after a flip in key or value bytes (which LMDB never interprets) may print something
 *   else: a collection renamed, a point moved (docs/storage.md says what is caught);
 * - a truncation off a page boundary, and every non-database file, exit 1 (but the server takes
 *   an empty file as a new database, as docs/storage.md says).
 *
 * The seed (KITH_SEED replays one) and the variant are named in every failure.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { KITH_JS } from '../helpers/kith-cli.js';
import { CONTENT, type FileRegions, fileRegions, STRUCTURE, UNUSED } from '../helpers/lmdb-file.js';
import { drawPayload, idPool, vectorGen, drawVector } from '../helpers/nasty-data.js';
import { httpJson, MAIN_JS } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const SEED = testSeed(1907);
const NONE = new Set<string>();

interface Variant {
  readonly name: string;
  /** The file's name in its folder (a non-database keeps its own kind of name). */
  readonly fileName: string;
  readonly bytes: Buffer;
  /** What may happen: `fine` exit 0 printing what the sound file prints; `refused` exit 1; `structure` either; `content` exit 0 may print other things. */
  readonly expect: 'fine' | 'refused' | 'structure' | 'content' | 'empty';
  /** Also start the server on it. */
  readonly server: boolean;
}

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KITH_API_KEY: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The server on `file`: what it listed at GET /collections if it served (then stopped), or how it ended. */
function runServer(file: string): Promise<Run & { listing?: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS, '-port', '0', '-host', '127.0.0.1', '-db', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KITH_LOG_LEVEL: 'info', KITH_API_KEY: '' },
    });
    let stdout = '';
    let stderr = '';
    let listing: string | undefined;
    let asked = false;
    let exited = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    // The service listens first, then loads: it serves once /readyz says so, or exits if the load fails.
    const listOnceReady = async (url: string): Promise<void> => {
      while (!exited) {
        const ready = await httpJson(url, 'GET', '/readyz').catch(() => undefined);
        if (ready?.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (exited) return;
      const answer = await httpJson(url, 'GET', '/collections');
      // Without the answer's `time`, which differs from run to run.
      listing = JSON.stringify(answer.body?.result ?? answer.raw);
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (url !== null && !asked) {
        asked = true;
        listOnceReady(url[1] as string)
          .catch((error: unknown) => {
            listing = `request failed: ${String(error)}`;
          })
          .finally(() => child.kill('SIGTERM'));
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', () => {
      exited = true;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ...(listing === undefined ? {} : { listing }) });
    });
  });
}

async function buildDatabase(path: string, rng: SeededRng): Promise<void> {
  const db = Database.open(path);
  try {
    await db.createCollection({ name: 'flat', vector_size: 8, distance: 'Cosine' });
    await db.createCollection({ name: 'graph', vector_size: 6, distance: 'Euclid', hnsw: true });
    await db.createCollection({ name: 'quant', vector_size: 16, distance: 'Dot', quantization: 'sq8' });
    const ids = idPool(rng, 1200, new Set(['numeric', 'plain', 'control', 'long-unicode', 'lookalike']));
    const flatGen = vectorGen(rng, 'nasty', 8, NONE);
    const flat = ids.map((id) => ({ id: id.raws[0] as string | number, vector: drawVector(rng, flatGen), payload: drawPayload(rng, NONE) }));
    for (let i = 0; i < flat.length; i += 500) await db.collection('flat').upsert(flat.slice(i, i + 500));
    const graphGen = vectorGen(rng, 'real', 6, NONE);
    const graph = Array.from({ length: 600 }, (_, i) => ({ id: i, vector: drawVector(rng, graphGen), payload: { i } }));
    await db.collection('graph').upsert(graph);
    const quantGen = vectorGen(rng, 'nonneg', 16, NONE);
    // Every tenth payload is bigger than a page: an overflow run of its own.
    const quant = Array.from({ length: 200 }, (_, i) => ({
      id: `q${i}`,
      vector: drawVector(rng, quantGen),
      payload: { text: 'x'.repeat(i % 10 === 0 ? 5000 + rng.int(9000) : rng.int(40)) },
    }));
    await db.collection('quant').upsert(quant);
    // Deletes and rewrites leave free pages.
    await db.collection('flat').deleteIds(flat.slice(0, 300).map((p) => p.id));
    await db.collection('quant').upsert(quant.slice(0, 100).map((p) => ({ ...p, payload: { text: 'y' } })));
  } finally {
    await db.close();
  }
}

const npyFile = (): Buffer => {
  const header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2), }";
  const padded = `${header.padEnd(118, ' ')}\n`;
  const out = Buffer.alloc(10 + padded.length + 32);
  out.write('\x93NUMPY', 0, 'latin1');
  out[6] = 1;
  out.writeUInt16LE(padded.length, 8);
  out.write(padded, 10, 'latin1');
  for (let i = 0; i < 8; i++) out.writeFloatLE(i / 2, 10 + padded.length + 4 * i);
  return out;
};

function variants(rng: SeededRng, sound: Buffer, regions: FileRegions): Variant[] {
  const { pageSize, labels } = regions;
  const pages = sound.length / pageSize;
  const out: Variant[] = [
    { name: 'empty file', fileName: 'kith.db', bytes: Buffer.alloc(0), expect: 'empty', server: true },
    { name: 'text file', fileName: 'notes.txt', bytes: Buffer.from('# notes\nnot a database at all\n'), expect: 'refused', server: true },
    {
      name: 'random bytes',
      fileName: 'kith.db',
      bytes: Buffer.from(Array.from({ length: 3 * pageSize + 77 }, () => rng.int(256))),
      expect: 'refused',
      server: true,
    },
    { name: '.npy file', fileName: 'vectors.npy', bytes: npyFile(), expect: 'refused', server: true },
    {
      name: 'JSON file',
      fileName: 'data.json',
      bytes: Buffer.from(JSON.stringify({ collections: [{ name: 'flat', points: [[1, 2]] }] })),
      expect: 'refused',
      server: true,
    },
    { name: 'zeros, as long as the database', fileName: 'kith.db', bytes: Buffer.alloc(sound.length), expect: 'refused', server: true },
    {
      name: 'random pages, as long as the database',
      fileName: 'kith.db',
      bytes: Buffer.from(Array.from({ length: sound.length }, () => rng.int(256))),
      expect: 'refused',
      server: false,
    },
  ];
  // Truncations: at page boundaries (which may cut only free pages: then the file is fine) and anywhere else.
  for (const keep of [1, 2, 3, Math.floor(pages / 2), pages - 1]) {
    out.push({
      name: `cut to ${keep} page(s)`,
      fileName: 'kith.db',
      bytes: sound.subarray(0, keep * pageSize),
      expect: keep < 3 ? 'refused' : 'structure',
      server: keep === 3 || keep === pages - 1,
    });
  }
  for (let i = 0; i < 5; i++) {
    const at = 1 + rng.int(sound.length - 2);
    const cut = at % pageSize === 0 ? at + 1 : at;
    out.push({ name: `cut at byte ${cut}`, fileName: 'kith.db', bytes: sound.subarray(0, cut), expect: 'refused', server: i === 0 });
  }
  // Flips: each region, then a few bytes anywhere.
  const flip = (name: string, offsets: readonly number[], server: boolean): void => {
    const bytes = Buffer.from(sound);
    for (const at of offsets) bytes[at] = (bytes[at] as number) ^ (1 + rng.int(255));
    const worst = Math.max(...offsets.map((at) => (labels[at] === CONTENT ? 2 : labels[at] === STRUCTURE ? 1 : 0)));
    const expect = worst === 2 ? 'content' : worst === 1 ? 'structure' : 'fine';
    out.push({
      name: `${name}: ${offsets.map((at) => `byte ${at} (page ${Math.floor(at / pageSize)} +${at % pageSize})`).join(', ')}`,
      fileName: 'kith.db',
      bytes,
      expect,
      server,
    });
  };
  const inPage = (pgno: number, from: number, to: number): number => pgno * pageSize + from + rng.int(to - from);
  const labelled = (pgno: number, label: number): number | undefined => {
    const candidates: number[] = [];
    for (let at = pgno * pageSize; at < (pgno + 1) * pageSize; at++) if (labels[at] === label) candidates.push(at);
    return candidates.length === 0 ? undefined : rng.pick(candidates);
  };
  for (let i = 0; i < 5; i++) flip('meta page', [inPage(i % 2, 0, 168)], i < 2);
  flip('meta page, past the meta', [inPage(0, 168, pageSize)], false);
  for (let i = 0; i < 4; i++) flip('branch page header or node', [inPage(rng.pick(regions.branchPages), 0, 40)], i === 0);
  for (let i = 0; i < 3; i++) flip('named-DB record', [inPage(rng.pick(regions.mainLeafPages), pageSize - 400, pageSize)], i === 0);
  for (let i = 0; i < 4; i++) flip('leaf page header or node offsets', [inPage(rng.pick(regions.leafPages), 0, 40)], i === 0);
  for (const [label, name, count] of [
    [STRUCTURE, 'leaf page, LMDB structure', 4],
    [CONTENT, 'leaf page, key or value bytes', 3],
    [UNUSED, 'leaf page, free gap', 2],
  ] as const) {
    for (let i = 0; i < count; i++) {
      const at = labelled(rng.pick(regions.leafPages), label);
      if (at !== undefined) flip(name, [at], false);
    }
  }
  for (let i = 0; i < 3; i++) flip('overflow page header', [inPage(rng.pick(regions.overflowPages), 0, 24)], i === 0);
  flip('overflow run content', [inPage(rng.pick(regions.overflowPages), 24, pageSize)], false);
  for (let i = 0; i < 3; i++) flip('free page', [inPage(rng.pick(regions.unusedPages), 0, pageSize)], i === 0);
  for (let i = 0; i < 8; i++)
    flip(
      'a few bytes anywhere',
      Array.from({ length: 1 + rng.int(4) }, () => rng.int(sound.length)),
      i === 0,
    );
  return out;
}

/** The report of a sound file, for comparison: the path is the variant's own. */
const normalise = (text: string, file: string): string => text.split(file).join('FILE');

test('no damaged or foreign file crashes kith check, kith ls --db or the server; each is refused with a message or read as it is, and nothing is left beside it', async (t) => {
  const rng = new SeededRng(SEED);
  const dir = tempDir(t, 'kith-corrupt-');
  const soundPath = join(dir, 'sound', 'kith.db');
  mkdirSync(join(dir, 'sound'));
  await buildDatabase(soundPath, rng);
  const sound = readFileSync(soundPath);
  const regions = fileRegions(sound);
  assert.ok(
    regions.branchPages.length > 0 && regions.overflowPages.length > 0 && regions.unusedPages.length > 0,
    'the database has branch, overflow and free pages',
  );

  // What the tools say about the sound file, each on a copy alone in its folder.
  const baselineDir = join(dir, 'baseline');
  mkdirSync(baselineDir);
  const baselineFile = join(baselineDir, 'kith.db');
  writeFileSync(baselineFile, sound);
  const check = await run([KITH_JS, 'check', baselineFile]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  const ls = await run([KITH_JS, 'ls', '--db', baselineFile]);
  assert.equal(ls.code, 0, ls.stderr);
  const failures: string[] = [];
  const leftBySound = readdirSync(baselineDir);
  if (leftBySound.length !== 1) failures.push(`kith check and kith ls on the sound file left ${JSON.stringify(leftBySound)} beside it`);
  const served = await runServer(baselineFile);
  assert.ok(served.listing?.includes('"quant"'), served.stdout + served.stderr);
  const expected = { check: normalise(check.stdout, baselineFile), ls: ls.stdout, server: served.listing as string };

  const all = variants(rng, sound, regions);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < all.length) {
      const index = next++;
      const variant = all[index] as Variant;
      const folder = join(dir, `v${index}`);
      mkdirSync(folder);
      const file = join(folder, variant.fileName);
      writeFileSync(file, variant.bytes);
      const where = `[seed ${SEED}] variant ${index} (${variant.name}, expect ${variant.expect})`;
      try {
        const runs: [string, Run & { listing?: string }][] = [
          ['kith check', await run([KITH_JS, 'check', file])],
          ['kith ls --db', await run([KITH_JS, 'ls', '--db', file])],
        ];
        const leftBehind = readdirSync(folder);
        if (variant.server) runs.push(['server', await runServer(file)]);
        for (const [tool, outcome] of runs) {
          const said = `${where}: ${tool} exited ${outcome.code ?? outcome.signal}\n--- stdout\n${outcome.stdout.slice(0, 1500)}\n--- stderr\n${outcome.stderr.slice(0, 1500)}`;
          assert.equal(outcome.signal, null, `${said}\n(killed by a signal)`);
          const server = tool === 'server';
          const accepted = server ? outcome.listing !== undefined : outcome.code === 0;
          if (server && accepted) assert.equal(outcome.code, 0, `${said}\n(the server served, then did not stop cleanly)`);
          if (!accepted) {
            assert.equal(outcome.code, 1, `${said}\n(expected exit 1)`);
            assert.match(outcome.stderr, /kith: \S/, `${said}\n(no message)`);
          }
          if (variant.expect === 'empty') {
            // An empty file: nothing to read for check and ls; a new, empty database for the server.
            assert.equal(accepted, server, said);
            if (server) assert.equal(outcome.listing, '[]', said);
            continue;
          }
          if (variant.expect === 'refused') assert.equal(accepted, false, `${said}\n(must be refused)`);
          if (accepted && (variant.expect === 'fine' || variant.expect === 'structure')) {
            const printed = tool === 'kith check' ? normalise(outcome.stdout, file) : server ? outcome.listing : outcome.stdout;
            const want = tool === 'kith check' ? expected.check : server ? expected.server : expected.ls;
            assert.equal(printed, want, `${said}\n(accepted, but does not read as the sound file)`);
          }
          if (variant.expect === 'fine') assert.ok(accepted, `${said}\n(a flip in unused space must leave the file fine)`);
        }
        assert.deepEqual(leftBehind, [variant.fileName], `${where}: kith check or kith ls left something beside the file`);
        if (variant.server && runs[2]?.[1].listing === undefined)
          assert.deepEqual(readdirSync(folder), [variant.fileName], `${where}: the server refused the file but left something beside it`);
      } catch (error) {
        failures.push(error instanceof Error ? error.message : String(error));
      }
    }
  };
  await Promise.all([worker(), worker()]);
  assert.deepEqual(failures, [], `${failures.length} of ${all.length} variants failed:\n\n${failures.join('\n\n')}`);
});
