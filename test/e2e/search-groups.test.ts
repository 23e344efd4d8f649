/**
 * Grouped searches on kith's port (POST …/points/search/groups, the client's searchGroups) and in
 * the library (Collection.searchGroups, which also groups a query by point and a recommendation):
 * random collections of nasty data grouped by the engine and by a model that groups one exact
 * search of every point; then the request checks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient, KithClientError } from '../../src/api/client/kith-client.js';
import type { QueryRequest } from '../../src/collection/collection.js';
import { SeededRng } from '../../src/core/rng.js';
import { startQdrant } from './qdrant-harness.js';

type Hit = { id: string; score: number; payload?: Record<string, unknown> };

/** The model: hits of one exact search of every point, in order, grouped by `k`. */
function modelGroups(hits: readonly Hit[], groups: number, size: number): { id: string | number; hits: string[] }[] {
  const found = new Map<string, { id: string | number; hits: string[] }>();
  for (const hit of hits) {
    const raw = hit.payload?.k;
    const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
    if (values.length === 0 || values.some((v) => !(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))))) continue;
    const seen = new Set<string>();
    for (const v of values as (string | number)[]) {
      const name = typeof v === 'number' ? `n${v}` : `s${v}`;
      if (seen.has(name)) continue;
      seen.add(name);
      const group = found.get(name) ?? { id: v, hits: [] };
      found.set(name, group);
      if (group.hits.length < size) group.hits.push(hit.id);
    }
  }
  return [...found.values()].slice(0, groups);
}

const shown = (groups: readonly { id: string | number; hits: readonly { id: string }[] }[]) => groups.map((g) => ({ id: g.id, hits: g.hits.map((h) => h.id) }));

test('kith port and library: grouped searches equal a model grouping one exact search (random nasty data)', async (t) => {
  const { db, kithUrl } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  const values: unknown[] = ['x', 'y', 'z', 0, 1, 7, '1', -2, 0.5, false, null, [], ['x', 'x', 'y'], [1, 'x'], [[1]], { o: 1 }];
  for (const seed of [21, 22, 23, 24]) {
    const rng = new SeededRng(seed);
    const distance = (['cosine', 'euclid', 'dot'] as const)[seed % 3] as string;
    const dim = 1 + rng.int(3);
    const name = `k${seed}`;
    await client.createCollection({ name, vector_size: dim, distance, hnsw: seed % 2 === 0 });
    const count = 20 + rng.int(100);
    const points = Array.from({ length: count }, (_, i) => ({
      id: rng.int(4) === 0 ? `odd id ${i}` : String(i),
      vector: rng.int(5) === 0 ? Array.from({ length: dim }, () => 0) : Array.from({ length: dim }, () => rng.int(4) - 1),
      payload: rng.int(6) === 0 ? {} : { k: values[rng.int(values.length)] },
    }));
    await client.upsert(name, points);
    for (let round = 0; round < 6; round++) {
      const vector = Array.from({ length: dim }, () => rng.int(5) - 2);
      const [groups, size] = [1 + rng.int(5), 1 + rng.int(4)];
      const filter = rng.int(3) === 0 ? { must_not: [{ key: 'k', match: { value: 'y' } }] } : undefined;
      const all = await client.search(name, { vector, limit: count, filter, params: { exact: true } });
      const want = modelGroups(all as Hit[], groups, size);
      const what = `seed ${seed} round ${round} (${distance}, dim ${dim}, ${groups} × ${size})`;
      const got = await client.searchGroups(name, { vector, group_by: 'k', group_size: size, limit: groups, filter, params: { exact: true } });
      assert.deepEqual(shown(got), want, `port: ${what}`);
      for (const g of got) for (const h of g.hits) assert.ok(h.payload !== undefined && typeof h.version === 'bigint', 'hits carry payload and version');
      // The library, by a stored point (left out) and by a recommendation.
      const collection = db.collection(name);
      const point = points[rng.int(points.length)] as (typeof points)[number];
      const near: QueryRequest = { kind: 'point', search: { point: point.id, params: { exact: true }, with_payload: false } };
      const nearAll = (await collection.query([{ kind: 'point', search: { point: point.id, limit: count, params: { exact: true } } }]))[0]?.points ?? [];
      const byPoint = await collection.searchGroups(near, { group_by: 'k', group_size: size, limit: groups });
      assert.deepEqual(shown(byPoint), modelGroups(nearAll as Hit[], groups, size), `library by point: ${what}`);
      assert.ok(byPoint.every((g) => g.hits.every((h) => h.payload === undefined && h.id !== point.id)));
    }
  }
});

test('kith port: a grouped search is checked before it runs', async (t) => {
  const { kithUrl } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  await client.createCollection({ name: 'c', vector_size: 2, distance: 'Dot' });
  await client.upsert('c', [{ id: 'a', vector: [1, 0], payload: { k: 'x' } }]);
  const refused = async (request: object, pattern: RegExp): Promise<void> => {
    await assert.rejects(
      () => client.searchGroups('c', { vector: [1, 0], group_by: 'k', ...request } as never),
      (error: unknown) => error instanceof KithClientError && error.status === 400 && pattern.test(error.message),
    );
  };
  await refused({ group_size: 0 }, /group_size/);
  await refused({ limit: 100, group_size: 100 }, /8192/);
  await refused({ group_by: '' }, /group_by/);
  await refused({ offset: 3 }, /offset/);
  await refused({ filter: { must: [{ key: 'k', match: {} }] } }, /filter\.must\[0\]\.match/);
  const groups = await client.searchGroups('c', { vector: [1, 0], group_by: 'k' });
  assert.deepEqual(shown(groups), [{ id: 'x', hits: ['a'] }]);
});
