import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { controlId, drawPayload, longUnicodeId } from '../helpers/nasty-data.js';
import { httpJson, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

/**
 * Through a real service with two search threads: filters no payload index answers run on the
 * threads (over the shared payload records) and answer exactly as the same searches one by one,
 * before and after re-upserts, deletes and a restart, on nasty ids and payloads.
 */

const DIM = 4;

const FILTERS = [
  { must: [{ key: 'n', range: { gte: 3 } }] },
  { should: [{ key: 'tag', match: { any: ['a', 'c'] } }, { is_null: { key: 'c' } }] },
  { must: [{ key: 'name', type: 'regex', match: { value: '7' } }], must_not: [{ key: 'n', match: { value: 1 } }] },
  { must_not: [{ key: 'a.b', match: { value: 0 } }] },
];

async function threadFilterWork(url: string): Promise<number> {
  const metrics = await fetch(`${url}/metrics`).then((r) => r.text());
  const line = /^kith_search_thread_work\{collection="c",kind="filter"\} (\d+)$/m.exec(metrics);
  return line === null ? 0 : Number(line[1]);
}

test('filters no index answers run on the search threads of a real service, with the answers of single searches', async (t) => {
  const seed = testSeed(4242);
  t.diagnostic(`seed ${seed}`);
  const rng = new SeededRng(seed);
  const path = tempDbPath(t);
  let server = await startServer(path, ['-threads', '2']);
  t.after(() => server.stop());
  const created = await httpJson(server.url, 'POST', '/collections', { name: 'c', vector_size: DIM, distance: 'dot', hnsw: true, payload_index: false });
  assert.equal(created.status, 200, created.raw);
  const ids = Array.from({ length: 1200 }, (_, i) => (i % 5 === 0 ? controlId(rng, i) : i % 5 === 1 ? longUnicodeId(rng, i) : `p${i}`));
  const pointOf = (i: number, round: number): Record<string, unknown> => ({
    id: ids[i],
    // Non-negative under Dot, some duplicates and zero vectors.
    vector: i % 50 === 0 ? [0, 0, 0, 0] : i % 13 === 0 ? [1, 1, 1, 1] : Array.from({ length: DIM }, () => rng.next()),
    payload: { ...drawPayload(rng, new Set()), name: `p${i}`, n: (i + round) % 6, tag: ['a', 'b', 'c'][(i + round) % 3], 'a.b': (i + round) % 2 },
  });
  const put = await httpJson(server.url, 'PUT', '/collections/c/points', { points: ids.map((_, i) => pointOf(i, 0)) });
  assert.equal(put.status, 200, put.raw);

  const check = async (label: string): Promise<void> => {
    const searches = Array.from({ length: 24 }, (_, i) => ({
      vector: Array.from({ length: DIM }, () => rng.next()),
      limit: 1 + rng.int(10),
      filter: FILTERS[i % FILTERS.length],
    }));
    // The first batch starts the copy of the payloads (its searches run on the service thread meanwhile).
    let before = await threadFilterWork(server.url);
    for (let attempt = 0; attempt < 50; attempt++) {
      const batch = await httpJson(server.url, 'POST', '/collections/c/points/search/batch', { searches });
      assert.equal(batch.status, 200, batch.raw);
      for (const [i, search] of searches.entries()) {
        const single = await httpJson(server.url, 'POST', '/collections/c/points/search', search);
        assert.equal(single.status, 200, single.raw);
        assert.deepEqual(batch.body.result[i], single.body.result, `seed ${seed}, ${label}: search ${i}`);
      }
      const after = await threadFilterWork(server.url);
      if (after > before) return;
      before = after;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`${label}: no filter ran on a search thread`);
  };

  await check('after the load');
  // Re-upserts with new payloads (and vectors), deletes.
  const again = await httpJson(server.url, 'PUT', '/collections/c/points', {
    points: Array.from({ length: 300 }, () => rng.int(ids.length))
      .filter((v, i, a) => a.indexOf(v) === i)
      .map((i) => pointOf(i, 1)),
  });
  assert.equal(again.status, 200, again.raw);
  const deleted = await httpJson(server.url, 'POST', '/collections/c/points/delete', { points: ids.filter((_, i) => i % 7 === 0) });
  assert.equal(deleted.status, 200, deleted.raw);
  await check('after re-upserts and deletes');
  assert.equal(await server.stop(), 0);
  server = await startServer(path, ['-threads', '2']);
  await check('after a restart');
});
