import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { jsonSliced } from '../../../src/api/sliced-json.js';

test('jsonSliced writes the text JSON.stringify writes, for any JSON value', async () => {
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), async (value) => {
      assert.equal(await jsonSliced(value), JSON.stringify(value));
    }),
    { numRuns: 500 },
  );
  // The shapes the routes send: lists of hits, lists of lists, a page object.
  const hit = (i: number) => ({ id: i, version: 17, score: 0.5, payload: { a: [i, { b: 'x' }] }, vector: [0.25, -1] });
  for (const value of [
    [hit(1), hit(2)],
    [[hit(1)], [], [hit(2), hit(3)]],
    { points: [hit(1)], next_page_offset: null },
    [{ points: [hit(4)] }],
    { skip: undefined, n: 1 },
  ]) {
    assert.equal(await jsonSliced(value), JSON.stringify(value));
  }
});

test('jsonSliced gives the event loop turns while it writes a long list', async () => {
  const big = Array.from({ length: 60000 }, (_, i) => ({ id: i, payload: { text: 'x'.repeat(200), n: i } }));
  let turns = 0;
  const ticker = setInterval(() => {
    turns++;
  }, 1);
  const text = await jsonSliced(big);
  clearInterval(ticker);
  assert.equal(text, JSON.stringify(big));
  assert.ok(turns > 0, 'timers ran while the list was written');
});
