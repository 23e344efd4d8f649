import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_BATCH_SEARCHES } from '../../src/api/schemas/points.js';
import { SeededRng } from '../../src/core/rng.js';
import { openTestApp } from '../helpers/app.js';
import { testSeed } from '../helpers/data.js';

/**
 * POST /collections/{name}/points/search/batch: one result list per search, in order, equal to the
 * same searches sent one by one; a bad search fails the whole request with its index in the path.
 */

const DIM = 6;

function seededPoints(rng: SeededRng, n: number): Array<{ id: string; vector: number[]; payload: Record<string, unknown> }> {
  const points: Array<{ id: string; vector: number[]; payload: Record<string, unknown> }> = [];
  for (let i = 0; i < n; i++) {
    // Some exact copies: ties must break the same way in both paths.
    const previous = points[i - 1];
    const vector = i % 17 === 3 && previous !== undefined ? previous.vector : Array.from({ length: DIM }, () => rng.next() * 2 - 1);
    points.push({ id: `p${i}`, vector, payload: { group: i % 5, tag: i % 2 === 0 ? 'even' : 'odd' } });
  }
  return points;
}

function randomSearch(rng: SeededRng): Record<string, unknown> {
  const body: Record<string, unknown> = { vector: Array.from({ length: DIM }, () => rng.next() * 2 - 1), limit: 1 + rng.int(12) };
  const shape = rng.int(4);
  if (shape === 1) body.filter = { must: [{ key: 'group', match: { value: rng.int(5) } }] };
  if (shape === 2) body.filter = { must_not: [{ key: 'tag', match: { value: 'odd' } }] };
  if (rng.int(3) === 0) body.params = { exact: true };
  if (rng.int(4) === 0) body.offset = rng.int(5);
  return body;
}

for (const index of ['hnsw', 'flat'] as const) {
  test(`batch search equals the same searches one by one (${index})`, async (t) => {
    const seed = testSeed(1010);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const { call } = await openTestApp(t);
    const created = await call('POST', '/collections', { name: 'c', vector_size: DIM, distance: 'cosine', hnsw: index === 'hnsw' });
    assert.equal(created.status, 200, created.raw);
    const up = await call('PUT', '/collections/c/points', { points: seededPoints(rng, 400) });
    assert.equal(up.status, 200, up.raw);

    const searches = Array.from({ length: 60 }, () => randomSearch(rng));
    const batch = await call('POST', '/collections/c/points/search/batch', { searches });
    assert.equal(batch.status, 200, `seed ${seed}: ${batch.raw}`);
    assert.equal(batch.body.result.length, searches.length);
    assert.equal(batch.body.explain, undefined, 'no explain unless a search asks for one');
    for (const [i, search] of searches.entries()) {
      const single = await call('POST', '/collections/c/points/search', search);
      assert.equal(single.status, 200, single.raw);
      assert.ok(single.body.result.length > 0, `seed ${seed}: search ${i} found something`);
      assert.deepEqual(batch.body.result[i], single.body.result, `seed ${seed}: search ${i}`);
    }
  });
}

test('batch search: explain per search, null where not asked', async (t) => {
  const { call } = await openTestApp(t);
  await call('POST', '/collections', { name: 'c', vector_size: 2, distance: 'euclid', hnsw: false });
  await call('PUT', '/collections/c/points', {
    points: [
      { id: 'a', vector: [0, 0] },
      { id: 'b', vector: [1, 1] },
    ],
  });
  const r = await call('POST', '/collections/c/points/search/batch', {
    searches: [
      { vector: [0, 0], limit: 1 },
      { vector: [1, 1], limit: 1, params: { explain: true } },
    ],
  });
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(
    r.body.result.map((hits: Array<{ id: string }>) => hits.map((h) => h.id)),
    [['a'], ['b']],
  );
  assert.equal(r.body.explain.length, 2);
  assert.equal(r.body.explain[0], null);
  assert.equal(r.body.explain[1].strategy, 'flat-scan');
  assert.equal(r.body.explain[1].exact, true);
});

test('batch search: a bad search fails the request with its index in the field path', async (t) => {
  const { call } = await openTestApp(t);
  await call('POST', '/collections', { name: 'c', vector_size: 2, distance: 'cosine' });
  await call('PUT', '/collections/c/points', { points: [{ id: 'a', vector: [1, 0] }] });

  const wrongDim = await call('POST', '/collections/c/points/search/batch', { searches: [{ vector: [1, 0] }, { vector: [1, 0, 0] }] });
  assert.equal(wrongDim.status, 400, wrongDim.raw);
  assert.match(wrongDim.body.status.error, /^searches\[1\]\.vector: /);

  const badFilter = await call('POST', '/collections/c/points/search/batch', {
    searches: [{ vector: [1, 0] }, { vector: [1, 0] }, { vector: [1, 0], filter: { must: [{ key: 'x', match: { nope: 1 } }] } }],
  });
  assert.equal(badFilter.status, 400, badFilter.raw);
  assert.match(badFilter.body.status.error, /^searches\[2\]\.filter/);

  const badLimit = await call('POST', '/collections/c/points/search/batch', { searches: [{ vector: [1, 0], limit: 0 }] });
  assert.equal(badLimit.status, 400, badLimit.raw);
  assert.match(badLimit.body.status.error, /searches\/0\/limit|searches\[0\]\.limit/);

  const empty = await call('POST', '/collections/c/points/search/batch', { searches: [] });
  assert.equal(empty.status, 400, empty.raw);

  const tooMany = await call('POST', '/collections/c/points/search/batch', {
    searches: Array.from({ length: MAX_BATCH_SEARCHES + 1 }, () => ({ vector: [1, 0] })),
  });
  assert.equal(tooMany.status, 400, tooMany.raw);

  const missing = await call('POST', '/collections/nope/points/search/batch', { searches: [{ vector: [1, 0] }] });
  assert.equal(missing.status, 404, missing.raw);
});
