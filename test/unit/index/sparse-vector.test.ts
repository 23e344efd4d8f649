/**
 * Sparse vectors (src/index/sparse/sparse-vector.ts): Qdrant's input rules with exact field paths,
 * the sorted copy, the merge-join dot product and the JSON form.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKithError } from '../../../src/core/errors.js';
import { SeededRng } from '../../../src/core/rng.js';
import { parseSparseVector, sharesIndex, sparseDot, sparseToJson } from '../../../src/index/sparse/sparse-vector.js';

const P = 'points[3].vector.text';

/** Asserts `fn` throws ERR_BAD_INPUT whose message starts with `path: ` and contains `words`. */
function refuses(fn: () => unknown, path: string, words: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(isKithError(error), `a KithError, got ${String(error)}`);
    assert.equal(error.code, 'ERR_BAD_INPUT');
    assert.ok(error.message.startsWith(`${path}: `), `path ${path} in ${JSON.stringify(error.message)}`);
    assert.ok(error.message.includes(words), `${JSON.stringify(words)} in ${JSON.stringify(error.message)}`);
    return true;
  });
}

test('not an object: the path itself', () => {
  for (const bad of [null, 3, 'x', [1, 2], undefined, true]) refuses(() => parseSparseVector(bad, P), P, 'must be an object');
});

test('indices or values missing or not arrays', () => {
  refuses(() => parseSparseVector({ values: [] }, P), `${P}.indices`, 'must be an array');
  refuses(() => parseSparseVector({ indices: {}, values: [] }, P), `${P}.indices`, 'must be an array');
  refuses(() => parseSparseVector({ indices: [] }, P), `${P}.values`, 'must be an array');
  refuses(() => parseSparseVector({ indices: [], values: 'abc' }, P), `${P}.values`, 'must be an array');
});

test('values not as long as indices: names values (as Qdrant does)', () => {
  refuses(() => parseSparseVector({ indices: [100, 500], values: [0.9, 0.8, 0.5] }, P), `${P}.values`, 'same length as indices');
  refuses(() => parseSparseVector({ indices: [1], values: [] }, P), `${P}.values`, 'same length as indices');
});

test('each bad index names its position', () => {
  const cases: Array<[unknown, string]> = [
    [-1, '-1'],
    [1.5, '1.5'],
    [2 ** 32, '4294967296'],
    ['7', '"7"'],
    [null, 'null'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    [[1], 'an array'],
  ];
  for (const [bad, shown] of cases) {
    refuses(() => parseSparseVector({ indices: [0, 5, bad], values: [1, 2, 3] }, P), `${P}.indices[2]`, `got ${shown}`);
  }
});

test('each bad value names its position; float32 overflow is refused', () => {
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '1', null, true, {}]) {
    refuses(() => parseSparseVector({ indices: [0, 1], values: [1, bad] }, P), `${P}.values[1]`, 'must be a finite number');
  }
  refuses(() => parseSparseVector({ indices: [0, 1], values: [1e39, 1] }, P), `${P}.values[0]`, 'out of float32 range');
  refuses(() => parseSparseVector({ indices: [0, 1], values: [1, -1e39] }, P), `${P}.values[1]`, 'out of float32 range');
});

test('duplicate indices are refused whatever their values; the later position is named', () => {
  refuses(() => parseSparseVector({ indices: [100, 500, 500], values: [0.9, 0.8, 0.5] }, P), `${P}.indices[2]`, 'duplicate index 500 (also at indices[1])');
  refuses(() => parseSparseVector({ indices: [7, 1, 7], values: [1, 1, 1] }, P), `${P}.indices[2]`, 'duplicate index 7 (also at indices[0])');
  refuses(() => parseSparseVector({ indices: [9, 3, 9, 3], values: [1, 2, 3, 4] }, P), `${P}.indices[3]`, 'duplicate index 3 (also at indices[1])');
  refuses(() => parseSparseVector({ indices: [4, 4], values: [2, 2] }, P), `${P}.indices[1]`, 'duplicate index 4');
});

test('empty vector, the largest index, negative and zero values are accepted', () => {
  const empty = parseSparseVector({ indices: [], values: [] }, P);
  assert.equal(empty.indices.length, 0);
  assert.equal(empty.values.length, 0);
  const v = parseSparseVector({ indices: [2 ** 32 - 1, 0], values: [-2.5, 0] }, P);
  assert.deepEqual(Array.from(v.indices), [0, 2 ** 32 - 1]);
  assert.deepEqual(Array.from(v.values), [0, -2.5]);
});

test('the result is a sorted copy, values rounded to float32, pairs kept together', () => {
  const input = { indices: [30, 10, 20], values: [0.3, 0.1, 0.2], extra: 1 };
  const v = parseSparseVector(input, P);
  assert.deepEqual(Array.from(v.indices), [10, 20, 30]);
  assert.deepEqual(Array.from(v.values), [Math.fround(0.1), Math.fround(0.2), Math.fround(0.3)]);
  assert.deepEqual(input.indices, [30, 10, 20], 'the input is not sorted in place');
  const rng = new SeededRng(5);
  for (let round = 0; round < 200; round++) {
    const n = rng.int(20);
    const set = new Set<number>();
    while (set.size < n) set.add(rng.int(50));
    const indices = [...set];
    const values = indices.map((i) => i * 2 + 1);
    const parsed = parseSparseVector({ indices, values }, P);
    for (let i = 0; i < n; i++) {
      if (i > 0) assert.ok((parsed.indices[i] as number) > (parsed.indices[i - 1] as number), `strictly ascending, round ${round}`);
      assert.equal(parsed.values[i], (parsed.indices[i] as number) * 2 + 1, `pair kept, round ${round}`);
    }
  }
});

test('sparseDot: merge join over shared indices only; sharesIndex tells no overlap from a 0 sum', () => {
  const a = parseSparseVector({ indices: [1, 3, 5, 2 ** 32 - 1], values: [1, 2, 3, 4] }, P);
  const b = parseSparseVector({ indices: [0, 3, 4, 5, 2 ** 32 - 1], values: [9, 10, 11, -1, 0.5] }, P);
  assert.equal(sparseDot(a, b), 2 * 10 + 3 * -1 + 4 * 0.5);
  assert.equal(sparseDot(b, a), sparseDot(a, b));
  assert.equal(sharesIndex(a, b), true);
  const c = parseSparseVector({ indices: [2, 4], values: [1, 1] }, P);
  assert.equal(sparseDot(a, c), 0);
  assert.equal(sharesIndex(a, c), false);
  const empty = parseSparseVector({ indices: [], values: [] }, P);
  assert.equal(sparseDot(a, empty), 0);
  assert.equal(sharesIndex(a, empty), false);
  const cancel = parseSparseVector({ indices: [1, 3], values: [2, -1] }, P);
  assert.equal(sparseDot(a, cancel), 0, 'a zero sum');
  assert.equal(sharesIndex(a, cancel), true, 'still an overlap');
  // Against a dense reference on random vectors.
  const rng = new SeededRng(11);
  for (let round = 0; round < 300; round++) {
    const x = randomDense(rng);
    const y = randomDense(rng);
    let expected = 0;
    for (let i = 0; i < x.length; i++) expected += Math.fround(x[i] as number) * Math.fround(y[i] as number);
    const got = sparseDot(fromDense(x), fromDense(y));
    assert.equal(got, expected, `round ${round}`);
  }
});

test('sparseToJson round-trips through parseSparseVector', () => {
  const v = parseSparseVector({ indices: [5, 2 ** 32 - 1, 0], values: [0.5, -1, 0] }, P);
  const json = sparseToJson(v);
  assert.deepEqual(json, { indices: [0, 5, 2 ** 32 - 1], values: [0, 0.5, -1] });
  assert.deepEqual(parseSparseVector(JSON.parse(JSON.stringify(json)), P), v);
});

function randomDense(rng: SeededRng): number[] {
  return Array.from({ length: 12 }, () => (rng.next() < 0.6 ? 0 : rng.gaussian()));
}

function fromDense(x: number[]): ReturnType<typeof parseSparseVector> {
  const indices: number[] = [];
  const values: number[] = [];
  x.forEach((v, i) => {
    if (v !== 0) {
      indices.push(i);
      values.push(v);
    }
  });
  return parseSparseVector({ indices, values }, 'v');
}
