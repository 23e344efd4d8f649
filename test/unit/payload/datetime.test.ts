import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../../src/core/rng.js';
import { compareInstants, formatDatetime, type Instant, parseDatetime } from '../../../src/payload/datetime.js';
import { testSeed } from '../../helpers/data.js';

function parse(text: string): Instant {
  const instant = parseDatetime(text);
  assert.ok(instant !== undefined, `${JSON.stringify(text)} should parse`);
  return instant;
}

/** Milliseconds of a string with at most millisecond precision, via the JS Date parser. */
const dateMs = (text: string): number => {
  const ms = Date.parse(text);
  assert.ok(Number.isFinite(ms), text);
  return ms;
};

const sign = (n: number): number => (n > 0 ? 1 : n < 0 ? -1 : 0);

test('Z and z, offsets, T/t/space separators', () => {
  assert.deepEqual(parse('2024-05-01T12:30:00Z'), { ms: dateMs('2024-05-01T12:30:00Z'), subMsNanos: 0 });
  assert.deepEqual(parse('2024-05-01T12:30:00z'), parse('2024-05-01T12:30:00Z'));
  assert.deepEqual(parse('2024-05-01t12:30:00Z'), parse('2024-05-01T12:30:00Z'));
  assert.deepEqual(parse('2024-05-01 12:30:00Z'), parse('2024-05-01T12:30:00Z'));
  assert.equal(parse('2024-05-01T12:30:00+02:00').ms, dateMs('2024-05-01T10:30:00Z'));
  assert.equal(parse('2024-05-01T12:30:00-05:30').ms, dateMs('2024-05-01T18:00:00Z'));
  assert.equal(parse('2024-05-01T12:30:00+00:00').ms, dateMs('2024-05-01T12:30:00Z'));
  assert.equal(parse('2024-05-01T12:30:00-00:00').ms, dateMs('2024-05-01T12:30:00Z'));
  assert.equal(parse('2024-05-01T00:30:00+23:59').ms, dateMs('2024-04-30T00:31:00Z'));
  assert.equal(parse('1970-01-01T00:00:00Z').ms, 0);
  assert.equal(parse('1969-12-31T23:59:59.5Z').ms, -500);
});

test('a missing offset means UTC; a bare date means midnight UTC', () => {
  assert.deepEqual(parse('2024-05-01T12:30:00'), parse('2024-05-01T12:30:00Z'));
  assert.deepEqual(parse('2024-05-01T12:30:00.25'), parse('2024-05-01T12:30:00.250Z'));
  assert.deepEqual(parse('2024-05-01'), parse('2024-05-01T00:00:00Z'));
  assert.equal(parse('2024-05-01').ms, dateMs('2024-05-01T00:00:00Z'));
});

test('fractional seconds from 1 to 9 digits, more truncated', () => {
  const base = dateMs('2024-05-01T12:30:00Z');
  const cases: Array<[string, number, number]> = [
    ['.5', 500, 0],
    ['.05', 50, 0],
    ['.123', 123, 0],
    ['.1234', 123, 400_000],
    ['.123456', 123, 456_000],
    ['.1234567', 123, 456_700],
    ['.12345678', 123, 456_780],
    ['.123456789', 123, 456_789],
    ['.000000001', 0, 1],
    ['.999999999', 999, 999_999],
    ['.1234567891', 123, 456_789],
    ['.999999999999', 999, 999_999],
    ['.12345678901234567890', 123, 456_789],
    ['.000', 0, 0],
  ];
  for (const [fraction, ms, nanos] of cases) {
    assert.deepEqual(parse(`2024-05-01T12:30:00${fraction}Z`), { ms: base + ms, subMsNanos: nanos }, fraction);
  }
  // Fractions combined with offsets.
  assert.deepEqual(parse('2024-05-01T14:30:00.000000007+02:00'), { ms: base, subMsNanos: 7 });
});

test('leap years, month lengths, years before 100', () => {
  assert.equal(parse('2024-02-29T00:00:00Z').ms, dateMs('2024-02-29T00:00:00Z'));
  assert.equal(parse('2000-02-29').ms, dateMs('2000-02-29T00:00:00Z'));
  assert.equal(parseDatetime('2023-02-29T00:00:00Z'), undefined);
  assert.equal(parseDatetime('1900-02-29T00:00:00Z'), undefined);
  assert.equal(parse('2024-12-31T23:59:59Z').ms, dateMs('2024-12-31T23:59:59Z'));
  assert.equal(parse('0050-06-15T00:00:00Z').ms, dateMs('0050-06-15T00:00:00Z'));
  assert.equal(parse('0000-01-01T00:00:00Z').ms, dateMs('0000-01-01T00:00:00Z'));
  assert.equal(parse('9999-12-31T23:59:59Z').ms, dateMs('9999-12-31T23:59:59Z'));
});

test('impossible dates and times are rejected', () => {
  const invalid = [
    '2024-02-30T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-00-10T00:00:00Z',
    '2024-01-00T00:00:00Z',
    '2024-01-32T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T23:60:00Z',
    '2024-01-01T23:59:61Z',
    '2024-02-30',
  ];
  for (const text of invalid) assert.equal(parseDatetime(text), undefined, text);
});

test("Qdrant's other spellings: minutes without seconds (no offset), offsets without a colon or minutes", () => {
  const same: Array<[string, string]> = [
    ['2015-03-01T12:30', '2015-03-01T12:30:00Z'],
    ['2015-03-01 12:30', '2015-03-01T12:30:00Z'],
    ['2024-01-01T10:00:00+0100', '2024-01-01T10:00:00+01:00'],
    ['2024-01-01T10:00:00+01', '2024-01-01T10:00:00+01:00'],
    ['2024-01-01 10:00:00.25-0530', '2024-01-01T10:00:00.25-05:30'],
  ];
  for (const [text, canonical] of same) assert.deepEqual(parseDatetime(text), parseDatetime(canonical), text);
  for (const text of ['2015-03-01T12:30+01:00', '2015-03-01T12:30+0100', '2024-01-01T10:00:00+010', '2024-01-01T10:00:00+01:']) {
    assert.equal(parseDatetime(text), undefined, text);
  }
});

test('malformed offsets and shapes are rejected', () => {
  const invalid = [
    '2024-01-01T10:00:00+24:00',
    '2024-01-01T10:00:00+01:60',
    '2024-01-01T10:00:00+1:00',
    '2024-01-01T10:00:00 +01:00',
    '2024-01-01T10:00:00UTC',
    '2024-01-01T10:00:00ZZ',
    '2024-01-01T10:00Z',
    '2024-01-01T10Z',
    '2024-01-01T',
    '2024-01-01X10:00:00Z',
    '2024-1-01T10:00:00Z',
    '24-01-01T10:00:00Z',
    '2024/01/01T10:00:00Z',
    '2024-01-01T10:00:00.Z',
    '2024-01-01T10:00:00,5Z',
    ' 2024-01-01T10:00:00Z',
    '2024-01-01T10:00:00Z ',
    '+2024-01-01T10:00:00Z',
    '',
    'now',
    '１２３４-01-01T10:00:00Z',
  ];
  for (const text of invalid) assert.equal(parseDatetime(text), undefined, JSON.stringify(text));
});

test('the same instant written in different offsets compares equal', () => {
  const forms = [
    '2024-05-01T12:00:00Z',
    '2024-05-01T12:00:00.000Z',
    '2024-05-01T12:00:00.000000000z',
    '2024-05-01T14:00:00+02:00',
    '2024-05-01T06:30:00-05:30',
    '2024-05-02T11:59:00+23:59',
    '2024-04-30T12:01:00-23:59',
    '2024-05-01 12:00:00+00:00',
    '2024-05-01T12:00:00',
  ];
  const reference = parse(forms[0] as string);
  for (const f of forms) {
    assert.equal(compareInstants(parse(f), reference), 0, f);
    assert.equal(compareInstants(reference, parse(f)), 0, f);
  }
  assert.equal(compareInstants(parse('2024-05-01T14:00:00.000000001+02:00'), parse('2024-05-01T12:00:00.000000001Z')), 0);
});

test('ordering is exact to the nanosecond and across offsets', () => {
  const ascending = [
    '1969-12-31T23:59:59.999999999Z',
    '1970-01-01T00:00:00Z',
    '1970-01-01T00:00:00.000000001Z',
    '1970-01-01T01:00:00.000000002+01:00',
    '1970-01-01T00:00:00.000999999Z',
    '1970-01-01T00:00:00.001Z',
    '1970-01-01T00:00:00.001000001Z',
    '2024-05-01T12:00:00.123456788Z',
    '2024-05-01T12:00:00.123456789Z',
    '2024-05-01T14:00:00.12345679+02:00',
    '2024-05-01T12:00:00.9999999999Z',
    '2024-05-01T07:00:01-05:00',
  ];
  for (let i = 0; i < ascending.length; i++) {
    for (let k = 0; k < ascending.length; k++) {
      const a = ascending[i] as string;
      const b = ascending[k] as string;
      assert.equal(sign(compareInstants(parse(a), parse(b))), sign(i - k), `${a} vs ${b}`);
    }
  }
});

test('instants are normalised: subMsNanos in 0..999999 and ms an integer', () => {
  for (const text of ['1969-12-31T23:59:59.999999999Z', '1970-01-01T00:00:00.000000001-01:30', '2024-05-01T12:00:00.5+05:45']) {
    const { ms, subMsNanos } = parse(text);
    assert.ok(Number.isInteger(ms), text);
    assert.ok(Number.isInteger(subMsNanos) && subMsNanos >= 0 && subMsNanos <= 999_999, text);
  }
  assert.deepEqual(parse('1969-12-31T23:59:59.999999999Z'), { ms: -1, subMsNanos: 999_999 });
});

test('formatDatetime writes UTC, the fraction without trailing zeros', () => {
  assert.equal(formatDatetime(parse('2024-05-01T14:30:00.000000007+02:00')), '2024-05-01T12:30:00.000000007Z');
  assert.equal(formatDatetime(parse('2024-05-01')), '2024-05-01T00:00:00Z');
  assert.equal(formatDatetime(parse('2024-05-01t12:30:00.1200z')), '2024-05-01T12:30:00.12Z');
  assert.equal(formatDatetime(parse('1969-12-31T23:59:59.999999999Z')), '1969-12-31T23:59:59.999999999Z');
  assert.equal(formatDatetime(parse('2016-12-31T23:59:60Z')), '2017-01-01T00:00:00Z');
});

test('formatDatetime reaches the ends of the range with an offset of ±23:59, the last second with a leap second', () => {
  // Before year 0000 and after 9999 in UTC: only an offset brings them into four-digit years.
  const first = parse('0000-01-01T00:00:00+23:59');
  assert.equal(formatDatetime(first), '0000-01-01T00:00:00+23:59');
  assert.equal(formatDatetime(parse('0000-01-01T05:00:00.5+07:00')), '0000-01-01T21:59:00.5+23:59');
  const last = parse('9999-12-31T23:59:60.999999999-23:59');
  assert.equal(formatDatetime(last), '9999-12-31T23:59:60.999999999-23:59');
  assert.equal(formatDatetime(parse('9999-12-31T23:59:59.999999999-23:59')), '9999-12-31T23:59:59.999999999-23:59');
  assert.equal(formatDatetime(parse('9999-12-31T23:59:59Z')), '9999-12-31T23:59:59Z');
  // No text reads as an instant outside them.
  assert.throws(() => formatDatetime({ ms: first.ms - 1, subMsNanos: 999_999 }), RangeError);
  assert.throws(() => formatDatetime({ ms: last.ms + 1, subMsNanos: 0 }), RangeError);
});

test('parseDatetime reads formatDatetime back to the nanosecond across the whole range', (t) => {
  const seed = testSeed(0xda7e);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const [first, last] = [parse('0000-01-01T00:00:00+23:59'), parse('9999-12-31T23:59:60.999999999-23:59')];
  const span = last.ms - first.ms;
  for (let i = 0; i < 5000; i++) {
    // Uniform over the range, and within two days of either end or of the epoch.
    const near = rng.pick([first.ms, last.ms - 2 * 86_400_000, -86_400_000]);
    const ms = i % 2 === 0 ? first.ms + Math.floor(rng.next() * (span + 1)) : near + rng.int(2 * 86_400_000);
    const instant: Instant = { ms, subMsNanos: rng.pick([0, 1, 999_999, rng.int(1_000_000)]) };
    const text = formatDatetime(instant);
    assert.deepEqual(parseDatetime(text), instant, `${JSON.stringify(instant)} → ${text}`);
  }
});
