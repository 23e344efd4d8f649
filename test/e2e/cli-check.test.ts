/**
 * `kith check FILE` on a sound database (exit 0, "sound") and on copies corrupted deliberately
 * through the lmdb package: a point record's magic, dimension and payload bytes, a byte of the
 * graph snapshot (CRC-32), a graph made unsound under a recomputed CRC, a record of no collection,
 * a last version below a record's, an unreadable configuration. Each must be reported, with exit 1,
 * and the check itself must not change the file.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { open } from 'lmdb';
import { crc32 } from '../../src/core/crc32.js';
import { SeededRng } from '../../src/core/rng.js';
import { randomVectors, testSeed } from '../helpers/data.js';
import { kith, ok } from '../helpers/kith-cli.js';
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
  writeFileSync(graphFile, randomVectors(rng, 3000, 4).map((vector, i) => JSON.stringify({ id: i, vector, payload: { i } })).join('\n'));
  await ok(['import', graphFile, '--collection', 'g', '--dim', '4', '--distance', 'euclid', '--hnsw', '--db', sound, '--quiet']);
  await ok(['delete', 'g', '--ids', '3,5,7,11', '--db', sound]);
  const flatFile = join(dir, 'f.csv');
  writeFileSync(flatFile, `id,vector,lang\n${Array.from({ length: 50 }, (_, i) => `d${i},"${i + 1} 1 0",${i % 2 ? 'en' : 'fr'}`).join('\n')}\n`);
  await ok(['import', flatFile, '--collection', 'f', '--dim', '3', '--db', sound, '--quiet']);

  const before = sha(sound);
  const good = await kith(['check', sound]);
  assert.equal(good.code, 0, good.stdout + good.stderr);
  assert.match(good.stdout, /storage format 2, 2 collection\(s\)/);
  assert.match(good.stdout, /collection "g" \(uid 1, 4-d Euclid, hnsw\): 2996 point record\(s\); graph snapshot checksum ok \(\d+ bytes\); 2996 loaded; \d+ from the snapshot's graph, graph invariants checked/);
  assert.match(good.stdout, /collection "f" \(uid 2, 3-d Cosine, flat\): 50 point record\(s\); 50 loaded/);
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
        chunk[chunk.length >> 1] ^= 0xff;
        raw.snapshots.putSync([1, 0], chunk);
      },
      /collection "g": graph snapshot \(\d+ bytes in 1 chunk\(s\)\): checksum mismatch/,
    ],
    [
      'graph link under a valid checksum',
      (raw) => {
        const chunk = Buffer.from(raw.snapshots.get([1, 0]) as Buffer);
        // Container header 32 bytes, then the graph: header 60, levels and tombstones (each padded to 4), tree parents and ranks, layer-0 lists.
        const capacity = chunk.readUInt32LE(32 + 16);
        const links0 = 32 + 60 + 2 * ((capacity + 3) & ~3) + 8 * capacity;
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
