/**
 * The per-query planner (src/index/planner.ts): which strategy answers a search, from the number
 * of points, the graph parameters, the filter's estimated matches and the candidates the payload
 * indexes name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Cardinality, choosePlan, exactThreshold, type PlanInput, type Strategy, WALK_SHARE } from '../../../src/index/planner.js';

const N = 100_000;
const M = 16;
const EF = 64;
/** sqrt(WALK_SHARE · 16 · 64 · 100000): ≈ 4525 at W = 0.2. */
const T = exactThreshold(N, M, EF);

const exactly = (count: number): Cardinality => ({ min: count, expected: count, max: count });

function plan(overrides: Partial<PlanInput>): Strategy {
  return choosePlan({ n: N, ef: EF, m: M, exact: false, matches: undefined, candidates: undefined, ...overrides });
}

test('the threshold is sqrt(W · m · ef · n) and grows with each of n, m and ef', () => {
  assert.ok(Math.abs(T - Math.sqrt(WALK_SHARE * M * EF * N)) < 1e-6 * T, `threshold ${T}`);
  assert.ok(T > 1000 && T < N / 2, 'between a handful and half the points');
  assert.ok(exactThreshold(4 * N, M, EF) > T);
  assert.ok(exactThreshold(N, 2 * M, EF) > T);
  assert.ok(exactThreshold(N, M, 4 * EF) > T);
  assert.ok(exactThreshold(N / 4, M, EF) < T);
  assert.ok(Math.abs(exactThreshold(4 * N, M, EF) - 2 * T) < 1e-6 * T, 'square-root growth');
  let previous = 0;
  for (const n of [1, 10, 1000, 1e5, 1e7]) {
    const t = exactThreshold(n, M, EF);
    assert.ok(t > previous, `monotone in n at ${n}`);
    previous = t;
  }
});

test('unfiltered: graph with a graph, flat-scan without one or with params.exact', () => {
  assert.equal(plan({}), 'graph');
  assert.equal(plan({ m: undefined }), 'flat-scan');
  assert.equal(plan({ exact: true }), 'flat-scan');
  assert.equal(plan({ m: undefined, exact: true }), 'flat-scan');
  assert.equal(plan({ n: 1 }), 'graph');
});

test('few candidates: candidates-exact', () => {
  assert.equal(plan({ matches: exactly(50), candidates: 50 }), 'candidates-exact');
  assert.equal(plan({ matches: { min: 0, expected: 20, max: 40 }, candidates: 40 }), 'candidates-exact');
  assert.equal(plan({ matches: exactly(Math.floor(T)), candidates: Math.floor(T) }), 'candidates-exact', 'at the threshold');
  // Few candidates decide even when the estimate itself is wide (candidates bound the matches).
  assert.equal(plan({ matches: { min: 0, expected: N / 4, max: N / 2 }, candidates: 500 }), 'candidates-exact');
  assert.equal(plan({ matches: { min: 0, expected: 0, max: 0 }, candidates: 0 }), 'candidates-exact', 'nothing matches');
});

test('few matches without a small candidate set: an exact strategy, never the graph', () => {
  // No candidates (an unindexed condition), but at most a few points can match: scan them all.
  assert.equal(plan({ matches: { min: 0, expected: 10, max: 100 } }), 'flat-scan');
  // Candidates under half the points: score just those.
  assert.equal(plan({ matches: { min: 0, expected: 100, max: T / 2 }, candidates: N / 4 }), 'candidates-exact');
  assert.equal(plan({ matches: { min: 0, expected: 100, max: T / 2 }, candidates: N }), 'flat-scan');
});

test('huge matches: graph-filtered', () => {
  assert.equal(plan({ matches: exactly(N / 2), candidates: N / 2 }), 'graph-filtered');
  assert.equal(plan({ matches: exactly(0.9 * N) }), 'graph-filtered');
  assert.equal(plan({ matches: { min: 2 * T, expected: N / 2, max: N } }), 'graph-filtered');
  assert.equal(plan({ matches: exactly(N) }), 'graph-filtered');
});

test('an estimate straddling the threshold asks for a sample', () => {
  assert.equal(plan({ matches: { min: 0, expected: N / 2, max: N } }), 'sample');
  assert.equal(plan({ matches: { min: T / 2, expected: T, max: 2 * T } }), 'sample');
  assert.equal(plan({ matches: { min: 0, expected: 10, max: N }, candidates: N }), 'sample');
  assert.equal(plan({ matches: { min: 0, expected: N / 2, max: N }, candidates: 2 * T }), 'sample');
});

test('once sampled, the planner decides: exact below the threshold, graph-filtered above', () => {
  const straddling = { min: 0, expected: 0, max: N };
  for (const expected of [0, 1, T / 2, T, T * 1.01, N / 3, N]) {
    const chosen = plan({ matches: { ...straddling, expected }, sampled: true });
    assert.notEqual(chosen, 'sample', `sampled ${expected}`);
    assert.equal(chosen, expected <= T ? 'flat-scan' : 'graph-filtered', `sampled ${expected}`);
    const withCandidates = plan({ matches: { ...straddling, expected }, candidates: N / 3, sampled: true });
    assert.equal(withCandidates, expected <= T ? 'candidates-exact' : 'graph-filtered', `sampled ${expected}, candidates ${N / 3}`);
  }
});

test('collections without a graph, and params.exact, never choose a graph strategy or sample', () => {
  const estimates: Cardinality[] = [
    exactly(0),
    exactly(10),
    exactly(N / 2),
    exactly(N),
    { min: 0, expected: N / 2, max: N },
    { min: T / 2, expected: T, max: 2 * T },
  ];
  for (const matches of estimates)
    for (const candidates of [undefined, 0, 10, N / 2 - 1, N / 2, N])
      for (const sampled of [false, true])
        for (const graphless of [{ m: undefined }, { exact: true }, { m: undefined, exact: true }]) {
          const chosen = plan({ matches, candidates, sampled, ...graphless });
          const context = `${JSON.stringify({ matches, candidates, sampled, ...graphless })} → ${chosen}`;
          const small = candidates !== undefined && candidates < N / 2;
          assert.equal(chosen, small ? 'candidates-exact' : 'flat-scan', context);
        }
});

test('larger ef or m raise the bar for graph-filtered (more matches are scored exactly)', () => {
  const matches = exactly(Math.round(T * 1.5));
  assert.equal(plan({ matches }), 'graph-filtered');
  assert.equal(plan({ matches, ef: EF * 4 }), 'flat-scan');
  assert.equal(plan({ matches, m: M * 4 }), 'flat-scan');
  assert.equal(plan({ matches, candidates: matches.max, ef: EF * 4 }), 'candidates-exact');
  // A small collection: sqrt(W · m · ef · n) exceeds n (n < W · m · ef), so every filter is answered exactly.
  const small = Math.floor((WALK_SHARE * M * EF) / 2);
  assert.ok(exactThreshold(small, M, EF) > small);
  assert.equal(plan({ n: small, matches: exactly(small - 10), candidates: small - 10 }), 'candidates-exact');
  assert.equal(plan({ n: small, matches: exactly(small - 1) }), 'flat-scan');
});
