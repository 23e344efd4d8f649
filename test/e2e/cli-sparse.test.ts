/**
 * Sparse vectors through `kith import` and `kith export`, into a file (--db) and through a
 * listening server (--url): a collection created with --vector-name and --sparse takes lines with
 * `sparse_vectors` and lines in Qdrant's named `vector` form; its export writes them and imports
 * back to the same collection (byte for byte into a file, versions included; over --url the same
 * but for the versions). Nasty data: empty sparse vectors, indices near 2^32, zero and negative
 * values, unsorted indices, points with no sparse vector. A bad sparse vector stops the import
 * naming its line and field, with nothing of its batch written.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { fileAndServer, kith, ok, withoutVersions } from '../helpers/kith-cli.js';
import { startServer } from '../helpers/server-process.js';
import { nastySparse, type SparseJson, storedSparse } from '../helpers/sparse-model.js';
import { tempDir } from '../helpers/temp-dir.js';

const CREATE = ['--dim', '3', '--distance', 'dot', '--vector-name', 'dense', '--sparse', 'text:idf', '--sparse', 'tags'];

interface Point {
  id: string | number;
  vector: number[];
  sparse: { text?: SparseJson; tags?: SparseJson };
  payload: Record<string, unknown>;
}

function pointsOf(rng: SeededRng, n: number): Point[] {
  return Array.from({ length: n }, (_, i) => {
    const sparse: Point['sparse'] = {};
    if (rng.int(4) !== 0) sparse.text = nastySparse(rng, 30);
    if (rng.int(3) === 0) sparse.tags = nastySparse(rng, 6);
    return {
      id: i % 4 === 0 ? `doc-${i}` : i,
      // float32-exact components; + 0 makes -0 the 0 JSON writes.
      vector: Array.from({ length: 3 }, () => Math.round((rng.next() * 2 - 1) * 1024) / 1024 + 0),
      sparse,
      payload: { i, even: i % 2 === 0 },
    };
  });
}

/** A point as a line of the input file: sparse vectors beside the vector, in Qdrant's form, or none at all. */
function inputLine(p: Point, i: number): unknown {
  const none = p.sparse.text === undefined && p.sparse.tags === undefined;
  if (i % 3 === 0) return { id: p.id, vector: { dense: p.vector, ...p.sparse }, payload: p.payload };
  if (i % 3 === 1 || none) return { id: p.id, vector: p.vector, ...(none && i % 2 === 0 ? {} : { sparse_vectors: p.sparse }), payload: p.payload };
  // Split: one name in Qdrant's form, the other beside it.
  const { text, tags } = p.sparse;
  return {
    id: p.id,
    vector: { dense: p.vector, ...(text === undefined ? {} : { text }) },
    sparse_vectors: tags === undefined ? {} : { tags },
    payload: p.payload,
  };
}

/** The points as an export has them (versions aside), by id: ids as strings, indices ascending, no sparse_vectors when none. */
function expectedById(points: readonly Point[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const p of points) {
    const sparse = Object.entries(p.sparse).filter(([, v]) => v !== undefined) as [string, SparseJson][];
    out.set(String(p.id), {
      id: String(p.id),
      vector: p.vector,
      ...(sparse.length === 0 ? {} : { sparse_vectors: Object.fromEntries(sparse.map(([name, v]) => [name, storedSparse(v)])) }),
      payload: p.payload,
    });
  }
  return out;
}

/** An export's lines parsed, versions dropped, by id. */
function exportedById(jsonl: string): Map<string, unknown> {
  const lines = withoutVersions(jsonl).trimEnd().split('\n');
  return new Map(
    lines.map((line) => {
      const value = JSON.parse(line) as { id: string };
      return [value.id, value];
    }),
  );
}

/** The export's points are the expected ones; the first point that differs is named (a whole map would not fit a message). */
function sameById(jsonl: string, expected: ReadonlyMap<string, unknown>, context: string): void {
  const actual = exportedById(jsonl);
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), `${context}: ids`);
  for (const [id, point] of expected) assert.deepEqual(actual.get(id), point, `${context}: point ${id}`);
}

function writeJsonl(path: string, lines: readonly unknown[]): void {
  writeFileSync(path, `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
}

test('export → import keeps sparse vectors, into a file and through a server; Qdrant-form lines read', async (t) => {
  const seed = testSeed(71);
  const rng = new SeededRng(seed);
  const dir = tempDir(t);
  const first = join(dir, 'first.db');
  const second = join(dir, 'second.db');
  const points = pointsOf(rng, 700);
  const withSparse = points.filter((p) => p.sparse.text !== undefined || p.sparse.tags !== undefined).length;
  assert.ok(withSparse > 400 && withSparse < 700, `[seed ${seed}] ${withSparse} points with sparse vectors: the data should mix both`);
  const source = join(dir, 'in.jsonl');
  writeJsonl(source, points.map(inputLine));
  const expected = expectedById(points);
  const nasty = JSON.stringify([...expected.values()]);
  assert.match(nasty, /"indices":\[\]/, 'an empty sparse vector among the points');
  assert.match(nasty, /429496729[3-5]/, 'an index near 2^32 among the points');
  assert.match(nasty, /"values":\[[^\]]*-\d/, 'a negative value among the points');

  await ok(['import', source, '--collection', 'c', ...CREATE, '--batch', '128', '--db', first, '--quiet']);
  const info = JSON.parse(await ok(['info', 'c', '--db', first]));
  assert.equal(info.vector_name, 'dense');
  assert.deepEqual(info.sparse_vectors, { text: { modifier: 'idf' }, tags: { modifier: 'none' } });
  const exported = join(dir, 'out.jsonl');
  await ok(['export', 'c', '--out', exported, '--db', first, '--quiet']);
  const text = readFileSync(exported, 'utf8');
  sameById(text, expected, `[seed ${seed}]`);

  // Into another file: a restore (versions kept), the same export byte for byte; again after re-running it.
  await ok(['import', exported, '--collection', 'c', ...CREATE, '--db', second, '--quiet']);
  assert.equal(await ok(['export', 'c', '--db', second]), text);
  await ok(['import', exported, '--collection', 'c', '--batch', '99', '--db', second, '--quiet']);
  assert.equal(await ok(['export', 'c', '--db', second]), text);
  const restored = JSON.parse(await ok(['info', 'c', '--db', second]));
  assert.deepEqual({ ...restored, calibration: undefined }, { ...info, calibration: undefined });

  // Through a server on a third file: the collection created over HTTP; the export, versions aside, the same.
  const server = await startServer(join(dir, 'served.db'));
  t.after(() => server.stop());
  const url = ['--url', server.url];
  const viaUrl = await kith(['import', exported, '--collection', 'c', ...CREATE, ...url, '--quiet']);
  assert.equal(viaUrl.code, 0, viaUrl.stderr);
  assert.match(viaUrl.stderr, /versions are not kept over --url/);
  sameById(await ok(['export', 'c', ...url]), expected, `[seed ${seed}] --url round trip`);
  // The source file (Qdrant's form among its lines) straight to the server.
  await ok(['import', source, '--collection', 'q', ...CREATE, ...url, '--batch', '200', '--quiet']);
  sameById(await ok(['export', 'q', ...url]), expected, `[seed ${seed}] --url from the source`);
  // A server's export imported into a file gives the same points again.
  const fromServer = join(dir, 'served.jsonl');
  await ok(['export', 'q', '--out', fromServer, ...url, '--quiet']);
  await ok(['import', fromServer, '--collection', 'q', ...CREATE, '--db', second, '--quiet']);
  sameById(await ok(['export', 'q', '--db', second]), expected, `[seed ${seed}]`);

  // NumPy: the dense vectors only, with a warning that the sparse ones are left out.
  const npy = await kith(['export', 'c', '--format', 'npy', '--out', join(dir, 'c.npy'), '--db', first, '--quiet']);
  assert.equal(npy.code, 0, npy.stderr);
  assert.match(npy.stderr, /sparse vectors \(text, tags\) are not in a \.npy file/);
  const bytes = readFileSync(join(dir, 'c.npy'));
  assert.equal(bytes.length, bytes.indexOf(0x0a) + 1 + 700 * 3 * 4);
});

test('a bad sparse vector stops the import naming its line, nothing of its batch written; --sparse is checked', async (t) => {
  const dir = tempDir(t);
  const good = join(dir, 'good.jsonl');
  const bad = join(dir, 'bad.jsonl');
  const base = [
    { id: 1, vector: [1, 0, 0], sparse_vectors: { text: { indices: [4294967295, 0], values: [-2, 0] } } },
    { id: 'two', vector: { dense: [0, 1, 0], tags: { indices: [], values: [] } } },
  ];
  writeJsonl(good, base);
  const cases: [unknown, RegExp][] = [
    [
      { id: 9, vector: [1, 1, 1], sparse_vectors: { text: { indices: [5, 6, 5], values: [1, 2, 3] } } },
      /bad\.jsonl:3: sparse_vectors\.text\.indices\[2\]: duplicate index 5 \(also at indices\[0\]\)/,
    ],
    [
      { id: 9, vector: [1, 1, 1], sparse_vectors: { words: { indices: [1], values: [1] } } },
      /bad\.jsonl:3: sparse_vectors\.words: the collection has no sparse vector named "words" \(it has "text", "tags"\)/,
    ],
    [
      { id: 9, vector: { dense: [1, 1, 1], words: { indices: [1], values: [1] } } },
      /bad\.jsonl:3: vector\.words: the collection has no vector named "words" \(it has "dense", "text", "tags"\)/,
    ],
    [{ id: 9, vector: { text: { indices: [1], values: [1] } } }, /bad\.jsonl:3: vector\.dense: required/],
    [
      { id: 9, vector: [1, 1, 1], sparse_vectors: { tags: { indices: [4294967296], values: [1] } } },
      /bad\.jsonl:3: sparse_vectors\.tags\.indices\[0\]: must be an integer from 0 to 4294967295, got 4294967296/,
    ],
    [
      { id: 9, vector: [1, 1, 1], sparse_vectors: { tags: { indices: [1, 2], values: [1] } } },
      /bad\.jsonl:3: sparse_vectors\.tags\.values: must be the same length as indices/,
    ],
    [
      { id: 9, vector: [1, 1, 1], sparse_vectors: { tags: { indices: [1], values: ['x'] } } },
      /bad\.jsonl:3: sparse_vectors\.tags\.values\[0\]: must be a finite number, got "x"/,
    ],
  ];
  for (const where of await fileAndServer(t, dir)) {
    await ok(['import', good, '--collection', 'c', ...CREATE, ...where.args, '--quiet']);
    const before = await ok(['export', 'c', ...where.args]);
    assert.match(before, /"sparse_vectors":\{"text":\{"indices":\[0,4294967295\],"values":\[0,-2\]\}\}/, where.name);
    assert.match(before, /"sparse_vectors":\{"tags":\{"indices":\[\],"values":\[\]\}\}/, where.name);
    for (const [line, message] of cases) {
      // A good line first: it shares the bad line's batch, so it must not be written either.
      writeJsonl(bad, [{ id: 'new', vector: [0, 0, 1], sparse_vectors: { text: { indices: [3], values: [1] } } }, '', line]);
      const run = await kith(['import', bad, '--collection', 'c', ...where.args, '--quiet']);
      assert.equal(run.code, 1, `${where.name} ${JSON.stringify(line)}: ${run.stderr}`);
      assert.match(run.stderr, message, where.name);
      assert.doesNotMatch(run.stderr, /\n\s+at /, `${where.name}: a stack trace`);
      assert.equal(await ok(['export', 'c', ...where.args]), before, `${where.name} ${JSON.stringify(line)} changed the collection`);
    }
    // --sparse and --vector-name must match a collection that exists, and are checked as options.
    const mismatch = await kith(['import', good, '--collection', 'c', '--sparse', 'text', ...where.args, '--quiet']);
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.stderr, /collection "c" exists and its sparse vector "text" has modifier idf, not none \(--sparse\)/);
    const named = await kith(['import', good, '--collection', 'c', '--vector-name', 'other', ...where.args, '--quiet']);
    assert.match(named.stderr, /its dense vector is named "dense", not --vector-name "other"/);
    const usage = await kith(['import', good, '--collection', 'd', '--dim', '3', '--sparse', 'text:bm25', ...where.args]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--sparse: expected NAME, NAME:none or NAME:idf, got "text:bm25"/);
    const twice = await kith(['import', good, '--collection', 'd', '--dim', '3', '--sparse', 'text', '--sparse', 'text:idf', ...where.args]);
    assert.match(twice.stderr, /--sparse: "text" given twice/);
    // A collection without sparse vectors refuses a line that has them, naming it.
    const plain = await kith(['import', good, '--collection', 'plain', '--dim', '3', ...where.args, '--quiet']);
    assert.equal(plain.code, 1);
    assert.match(plain.stderr, /good\.jsonl:1: sparse_vectors\.text: the collection has no sparse vector named "text"\n/);
    assert.match(plain.stderr, /plain, which this import created, was dropped again/);
  }
});

test('export → import keeps named vectors and multi-vectors: into another file, versions and all, byte for byte', async (t) => {
  const dir = tempDir(t);
  const [first, second] = [join(dir, 'first.db'), join(dir, 'second.db')];
  const config = {
    name: 'n',
    vector_size: 2,
    distance: 'dot',
    named_vectors: { img: { size: 3, distance: 'euclid' }, col: { size: 2, distance: 'dot', multivector: true } },
    sparse_vectors: { s: {} },
  };
  const db = Database.open(first);
  await db.createCollection(config);
  await db.collection('n').upsert(
    Array.from({ length: 40 }, (_, i) => ({
      id: i,
      vector: [i % 5, 1],
      ...(i % 3 === 0
        ? {}
        : {
            named_vectors: {
              img: [i, -i, 0.5],
              ...(i % 2 === 0
                ? {
                    col: [
                      [1, i],
                      [i % 4, 0],
                    ],
                  }
                : {}),
            },
          }),
      ...(i % 4 === 0 ? { sparse_vectors: { s: { indices: [i, 100 + i], values: [1, -1] } } } : {}),
      payload: { i },
    })),
  );
  await db.close();
  const exported = join(dir, 'out.jsonl');
  await ok(['export', 'n', '--out', exported, '--db', first, '--quiet']);
  const text = readFileSync(exported, 'utf8');
  const lines = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(lines.find((l) => l.id === '2')?.named_vectors, {
    img: [2, -2, 0.5],
    col: [
      [1, 2],
      [2, 0],
    ],
  });
  assert.equal(lines.find((l) => l.id === '3')?.named_vectors, undefined, 'a point without named vectors has none on its line');
  // The target collection must exist with the same vectors (the command line creates only --sparse ones).
  const target = Database.open(second);
  await target.createCollection(config);
  await target.close();
  await ok(['import', exported, '--collection', 'n', '--db', second, '--quiet']);
  assert.equal(await ok(['export', 'n', '--db', second]), text, 'the same export, byte for byte');
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, `${JSON.stringify({ id: 'x', vector: [1, 1], named_vectors: { img: [1, 2] } })}\n`);
  const refused = await kith(['import', bad, '--collection', 'n', '--db', second]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /named_vectors\.img: expected 3 numbers, got 2/);
  // Qdrant's form of a line: every vector by name in `vector`, the named dense ones among them.
  const qdrantForm = join(dir, 'qdrant.jsonl');
  writeFileSync(qdrantForm, `${JSON.stringify({ id: 'q', vector: { '': [1, 1], img: [1, 2, 3], col: [[1, 0]], s: { indices: [5], values: [2] } } })}\n`);
  await ok(['import', qdrantForm, '--collection', 'n', '--db', second, '--quiet']);
  const reopened = Database.open(second);
  const [q] = await reopened.collection('n').retrieve(['q'], { with_vector: true, with_payload: false });
  await reopened.close();
  assert.deepEqual(q?.named_vectors, { img: [1, 2, 3], col: [[1, 0]] });
  assert.deepEqual(q?.sparse_vectors, { s: { indices: [5], values: [2] } });
});
