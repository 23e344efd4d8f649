/**
 * `kith check FILE` on a sound database (exit 0, "sound") and on copies corrupted deliberately
 * through the lmdb package: a point record's magic, dimension and payload bytes, a byte of the
 * graph snapshot (CRC-32), a graph made unsound under a recomputed CRC, a record of no collection,
 * a last version below a record's, an unreadable configuration. Each must be reported, with exit 1,
 * and the check itself must not change the file.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { open } from 'lmdb';
import { crc32 } from '../../src/core/crc32.js';
import { SeededRng } from '../../src/core/rng.js';
import { randomVectors, testSeed } from '../helpers/data.js';
import { kith, ok } from '../helpers/kith-cli.js';
import { fileRegions } from '../helpers/lmdb-file.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

function sha(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** The file's sub-databases as LmdbStore opens them, for writing corruption in directly. */
function rawOpen(path: string) {
  const root = open({ path, noSubdir: true, cache: false });
  return {
    root,
    collections: root.openDB<{ uid: number; config: Record<string, unknown> }, string>({ name: 'collections' }),
    lastVersions: root.openDB<string, number>({ name: 'last_versions', encoding: 'string' }),
    points: root.openDB<Buffer, Buffer>({ name: 'point_records', encoding: 'binary', keyEncoding: 'binary' }),
    snapshots: root.openDB<Buffer, [number, number]>({ name: 'snapshots', encoding: 'binary' }),
  };
}

type Raw = ReturnType<typeof rawOpen>;

/** The first point record of collection uid 1 ("g"). */
function firstRecord(raw: Raw): { key: Buffer; value: Buffer } {
  const start = Buffer.from([0, 0, 0, 1]);
  for (const { key, value } of raw.points.getRange({ start, end: Buffer.from([0, 0, 0, 2]) })) return { key, value: Buffer.from(value) };
  throw new Error('no record');
}

test('kith check: a sound file passes; each deliberate corruption is reported, exit 1, and the file is left as it was', async (t) => {
  const seed = testSeed(51);
  const dir = tempDir(t);
  const sound = join(dir, 'sound.db');
  const rng = new SeededRng(seed);
  const graphFile = join(dir, 'g.jsonl');
  writeFileSync(
    graphFile,
    randomVectors(rng, 3000, 4)
      .map((vector, i) => JSON.stringify({ id: i, vector, payload: { i } }))
      .join('\n'),
  );
  await ok(['import', graphFile, '--collection', 'g', '--dim', '4', '--distance', 'euclid', '--hnsw', '--db', sound, '--quiet']);
  await ok(['delete', 'g', '--ids', '3,5,7,11', '--db', sound]);
  const flatFile = join(dir, 'f.csv');
  writeFileSync(flatFile, `id,vector,lang\n${Array.from({ length: 50 }, (_, i) => `d${i},"${i + 1} 1 0",${i % 2 ? 'en' : 'fr'}`).join('\n')}\n`);
  await ok(['import', flatFile, '--collection', 'f', '--dim', '3', '--db', sound, '--quiet']);

  const before = sha(sound);
  const good = await kith(['check', sound]);
  assert.equal(good.code, 0, good.stdout + good.stderr);
  assert.match(good.stdout, /storage format 3, 2 collection\(s\)/);
  assert.match(
    good.stdout,
    /collection "g" \(uid 1, 4-d Euclid, hnsw\): 2996 point record\(s\); graph snapshot checksum ok \(\d+ bytes\); 2996 loaded; \d+ from the snapshot's graph, id order and graph invariants checked/,
  );
  assert.match(good.stdout, /collection "f" \(uid 2, 3-d Cosine, flat\): 50 point record\(s\); 50 loaded; id order checked/);
  assert.match(good.stdout, /^sound: every record decodes/m);
  assert.equal(sha(sound), before, 'kith check changed the file');
  const json = JSON.parse((await ok(['check', sound, '--json'])) as string) as { problems: string[] };
  assert.deepEqual(json.problems, []);

  const corruptions: [string, (raw: Raw) => void, RegExp][] = [
    [
      'record magic',
      (raw) => {
        const { key, value } = firstRecord(raw);
        value[0] = 0;
        raw.points.putSync(key, value);
      },
      /point record g\/"\d+": bad magic or truncated header/,
    ],
    [
      'record dimension',
      (raw) => {
        const { key, value } = firstRecord(raw);
        value.writeUInt32LE(5, 4);
        raw.points.putSync(key, value);
      },
      /point record g\/"\d+": dimension 5, collection has 4/,
    ],
    [
      'record payload',
      (raw) => {
        const { key, value } = firstRecord(raw);
        value[value.length - 1] = 0x78; // the closing brace becomes "x"
        raw.points.putSync(key, value);
      },
      /point record g\/"\d+": payload is not JSON/,
    ],
    [
      'truncated vector',
      (raw) => {
        const { key, value } = firstRecord(raw);
        raw.points.putSync(key, value.subarray(0, 20));
      },
      /point record g\/"\d+": truncated vector/,
    ],
    [
      'snapshot byte',
      (raw) => {
        const chunk = Buffer.from(raw.snapshots.get([1, 0]) as Buffer);
        chunk[chunk.length >> 1] = (chunk[chunk.length >> 1] as number) ^ 0xff;
        raw.snapshots.putSync([1, 0], chunk);
      },
      /collection "g": graph snapshot \(\d+ bytes in 1 chunk\(s\)\): checksum mismatch/,
    ],
    [
      'graph link under a valid checksum',
      (raw) => {
        const chunk = Buffer.from(raw.snapshots.get([1, 0]) as Buffer);
        // Container header 40 bytes (format 2), then the graph: header 60, levels and tombstones (each padded to 4), tree parents and ranks, layer-0 lists.
        assert.equal(chunk.readUInt32LE(8), 2, 'container format 2');
        const capacity = chunk.readUInt32LE(40 + 16);
        const links0 = 40 + 60 + 2 * ((capacity + 3) & ~3) + 8 * capacity;
        assert.ok(chunk.readInt32LE(links0) > 0, 'slot 0 has links');
        chunk.writeInt32LE(0, links0 + 4); // slot 0's first neighbour: itself
        chunk.writeUInt32LE(crc32(chunk.subarray(0, chunk.length - 4)), chunk.length - 4);
        raw.snapshots.putSync([1, 0], chunk);
      },
      /collection "g": (the graph snapshot passes its checksum but cannot be used|graph: slot 0 layer 0: links to itself)/,
    ],
    [
      'record of no collection',
      (raw) => {
        const { key, value } = firstRecord(raw);
        const orphan = Buffer.from(key);
        orphan.writeUInt32BE(99, 0);
        raw.points.putSync(orphan, value);
      },
      /point_records: 1 record\(s\) under uid 99, which no collection has/,
    ],
    [
      'last version too low',
      (raw) => {
        raw.lastVersions.putSync(1, '1');
      },
      /point record g\/"\d+": version \d+ is above the collection's last version 1/,
    ],
    [
      'configuration',
      (raw) => {
        const entry = raw.collections.get('g') as { uid: number; config: Record<string, unknown> };
        raw.collections.putSync('g', { uid: entry.uid, config: { ...entry.config, vector_size: 0 } });
      },
      /collection "g" has an unreadable configuration/,
    ],
  ];
  for (const [name, corrupt, message] of corruptions) {
    const copy = join(dir, `${name.replace(/\W+/g, '-')}.db`);
    copyFileSync(sound, copy);
    const raw = rawOpen(copy);
    corrupt(raw);
    await raw.root.close();
    const corrupted = sha(copy);
    const run = await kith(['check', copy]);
    assert.equal(run.code, 1, `[seed ${seed}] ${name}: ${run.stdout}`);
    assert.match(run.stdout, message, `[seed ${seed}] ${name}`);
    assert.match(run.stdout, /\d+ problem\(s\):/);
    assert.match(run.stderr, /kith: .*: \d+ problem\(s\) found/);
    assert.equal(sha(copy), corrupted, `${name}: kith check changed the file`);
  }

  const missing = await kith(['check', join(dir, 'absent.db')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /absent\.db does not exist/);
});

test('kith check on a file that is no database, or whose pages are broken: exit 1 naming what and where, the file untouched, nothing beside it', async (t) => {
  const dir = tempDir(t);
  const sound = join(dir, 'sound.db');
  const rng = new SeededRng(testSeed(52));
  const points = join(dir, 'p.jsonl');
  writeFileSync(
    points,
    randomVectors(rng, 4000, 8)
      .map((vector, i) => JSON.stringify({ id: `point-${i}`, vector, payload: { i } }))
      .join('\n'),
  );
  await ok(['import', points, '--collection', 'p', '--dim', '8', '--db', sound, '--quiet']);
  const bytes = readFileSync(sound);
  const regions = fileRegions(bytes);
  // A branch page's first child number, pushed past the file by its top 16 bits (the node's flags word).
  const branch = regions.branchPages[0] as number;
  const branchAt = branch * regions.pageSize;
  const node = branchAt + 24 + bytes.readUInt16LE(branchAt + 24);
  const brokenChild = Buffer.from(bytes);
  brokenChild.writeUInt16LE(1, node + 4);

  const cases: [string, Buffer, RegExp, RegExp][] = [
    [
      'notes.txt',
      Buffer.from('not a database\n'),
      /^.*notes\.txt: not a kith database\n/,
      /kith: .*notes\.txt: not a kith database: 15 bytes, shorter than an LMDB meta page/,
    ],
    [
      'empty.db',
      Buffer.alloc(0),
      /empty\.db: not a kith database\n1 problem\(s\):\n {2}an empty file \(0 bytes\)/,
      /kith: .*empty\.db: not a kith database: an empty file/,
    ],
    [
      'child.db',
      brokenChild,
      /child\.db: damaged: its LMDB structure is broken, so it was not opened\n {2}file: \d+ pages of 4096 bytes, txnid \d+\n1 problem\(s\):\n {2}page \d+ \(named DB "point_records", branch level 1\): node 0: child: page \d+ is not between 2 and the last page \d+\n/,
      /kith: .*child\.db: damaged: page \d+ \(named DB "point_records", branch level 1\): node 0: child: page \d+ is not between 2/,
    ],
    ['cut.db', bytes.subarray(0, bytes.length - 1000), /cut\.db: damaged/, /the file is \d+ bytes, not a whole number of 4096-byte pages: cut short or padded/],
  ];
  for (const [name, content, report, message] of cases) {
    const folder = join(dir, name.replace('.', '-'));
    mkdirSync(folder);
    const file = join(folder, name);
    writeFileSync(file, content);
    const run = await kith(['check', file]);
    assert.equal(run.code, 1, `${name}: ${run.stdout}${run.stderr}`);
    assert.match(run.stdout, report, name);
    assert.match(run.stderr, message, name);
    assert.deepEqual(readdirSync(folder), [name], `${name}: kith check left something beside the file`);
    assert.ok(readFileSync(file).equals(content), `${name}: kith check changed the file`);
    const json = JSON.parse((await kith(['check', file, '--json'])).stdout) as { fileState: string; problems: string[] };
    assert.equal(json.fileState, name === 'child.db' || name === 'cut.db' ? 'damaged' : 'not-kith');
    assert.equal(json.problems.length, 1);
  }
});

test("kith check of a file a running server holds and writes to: sound, through the server's own lock file", async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'kith.db');
  const server = await startServer(file);
  t.after(() => server.stop());
  const created = await httpJson(server.url, 'POST', '/collections', { name: 'live', vector_size: 4, distance: 'dot' });
  assert.equal(created.status, 200, created.raw);
  let writing = true;
  let batches = 0;
  const writer = (async () => {
    while (writing) {
      const batch = Array.from({ length: 200 }, (_, i) => ({ id: `p${batches}-${i}`, vector: [i, 1, 2, batches], payload: { text: 'x'.repeat(i * 10) } }));
      const answer = await httpJson(server.url, 'PUT', '/collections/live/points', { points: batch });
      assert.equal(answer.status, 200, answer.raw);
      batches++;
    }
  })();
  for (let i = 0; i < 3; i++) {
    const run = await kith(['check', file]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /collection "live" \(uid 1, 4-d Dot, flat\): \d+ point record\(s\)/);
    assert.match(run.stdout, /^sound: /m);
  }
  writing = false;
  await writer;
  assert.ok(batches > 0);
  assert.deepEqual(readdirSync(dir).sort(), ['kith.db', 'kith.db-lock']);
});
