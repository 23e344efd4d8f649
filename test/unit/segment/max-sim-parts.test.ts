/**
 * A multi-vector's max_sim scored in parts (`similarityOfRows`, each part given the total before
 * it), as a search by examples scores one against a huge point with pauses between its rows, is
 * the very number scored whole: same rows, same order of additions.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../../src/core/rng.js';
import type { NamedVectorConfig } from '../../../src/segment/named-vector-config.js';
import { type NamedVector, similarity, similarityOfRows } from '../../../src/segment/named-vectors.js';
import { testSeed } from '../../helpers/data.js';

function multiVector(rng: SeededRng, rows: number, size: number): NamedVector {
  return { rows, data: Float32Array.from({ length: rows * size }, () => rng.next() * 2 - 1) };
}

/** The query's rows cut at random places, each part scored with the total so far. */
function scoredInParts(rng: SeededRng, config: NamedVectorConfig, query: NamedVector, stored: NamedVector): { total: number; cuts: number[] } {
  const cuts: number[] = [];
  let total = 0;
  for (let from = 0; from < query.rows; ) {
    const to = Math.min(query.rows, from + 1 + rng.int(5));
    total = similarityOfRows(config, query, stored, from, to, total);
    cuts.push(to);
    from = to;
  }
  return { total, cuts };
}

test('max_sim scored in parts of rows equals max_sim scored whole, bit for bit', () => {
  const seed = testSeed(4242);
  const rng = new SeededRng(seed);
  for (let round = 0; round < 200; round++) {
    const size = 1 + rng.int(16);
    const config: NamedVectorConfig = { size, distance: rng.int(2) === 0 ? 'Dot' : 'Euclid', multivector: true };
    const query = multiVector(rng, 1 + rng.int(40), size);
    const stored = multiVector(rng, 1 + rng.int(40), size);
    const { total, cuts } = scoredInParts(rng, config, query, stored);
    assert.equal(
      total,
      similarity(config, query, stored),
      `seed ${seed}, round ${round}: ${config.distance}, ${query.rows} × ${stored.rows} rows of ${size}, cut at ${cuts}`,
    );
  }
});
