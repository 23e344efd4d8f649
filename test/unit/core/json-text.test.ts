/**
 * parseJson reads every object key exactly, on every Node: V8 13.6 (Node 24) JSON.parse misreads
 * an escaped key after an earlier parse met a key ending in a backslash at the same place
 * (src/core/json-text.ts). The texts here are parsed right after such "poison" parses.
 *
 * Replay a failure with KITH_SEED=<seed> (the seed is in the test name and in fast-check's report).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { SeededRng } from '../../../src/core/rng.js';
import { hasEscapedKey, parseJson, readJson } from '../../../src/core/json-text.js';
import { testSeed } from '../../helpers/data.js';

const hex4 = (code: number): string => code.toString(16).padStart(4, '0');

/**
 * Every short escape, every \u escape below U+0100 and of the surrogates' edges, and a stride
 * through the rest of the plane (all 65,536 make the test take seconds), each with what it stands for.
 */
function escapes(): Array<[escape: string, decoded: string]> {
  const list: Array<[string, string]> = [
    ['\\"', '"'],
    ['\\\\', '\\'],
    ['\\/', '/'],
    ['\\b', '\b'],
    ['\\f', '\f'],
    ['\\n', '\n'],
    ['\\r', '\r'],
    ['\\t', '\t'],
  ];
  const codes = new Set([0xd800, 0xdbff, 0xdc00, 0xdfff, 0xfffe, 0xffff]);
  for (let code = 0; code < 0x100; code++) codes.add(code);
  for (let code = 0x100; code <= 0xffff; code += 61) codes.add(code);
  for (const code of codes) list.push([`\\u${hex4(code)}`, String.fromCharCode(code)]);
  return list;
}

test('an escaped key reads back exactly after a parse met a key ending in a backslash at its place', () => {
  const wrong: string[] = [];
  let shape = 0;
  for (const before of ['', 'a', 'ab', '\\']) {
    for (const [written, decoded] of escapes()) {
      // A first key of its own gives each case a fresh object shape.
      const first = `shape${shape++}`;
      JSON.parse(`{"${first}":1,${JSON.stringify(`${before}\\`)}:0}`);
      const rawBefore = JSON.stringify(before).slice(1, -1);
      const text = `{"${first}":1,"${rawBefore}${written}":2}`;
      const parsed = parseJson(text) as Record<string, unknown>;
      const key = before + decoded;
      if (parsed[key] !== 2 || parsed[first] !== 1 || Object.keys(parsed).length !== 2) wrong.push(`${text} → ${JSON.stringify(Object.keys(parsed))}`);
    }
  }
  assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} keys misread, the first ten shown`);
});

test('which texts have an escaped key: escapes in values, escaped quotes before colons, spaces before a colon', () => {
  const cases: Array<[string, boolean]> = [
    ['{"a":1}', false],
    ['{"a":"x\\n"}', false],
    ['{"a":"x\\":"}', false],
    ['{"a":"\\\\","b":"\\\\"}', false],
    ['["\\\\",":"]', false],
    ['"\\u0041"', false],
    ['{"a\\n":1}', true],
    ['{"\\"":1}', true],
    ['{"\\\\":1}', true],
    ['{"x":"\\\\","\\u0041" \t\r\n: 1}', true],
    ['[{"a":"\\""},{"b":[{"c\\/d":null}]}]', true],
    ['{"a":{"b":"\\\\\\"","c":{"\\ud800":[]}}}', true],
  ];
  for (const [text, escapedKey] of cases) {
    JSON.parse(text); // every case is JSON
    assert.equal(hasEscapedKey(text), escapedKey, text);
  }
});

test('JSON.parse semantics: own "__proto__", the last duplicate at the first one\'s place, numbers, literals', () => {
  const proto = readJson('{"__proto__":{"polluted":true},"a\\n":1}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.deepEqual(Object.keys(proto), ['__proto__', 'a\n']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value, { polluted: true });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  const duplicates = readJson('{"k":1,"x\\t":2,"k":3}') as Record<string, unknown>;
  assert.deepEqual(Object.entries(duplicates), [
    ['k', 3],
    ['x\t', 2],
  ]);
  // Integer-like keys come first, as in every object.
  assert.deepEqual(Object.keys(readJson('{"b":1,"2":1,"\\u0031":1}') as object), ['1', '2', 'b']);
  const numbers = ['0', '-0', '1.5e-7', '-12.25E+3', '1e400', '-1e400', '123456789012345678901234567890', '5e-324', '0.1'];
  for (const n of numbers) assert.ok(Object.is(readJson(n), JSON.parse(n)), n);
  assert.deepEqual(readJson(' [true , false,null ,"",[],{},[[]],{"\\u00e9":{}}] '), [true, false, null, '', [], {}, [[]], { é: {} }]);
});

test('text that is not JSON fails as JSON.parse fails: a SyntaxError', () => {
  const bad = [
    '',
    ' ',
    '{',
    '{"a\\n":}',
    '{"a\\n" 1}',
    '{"a\\n":1,}',
    '[1,]',
    '[1 2]',
    '{"a\\x":1}',
    '{"a\\u12g4":1}',
    '"\u0001"',
    'nul',
    '01',
    '1.',
    '-',
    '{"a\\n":1} x',
    '{}}',
  ];
  for (const text of bad) {
    assert.throws(() => JSON.parse(text), SyntaxError, text);
    assert.throws(() => parseJson(text), SyntaxError, text);
    assert.throws(() => readJson(text), SyntaxError, text);
  }
});

test('nesting as deep as JSON.parse takes does not overflow the stack', () => {
  const depth = 50_000;
  const text = `${'[{"\\n":'.repeat(depth)}0${'}]'.repeat(depth)}`;
  let value = parseJson(text);
  for (let level = 0; level < depth; level++) value = (value as Array<Record<string, unknown>>)[0]?.['\n'];
  assert.equal(value, 0);
});

// -----------------------------------------------------------------------------------------------
// Property: a JSON value, spelled with random escapes and white space, parses back to itself right
// after poison parses aimed at each of its escaped keys.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Code units that escapes, surrogates and byte formats get wrong. */
const unitArb = fc.oneof(
  fc.constantFrom('\\', '"', '/', '\n', '\t', '\u0000', '\u001f', '\u007f', '\ud800', '\udfff', 'é', '中', '_', '1'),
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
);
const textArb = fc.string({ unit: unitArb, maxLength: 6 });

function objectOf(entries: Array<[string, Json]>): Json {
  const object: { [key: string]: Json } = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

const { json: jsonArb } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Json>(null, true, false, 0, -0, 1e21, -1.5e-7),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    textArb,
    fc.array(tie('json'), { maxLength: 4 }),
    fc.array(fc.tuple(textArb, tie('json')), { maxLength: 5 }).map(objectOf),
  ),
}));

/** `text` as a JSON string, each code unit raw when JSON allows it or escaped (short or \\u, any case). */
function spellString(text: string, rng: SeededRng): string {
  let out = '"';
  for (const unit of text) {
    for (let i = 0; i < unit.length; i++) {
      const code = unit.charCodeAt(i);
      const short = ({ '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' } as Record<string, string>)[
        unit[i] as string
      ];
      const mustEscape = code < 0x20 || code === 0x22 || code === 0x5c;
      if (!mustEscape && rng.next() < 0.6) out += unit[i];
      else if (short !== undefined && rng.next() < 0.5) out += short;
      else out += `\\u${rng.next() < 0.5 ? hex4(code) : hex4(code).toUpperCase()}`;
    }
  }
  return `${out}"`;
}

const SPACES = ['', '', ' ', '\n', '\t ', '\r\n'];

function spell(value: Json, rng: SeededRng): string {
  const space = (): string => rng.pick(SPACES);
  if (typeof value === 'string') return spellString(value, rng);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : JSON.stringify(value);
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${space()}${value.map((v) => spell(v, rng)).join(`${space()},${space()}`)}${space()}]`;
  const members = Object.keys(value).map((key) => `${spellString(key, rng)}${space()}:${space()}${spell(value[key] as Json, rng)}`);
  return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
}

/** For each object key, a parse that meets a key ending in a backslash at its place in an object of its shape. */
function poison(value: Json): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) poison(v);
    return;
  }
  const keys = Object.keys(value);
  keys.forEach((key, at) => {
    const before = keys.slice(0, at).map((k) => `${JSON.stringify(k)}:0,`);
    for (let cut = 0; cut <= key.length; cut++) JSON.parse(`{${before.join('')}${JSON.stringify(`${key.slice(0, cut)}\\`)}:0}`);
    poison(value[key] as Json);
  });
}

const SEED = testSeed(0x15_0e_4a);

test(`any JSON value, spelled with random escapes and spaces, parses back to itself after poison parses (seed ${SEED})`, () => {
  fc.assert(
    fc.property(jsonArb, fc.integer(), (value, spelling) => {
      const text = spell(value, new SeededRng(spelling));
      poison(value);
      assert.deepStrictEqual(parseJson(text), value, text);
      assert.deepStrictEqual(readJson(text), value, text);
    }),
    { seed: SEED, numRuns: 1500 },
  );
});

// -----------------------------------------------------------------------------------------------

/** The repository's src/ (this file runs compiled, from <out>/test/unit/core/). */
const SRC = fileURLToPath(new URL('../../../../src', import.meta.url));

test('src/ parses JSON only through parseJson (core/json-text.ts)', () => {
  const calls = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && file !== join('core', 'json-text.ts'))
    .flatMap((file) => (readFileSync(join(SRC, file), 'utf8').match(/JSON\.parse\(/g) ?? []).map(() => file));
  assert.deepEqual(calls, [], 'call parseJson from src/core/json-text.ts instead: JSON.parse misreads escaped keys on Node 24');
});
