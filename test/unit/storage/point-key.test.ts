/**
 * The format-2 point key (uid big-endian + id UTF-8) round-trips every id the contract accepts and
 * sorts by collection; the format-1 reader recovers ids from keys written by lmdb-js's own
 * ordered-binary encoder, including the ids ordered-binary itself reads back wrong.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as lmdb from 'lmdb';
import { decodeFormat1PointKey } from '../../../src/storage/format-1-point-key.js';
import { decodePointKey, encodePointKey, MAX_POINT_KEY_BYTES, pointKeyRange } from '../../../src/storage/point-key.js';
import { testSeed, withSeed } from '../../helpers/data.js';
import { FORMAT_1_SHARED, format1Reading, trickyIds } from './tricky-ids.js';

// lmdb-js's own ordered-binary key codec (exported at run time, not in its type declarations):
// the encoder format-1 files were written with.
const codec = lmdb as unknown as { keyValueToBuffer(key: unknown): Buffer; bufferToKeyValue(key: Buffer): unknown };
const keyValueToBuffer = (key: unknown): Buffer => codec.keyValueToBuffer(key);
const bufferToKeyValue = (key: Buffer): unknown => codec.bufferToKeyValue(key);

test('every tricky id round-trips through the format-2 key, which is uid then the UTF-8 bytes', () => {
  for (const id of trickyIds()) {
    for (const uid of [0, 1, 255, 256, 70_000, 0xffff_ffff]) {
      const key = encodePointKey(uid, id);
      assert.equal(key.readUInt32BE(0), uid);
      assert.deepEqual(key.subarray(4), Buffer.from(id, 'utf8'));
      assert.deepEqual(decodePointKey(key), { uid, id }, JSON.stringify(id));
    }
  }
});

test('random well-formed ids of up to 1024 UTF-8 bytes round-trip', () => {
  withSeed(testSeed(4242), (rng) => {
    const ranges: Array<[number, number]> = [
      [0x00, 0x20],
      [0x20, 0x7f],
      [0x80, 0x800],
      [0x800, 0xd800],
      [0xe000, 0x10000],
      [0x10000, 0x110000],
    ];
    for (let n = 0; n < 2000; n++) {
      let id = '';
      const units = 1 + rng.int(300);
      while (id.length < units) {
        const [lo, hi] = ranges[rng.int(ranges.length)] as [number, number];
        id += String.fromCodePoint(lo + rng.int(hi - lo));
      }
      while (Buffer.byteLength(id) > 1024) id = id.slice(0, id.length - (id.at(-1)?.isWellFormed() ? 1 : 2));
      if (id.length === 0 || !id.isWellFormed()) continue;
      const uid = rng.int(1000);
      assert.deepEqual(decodePointKey(encodePointKey(uid, id)), { uid, id });
    }
  });
});

test('keys sort by collection first: every key of a uid lies in its range, none of another uid does', () => {
  const ids = trickyIds();
  for (const uid of [1, 2, 255, 256]) {
    const { start, end } = pointKeyRange(uid);
    for (const other of [uid - 1, uid, uid + 1]) {
      for (const id of ids) {
        const key = encodePointKey(other, id);
        const inside = Buffer.compare(key, start) >= 0 && Buffer.compare(key, end) < 0;
        assert.equal(inside, other === uid, `uid ${other} id ${JSON.stringify(id)} against range of ${uid}`);
      }
    }
  }
});

test('ids that are prefixes of each other get distinct keys', () => {
  const long = 'p'.repeat(1020);
  const keys = ['p', 'pp', long, `${long}\u0000`, `${long}\u0001`, 'p\u0000', 'p\u0000\u0000'].map((id) => encodePointKey(7, id).toString('hex'));
  assert.equal(new Set(keys).size, keys.length);
});

test('the longest key fits LMDB, and ids outside the contract are refused before any write', () => {
  const longest = encodePointKey(1, 'é'.repeat(512));
  assert.equal(longest.length, MAX_POINT_KEY_BYTES);
  assert.equal(MAX_POINT_KEY_BYTES, 1028);
  assert.throws(() => encodePointKey(1, ''), { code: 'ERR_INTERNAL' });
  assert.throws(() => encodePointKey(1, 'x'.repeat(1025)), { code: 'ERR_INTERNAL' });
  assert.throws(() => encodePointKey(1, 'a\ud800'), { code: 'ERR_INTERNAL' });
  assert.throws(() => encodePointKey(-1, 'a'), { code: 'ERR_INTERNAL' });
  assert.throws(() => encodePointKey(2 ** 32, 'a'), { code: 'ERR_INTERNAL' });
});

test('stored keys that are not format-2 keys are ERR_STORAGE_CORRUPTED', () => {
  assert.throws(() => decodePointKey(Buffer.from([0, 0, 0, 1])), { code: 'ERR_STORAGE_CORRUPTED' });
  assert.throws(() => decodePointKey(Buffer.from([0, 0, 0, 1, 0xff])), { code: 'ERR_STORAGE_CORRUPTED' });
  assert.throws(() => decodePointKey(Buffer.from([0, 0, 0, 1, 0xed, 0xa0, 0x80])), { code: 'ERR_STORAGE_CORRUPTED' });
  assert.throws(() => decodePointKey(Buffer.alloc(1029, 0x61)), { code: 'ERR_STORAGE_CORRUPTED' });
});

test('format-1 keys written by ordered-binary are read back exactly, where ordered-binary itself fails', () => {
  let misreadByOrderedBinary = 0;
  for (const id of trickyIds()) {
    for (const uid of [1, 2, 300, 4_000_000_000]) {
      const key = keyValueToBuffer([uid, id]);
      assert.deepEqual(decodeFormat1PointKey(key), { uid, id: format1Reading(id) }, JSON.stringify(id));
      const theirs = bufferToKeyValue(key) as unknown[];
      if (theirs.length !== 2 || theirs[1] !== id) misreadByOrderedBinary++;
    }
  }
  // The reason for format 2: ordered-binary's own reader gets these ids wrong.
  assert.ok(misreadByOrderedBinary > 0);
});

test('a format-1 key two ids shared (a short id, and the long id spelled by its escapes) reads as the short one', () => {
  assert.equal(FORMAT_1_SHARED.size, 2);
  for (const [long, short] of FORMAT_1_SHARED) {
    assert.ok(long.length >= 64 && short.length < 64);
    const a = keyValueToBuffer([1, short]);
    assert.deepEqual(keyValueToBuffer([1, long]), a);
    assert.deepEqual(decodeFormat1PointKey(a), { uid: 1, id: short });
  }
});

test('format-1 keys that no format-1 writer made are ERR_STORAGE_CORRUPTED', () => {
  const good = keyValueToBuffer([1, 'abc']);
  const cases = [good.subarray(0, 5), good.subarray(0, 10), Buffer.concat([good.subarray(0, 10), Buffer.from([0x01])])];
  const negative = keyValueToBuffer([-1, 'abc']);
  cases.push(negative);
  for (const key of cases) assert.throws(() => decodeFormat1PointKey(key), { code: 'ERR_STORAGE_CORRUPTED' });
});
