import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RE2JS } from 're2js';
import { KithError } from '../../../src/core/errors.js';
import type { SeededRng } from '../../../src/core/rng.js';
import { estimateRegexSize, FILTER_LIMITS, MAX_FILTER_DEPTH, MAX_REGEX_LENGTH, parseFilter } from '../../../src/payload/filter-parse.js';
import type { Condition, FieldCondition, Filter } from '../../../src/payload/filter-types.js';
import { isEmptyFilter } from '../../../src/payload/filter-types.js';
import { testSeed, withSeed } from '../../helpers/data.js';

/** Asserts that parsing `raw` fails with a 400 whose message starts with exactly `path: `. */
function rejects(raw: unknown, path: string, detail?: RegExp): void {
  assert.throws(
    () => parseFilter(raw),
    (e: unknown) => {
      assert.ok(e instanceof KithError, `expected a KithError, got ${String(e)}`);
      assert.equal(e.code, 'ERR_BAD_INPUT');
      assert.equal(e.statusCode, 400);
      assert.ok(e.message.startsWith(`${path}: `), `message ${JSON.stringify(e.message)} should start with "${path}: "`);
      if (detail !== undefined) assert.match(e.message, detail);
      return true;
    },
  );
}

/** A filter with one `must` condition. */
const must = (condition: unknown): unknown => ({ must: [condition] });

function parsed(raw: unknown): Filter {
  const filter = parseFilter(raw);
  assert.ok(filter !== undefined);
  return filter;
}

function firstField(raw: unknown): FieldCondition {
  const c: Condition | undefined = parsed(raw).must[0];
  assert.ok(c !== undefined && c.kind !== 'nested' && c.kind !== 'has_id' && c.kind !== 'has_vector' && c.kind !== 'elements');
  return c;
}

test('null and undefined mean no filter; {} is the empty filter', () => {
  assert.equal(parseFilter(null), undefined);
  assert.equal(parseFilter(undefined), undefined);
  const empty = parsed({});
  assert.deepEqual([empty.must, empty.mustNot, empty.should], [[], [], []]);
  assert.equal(isEmptyFilter(empty), true);
  const nulls = parsed({ must: null, must_not: null, should: null });
  assert.equal(isEmptyFilter(nulls), true);
  assert.equal(isEmptyFilter(parsed({ must: [], must_not: [], should: [] })), true);
});

test('a filter that is not an object is rejected at the filter path', () => {
  rejects(5, 'filter', /expected a filter object/);
  rejects('must', 'filter');
  rejects(true, 'filter');
  rejects([], 'filter');
  rejects([{ must: [] }], 'filter');
});

test('the path prefix can be chosen by the caller', () => {
  assert.throws(
    () => parseFilter({ bogus: 1 }, 'body.filter'),
    (e: unknown) => {
      assert.ok(e instanceof KithError);
      assert.ok(e.message.startsWith('body.filter.bogus: '), e.message);
      return true;
    },
  );
});

test('unknown keys at the filter level', () => {
  rejects({ must: [], filter: [] }, 'filter.filter', /unknown field/);
  rejects({ Must: [] }, 'filter.Must', /unknown field/);
  rejects({ min_should: 1 }, 'filter.min_should');
  rejects(JSON.parse('{"odd key": 1}'), 'filter["odd key"]');
});

test('must, must_not and should are arrays, or one condition object standing for a list of one', () => {
  rejects({ must_not: 'x' }, 'filter.must_not', /expected an array of conditions \(or one condition object\)/);
  rejects({ should: 3 }, 'filter.should', /expected an array/);
  const single = parsed({ must: { key: 'a', match: { value: 1 } }, must_not: { has_id: [1] }, should: { must: [] } });
  assert.deepEqual([single.must.length, single.mustNot.length, single.should.length], [1, 1, 1]);
  assert.deepEqual(single.mustNot[0], { kind: 'has_id', ids: new Set(['1']) });
  // A single object is a condition, with the condition's paths.
  rejects({ must: { key: 'a', match: { valu: 1 } } }, 'filter.must.match.valu', /unknown field/);
  rejects({ must: { key: 'a' } }, 'filter.must.match', /required/);
});

test('a condition that is not an object', () => {
  rejects({ must: [5] }, 'filter.must[0]', /expected a condition object/);
  rejects({ must_not: [{ key: 'a', match: { value: 1 } }, null] }, 'filter.must_not[1]');
  rejects({ should: [[]] }, 'filter.should[0]');
});

test('unknown keys at the condition level', () => {
  rejects(must({ key: 'a', match: { value: 1 }, extra: true }), 'filter.must[0].extra', /unknown field/);
  rejects(must({ key: 'a', match: { value: 1 }, must: [] }), 'filter.must[0].must');
  rejects({ should: [{ key: 'a', range: { gt: 1 }, values: [1] }] }, 'filter.should[0].values');
});

test('a nested filter with unknown keys, and a condition without a key', () => {
  rejects(must({ musst: [] }), 'filter.must[0].musst', /unknown field/);
  rejects(must({ must: [], Key: 'a' }), 'filter.must[0].Key');
  rejects(must({ match: { value: 1 } }), 'filter.must[0].key', /required/);
  rejects(must({ type: 'exact' }), 'filter.must[0].key', /required/);
  rejects(must({ range: { gt: 1 } }), 'filter.must[0].key');
});

test('the key must be a non-empty string of bounded length', () => {
  rejects(must({ key: 5, match: { value: 1 } }), 'filter.must[0].key', /expected a string/);
  rejects(must({ key: null, match: { value: 1 } }), 'filter.must[0].key');
  rejects(must({ key: '', match: { value: 1 } }), 'filter.must[0].key', /empty/);
  rejects(must({ key: 'k'.repeat(1025), match: { value: 1 } }), 'filter.must[0].key');
  assert.equal(firstField(must({ key: 'k'.repeat(1024), match: { value: 1 } })).key.length, 1024);
});

test('a missing type means range when range is given, else exact', () => {
  const r = firstField(must({ key: 'n', range: { gt: 1 } }));
  assert.equal(r.kind, 'range');
  const e = firstField(must({ key: 'n', match: { value: 1 } }));
  assert.equal(e.kind, 'exact');
  assert.equal(firstField(must({ key: 'n', type: null, match: { value: 'x' } })).kind, 'exact');
  assert.equal(firstField(must({ key: 'n', match: { any: [1, 2] } })).kind, 'any');
  assert.equal(firstField(must({ key: 'n', match: { except: [1] } })).kind, 'except');
  assert.deepEqual(firstField(must({ key: 'a.b.c', match: { value: 1 } })).parts, ['a', 'b', 'c']);
});

test('each declared type parses to its kind', () => {
  assert.equal(firstField(must({ key: 'k', type: 'exact', match: { value: [1, { a: 2 }] } })).kind, 'exact');
  assert.equal(firstField(must({ key: 'k', type: 'range', range: { lte: '2024-01-01T00:00:00Z' } })).kind, 'range');
  assert.equal(firstField(must({ key: 'k', type: 'prefix', match: { value: 'ab' } })).kind, 'prefix');
  assert.equal(firstField(must({ key: 'k', type: 'contains', match: { value: 3 } })).kind, 'contains');
  assert.equal(firstField(must({ key: 'k', type: 'regex', match: { value: '^a+$' } })).kind, 'regex');
});

test('an unknown type is rejected at .type', () => {
  rejects(must({ key: 'a', type: 'fuzzy', match: { value: 1 } }), 'filter.must[0].type', /unknown condition type/);
  rejects(must({ key: 'a', type: 'EXACT', match: { value: 1 } }), 'filter.must[0].type');
  rejects(must({ key: 'a', type: 3, match: { value: 1 } }), 'filter.must[0].type');
  rejects(must({ key: 'a', type: '', match: { value: 1 } }), 'filter.must[0].type');
});

test('missing match or range', () => {
  rejects(must({ key: 'a' }), 'filter.must[0].match', /required/);
  rejects(must({ key: 'a', type: 'prefix' }), 'filter.must[0].match', /required/);
  rejects(must({ key: 'a', type: 'regex', match: null }), 'filter.must[0].match');
  rejects(must({ key: 'a', type: 'range' }), 'filter.must[0].range', /required/);
  rejects(must({ key: 'a', type: 'range', range: null }), 'filter.must[0].range');
});

test('match and range of the wrong kind, or on the wrong type', () => {
  rejects(must({ key: 'a', match: 1 }), 'filter.must[0].match', /expected an object/);
  rejects(must({ key: 'a', match: [1] }), 'filter.must[0].match');
  rejects(must({ key: 'a', type: 'range', range: [1] }), 'filter.must[0].range', /expected an object/);
  rejects(must({ key: 'a', type: 'range', range: { gt: 1 }, match: { value: 1 } }), 'filter.must[0].match');
  rejects(must({ key: 'a', type: 'exact', match: { value: 1 }, range: { gt: 1 } }), 'filter.must[0].range');
});

test('unknown keys inside match and range', () => {
  rejects(must({ key: 'a', match: { value: 1, txt: 'x' } }), 'filter.must[0].match.txt', /unknown field/);
  rejects(
    must({ key: 'a', match: { value: 1, text: 'x' } }),
    'filter.must[0].match',
    /exactly one of value, any, except, text, text_any, phrase \(got value, text\)/,
  );
  rejects(must({ key: 'a', match: { values: [1] } }), 'filter.must[0].match.values');
  rejects(must({ key: 'a', range: { gt: 1, from: 2 } }), 'filter.must[0].range.from', /unknown field/);
  rejects(must({ key: 'a', range: { ge: 1 } }), 'filter.must[0].range.ge');
});

test('match needs exactly one of value, any, except', () => {
  rejects(must({ key: 'a', match: {} }), 'filter.must[0].match', /exactly one/);
  rejects(must({ key: 'a', match: { value: 1, any: [1] } }), 'filter.must[0].match', /exactly one/);
  rejects(must({ key: 'a', match: { any: [1], except: [2] } }), 'filter.must[0].match');
  rejects(must({ key: 'a', match: { value: 1, any: [1], except: [2] } }), 'filter.must[0].match');
  // `value: null` is a value (match null), not an absent one.
  const c = firstField(must({ key: 'a', match: { value: null } }));
  assert.deepEqual(c.kind === 'exact' ? c.value : 'not exact', null);
});

test('any/except only on exact conditions, and only as arrays', () => {
  rejects(must({ key: 'a', type: 'prefix', match: { any: ['x'] } }), 'filter.must[0].match.any', /only for exact/);
  rejects(must({ key: 'a', type: 'contains', match: { except: [1] } }), 'filter.must[0].match.except');
  rejects(must({ key: 'a', type: 'regex', match: { any: ['a'] } }), 'filter.must[0].match.any');
  rejects(must({ key: 'a', match: { any: 1 } }), 'filter.must[0].match.any', /expected an array/);
  rejects(must({ key: 'a', match: { except: { x: 1 } } }), 'filter.must[0].match.except');
});

test('values with non-finite numbers or forbidden keys are rejected with their path', () => {
  rejects(must({ key: 'a', match: { value: Number.POSITIVE_INFINITY } }), 'filter.must[0].match.value', /finite/);
  rejects(must({ key: 'a', match: { any: [1, Number.NaN] } }), 'filter.must[0].match.any[1]', /finite/);
  rejects(must({ key: 'a', type: 'contains', match: { value: { x: [0, JSON.parse('1e400')] } } }), 'filter.must[0].match.value.x[1]');
  rejects(must({ key: 'a', match: { value: JSON.parse('{"__proto__": {}}') } }), 'filter.must[0].match.value.__proto__');
});

test('prefix and regex values must be strings', () => {
  rejects(must({ key: 'a', type: 'prefix', match: { value: 1 } }), 'filter.must[0].match.value', /prefix is a string/);
  rejects(must({ key: 'a', type: 'prefix', match: { value: null } }), 'filter.must[0].match.value');
  rejects(must({ key: 'a', type: 'prefix', match: { value: ['a'] } }), 'filter.must[0].match.value');
  rejects(must({ key: 'a', type: 'regex', match: { value: 7 } }), 'filter.must[0].match.value', /regex is a string/);
  rejects(must({ key: 'a', type: 'regex', match: { value: { source: 'a' } } }), 'filter.must[0].match.value');
});

test('range needs at least one bound', () => {
  rejects(must({ key: 'a', range: {} }), 'filter.must[0].range', /at least one/);
  rejects(must({ key: 'a', type: 'range', range: {} }), 'filter.must[0].range', /at least one/);
  rejects(must({ key: 'a', range: { gt: null, lte: null } }), 'filter.must[0].range', /at least one/);
});

test('range bounds are all numbers or all datetimes', () => {
  rejects(must({ key: 'a', range: { gt: 1, lt: '2024-01-01T00:00:00Z' } }), 'filter.must[0].range.lt', /number/);
  rejects(must({ key: 'a', range: { gte: '2024-01-01T00:00:00Z', lte: 5 } }), 'filter.must[0].range.lte', /datetime/);
  rejects(must({ key: 'a', range: { gt: 3, lt: 'x' } }), 'filter.must[0].range.lt');
  rejects(must({ key: 'a', range: { gt: 1, gte: true } }), 'filter.must[0].range.gte');
  rejects(must({ key: 'a', range: { gt: true } }), 'filter.must[0].range.gt');
  rejects(must({ key: 'a', range: { lte: [1] } }), 'filter.must[0].range.lte');
  rejects(must({ key: 'a', range: { gt: Number.POSITIVE_INFINITY } }), 'filter.must[0].range.gt', /finite/);
  rejects(must({ key: 'a', range: { gt: 0, lt: Number.NaN } }), 'filter.must[0].range.lt');
});

test('invalid datetime bounds are rejected at their own path', () => {
  rejects(must({ key: 'a', range: { gt: 'yesterday' } }), 'filter.must[0].range.gt', /RFC 3339/);
  rejects(must({ key: 'a', range: { gt: '2024-02-30T00:00:00Z' } }), 'filter.must[0].range.gt');
  rejects(must({ key: 'a', range: { gte: '2024-01-01T00:00:00Z', lt: '2024-13-01T00:00:00Z' } }), 'filter.must[0].range.lt');
  rejects({ must_not: [{ key: 'a', range: { lte: '2024-01-01T24:00:00Z' } }] }, 'filter.must_not[0].range.lte');
  rejects({ should: [{ key: 'a', range: { lt: '2024-01-01T10:00:00+25:00' } }] }, 'filter.should[0].range.lt');
});

test('regex patterns: RE2 syntax only, at most 1024 characters', () => {
  const regex = (value: string): unknown => must({ key: 'a', type: 'regex', match: { value } });
  rejects(regex('('), 'filter.must[0].match.value', /invalid RE2 pattern/);
  rejects(regex('a{2,1}'), 'filter.must[0].match.value', /invalid RE2/);
  rejects(regex('[z-a]'), 'filter.must[0].match.value');
  // Backreferences and lookaround are not RE2.
  rejects(regex('(a)\\1'), 'filter.must[0].match.value', /invalid RE2/);
  rejects(regex('a(?=b)'), 'filter.must[0].match.value', /invalid RE2/);
  rejects(regex('(?<!a)b'), 'filter.must[0].match.value');
  rejects(regex('a'.repeat(MAX_REGEX_LENGTH + 1)), 'filter.must[0].match.value', /1024/);
  assert.equal(MAX_REGEX_LENGTH, 1024);
  // 1024 characters is accepted when it compiles to at most 1000 instructions (see below).
  assert.equal(firstField(regex(`${'[abcdefgh]'.repeat(102)}abcd`)).kind, 'regex');
  rejects(regex('a'.repeat(1024)), 'filter.must[0].match.value', /the compiled pattern has 1026 instructions; the limit is 1000/);
  // Catastrophic-backtracking shapes are fine for RE2: accepted, not rejected.
  assert.equal(firstField(regex('(a+)+$')).kind, 'regex');
  assert.equal(firstField(regex('(?i)abc|\\pL+')).kind, 'regex');
});

test('errors deep in must_not/should/nested filters carry the full path', () => {
  rejects(
    {
      must_not: [
        { key: 'a', match: { value: 1 } },
        { key: 'b', range: { gt: 'no' } },
      ],
    },
    'filter.must_not[1].range.gt',
  );
  rejects(
    { should: [{ must: [{ key: 'a', match: { value: 1 } }] }, { must_not: [{ key: 'c', type: 'prefix', match: { value: 2 } }] }] },
    'filter.should[1].must_not[0].match.value',
  );
  rejects({ must: [{ should: [{ must: [{ key: 'x', type: 'nope', match: { value: 1 } }] }] }] }, 'filter.must[0].should[0].must[0].type');
});

/** A filter nested `levels` deep (the top filter is level 1), built without recursion. */
function nestedFilter(levels: number): unknown {
  let inner: unknown = { must: [{ key: 'a', match: { value: 1 } }] };
  for (let i = 1; i < levels; i++) inner = { must: [inner] };
  return inner;
}

test(`filters nest up to ${MAX_FILTER_DEPTH} levels; deeper is a 400 naming the path`, () => {
  assert.equal(MAX_FILTER_DEPTH, 32);
  const ok = parsed(nestedFilter(32));
  let node: Filter = ok;
  let levels = 1;
  for (;;) {
    const c = node.must[0];
    if (c === undefined || c.kind !== 'nested') break;
    node = c.filter;
    levels++;
  }
  assert.equal(levels, 32);
  rejects(nestedFilter(33), `filter${'.must[0]'.repeat(32)}`, /nest/);
});

test('hostile nesting (100000 levels) gives a 400, not a stack overflow', () => {
  rejects(nestedFilter(100_000), `filter${'.must[0]'.repeat(32)}`);
  let viaShould: unknown = {};
  for (let i = 0; i < 100_000; i++) viaShould = { should: [viaShould] };
  rejects(viaShould, `filter${'.should[0]'.repeat(32)}`);
});

const regexCondition = (value: string): unknown => ({ key: 'a', type: 'regex', match: { value } });

test('the issue\'s regex attack (20 × "a{1000}" repeated 146 times) is refused before compiling, naming the field', () => {
  const pattern = 'a{1000}'.repeat(146);
  const started = performance.now();
  rejects(
    { must: Array.from({ length: 20 }, () => regexCondition(pattern)) },
    'filter.must[0].match.value',
    /expands to about \d{6} instructions.*the limit is 1000/,
  );
  // Compiling it alone takes 0.8 s; refusing it must not compile it. (A generous bound, not a benchmark.)
  assert.ok(performance.now() - started < 2000);
});

test('a regex at the instruction limit is accepted; one instruction more is a 400 naming the field', () => {
  assert.equal(FILTER_LIMITS.regexInstructions, 1000);
  // "a{998}" compiles to 998 literals plus the match and fail instructions.
  assert.equal(firstField(must(regexCondition('a{998}'))).kind, 'regex');
  rejects(must(regexCondition('a{999}')), 'filter.must[0].match.value', /the compiled pattern has 1001 instructions; the limit is 1000/);
  // Under the pre-compile estimate's slack but over the exact limit: refused after compiling.
  rejects(must(regexCondition('(\\pL|\\pN){400}')), 'filter.must[0].match.value', /compiled pattern has \d+ instructions/);
});

test('repetition counts above 1000 are refused with their position', () => {
  assert.equal(FILTER_LIMITS.regexRepeat, 1000);
  rejects(must(regexCondition('ab{1001}')), 'filter.must[0].match.value', /repetition count 1001 \(at character 3\)/);
  rejects(must(regexCondition('a{2,99999999999}')), 'filter.must[0].match.value', /repetition count/);
  // Braces that are not a repetition are literals, as in RE2.
  assert.equal(firstField(must(regexCondition('a{x}\\x{41}\\p{Greek}'))).kind, 'regex');
});

test('all patterns of one filter share the instruction and length budgets', () => {
  assert.equal(FILTER_LIMITS.regexTotalInstructions, 2000);
  const fits = { must: [regexCondition('a{998}'), { should: [regexCondition('b{998}')] }] };
  assert.equal(parsed(fits).must.length, 2);
  rejects(
    { must: [regexCondition('a{998}'), { should: [regexCondition('b{998}'), regexCondition('c')] }] },
    'filter.must[1].should[1].match.value',
    /together; the limit is 2000/,
  );
  assert.equal(FILTER_LIMITS.regexTotalLength, 2048);
  // 1024 characters, 108 instructions.
  const long = `${'[abcdefgh]'.repeat(102)}abcd`;
  assert.equal(parsed({ should: [regexCondition(long), regexCondition(long)] }).should.length, 2);
  rejects(
    { should: [regexCondition(long), regexCondition(long), regexCondition('y')] },
    'filter.should[2].match.value',
    /2049 characters long together; the limit is 2048/,
  );
});

test('a filter holds at most 256 conditions at all levels together', () => {
  assert.equal(FILTER_LIMITS.conditions, 256);
  const cond = { key: 'a', match: { value: 1 } };
  assert.equal(parsed({ must: Array.from({ length: 256 }, () => cond) }).must.length, 256);
  rejects({ must: Array.from({ length: 257 }, () => cond) }, 'filter.must', /more than 256 conditions/);
  // Nested filters count as conditions, and so do their own conditions.
  const nested = { must: Array.from({ length: 254 }, () => cond) };
  assert.equal(parsed({ should: [nested, cond] }).should.length, 2);
  rejects({ should: [nested, cond, cond] }, 'filter.should[0].must', /more than 256/);
});

test('match.any and match.except lists hold at most 1024 values, all lists of a filter together', () => {
  assert.equal(FILTER_LIMITS.values, 1024);
  const values = Array.from({ length: 1024 }, (_, i) => i);
  for (const field of ['any', 'except']) {
    assert.equal(firstField(must({ key: 'a', match: { [field]: values } })).kind, field);
    rejects(must({ key: 'a', match: { [field]: [...values, 0] } }), `filter.must[0].match.${field}`, /1025 values; the limit is 1024/);
  }
  const half = values.slice(0, 512);
  assert.equal(
    parsed({
      must: [
        { key: 'a', match: { any: half } },
        { key: 'b', match: { except: half } },
      ],
    }).must.length,
    2,
  );
  rejects(
    { must: [{ key: 'a', match: { any: half } }, { should: [{ key: 'b', match: { except: [...half, 1] } }] }] },
    'filter.must[1].should[0].match.except',
    /513 values \(1025 list values in the filter together\); the limit is 1024/,
  );
});

test('keys are at most 1024 characters; a long unknown type is quoted shortened', () => {
  assert.equal(firstField(must({ key: 'k'.repeat(1024), match: { value: 1 } })).key.length, 1024);
  rejects(must({ key: 'k'.repeat(1025), match: { value: 1 } }), 'filter.must[0].key', /1025 characters long; the limit is 1024/);
  assert.throws(
    () => parseFilter(must({ key: 'a', type: 't'.repeat(100000), match: { value: 1 } })),
    (e: unknown) => e instanceof KithError && e.message.length < 400 && /100000 characters/.test(e.message),
  );
});

/** A random RE2-ish pattern from pieces that stress the estimate: groups, classes, escapes, repetitions. */
function randomPattern(rng: SeededRng): string {
  const atoms = ['a', '.', '\\pL', '\\d', '[a-z]', '[^\\pN]', '(?i)k', '\\x{41}', '\\Qa.b\\E', '^', '$', '\\b', '()', '(?:)', 'é', '[[:alpha:]]'];
  const quantifiers = ['', '', '*', '+', '?', '*?', '{2}', '{0,3}', '{3,}', '{1,7}', '{5}'];
  const build = (depth: number): string => {
    let out = '';
    const n = 1 + rng.int(4);
    for (let i = 0; i < n; i++) {
      const roll = rng.int(10);
      let atom: string;
      if (roll < 2 && depth < 3) atom = `(${build(depth + 1)})`;
      else if (roll < 3 && depth < 3) atom = `(?:${build(depth + 1)}|${build(depth + 1)})`;
      else atom = atoms[rng.int(atoms.length)] as string;
      out += atom + (quantifiers[rng.int(quantifiers.length)] as string);
    }
    return out;
  };
  return build(0);
}

test('property: the size estimate is never below the compiled program size', () => {
  const seed = testSeed(8201);
  withSeed(seed, (rng) => {
    let compiled = 0;
    for (let i = 0; i < 3000; i++) {
      const pattern = randomPattern(rng);
      let size: number;
      try {
        size = RE2JS.compile(pattern).programSize();
      } catch {
        continue; // not valid RE2 (e.g. a repetition of an empty-width assertion); nothing to compare
      }
      compiled++;
      assert.ok(estimateRegexSize(pattern) >= size, `${JSON.stringify(pattern)}: estimate ${estimateRegexSize(pattern)} < compiled ${size}`);
    }
    assert.ok(compiled > 2000, `only ${compiled} patterns compiled`);
  });
});

// ---------------------------------------------------------------------------------------------
// Qdrant's conditions: every malformed input is a 400 naming its field path.

test('min_should: an object {conditions, min_count}', () => {
  const f = parsed({ min_should: { conditions: [{ key: 'a', match: { value: 1 } }, { has_id: ['x'] }], min_count: 1 } });
  assert.equal(f.minShould?.minCount, 1);
  assert.equal(f.minShould?.conditions.length, 2);
  assert.equal(isEmptyFilter(f), false);
  assert.equal(parsed({ min_should: { conditions: { key: 'a', match: { value: 1 } }, min_count: 0 } }).minShould?.conditions.length, 1);
  rejects({ min_should: [] }, 'filter.min_should', /expected an object \{conditions, min_count\}/);
  rejects({ min_should: { conditions: [] } }, 'filter.min_should.min_count', /required/);
  rejects({ min_should: { conditions: [], min_count: -1 } }, 'filter.min_should.min_count', /non-negative integer, got -1/);
  rejects({ min_should: { conditions: [], min_count: 1.5 } }, 'filter.min_should.min_count');
  rejects({ min_should: { min_count: 1 } }, 'filter.min_should.conditions', /required/);
  rejects({ min_should: { conditions: [5], min_count: 1 } }, 'filter.min_should.conditions[0]', /expected a condition object/);
  rejects({ min_should: { conditions: [], min_count: 1, extra: 1 } }, 'filter.min_should.extra', /unknown field/);
});

test('values_count: non-negative integer bounds, alone in its condition', () => {
  assert.deepEqual(firstField(must({ key: 'a', values_count: { gte: 2, lt: 5 } })), { key: 'a', parts: ['a'], kind: 'values_count', count: { gte: 2, lt: 5 } });
  rejects(must({ key: 'a', values_count: {} }), 'filter.must[0].values_count', /at least one of gt, gte, lt, lte/);
  rejects(must({ key: 'a', values_count: { gt: -1 } }), 'filter.must[0].values_count.gt', /non-negative integer, got -1/);
  rejects(must({ key: 'a', values_count: { lt: 'x' } }), 'filter.must[0].values_count.lt', /got a string/);
  rejects(must({ key: 'a', values_count: { lt: 2, eq: 1 } }), 'filter.must[0].values_count.eq', /unknown field/);
  rejects(must({ key: 'a', values_count: 3 }), 'filter.must[0].values_count', /expected an object/);
  rejects(must({ key: 'a', match: { value: 1 }, values_count: { lt: 2 } }), 'filter.must[0].values_count', /give one of match, range, values_count/);
  rejects(must({ key: 'a', type: 'exact', values_count: { lt: 2 } }), 'filter.must[0].type', /not values_count/);
});

test('is_empty, is_null: {key} objects', () => {
  assert.deepEqual(parsed(must({ is_empty: { key: 'a.b' } })).must[0], { kind: 'is_empty', key: 'a.b', parts: ['a', 'b'] });
  assert.deepEqual(parsed(must({ is_null: { key: 'a[].b' } })).must[0], { kind: 'is_null', key: 'a[].b', parts: ['a', 'b'], projections: [true, false] });
  rejects(must({ is_empty: 'a' }), 'filter.must[0].is_empty', /expected an object \{key\}/);
  rejects(must({ is_empty: {} }), 'filter.must[0].is_empty.key', /required/);
  rejects(must({ is_null: { key: 5 } }), 'filter.must[0].is_null.key', /expected a string/);
  rejects(must({ is_null: { key: 'a', value: 1 } }), 'filter.must[0].is_null.value', /unknown field/);
  rejects(must({ is_null: { key: 'a' }, is_empty: { key: 'a' } }), 'filter.must[0].is_null', /unknown field; expected only is_empty in this condition/);
});

test('has_id: a list of point ids, numbers as decimal strings, counted with the list values', () => {
  assert.deepEqual(parsed(must({ has_id: [7, '7', 'x'] })).must[0], { kind: 'has_id', ids: new Set(['7', 'x']) });
  rejects(must({ has_id: 7 }), 'filter.must[0].has_id', /expected an array of point ids/);
  rejects(must({ has_id: [1, -2] }), 'filter.must[0].has_id[1]', /non-negative safe integer/);
  rejects(must({ has_id: [''] }), 'filter.must[0].has_id[0]', /must not be empty/);
  rejects(must({ has_id: [{}] }), 'filter.must[0].has_id[0]');
  const ids = Array.from({ length: FILTER_LIMITS.values }, (_, i) => i);
  assert.equal(parsed(must({ has_id: ids })).must.length, 1);
  rejects({ must: [{ key: 'a', match: { any: [1] } }, { has_id: ids }] }, 'filter.must[1].has_id', /1024 ids \(1025 list values in the filter together\)/);
});

test('nested: {key, filter}; its conditions count toward the limits and its depth toward the nesting', () => {
  const c = parsed(must({ nested: { key: 'items[]', filter: { must: { key: 'n', range: { gt: 1 } } } } })).must[0];
  assert.ok(c?.kind === 'elements');
  assert.equal(c.key, 'items');
  assert.equal(c.filter.must.length, 1);
  rejects(must({ nested: { key: 'a' } }), 'filter.must[0].nested.filter', /required/);
  rejects(must({ nested: { filter: {} } }), 'filter.must[0].nested.key', /required/);
  rejects(must({ nested: { key: 'a', filter: { must: [{ key: 'b' }] } } }), 'filter.must[0].nested.filter.must[0].match', /required/);
  rejects(must({ nested: { key: 'a', filter: [] } }), 'filter.must[0].nested.filter', /expected a filter object/);
  rejects(must({ nested: { key: 'a', filter: {}, extra: 1 } }), 'filter.must[0].nested.extra', /unknown field/);
  const many = Array.from({ length: FILTER_LIMITS.conditions }, () => ({ key: 'a', match: { value: 1 } }));
  rejects(must({ nested: { key: 'a', filter: { must: many } } }), 'filter.must[0].nested.filter.must', /more than 256 conditions/);
  let deep: unknown = {};
  for (let i = 0; i < MAX_FILTER_DEPTH; i++) deep = { must: [{ nested: { key: 'a', filter: deep } }] };
  assert.throws(() => parseFilter(deep), /nest at most 32 levels/);
});

test('match.text, text_any, phrase: a string of bounded length, for exact-type conditions', () => {
  assert.deepEqual(firstField(must({ key: 'a', match: { text: 'car' } })), { key: 'a', parts: ['a'], kind: 'text', match: 'text', text: 'car' });
  assert.deepEqual(firstField(must({ key: 'a', match: { text_any: 'car bus' } })), {
    key: 'a',
    parts: ['a'],
    kind: 'text',
    match: 'text_any',
    text: 'car bus',
  });
  assert.deepEqual(firstField(must({ key: 'a', match: { phrase: 'red car' } })), { key: 'a', parts: ['a'], kind: 'text', match: 'phrase', text: 'red car' });
  rejects(must({ key: 'a', match: { text: 'x', phrase: 'x' } }), 'filter.must[0].match', /exactly one of .* \(got text, phrase\)/);
  rejects(must({ key: 'a', match: { phrase: 2 } }), 'filter.must[0].match.phrase', /expected a string, got a number/);
  rejects(must({ key: 'a', match: { text: 1 } }), 'filter.must[0].match.text', /expected a string, got a number/);
  rejects(must({ key: 'a', type: 'prefix', match: { text: 'x' } }), 'filter.must[0].match.text', /only for exact conditions/);
  rejects(
    must({ key: 'a', match: { text: 'x'.repeat(FILTER_LIMITS.textLength + 1) } }),
    'filter.must[0].match.text',
    /1025 characters long; the limit is 1024/,
  );
});

test('geo conditions: points within [-180, 180] × [-90, 90], non-negative radius, closed rings of 4+ points', () => {
  const ring = [
    { lon: 0, lat: 0 },
    { lon: 1, lat: 0 },
    { lon: 1, lat: 1 },
    { lon: 0, lat: 0 },
  ];
  assert.equal(firstField(must({ key: 'g', geo_radius: { center: { lon: 1, lat: 2 }, radius: 10 } })).kind, 'geo_radius');
  assert.equal(
    firstField(must({ key: 'g', geo_bounding_box: { top_left: { lon: 170, lat: 10 }, bottom_right: { lon: -170, lat: 0 } } })).kind,
    'geo_bounding_box',
  );
  assert.equal(firstField(must({ key: 'g', geo_polygon: { exterior: { points: ring }, interiors: [{ points: ring }] } })).kind, 'geo_polygon');
  rejects(must({ key: 'g', geo_radius: { center: { lon: 181, lat: 0 }, radius: 1 } }), 'filter.must[0].geo_radius.center.lon', /outside \[-180, 180\]/);
  rejects(must({ key: 'g', geo_radius: { center: { lon: 0, lat: -91 }, radius: 1 } }), 'filter.must[0].geo_radius.center.lat', /outside \[-90, 90\]/);
  rejects(must({ key: 'g', geo_radius: { center: { lon: 0 }, radius: 1 } }), 'filter.must[0].geo_radius.center.lat', /required/);
  rejects(must({ key: 'g', geo_radius: { center: { lon: 0, lat: 0 }, radius: -1 } }), 'filter.must[0].geo_radius.radius', /non-negative number of meters/);
  rejects(must({ key: 'g', geo_radius: { center: { lon: 0, lat: 0 } } }), 'filter.must[0].geo_radius.radius', /required/);
  rejects(must({ key: 'g', geo_radius: { center: { lon: 0, lat: 0, alt: 1 }, radius: 1 } }), 'filter.must[0].geo_radius.center.alt', /unknown field/);
  rejects(must({ key: 'g', geo_bounding_box: { top_left: { lon: 0, lat: 0 } } }), 'filter.must[0].geo_bounding_box.bottom_right', /expected a point/);
  rejects(must({ key: 'g', geo_polygon: { exterior: { points: ring.slice(0, 3) } } }), 'filter.must[0].geo_polygon.exterior.points', /at least 4 points/);
  rejects(
    must({ key: 'g', geo_polygon: { exterior: { points: [...ring.slice(0, 3), { lon: 2, lat: 2 }] } } }),
    'filter.must[0].geo_polygon.exterior.points',
    /closed/,
  );
  rejects(
    must({ key: 'g', geo_polygon: { exterior: { points: ring }, interiors: [{ points: [ring[0], 'x'] }] } }),
    'filter.must[0].geo_polygon.interiors[0].points[1]',
    /expected a point/,
  );
  rejects(must({ key: 'g', geo_polygon: {} }), 'filter.must[0].geo_polygon.exterior', /required/);
  const big = Array.from({ length: FILTER_LIMITS.values }, (_, i) => ({ lon: 0, lat: i / 100 }));
  rejects(
    must({ key: 'g', geo_polygon: { exterior: { points: [...big, big[0]] } } }),
    'filter.must[0].geo_polygon.exterior.points',
    /1025 points; the limit is 1024/,
  );
  rejects(
    must({ key: 'g', geo_radius: { center: { lon: 0, lat: 0 }, radius: 1 }, geo_polygon: { exterior: { points: ring } } }),
    'filter.must[0].geo_polygon',
    /give one of/,
  );
});

test('keys with [] take array elements; the qdrant dialect makes an explicit empty should match nothing', () => {
  assert.deepEqual(firstField(must({ key: 'a[].b', match: { value: 1 } })).projections, [true, false]);
  assert.equal(firstField(must({ key: 'a.b', match: { value: 1 } })).projections, undefined);
  const kith = parseFilter({ should: [] });
  assert.ok(kith !== undefined && isEmptyFilter(kith));
  const qdrant = parseFilter({ should: [] }, 'filter', { dialect: 'qdrant' });
  assert.ok(qdrant !== undefined && !isEmptyFilter(qdrant));
  const absent = parseFilter({ must: [] }, 'filter', { dialect: 'qdrant' });
  assert.ok(absent !== undefined && isEmptyFilter(absent));
});
