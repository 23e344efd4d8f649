import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJson } from '../../../src/core/json-text.js';
import { SeededRng } from '../../../src/core/rng.js';
import { ProjectionKeys, SharedPayloadReader, SharedPayloadWriter } from '../../../src/payload/shared-payloads.js';
import { testSeed } from '../../helpers/data.js';
import { controlId, drawPayload, longUnicodeId } from '../../helpers/nasty-data.js';

/** Keys and ids no byte format may bend: JSON's own escapes, lone surrogates, prototype names, dots. */
const NASTY_KEYS = ['__proto__', 'constructor', 'a.b', '', 'é', '\u{1F600}', '\ud800', 'x\u0000y', '"q"', '\\'];

function nastyPayload(rng: SeededRng): Record<string, unknown> {
  const payload = JSON.parse(JSON.stringify(drawPayload(rng, new Set()))) as Record<string, unknown>;
  // Own properties, as JSON.parse makes them: "__proto__" included.
  for (const key of NASTY_KEYS)
    if (rng.next() < 0.4)
      Object.defineProperty(payload, key, { value: rng.next() < 0.5 ? -0 : [key, { [key]: null }], enumerable: true, writable: true, configurable: true });
  return payload;
}

/**
 * What a payload is after a round trip through JSON (storage's form: -0 reads back as 0). Not by
 * JSON.parse, which on Node 24 can misread the escaped keys these payloads have (core/json-text.ts).
 */
const asStored = (payload: Record<string, unknown>): Record<string, unknown> => parseJson(JSON.stringify(payload)) as Record<string, unknown>;

test('a record gives back its id and, projected on all its keys, its payload, for nasty ids and payloads', () => {
  const seed = testSeed(424242);
  const rng = new SeededRng(seed);
  const writer = new SharedPayloadWriter();
  const points = Array.from({ length: 600 }, (_, i) => ({
    id: i % 3 === 0 ? controlId(rng, i) : i % 3 === 1 ? longUnicodeId(rng, i) : `\ud800${i}`,
    payload: nastyPayload(rng),
  }));
  points.forEach((p, slot) => {
    writer.set(slot, p.id, p.payload);
  });
  const reader = new SharedPayloadReader(writer.arrays());
  points.forEach((p, slot) => {
    assert.equal(reader.has(slot), true);
    assert.equal(reader.idOf(slot), p.id, `seed ${seed}: slot ${slot}`);
    const all = reader.project(slot, new ProjectionKeys(Object.keys(p.payload)));
    assert.deepEqual({ ...all }, asStored(p.payload), `seed ${seed}: slot ${slot}`);
    // A projection keeps the keys asked for that the payload has, and nothing else.
    const asked = [Object.keys(p.payload)[0] ?? 'none', 'absent key'];
    const some = reader.project(slot, new ProjectionKeys(asked));
    assert.deepEqual(Object.keys(some), Object.keys(p.payload).length > 0 ? [asked[0]] : [], `seed ${seed}: slot ${slot}`);
  });
  assert.equal(reader.has(points.length), false);
});

test('scalars read back exactly: integers to 15 digits and past, fractions, exponents, escapes, non-ASCII', () => {
  const values = [
    0,
    -3,
    7,
    123456789012345,
    -999999999999999,
    1234567890123456800,
    2 ** 53 + 2,
    0.1,
    -2.5e-7,
    1e21,
    1e300,
    -1e-300,
    'plain',
    '',
    'a"b',
    'back\\slash',
    '\u0000',
    'é',
    '\u{1F600}',
    '\ud800',
    true,
    false,
    null,
    [1, 'x'],
    { k: [null] },
  ];
  const writer = new SharedPayloadWriter();
  const payload = Object.fromEntries(values.map((v, i) => [`v${i}`, v]));
  writer.set(0, 'p', payload);
  const projected = new SharedPayloadReader(writer.arrays()).project(0, new ProjectionKeys(Object.keys(payload)));
  for (const [i, v] of values.entries()) assert.deepEqual(projected[`v${i}`], v, `value ${i}: ${JSON.stringify(v)}`);
});

test('nested objects read back with their escaped keys after values with keys ending in a backslash (Node 24 JSON.parse)', () => {
  // Every key JSON.stringify escapes, each after a record whose value of the same shape has the key
  // with a backslash in place of the escaped character: the parse V8 13.6 then misreads.
  const keys = ['\n', '"', '\\', '\t', '\u0000', '\u0001', '\u001f', '\ud800', '\udfff', 'a\nb', 'ab"'];
  const writer = new SharedPayloadWriter();
  const wanted = new ProjectionKeys(['v']);
  const reader = new SharedPayloadReader(writer.arrays());
  keys.forEach((key, i) => {
    const escapeAt = Array.from({ length: key.length }, (_, j) => key.charCodeAt(j)).findIndex(
      (c) => c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff),
    );
    const poison = { v: { [`shape${i}`]: i, [`${key.slice(0, escapeAt)}\\`]: 'poison' } };
    const victim = { v: { [`shape${i}`]: i, [key]: 'victim' } };
    writer.set(2 * i, `p${i}`, poison);
    writer.set(2 * i + 1, `v${i}`, victim);
    reader.follow(writer.arrays());
    assert.deepEqual(reader.project(2 * i, wanted), poison, JSON.stringify(key));
    assert.deepEqual(reader.project(2 * i + 1, wanted), victim, JSON.stringify(key));
  });
});

test('replaced and cleared records read as the writer left them; garbage is compacted into new arrays', () => {
  const writer = new SharedPayloadWriter();
  const big = 'x'.repeat(4000);
  const n = (reader: SharedPayloadReader, slot: number): unknown => reader.project(slot, new ProjectionKeys(['n'])).n;
  for (let slot = 0; slot < 100; slot++) writer.set(slot, `p${slot}`, { n: slot, big });
  const reader = new SharedPayloadReader(writer.arrays());
  writer.clear(7);
  assert.equal(reader.has(7), false);
  // Rewrites leave garbage behind; compaction is wanted once it outweighs the live records and passes 1 MiB.
  for (let round = 1; round <= 4; round++) {
    if (round <= 3) assert.equal(writer.wantsCompaction, false, `round ${round}`);
    for (let slot = 0; slot < 100; slot++) if (slot !== 7) writer.set(slot, `p${slot}`, { n: slot * 10 + round, big });
  }
  assert.equal(writer.wantsCompaction, true);
  const before = writer.arrays();
  reader.follow(before);
  const used = writer.usedBytes;
  writer.compact();
  const after = writer.arrays();
  assert.notEqual(after.bytes, before.bytes, 'compaction wrote into the old buffer, which readers may be reading');
  assert.equal(writer.wantsCompaction, false);
  assert.ok(writer.usedBytes * 4 < used, `${writer.usedBytes} of ${used} bytes kept`);
  for (const arrays of [before, after]) {
    // The old arrays still read correctly (a reader follows the new ones at its next message).
    reader.follow(arrays);
    for (let slot = 0; slot < 100; slot++) {
      if (slot === 7) assert.equal(reader.has(slot), false);
      else {
        assert.equal(reader.idOf(slot), `p${slot}`);
        assert.equal(n(reader, slot), slot * 10 + 4);
      }
    }
  }
  // Arrays grown in place keep the same buffer: readers follow them without a copy.
  for (let slot = 100; slot < 5000; slot++) writer.set(slot, `p${slot}`, { n: slot });
  assert.equal(writer.arrays().bytes.buffer, after.bytes.buffer);
  reader.follow(writer.arrays());
  assert.equal(n(reader, 4999), 4999);
});
