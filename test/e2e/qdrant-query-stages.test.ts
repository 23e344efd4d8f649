/**
 * The query API's stages (prefetch, fusion, re-scoring) on the Qdrant port, through the official
 * client and raw HTTP: Qdrant's own cases (RRF and weighted RRF equal the fusion of two plain
 * searches, DBSF likewise, a query over a 1000-point prefetch equals the query alone, its error
 * texts), then random stage trees on nasty data compared with a model that composes plain exact
 * searches: exact fusion of exact prefetches.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { http, startQdrant } from './qdrant-harness.js';

type Hit = { id: number | string; score: number; payload?: Record<string, unknown> };
// biome-ignore lint/suspicious/noExplicitAny: request bodies are built field by field
type Body = any;

const DIM = 4;

/** Plain exact search through the port: the model's only source of scores. */
async function exactSearch(url: string, collection: string, vector: number[], limit: number, filter?: Body, threshold?: number): Promise<Hit[]> {
  const r = await http(url, 'POST', `/collections/${collection}/points/search`, {
    vector,
    limit,
    filter,
    score_threshold: threshold,
    params: { exact: true },
    with_payload: false,
  });
  assert.equal(r.status, 200, r.text);
  return r.body.result.map((h: Hit) => ({ id: h.id, score: h.score }));
}

const byScoreThenId = (a: Hit, b: Hit): number => b.score - a.score || (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0);

function rrf(lists: Hit[][], k = 2, weights?: number[]): Hit[] {
  const fused = new Map<number | string, number>();
  lists.forEach((list, l) => {
    const w = weights?.[l] ?? 1;
    if (w <= 0) return;
    list.forEach((h, i) => {
      fused.set(h.id, (fused.get(h.id) ?? 0) + 1 / ((i + 1) / w + k - 1));
    });
  });
  return [...fused].map(([id, score]) => ({ id, score })).sort(byScoreThenId);
}

/** `smallerBetter[i]`: list i holds Euclid distances (a search's), not scores that rank larger first (a fusion's). */
function isFusion(query: unknown): boolean {
  return typeof query === 'object' && query !== null && !Array.isArray(query) && ('fusion' in query || 'rrf' in query);
}

function dbsf(lists: Hit[][], smallerBetter: readonly boolean[]): Hit[] {
  const fused = new Map<number | string, number>();
  for (const [l, list] of lists.entries()) {
    const scores = list.map((h) => (smallerBetter[l] === true ? -h.score : h.score));
    const n = scores.length;
    const mean = scores.reduce((s, x) => s + x, 0) / n;
    const sd = Math.sqrt(scores.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
    const [lo, hi] = [mean - 3 * sd, mean + 3 * sd];
    list.forEach((h, i) => {
      fused.set(h.id, (fused.get(h.id) ?? 0) + (n === 1 || !(hi > lo) ? 0.5 : ((scores[i] as number) - lo) / (hi - lo)));
    });
  }
  return [...fused].map(([id, score]) => ({ id, score })).sort(byScoreThenId);
}

/** Same ids in the same order, scores within 1e-6 — where scores tie within 1e-9, the order among them is free. */
function assertSameHits(got: Hit[], want: Hit[], what: string): void {
  // The official client reads versions above 2^53 as BigInt on Node 22 and later.
  const show = (hits: Hit[]): string => JSON.stringify(hits, (_key, value) => (typeof value === 'bigint' ? String(value) : value));
  assert.equal(got.length, want.length, `${what}: ${show(got)} vs ${show(want)}`);
  for (let i = 0; i < got.length; i++) {
    const [g, w] = [got[i] as Hit, want[i] as Hit];
    assert.ok(Math.abs(g.score - w.score) < 1e-6, `${what}: position ${i} scores ${g.score} vs ${w.score}`);
  }
  const groups = (hits: Hit[]): string[] => {
    const out: string[] = [];
    let group: string[] = [];
    hits.forEach((h, i) => {
      if (i > 0 && Math.abs(h.score - (hits[i - 1] as Hit).score) > 1e-9) {
        out.push(group.sort().join(','));
        group = [];
      }
      group.push(String(h.id));
    });
    if (group.length > 0) out.push(group.sort().join(','));
    return out;
  };
  assert.deepEqual(groups(got), groups(want), `${what}: the ids by score`);
}

test("Qdrant's cases: RRF, weighted RRF and DBSF of two prefetches equal the fusion of the two searches; a query over a prefetch equals the query", async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('q', { vectors: { size: DIM, distance: 'Dot' } });
  const rng = new SeededRng(11);
  await client.upsert('q', {
    wait: true,
    points: Array.from({ length: 40 }, (_, id) => ({
      id: id + 1,
      vector: Array.from({ length: DIM }, () => Math.round(rng.next() * 100) / 100),
      payload: { g: id % 3 },
    })),
  });
  const [v1, v2] = [
    [0.1, 0.2, 0.3, 0.4],
    [0.5, 0.6, 0.7, 0.8],
  ];
  const s1 = await exactSearch(url, 'q', v1, 10);
  const s2 = await exactSearch(url, 'q', v2, 10);
  const prefetch = [
    { query: v1, params: { exact: true } },
    { query: v2, params: { exact: true } },
  ];
  const fused = await client.query('q', { prefetch, query: { fusion: 'rrf' } });
  assertSameHits(fused.points as Hit[], rrf([s1, s2]).slice(0, 10), 'rrf');
  const weighted = await client.query('q', { prefetch, query: { rrf: { weights: [3, 1] } } as never });
  assertSameHits(weighted.points as Hit[], rrf([s1, s2], 2, [3, 1]).slice(0, 10), 'weighted rrf');
  const k60 = await client.query('q', { prefetch, query: { rrf: { k: 60, weights: [80, 20] } } as never, limit: 5 });
  assertSameHits(k60.points as Hit[], rrf([s1, s2], 60, [80, 20]).slice(0, 5), 'rrf k 60');
  const distribution = await client.query('q', { prefetch, query: { fusion: 'dbsf' }, with_payload: true });
  assertSameHits(distribution.points as Hit[], dbsf([s1, s2], [false, false]).slice(0, 10), 'dbsf');
  assert.ok(
    distribution.points.every((p) => typeof (p.payload as { g?: number }).g === 'number'),
    'with_payload on the request gives the payloads',
  );
  // A query over a prefetch of every point (in id order) equals the query alone.
  const root = await client.query('q', { query: v1, limit: 7, with_payload: true });
  const nested = await client.query('q', { prefetch: { limit: 1000 }, query: v1, limit: 7, with_payload: true });
  assert.deepEqual(nested.points, root.points);
  // The request's filter applies to the prefetches, and a threshold cuts the fused list.
  const filtered = await client.query('q', { prefetch, query: { fusion: 'rrf' }, filter: { must: [{ key: 'g', match: { value: 1 } }] }, score_threshold: 0.3 });
  const want = rrf([
    await exactSearch(url, 'q', v1, 10, { must: [{ key: 'g', match: { value: 1 } }] }),
    await exactSearch(url, 'q', v2, 10, { must: [{ key: 'g', match: { value: 1 } }] }),
  ]).filter((h) => h.score >= 0.3);
  assert.ok(want.length > 0 && want.length < 10, `the threshold cuts some (${want.length})`);
  assertSameHits(filtered.points as Hit[], want, 'filtered and cut');
});

test("Qdrant's refusals, in its words: prefetches or a threshold without a query, weights that do not match, nesting too deep", async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('e', { vectors: { size: DIM, distance: 'Cosine' } });
  const query = (body: Body) => http(url, 'POST', '/collections/e/points/query', body);
  const noQuery = await query({ prefetch: [{ query: { recommend: { positive: [1] } } }] });
  assert.equal(noQuery.status, 400);
  assert.equal(noQuery.body.status.error, "Bad request: A query is needed to merge the prefetches. Can't have prefetches without defining a query.");
  const threshold = await query({ score_threshold: 10 });
  assert.equal(threshold.status, 400);
  assert.equal(threshold.body.status.error, "Bad request: A query is needed to use the score_threshold. Can't have score_threshold without defining a query.");
  const weights = await query({ prefetch: [{ query: [1, 0, 0, 0] }, { query: [0, 1, 0, 0] }], query: { rrf: { weights: [1] } } });
  assert.equal(weights.status, 422, weights.text);
  assert.match(weights.body.status.error, /query\.rrf\.weights: 1 weights for 2 prefetches/);
  let deep: Body = { query: [1, 0, 0, 0] };
  for (let i = 0; i < 9; i++) deep = { prefetch: deep, query: [1, 0, 0, 0] };
  const tooDeep = await query(deep);
  assert.equal(tooDeep.status, 422, tooDeep.text);
  assert.match(tooDeep.body.status.error, /prefetch(\.prefetch){8}: prefetches nest at most 8 deep/);
  const fusionAlone = await query({ query: { fusion: 'rrf' } });
  assert.equal(fusionAlone.status, 400);
  assert.match(fusionAlone.body.status.error, /query: a fusion needs prefetches/);
  const offsetInPrefetch = await query({ prefetch: { query: [1, 0, 0, 0], offset: 3 }, query: { fusion: 'rrf' } });
  assert.equal(offsetInPrefetch.status, 400);
  assert.match(offsetInPrefetch.body.status.error, /prefetch\.offset/);
  // A point given by id that does not exist, deep in a prefetch: Qdrant's 404.
  const missing = await query({ prefetch: { query: 12345 }, query: { fusion: 'dbsf' } });
  assert.equal(missing.status, 404, missing.text);
  assert.equal(
    (await client.query('e', { prefetch: [{ query: [1, 0, 0, 0] }], query: { fusion: 'rrf' } })).points.length,
    0,
    'an empty collection fuses nothing',
  );
});

/** A random stage tree (as a Qdrant body) and the model's answer for it. */
interface Drawn {
  body: Body;
  model: () => Promise<Hit[]>;
}

for (const distance of ['Cosine', 'Euclid', 'Dot'] as const) {
  test(`random prefetch trees on nasty data equal exact fusion of exact prefetches (${distance})`, async (t) => {
    const seed = 1000 + distance.length;
    const { client, url } = await startQdrant(t);
    await client.createCollection('m', { vectors: { size: DIM, distance } });
    const rng = new SeededRng(seed);
    const points = Array.from({ length: 60 }, (_, i) => {
      // Duplicates, zero vectors (not under Cosine: Qdrant refuses them there too), non-negative components.
      const kind = rng.int(5);
      const vector =
        kind === 0 && distance !== 'Cosine'
          ? [0, 0, 0, 0]
          : kind === 1
            ? [1, 1, 0, 0]
            : Array.from({ length: DIM }, () => rng.int(4) + (distance === 'Cosine' ? 1 : 0));
      const payload = rng.next() < 0.2 ? {} : { g: rng.int(3) };
      return { id: i + 1, vector, payload };
    });
    await client.upsert('m', { wait: true, points });
    const all = points.length;
    const randomVector = (): number[] => Array.from({ length: DIM }, () => rng.int(4) + (distance === 'Cosine' ? 1 : 0));
    const randomFilter = (): Body => (rng.next() < 0.35 ? { must: [{ key: 'g', match: { value: rng.int(3) } }] } : undefined);
    const and = (a: Body, b: Body): Body => (a === undefined ? b : b === undefined ? a : { must: [a, b] });

    const draw = (depth: number, above: Body): Drawn => {
      const filter = randomFilter();
      const effective = and(above, filter);
      const limit = 1 + rng.int(15);
      const roll = depth >= 3 ? 0 : rng.int(4);
      if (roll === 0) {
        // A leaf: a search, or a page in id order.
        if (rng.next() < 0.15) {
          return {
            body: { limit, filter },
            model: async () => {
              const r = await http(url, 'POST', '/collections/m/points/scroll', { limit, filter: effective, with_payload: false });
              return r.body.result.points.map((p: Hit) => ({ id: p.id, score: 0 }));
            },
          };
        }
        const vector = randomVector();
        return { body: { query: vector, limit, filter, params: { exact: true } }, model: () => exactSearch(url, 'm', vector, limit, effective) };
      }
      const children = Array.from({ length: 1 + rng.int(3) }, () => draw(depth + 1, effective));
      const prefetch = children.map((c) => c.body);
      if (roll === 1) {
        const vector = randomVector();
        return {
          body: { prefetch, query: vector, limit, filter },
          model: async () => {
            const ids = new Set((await Promise.all(children.map((c) => c.model()))).flat().map((h) => h.id));
            return (await exactSearch(url, 'm', vector, all, effective)).filter((h) => ids.has(h.id)).slice(0, limit);
          },
        };
      }
      const weights = rng.next() < 0.3 ? children.map(() => rng.int(4)) : undefined;
      const k = 1 + rng.int(5);
      const useDbsf = roll === 3;
      const query = useDbsf
        ? { fusion: 'dbsf' }
        : weights === undefined && k === 2
          ? { fusion: 'rrf' }
          : { rrf: { k, ...(weights === undefined ? {} : { weights }) } };
      return {
        body: { prefetch, query, limit, filter },
        model: async () => {
          const lists = await Promise.all(children.map((c) => c.model()));
          // A fused prefetch's scores rank larger first whatever the distance; a search's are distances under Euclid.
          const distances = children.map((c) => distance === 'Euclid' && c.body.query !== undefined && !isFusion(c.body.query));
          return (useDbsf ? dbsf(lists, distances) : rrf(lists, k, weights)).slice(0, limit);
        },
      };
    };

    let stages = 0;
    for (let round = 0; round < 40; round++) {
      const drawn = draw(0, undefined);
      if (drawn.body.prefetch === undefined) continue;
      stages++;
      const r = await http(url, 'POST', '/collections/m/points/query', drawn.body);
      assert.equal(r.status, 200, `seed ${seed}, round ${round}: ${JSON.stringify(drawn.body)}: ${r.text}`);
      assertSameHits(r.body.result.points, await drawn.model(), `seed ${seed}, round ${round}: ${JSON.stringify(drawn.body)}`);
    }
    assert.ok(stages >= 20, `${stages} multi-stage queries checked`);
  });
}

test('a query re-scoring more candidates than one search takes (1,024) merges its searches exactly', async (t) => {
  const { client, url } = await startQdrant(t);
  await client.createCollection('c', { vectors: { size: DIM, distance: 'Euclid' } });
  const rng = new SeededRng(77);
  const total = 3000;
  for (let from = 0; from < total; from += 1000) {
    await client.upsert('c', {
      wait: true,
      points: Array.from({ length: 1000 }, (_, i) => ({ id: from + i + 1, vector: Array.from({ length: DIM }, () => rng.int(50) / 10) })),
    });
  }
  const [a, b, q] = [
    [0, 0, 0, 0],
    [5, 5, 5, 5],
    [2, 3, 1, 4],
  ];
  const body = {
    prefetch: [
      { query: a, limit: 1500, params: { exact: true } },
      { query: b, limit: 1500, params: { exact: true } },
    ],
    query: q,
    limit: 25,
    offset: 5,
  };
  const r = await http(url, 'POST', '/collections/c/points/query', body);
  assert.equal(r.status, 200, r.text);
  const candidates = new Set([...(await exactSearch(url, 'c', a, 1500)), ...(await exactSearch(url, 'c', b, 1500))].map((h) => h.id));
  assert.ok(candidates.size > 2048, `${candidates.size} candidates: three searches or more`);
  const want = (await exactSearch(url, 'c', q, total)).filter((h) => candidates.has(h.id)).slice(5, 30);
  assertSameHits(r.body.result.points, want, 'merged');
  // MMR over them is refused plainly.
  const mmr = await http(url, 'POST', '/collections/c/points/query', { ...body, query: { nearest: q, mmr: { diversity: 0.5 } } });
  assert.equal(mmr.status, 400, mmr.text);
  assert.match(mmr.body.status.error, /query\.mmr: MMR re-ranks at most 1024 prefetched candidates/);
});
