/**
 * Score formulas on the Qdrant port (`{formula, defaults}` over prefetches): Qdrant's own cases
 * (tests/openapi/test_query_formula.py: a weighted sum of the score and a payload number, a
 * sigmoid of it, a threshold on the formula's score), every operator against the same formula
 * computed here from the prefetch's scores and the payloads, and the refusals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QDRANT_BASIC_VECTORS } from '../helpers/qdrant-basic.js';
import { http, startQdrant } from './qdrant-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
type Body = any;

const PRICES: readonly (number | number[] | null)[] = [1.5, 0.25, [3], null, -2, 10, 0, 0.75];

test("Qdrant's formula cases, every operator against the same formula computed here, and the refusals", async (t) => {
  const { url } = await startQdrant(t);
  const call = async (method: string, path: string, body?: Body, status = 200): Promise<Body> => {
    const r = await http(url, method, path, body);
    assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`);
    return r.body;
  };
  await call('PUT', '/collections/f', { vectors: { size: 4, distance: 'Dot' } });
  await call('PUT', '/collections/f/points', {
    points: QDRANT_BASIC_VECTORS.map((vector, i) => ({
      id: i + 1,
      vector,
      payload: {
        ...(PRICES[i] === null ? {} : { price: PRICES[i] }),
        city: i % 2 === 0 ? 'Berlin' : 'Paris',
        at: { lat: 52.5 + i / 10, lon: 13.4 },
        when: `2024-01-0${1 + (i % 9)}T00:00:00Z`,
      },
    })),
  });
  const original = (await call('POST', '/collections/f/points/query', { query: 8 })).result.points as Body[];
  const scoreOf = new Map(original.map((p) => [p.id, p.score]));
  const priceOf = (id: number): number => {
    const raw = PRICES[id - 1];
    return raw === null || raw === undefined ? 0 : Array.isArray(raw) ? (raw[0] as number) : raw;
  };
  const haversine = (lat1: number, lon1: number, lat2: number, lon2: number): number => {
    const r = 6371008.8;
    const rad = Math.PI / 180;
    const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
    return 2 * r * Math.asin(Math.sqrt(a));
  };
  const cases: Array<[string, Body, (score: number, price: number, id: number) => number]> = [
    ['weighted sum', { sum: [{ mult: ['$score', 0.4] }, { mult: ['price', 0.6] }] }, (s, p) => 0.4 * s + 0.6 * p],
    ['sigmoid of the price', { sum: ['$score', { div: { left: 'price', right: { sum: [1.0, { abs: 'price' }] } } }] }, (s, p) => s + p / (1 + Math.abs(p))],
    ['condition', { sum: ['$score', { mult: [2, { key: 'city', match: { value: 'Berlin' } }] }] }, (s, _p, id) => s + (id % 2 === 1 ? 2 : 0)],
    ['neg, pow, sqrt', { sum: [{ neg: '$score' }, { pow: { base: { sqrt: { abs: 'price' } }, exponent: 2 } }] }, (s, p) => -s + Math.abs(p)],
    [
      'exp, ln, log10',
      { sum: [{ exp: '$score' }, { ln: { sum: [2, { abs: 'price' }] } }, { log10: 10 }] },
      (s, p) => Math.exp(s) + Math.log(2 + Math.abs(p)) + 1,
    ],
    ['div by zero default', { div: { left: 1, right: 'price', by_zero_default: 7 } }, (_s, p) => (p === 0 ? 7 : 1 / p)],
    ['exp decay', { exp_decay: { x: 'price', target: 1, scale: 2, midpoint: 0.25 } }, (_s, p) => Math.exp((Math.log(0.25) / 2) * Math.abs(p - 1))],
    ['gauss decay', { gauss_decay: { x: 'price', scale: 3 } }, (_s, p) => Math.exp((Math.log(0.5) / 9) * p * p)],
    ['linear decay', { lin_decay: { x: 'price', target: 2, scale: 4, midpoint: 0.2 } }, (_s, p) => Math.max(0, 1 - ((1 - 0.2) / 4) * Math.abs(p - 2))],
    ['geo distance', { geo_distance: { origin: { lat: 52.5, lon: 13.4 }, to: 'at' } }, (_s, _p, id) => haversine(52.5, 13.4, 52.5 + (id - 1) / 10, 13.4)],
    ['datetimes', { sum: [{ datetime_key: 'when' }, { neg: { datetime: '2024-01-01T00:00:00Z' } }] }, (_s, _p, id) => ((id - 1) % 9) * 86400],
  ];
  for (const [name, formula, expected] of cases) {
    const answer = await call('POST', '/collections/f/points/query', {
      prefetch: { query: 8 },
      query: { formula, defaults: { price: 0 } },
      with_payload: true,
    });
    const points = answer.result.points as Body[];
    assert.equal(points.length, original.length, `${name}: every candidate`);
    for (let i = 1; i < points.length; i++) assert.ok(points[i - 1].score >= points[i].score, `${name}: scores descend`);
    for (const p of points) {
      const want = expected(scoreOf.get(p.id), priceOf(p.id), p.id);
      assert.ok(Math.abs(p.score - want) <= 1e-4 * Math.max(1, Math.abs(want)), `${name}: point ${p.id} scored ${p.score}, expected ${want}`);
    }
  }

  // Qdrant's threshold case: the formula's score is what the threshold keeps.
  const threshold = await call('POST', '/collections/f/points/query', {
    prefetch: { limit: 8 },
    query: { formula: 'price', defaults: { price: 0 } },
    score_threshold: 0.5,
    limit: 10,
  });
  assert.deepEqual(threshold.result.points.map((p: Body) => p.id).sort(), [1, 3, 6, 8]);

  for (const [body, status, pattern] of [
    [{ prefetch: { query: 8 }, query: { formula: 'price' } }, 400, /point "4": no value at `price` in its payload nor in the defaults/],
    [{ prefetch: { query: 8 }, query: { formula: { div: { left: 1, right: 'price' } }, defaults: { price: 0 } } }, 400, /1\/0 is not a finite number/],
    [{ query: { formula: 'price' } }, 400, /A formula re-scores the prefetches/],
    [{ prefetch: { query: 8 }, query: { formula: '$scores' } }, 400, /invalid reserved variable "\$scores"/],
    [{ prefetch: { query: 8 }, query: { formula: { exp_decay: { x: 'price', midpoint: 1 } } } }, 422, /midpoint must be in \(0, 1\)/],
    [{ prefetch: { query: 8 }, query: { formula: { sum: Array.from({ length: 1100 }, () => 1) } } }, 422, /at most 1024 expressions/],
  ] as const) {
    const r = await http(url, 'POST', '/collections/f/points/query', body);
    assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 200)}: ${r.text}`);
    assert.match(r.body.status.error, pattern);
  }
});
