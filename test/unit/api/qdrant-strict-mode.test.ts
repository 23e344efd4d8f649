/**
 * The parts of the Qdrant port's strict mode that a server test reaches only slowly or not at all:
 * the token buckets over a clock the test moves (refill, Retry-After, a new limit), and the
 * filter walks on filters too awkward to send (deep nesting, min_should, a condition given alone).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QdrantHttpError } from '../../../src/api/qdrant/errors.js';
import { RateLimiters } from '../../../src/api/qdrant/rate-limit.js';
import { conditionCount, firstUnindexedFormulaKey, firstUnindexedKey, largestCondition } from '../../../src/api/qdrant/strict-filter.js';
import { mergeStrictModeConfig, parseStrictModeConfig } from '../../../src/api/qdrant/strict-mode-config.js';

function refusal(run: () => void): QdrantHttpError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof QdrantHttpError);
    return error;
  }
  assert.fail('expected a refusal');
}

test('a bucket refills limit/60 tokens a second up to its limit; Retry-After is the wait for the missing tokens', () => {
  let now = 0;
  const limiters = new RateLimiters(() => now);
  for (let i = 0; i < 60; i++) limiters.take('c', 'read', 60, 1);
  const empty = refusal(() => limiters.take('c', 'read', 60, 1));
  assert.equal(empty.statusCode, 429);
  assert.equal(empty.message, 'Rate limiting exceeded: Read rate limit exceeded: Operation requires 1 tokens but only 0.0 were available. Retry after 1s');
  assert.equal(empty.retryAfter, 1, 'one token a second at 60 a minute');
  now += 1000;
  limiters.take('c', 'read', 60, 1);
  now += 10 * 60_000;
  for (let i = 0; i < 60; i++) limiters.take('c', 'read', 60, 1);
  assert.throws(() => limiters.take('c', 'read', 60, 1), /only 0\.0 were available/, 'refilled to the limit, not beyond');
  // Half a token there, three asked: 2.5 tokens at 1/s.
  now += 500;
  assert.equal(refusal(() => limiters.take('c', 'read', 60, 3)).message.endsWith('only 0.5 were available. Retry after 3s'), true);
});

test('directions and collections have their own buckets; a changed limit starts a full one; no limit forgets it', () => {
  const now = 0;
  const limiters = new RateLimiters(() => now);
  limiters.take('c', 'write', 2, 2);
  limiters.take('c', 'read', 2, 2);
  limiters.take('d', 'write', 2, 2);
  assert.match(refusal(() => limiters.take('c', 'write', 2, 1)).message, /^Rate limiting exceeded: Write rate limit exceeded: /);
  limiters.take('c', 'write', 3, 3);
  limiters.take('c', 'write', undefined, 100);
  limiters.take('c', 'write', 3, 3);
  limiters.forget('d');
  limiters.take('d', 'write', 2, 2);
  assert.equal(
    refusal(() => limiters.take('c', 'read', 2, 5)).message,
    'Rate limiting exceeded: Read rate limit exceeded, request larger than rate limiter capacity, please try to split your request',
  );
  assert.equal(refusal(() => limiters.take('c', 'read', 2, 5)).retryAfter, undefined, 'never worth a retry');
});

test("filters: conditions counted through nested and inner filters, min_should and a lone condition, as Qdrant's total_conditions_count", () => {
  const field = (key: string) => ({ key, match: { value: 1 } });
  const filter = {
    must: field('a'),
    should: [field('b'), { must: [field('c'), field('d')], must_not: [{ has_id: [1, 2, 3] }] }],
    min_should: { conditions: [field('e'), { nested: { key: 'n', filter: { must: [field('x'), { is_empty: { key: 'y' } }] } } }], min_count: 1 },
  };
  assert.equal(conditionCount(filter), 8);
  assert.equal(largestCondition(filter), 3, 'has_id lists 3 ids');
  assert.equal(largestCondition({ must: [{ key: 'a', match: { except: [1, 2, 3, 4] } }] }), 4);
  assert.equal(conditionCount(null), 0);
  assert.equal(conditionCount({ must: 'nonsense' }), 0, "a shape the route refuses counts nothing here (the route's own parse answers it)");
});

test('filters: the first key without an index that answers its condition, and the schemas that would', () => {
  const schemas = { city: 'keyword', n: { type: 'integer', lookup: false }, 'items[].a': 'keyword', t: { type: 'text', phrase_matching: true } };
  assert.equal(firstUnindexedKey({ must: [{ key: 'city', match: { any: ['a', 'b'] } }] }, schemas), undefined);
  assert.deepEqual(firstUnindexedKey({ must: [{ key: 'n', match: { value: 3 } }] }, schemas), { key: 'n', schemas: ['integer'] });
  assert.equal(firstUnindexedKey({ must: [{ key: 'n', range: { gt: 3 } }] }, schemas), undefined, 'range is kept');
  assert.deepEqual(firstUnindexedKey({ must: [{ key: 'd', range: { gt: '2024-01-01T00:00:00Z' } }] }, schemas), { key: 'd', schemas: ['datetime'] });
  assert.deepEqual(firstUnindexedKey({ must: [{ key: 'u', match: { value: '550e8400-e29b-41d4-a716-446655440000' } }] }, schemas), {
    key: 'u',
    schemas: ['keyword', 'uuid'],
  });
  assert.equal(firstUnindexedKey({ must: [{ nested: { key: 'items', filter: { must: [{ key: 'a', match: { value: 'x' } }] } } }] }, schemas), undefined);
  assert.equal(firstUnindexedKey({ must: [{ key: 't', match: { phrase: 'a b' } }, { has_id: [1] }, { has_vector: '' }] }, schemas), undefined);
  assert.equal(firstUnindexedKey({ must: [{ is_null: { key: 'city' } }] }, schemas), undefined, 'any index holds nulls');
  assert.equal(firstUnindexedKey({ should: [{ key: 'geo', geo_radius: { center: { lon: 0, lat: 0 }, radius: 1 } }] }, schemas)?.schemas.join(), 'geo');
  assert.deepEqual(firstUnindexedFormulaKey({ mult: [{ div: { left: 'price', right: 2 } }, '$score'] }, schemas), {
    key: 'price',
    schemas: ['float', 'integer'],
  });
  assert.deepEqual(firstUnindexedFormulaKey({ gauss_decay: { x: { datetime_key: 'when' }, scale: 10 } }, schemas), { key: 'when', schemas: ['datetime'] });
  assert.equal(firstUnindexedFormulaKey({ sum: ['$score', { key: 'city', match: { value: 'x' } }] }, schemas), undefined);
});

test('config: a PATCH merges field by field; per-vector maps are replaced whole; nulls set nothing', () => {
  const stored = parseStrictModeConfig({ enabled: true, max_query_limit: 3, multivector_config: { a: { max_vectors: 2 }, b: { max_vectors: 3 } } });
  const change = parseStrictModeConfig({ max_query_limit: null, max_timeout: 5, multivector_config: { b: { max_vectors: 4 } } });
  assert.deepEqual(change, { max_timeout: 5, multivector_config: { b: { max_vectors: 4 } } });
  assert.deepEqual(mergeStrictModeConfig(stored, change), { enabled: true, max_query_limit: 3, max_timeout: 5, multivector_config: { b: { max_vectors: 4 } } });
  assert.equal(refusal(() => parseStrictModeConfig({ search_max_oversampling: 'big' })).statusCode, 400);
  assert.equal(refusal(() => parseStrictModeConfig([1])).message, 'Format error in JSON body: strict_mode_config: expected an object, got an array');
});
