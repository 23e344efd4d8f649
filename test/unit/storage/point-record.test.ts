import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dequantizeSq8, quantizeSq8 } from '../../../src/quantization/sq8.js';
import { decodePointRecord, encodePointRecord } from '../../../src/storage/point-record.js';

test('f32 records round-trip exactly', () => {
  const values = new Float32Array([1.5, -2.25, 3e-8, 1e16]);
  const bytes = encodePointRecord({ version: 1795249091889267716n, vector: { encoding: 'f32', values }, payloadJson: '{"a":"é"}' });
  const back = decodePointRecord(bytes, 4, 'c/"x"');
  assert.equal(back.version, 1795249091889267716n);
  assert.deepEqual(back.vector, { encoding: 'f32', values });
  assert.equal(back.payloadJson, '{"a":"é"}');
});

test('sq8 records round-trip and take dim + 8 bytes for the vector', () => {
  const q = quantizeSq8(new Float32Array([0, 0.5, 1, -1]));
  const bytes = encodePointRecord({ version: 1n, vector: { encoding: 'sq8', ...q }, payloadJson: '{}' });
  assert.equal(bytes.length, 16 + 8 + 4 + 2);
  const back = decodePointRecord(bytes, 4, 'k');
  assert.deepEqual(back.vector, { encoding: 'sq8', min: q.min, max: q.max, codes: q.codes });
});

test('corrupted records are ERR_STORAGE_CORRUPTED naming the key', () => {
  const good = encodePointRecord({ version: 1n, vector: { encoding: 'f32', values: new Float32Array(8) }, payloadJson: '{}' });
  const cases: Array<[Uint8Array, number]> = [
    [good.subarray(0, 10), 8],
    [good.subarray(0, 40), 8],
    [Buffer.concat([Buffer.from([0x00]), good.subarray(1)]), 8],
    [good, 9],
  ];
  const flipped = Buffer.from(good);
  flipped[2] = 7;
  cases.push([flipped, 8]);
  for (const [bytes, dim] of cases) {
    assert.throws(
      () => decodePointRecord(bytes, dim, 'col/"p1"'),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, 'ERR_STORAGE_CORRUPTED');
        assert.match(e.message, /col\/"p1"/);
        return true;
      },
    );
  }
});

test('sq8 error is bounded by half a step per component; constant vectors are exact', () => {
  const v = new Float32Array(Array.from({ length: 100 }, (_, i) => Math.sin(i) * 3));
  const q = quantizeSq8(v);
  const back = dequantizeSq8(q);
  const halfStep = (q.max - q.min) / 255 / 2;
  for (let i = 0; i < v.length; i++) assert.ok(Math.abs((back[i] as number) - (v[i] as number)) <= halfStep + 1e-6, `component ${i}`);
  const constant = dequantizeSq8(quantizeSq8(new Float32Array([2, 2, 2])));
  assert.deepEqual([...constant], [2, 2, 2]);
});

test('records with sparse vectors round-trip; without them the bytes stay format 1', () => {
  const values = new Float32Array([0.5, -1]);
  const plain = encodePointRecord({ version: 3n, vector: { encoding: 'f32', values }, payloadJson: '{}', sparse: new Map() });
  assert.equal(plain[1], 1);
  const sparse = new Map([
    ['text', { indices: Uint32Array.from([0, 7, 4294967295]), values: Float32Array.from([1.5, -0.25, 3]) }],
    ['é', { indices: new Uint32Array(0), values: new Float32Array(0) }],
  ]);
  const bytes = encodePointRecord({ version: 3n, vector: { encoding: 'f32', values }, payloadJson: '{"a":[1]}', sparse });
  assert.equal(bytes[1], 2);
  const back = decodePointRecord(bytes, 2, 'k');
  assert.deepEqual(back.vector, { encoding: 'f32', values });
  assert.equal(back.payloadJson, '{"a":[1]}');
  assert.deepEqual(back.sparse, sparse);
});

test('a damaged sparse block is ERR_STORAGE_CORRUPTED, never a wrong vector', () => {
  const sparse = new Map([['s', { indices: Uint32Array.from([2, 9]), values: Float32Array.from([1, 2]) }]]);
  const good = encodePointRecord({ version: 1n, vector: { encoding: 'f32', values: new Float32Array(1) }, payloadJson: '{}', sparse });
  const blockAt = 16 + 4;
  const damaged: Buffer[] = [];
  const longer = Buffer.from(good);
  longer.writeUInt32LE(10_000, blockAt);
  damaged.push(longer);
  const unordered = Buffer.from(good);
  // The indices start after the length (4), count (2), name length (2), name (1) and nnz (4).
  unordered.writeUInt32LE(9, blockAt + 13);
  damaged.push(unordered);
  const moreNnz = Buffer.from(good);
  moreNnz.writeUInt32LE(3, blockAt + 9);
  damaged.push(moreNnz);
  damaged.push(good.subarray(0, blockAt + 8));
  for (const bytes of damaged) {
    assert.throws(
      () => decodePointRecord(bytes, 1, 'c/"p"'),
      (e: Error & { code?: string }) => e.code === 'ERR_STORAGE_CORRUPTED' && /c\/"p"/.test(e.message),
    );
  }
});

test('records with named dense vectors round-trip in format 3, sparse vectors or not', () => {
  const vector = { encoding: 'f32' as const, values: new Float32Array([1, 2]) };
  const named = new Map([
    ['img', { rows: 1, data: Float32Array.from([0.5, -1, 3]) }],
    ['colbert', { rows: 2, data: Float32Array.from([1, 0, 0, 1]) }],
  ]);
  for (const sparse of [undefined, new Map([['s', { indices: Uint32Array.from([4]), values: Float32Array.from([2]) }]])]) {
    const bytes = encodePointRecord({ version: 9n, vector, payloadJson: '{"k":1}', sparse, named });
    assert.equal(bytes[1], 3);
    const back = decodePointRecord(bytes, 2, 'k');
    assert.deepEqual(back.named, named);
    assert.deepEqual(back.sparse, sparse ?? new Map());
    assert.equal(back.payloadJson, '{"k":1}');
    // A named block cut short or over-long is corruption, never a shorter vector.
    assert.throws(
      () => decodePointRecord(bytes.subarray(0, bytes.length - 12), 2, 'c/"p"'),
      (e: Error & { code?: string }) => e.code === 'ERR_STORAGE_CORRUPTED',
    );
  }
});
