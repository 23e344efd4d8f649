/**
 * payloadSelectorToJson is the inverse of parsePayloadSelector / toPayloadSelector: the JSON it
 * writes reads back to an equal selector, whatever the fallback, also through JSON text.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJson } from '../../../src/core/json-text.js';
import { SeededRng } from '../../../src/core/rng.js';
import { type PayloadSelector, parsePayloadSelector, payloadSelectorToJson, toPayloadSelector } from '../../../src/payload/payload-selector.js';
import { testSeed } from '../../helpers/data.js';

/** The selector `raw` parses to, after it is written and read back every way a node may read it. */
function roundTrips(raw: unknown): void {
  const selector = parsePayloadSelector(raw, 'with_payload', true);
  const json = payloadSelectorToJson(selector);
  const shown = `${JSON.stringify(raw)} → ${JSON.stringify(json)}`;
  // The written form never leaves the answer to the fallback.
  for (const fallback of [true, false]) {
    assert.deepStrictEqual(parsePayloadSelector(json, 'with_payload', fallback), selector, shown);
    assert.deepStrictEqual(toPayloadSelector(json, 'with_payload', fallback), selector, shown);
    assert.deepStrictEqual(parsePayloadSelector(parseJson(JSON.stringify(json)), 'with_payload', fallback), selector, `${shown} as text`);
  }
}

test('true, false, lists, include and exclude read back to the same selector', () => {
  const cases: unknown[] = [
    true,
    false,
    null,
    [],
    ['a'],
    ['a', 'b.c', 'cities[].name', 'a[0]', '"key.with.dots".b', 'a.', '', 'not a path!', 'é.ü'],
    { include: [] },
    { include: ['country.name', 'tags[]'] },
    { exclude: [] },
    { exclude: ['a', 'a[].b', '"x"'] },
  ];
  for (const raw of cases) roundTrips(raw);
  assert.equal(payloadSelectorToJson(parsePayloadSelector(undefined, 'p', true)), true);
  assert.equal(payloadSelectorToJson(parsePayloadSelector(undefined, 'p', false)), false);
  // Both spellings of an include list come out one way.
  assert.deepStrictEqual(payloadSelectorToJson(parsePayloadSelector(['a'], 'p', true)), { include: ['a'] });
  assert.deepStrictEqual(payloadSelectorToJson(parsePayloadSelector({ include: ['a'] }, 'p', true)), { include: ['a'] });
});

test('a selector already parsed (what toPayloadSelector passes through) is written the same way', () => {
  const selector: PayloadSelector = parsePayloadSelector({ exclude: ['a.b', 'c[]'] }, 'p', true);
  assert.deepStrictEqual(payloadSelectorToJson(toPayloadSelector(selector, 'p', false)), { exclude: ['a.b', 'c[]'] });
});

test('random pattern lists read back to the same selector', (t) => {
  const seed = testSeed(0x5e1ec7);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  // Pieces that make valid paths, invalid ones and literal keys with dots, quotes and brackets.
  const pieces = ['a', 'b', 'é', '_', '-', '1', '.', '[]', '[0]', '[', ']', '"', '"k.d"', ' ', '\\', '\u0000', '\u{1F600}'];
  for (let i = 0; i < 500; i++) {
    const patterns = Array.from({ length: rng.int(5) }, () => Array.from({ length: rng.int(6) }, () => rng.pick(pieces)).join(''));
    roundTrips(rng.pick([patterns, { include: patterns }, { exclude: patterns }]));
  }
});
