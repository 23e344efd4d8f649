/**
 * Property: the piecewise body parser (src/api/json-stream-parser.ts) gives what the whole-body
 * parse gives — the body decoded from UTF-8 at once, then `JSON.parse` — for random JSON texts
 * (whitespace anywhere, repeated keys, `__proto__`, escapes, lone and paired surrogates, numbers
 * that overflow), the same texts broken in random ways, and bytes that are not UTF-8, each split
 * into random chunks and parsed with pieces of a few bytes, so that every container is parsed in
 * runs. Valid bodies must give a deep-equal value, with the same key order; invalid ones
 * ERR_INVALID_JSON; an empty one undefined.
 *
 * Replay a failure with KITH_SEED=<seed> (the seed is in the test name and in fast-check's report).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { JsonStreamParser, MAX_BODY_NESTING, PIECE_BYTES } from '../../src/api/json-stream-parser.js';
import { isKithError } from '../../src/core/errors.js';
import { testSeed } from '../helpers/data.js';

const SEED = testSeed(0x15a7);
const RUNS = 4000;

type Outcome = { readonly value: unknown } | { readonly code: string };

/** What the parser answered before it worked in pieces: the whole text, one JSON.parse. */
function reference(bytes: Buffer): Outcome {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return { value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { code: 'ERR_INVALID_JSON' };
  }
  return holdsForbiddenKey(value) ? { code: 'ERR_INVALID_JSON' } : { value };
}

function holdsForbiddenKey(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.some(holdsForbiddenKey);
  for (const [key, child] of Object.entries(node)) {
    if (key === '__proto__') return true;
    if (key === 'constructor' && typeof child === 'object' && child !== null && !Array.isArray(child) && Object.hasOwn(child, 'prototype')) return true;
    if (holdsForbiddenKey(child)) return true;
  }
  return false;
}

function piecewise(chunks: readonly Buffer[], pieceBytes: number): Outcome {
  const parser = new JsonStreamParser({ pieceBytes });
  try {
    for (const chunk of chunks) parser.push(chunk);
    return { value: parser.end() };
  } catch (error) {
    if (!isKithError(error)) throw error;
    return { code: error.code };
  }
}

/** Deep equality that also checks the order of keys (which JSON.stringify shows). */
function assertSame(actual: Outcome, expected: Outcome, what: string): void {
  assert.deepEqual(actual, expected, what);
  if ('value' in actual && 'value' in expected) assert.equal(JSON.stringify(actual.value), JSON.stringify(expected.value), `${what}: key order`);
}

const ws = fc.constantFrom('', '', ' ', '\n', '\t', '\r\n  ');
const keyText = fc.oneof(
  fc.constantFrom(
    '"a"',
    '"b"',
    '"a"',
    '"__proto__"',
    '"\\u005f_proto__"',
    '"constructor"',
    '"prototype"',
    '""',
    '"1"',
    '"0"',
    '"10"',
    '"a\\"b"',
    '"x\\\\"',
    '"\\ud83d\\ude00"',
    '"\\ud800"',
    '"é"',
    '"[{,:}]"',
  ),
  fc.string({ unit: 'binary', maxLength: 6 }).map((s) => JSON.stringify(s)),
);
const scalarText = fc.oneof(
  fc.constantFrom('0', '-0', '1e400', '-1e400', '1.5', '1E-7', '-12.5e+3', '123456789012345678901234567890', 'true', 'false', 'null'),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
  fc.integer().map(String),
  fc.string({ unit: 'binary', maxLength: 12 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"\\u0041"', '"\\n\\t\\b\\f\\r"', '"\\/"', '"[{,}]\\""', '"\\\\"', '"\\ud834\\udd1e"', '"\\udd1e\\ud834"', '"a,b"', '"}"'),
);
const { value: jsonText } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', maxDepth: 6 }, scalarText, tie('array'), tie('object')),
  array: fc
    .array(fc.tuple(ws, tie('value'), ws), { maxLength: 7 })
    .chain((items) => ws.map((inner) => `[${items.length === 0 ? inner : items.map(([a, v, b]) => a + v + b).join(',')}]`)),
  object: fc
    .array(fc.tuple(ws, keyText, ws, ws, tie('value'), ws), { maxLength: 6 })
    .chain((members) => ws.map((inner) => `{${members.length === 0 ? inner : members.map(([a, k, b, c, v, d]) => `${a}${k}${b}:${c}${v}${d}`).join(',')}}`)),
}));

/** A body: valid JSON text with whitespace around it, sometimes broken, as UTF-8 bytes, sometimes with bytes that are not UTF-8. */
const bodyArb = fc
  .record({
    text: fc.tuple(ws, jsonText, ws).map(([a, v, b]) => a + v + b),
    breaks: fc.array(
      fc.record({
        kind: fc.constantFrom('delete', 'insert', 'truncate', 'append'),
        at: fc.nat(),
        what: fc.constantFrom(',', ']', '}', '[', '{', '"', '\\', ':', ' ', 'x', '0', '-', '\u00a0', '\ufeff', '1,', ',]'),
      }),
      { maxLength: 2 },
    ),
    brokenBytes: fc.array(fc.record({ at: fc.nat(), bytes: fc.constantFrom([0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf0, 0x9f], [0x80]) }), {
      maxLength: 2,
    }),
    mutate: fc.nat(9),
  })
  .map(({ text, breaks, brokenBytes, mutate }) => {
    let broken = text;
    // Most bodies stay valid; a third are broken in text, a few in bytes.
    if (mutate < 3) {
      for (const { kind, at, what } of breaks) {
        const p = at % (broken.length + 1);
        if (kind === 'delete') broken = broken.slice(0, p) + broken.slice(p + 1);
        else if (kind === 'insert') broken = broken.slice(0, p) + what + broken.slice(p);
        else if (kind === 'truncate') broken = broken.slice(0, p);
        else broken += what;
      }
    }
    let bytes = Buffer.from(broken, 'utf8');
    if (mutate === 3) {
      for (const { at, bytes: extra } of brokenBytes) {
        const p = at % (bytes.length + 1);
        bytes = Buffer.concat([bytes.subarray(0, p), Buffer.from(extra), bytes.subarray(p)]);
      }
    }
    return bytes;
  });

/** Cut points of a body into chunks. */
const cutsArb = fc.array(fc.nat(), { maxLength: 8 });

function chunksOf(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    chunks.push(bytes.subarray(from, p));
    from = p;
  }
  return chunks;
}

test(`the piecewise parser answers as JSON.parse of the whole body (seed ${SEED}, ${RUNS} runs)`, (t) => {
  let valid = 0;
  let refused = 0;
  fc.assert(
    fc.property(bodyArb, cutsArb, fc.integer({ min: 1, max: 48 }), (bytes, cuts, pieceBytes) => {
      const expected = reference(bytes);
      const what = `body ${JSON.stringify(bytes.toString('latin1'))} (hex ${bytes.toString('hex').slice(0, 400)}), cuts ${cuts}, pieces of ${pieceBytes}`;
      assertSame(piecewise(chunksOf(bytes, cuts), pieceBytes), expected, what);
      // And with the service's piece size: one JSON.parse of the whole, as before.
      assertSame(piecewise(chunksOf(bytes, cuts), PIECE_BYTES), expected, `${what}, pieces of ${PIECE_BYTES}`);
      if ('value' in expected) valid++;
      else refused++;
    }),
    { seed: SEED, numRuns: RUNS },
  );
  t.diagnostic(`${valid} valid, ${refused} refused`);
  // Both answers must be common, or the property says little.
  assert.ok(valid > RUNS * 0.4 && refused > RUNS * 0.15, `${valid} valid, ${refused} refused`);
});

test('containers far larger than a piece, in chunks of every size: the same value as JSON.parse', () => {
  const points = Array.from({ length: 300 }, (_, i) => ({
    id: i % 7 === 0 ? `doc-${i}` : i,
    vector: [i / 3, -i, 1e-7 * i, 0],
    payload: { k: i % 10, s: `x${i},]}"\\`, nested: { list: [i, [i, { deep: [] }]] } },
  }));
  const value = { points, batch: { ids: points.map((p) => p.id), vectors: points.map((p) => p.vector) } };
  const bytes = Buffer.from(JSON.stringify(value, null, 1));
  for (const chunkBytes of [1, 7, 64, 1000, bytes.length]) {
    for (const pieceBytes of [1, 50, 4096]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += chunkBytes) chunks.push(bytes.subarray(at, at + chunkBytes));
      assertSame(piecewise(chunks, pieceBytes), { value: JSON.parse(bytes.toString()) }, `chunks of ${chunkBytes}, pieces of ${pieceBytes}`);
    }
  }
});

test(`nesting up to ${MAX_BODY_NESTING} levels parses as JSON.parse does; deeper is refused with ERR_BAD_INPUT`, () => {
  const nested = (depth: number): string => `${'[{"a":'.repeat(depth / 2)}1${'}]'.repeat(depth / 2)}`;
  const ok = Buffer.from(nested(MAX_BODY_NESTING));
  assertSame(piecewise([ok], 16), { value: JSON.parse(ok.toString()) }, 'at the limit');
  assertSame(piecewise([ok], PIECE_BYTES), { value: JSON.parse(ok.toString()) }, 'at the limit, one piece');
  assert.deepEqual(piecewise([Buffer.from(nested(MAX_BODY_NESTING + 2))], 16), { code: 'ERR_BAD_INPUT' });
  // 64 MiB of brackets took JSON.parse seconds; refused at the first byte past the limit.
  assert.deepEqual(piecewise([Buffer.from('['.repeat(5_000_000))], PIECE_BYTES), { code: 'ERR_BAD_INPUT' });
});

test('a refused key is named by its path, in open containers and in runs', () => {
  const cases: Array<[string, RegExp]> = [
    ['{"points":[{"id":1},{"id":2,"payload":{"__proto__":{"x":1}}}]}', /^points\[1\]\.payload\.__proto__: /],
    ['{"points":[{"id":1},{"id":2,"payload":{"\\u005f_proto__":{"x":1}}}]}', /^points\[1\]\.payload\.__proto__: /],
    ['{"a":[1,2,3],"constructor":{"prototype":{"x":1}}}', /^constructor: /],
    ['{"a":[1,2,3],"__proto__":[1,2,3,4,5,6,7,8,9]}', /^__proto__: /],
    ['{"filter":{"must":[{"key":"s","match":{"value":{"__proto__":{"p":"y"}}}}]}}', /^filter\.must\[0\]\.match\.value\.__proto__: /],
  ];
  for (const [text, message] of cases) {
    for (const pieceBytes of [1, 5, PIECE_BYTES]) {
      const parser = new JsonStreamParser({ pieceBytes });
      parser.push(Buffer.from(text));
      assert.throws(
        () => parser.end(),
        (error: unknown) => isKithError(error) && error.code === 'ERR_INVALID_JSON' && message.test(error.message),
        `${text}, pieces of ${pieceBytes}`,
      );
    }
  }
});
