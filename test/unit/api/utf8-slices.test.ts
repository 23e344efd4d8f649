import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LONG_TEXT_CHARS, utf8InSlices } from '../../../src/api/utf8-slices.js';
import { testSeed, withSeedAsync } from '../../helpers/data.js';

/** Characters of every UTF-8 length, and pairs, lone surrogates and quotes as JSON text holds them. */
const ALPHABET = ['a', '"', '\\', 'é', 'ß', '€', '中', '😀', '𝄞', '\ud800', '\udfff', '\n', '0'];

test('long texts encode to exactly the bytes of Buffer.from, whatever falls on a piece boundary', async () => {
  await withSeedAsync(testSeed(4401), async (rng) => {
    for (let round = 0; round < 6; round++) {
      const length = LONG_TEXT_CHARS + rng.int(LONG_TEXT_CHARS);
      const parts: string[] = [];
      let size = 0;
      while (size < length) {
        // Runs of one character, so that pairs land on every offset against the piece size.
        const run = rng.pick(ALPHABET).repeat(1 + rng.int(round === 0 ? 1 : 70_000));
        parts.push(run);
        size += run.length;
      }
      const text = parts.join('');
      const encoded = await utf8InSlices(text);
      assert.ok(encoded.equals(Buffer.from(text, 'utf8')), `round ${round}: ${text.length} chars`);
    }
  });
});

test('a surrogate pair exactly across the first piece boundary stays one character', async () => {
  for (let before = (1 << 19) - 3; before <= (1 << 19) + 1; before++) {
    const text = `${'x'.repeat(before)}😀${'y'.repeat(LONG_TEXT_CHARS)}`;
    const encoded = await utf8InSlices(text);
    assert.ok(encoded.equals(Buffer.from(text, 'utf8')), `pair at ${before}`);
    assert.equal(encoded.toString('utf8'), text);
  }
});
