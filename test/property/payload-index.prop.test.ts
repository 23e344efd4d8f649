/**
 * Model-based property: payload indexes stay in step with the points through random sequences of
 * upsert batches (ids from a small pool, so re-upserts happen, with the same vector and a changed
 * payload or with a new vector), deletes by id and deletes by random filter, and filtered searches
 * answer exactly what the reference evaluator (test/helpers/filter-reference.ts) says about a
 * plain Map model of id → payload.
 *
 * After every step, for several random filters:
 * - `params.exact` search (limit 10000: the payload-index candidates path when the indexes can
 *   name candidates) returns exactly the matching ids;
 * - the planner's own path (limit 10000 covers every point) returns them too; on HNSW, so does a
 *   forced filtered graph walk (`params.strategy`, both walk kinds) with limit = the match count;
 * - `explain.estimate` brackets the true count, and `explain.candidates` is at least that count;
 * - a twin collection created with `payload_index: false` gives the same answers.
 * Deletes report the count the model predicts.
 *
 * Two payload generators: the shared general one (arrays, nesting, odd keys) and a single-valued
 * one (every path holds one scalar), which keeps the indexes' exact fast paths in play.
 *
 * Replay a failure with KITH_SEED=<seed> (the seed is in the test name and in fast-check's report).
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import fc from 'fast-check';
import type { Collection } from '../../src/collection/collection.js';
import { Database } from '../../src/db/database.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import { type Filter, isEmptyFilter } from '../../src/payload/filter-types.js';
import { testSeed } from '../helpers/data.js';
import { filterArb, type JsonObject, payloadArb, refFilter, scalarPayloadArb, simpleFilterArb } from '../helpers/filter-reference.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const DIM = 4;
const FILTERS_PER_STEP = 3;

interface UpsertPoint {
  id: number;
  payload: JsonObject;
  /** Re-upsert with the stored vector (when the id exists): only the payload changes. */
  sameVector: boolean;
  vector: number[];
}

type Op = { kind: 'upsert'; points: UpsertPoint[] } | { kind: 'delete-ids'; ids: number[] } | { kind: 'delete-filter'; filter: JsonObject };

interface Step {
  op: Op;
  checks: Array<{ filter: JsonObject; query: number[] }>;
}

interface Variant {
  name: string;
  payload: fc.Arbitrary<JsonObject>;
  pool: number;
  maxBatch: number;
  steps: number;
  runs: number;
  /** Weights of upserts, deletes by id and deletes by filter. */
  weights: [number, number, number];
}

const VARIANTS: Variant[] = [
  { name: 'general payloads', payload: payloadArb, pool: 24, maxBatch: 12, steps: 24, runs: 40, weights: [6, 1, 1] },
  // Enough single-valued numbers (over 256 live) for the numeric indexes to merge into sorted runs.
  { name: 'single-valued payloads', payload: scalarPayloadArb, pool: 360, maxBatch: 120, steps: 30, runs: 12, weights: [12, 1, 1] },
];

const vectorArb = fc.array(fc.integer({ min: -3, max: 3 }), { minLength: DIM, maxLength: DIM });

/** The shared random filters, and simple ones (what the indexes answer) as often. */
const anyFilterArb = (depth: number): fc.Arbitrary<JsonObject> => fc.oneof(filterArb(depth), simpleFilterArb);

function stepArb(v: Variant): fc.Arbitrary<Step> {
  const id = fc.integer({ min: 0, max: v.pool - 1 });
  const point = fc.record({ id, payload: v.payload, sameVector: fc.boolean(), vector: vectorArb });
  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      arbitrary: fc.array(point, { minLength: 1, maxLength: v.maxBatch, size: 'max' }).map((points): Op => ({ kind: 'upsert', points })),
      weight: v.weights[0],
    },
    { arbitrary: fc.array(fc.integer({ min: 0, max: v.pool + 2 }), { maxLength: 6 }).map((ids): Op => ({ kind: 'delete-ids', ids })), weight: v.weights[1] },
    { arbitrary: anyFilterArb(1).map((filter): Op => ({ kind: 'delete-filter', filter })), weight: v.weights[2] },
  );
  const check = fc.record({ filter: anyFilterArb(2), query: vectorArb });
  return fc.record({ op, checks: fc.array(check, { minLength: FILTERS_PER_STEP, maxLength: FILTERS_PER_STEP }) });
}

const idOf = (i: number): string => `p${i}`;
const sortedIds = (points: ReadonlyArray<{ id: string }>): string[] => points.map((p) => p.id).sort();

class Model {
  readonly payloads = new Map<string, JsonObject>();
  readonly vectors = new Map<string, number[]>();
  matching(filter: JsonObject): string[] {
    return [...this.payloads]
      .filter(([, p]) => refFilter(filter, p))
      .map(([id]) => id)
      .sort();
  }
}

interface Counters {
  checks: number;
  reupserts: number;
  sameVector: number;
  deletedByFilter: number;
}

/** Applies one write to both collections and the model; the deleted counts must agree. */
async function apply(op: Op, model: Model, targets: readonly Collection[], counters: Counters, context: string): Promise<void> {
  if (op.kind === 'upsert') {
    const points = op.points.map((p) => {
      const id = idOf(p.id);
      const old = model.vectors.get(id);
      if (old !== undefined) counters.reupserts++;
      if (old !== undefined && p.sameVector) counters.sameVector++;
      const vector = old !== undefined && p.sameVector ? old : p.vector;
      model.payloads.set(id, p.payload);
      model.vectors.set(id, vector);
      return { id, vector, payload: p.payload };
    });
    for (const c of targets) await c.upsert(points);
    return;
  }
  const ids = op.kind === 'delete-ids' ? [...new Set(op.ids.map(idOf))].filter((id) => model.payloads.has(id)) : model.matching(op.filter);
  for (const c of targets) {
    const result: { deleted: number } =
      op.kind === 'delete-ids' ? await c.deleteIds(op.ids.map(idOf)) : await c.deleteByFilter(parseFilter(op.filter) as Filter);
    assert.equal(result.deleted, ids.length, `${context}: ${c.name} ${op.kind} ${JSON.stringify(op)} deleted ${result.deleted}, model ${ids.length}`);
  }
  if (op.kind === 'delete-filter') counters.deletedByFilter += ids.length;
  for (const id of ids) {
    model.payloads.delete(id);
    model.vectors.delete(id);
  }
}

/** Every way of asking one filter, against the model's answer. */
function checkFilter(c: Collection, hnsw: boolean, model: Model, json: JsonObject, query: number[], counters: Counters, context: string): void {
  const filter = parseFilter(json) as Filter;
  const expected = model.matching(json);
  const at = `${context}: ${c.name} filter ${JSON.stringify(json)}`;
  const base = { vector: query, filter, with_payload: false } as const;

  const exact = c.search({ ...base, limit: 10000, params: { exact: true } });
  assert.deepEqual(sortedIds(exact), expected, `${at}: params.exact ids`);

  const planned = c.searchExplained({ ...base, limit: 10000 });
  assert.deepEqual(sortedIds(planned.points), expected, `${at}: planner (${planned.explain.strategy}) ids`);
  const estimate = planned.explain.estimate;
  if (model.payloads.size === 0 || isEmptyFilter(filter)) {
    assert.equal(estimate, null, `${at}: no estimate without points or filter`);
  } else {
    assert.ok(estimate !== null, `${at}: an estimate`);
    const { min, expected: mid, max } = estimate;
    assert.ok(min <= expected.length && expected.length <= max, `${at}: estimate ${JSON.stringify(estimate)} does not bracket ${expected.length}`);
    assert.ok(min <= mid && mid <= max, `${at}: expected outside [min, max] in ${JSON.stringify(estimate)}`);
    const named = planned.explain.candidates;
    if (named !== null) assert.ok(named >= expected.length, `${at}: ${named} candidates < ${expected.length} matches`);
  }
  counters.checks += 3;

  if (hnsw && !isEmptyFilter(filter) && model.payloads.size > 0) {
    const walk = counters.checks % 2 === 0 ? 'two-hop' : 'plain';
    const walked = c.searchExplained({ ...base, limit: Math.max(1, expected.length), params: { strategy: 'graph-filtered', filter_walk: walk } });
    assert.deepEqual(sortedIds(walked.points), expected, `${at}: graph-filtered (${walk}, fallback ${walked.explain.fallback}) ids`);
    counters.checks++;
  }
}

async function runVariant(t: TestContext, variant: Variant, hnsw: boolean, seed: number): Promise<void> {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  const counters: Counters = { checks: 0, reupserts: 0, sameVector: 0, deletedByFilter: 0 };
  let run = 0;
  let largest = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb(variant), { minLength: 4, maxLength: variant.steps, size: 'max' }), async (steps) => {
      const name = `r${run++}`;
      const config = { vector_size: DIM, distance: 'euclid', hnsw } as const;
      await db.createCollection({ name, ...config });
      await db.createCollection({ name: `${name}-plain`, ...config, payload_index: false });
      const indexed = db.collection(name);
      const plain = db.collection(`${name}-plain`);
      const model = new Model();
      try {
        for (const [i, step] of steps.entries()) {
          const context = `run ${name} step ${i}`;
          await apply(step.op, model, [indexed, plain], counters, context);
          largest = Math.max(largest, model.payloads.size);
          assert.equal(indexed.pointsCount, model.payloads.size, `${context}: points`);
          assert.equal(plain.pointsCount, model.payloads.size, `${context}: points (no index)`);
          for (const { filter, query } of step.checks) {
            checkFilter(indexed, hnsw, model, filter, query, counters, context);
            checkFilter(plain, hnsw, model, filter, query, counters, context);
          }
        }
      } finally {
        await db.dropCollection(name);
        await db.dropCollection(`${name}-plain`);
      }
    }),
    { seed, numRuns: variant.runs, endOnFailure: true },
  );
  t.diagnostic(
    `${run} runs, ${counters.checks} checks; largest model ${largest}; re-upserts ${counters.reupserts} (same vector ${counters.sameVector}); deleted by filter ${counters.deletedByFilter}`,
  );
  assert.ok(counters.checks >= 1500 / 4, `only ${counters.checks} checks`);
  assert.ok(counters.sameVector > 20 && counters.reupserts - counters.sameVector > 20, 're-upserts with the same and with a new vector happened');
  assert.ok(counters.deletedByFilter > 0, 'deletes by filter removed points');
}

for (const [v, variant] of VARIANTS.entries()) {
  for (const hnsw of [false, true]) {
    const seed = testSeed(0x1d3a + 10 * v + (hnsw ? 1 : 0));
    test(`payload indexes agree with a model: ${variant.name}, ${hnsw ? 'HNSW' : 'Flat'} (seed ${seed})`, async (t) => {
      await runVariant(t, variant, hnsw, seed);
    });
  }
}

test('searches and deletes by filter agree with the model on cases the random runs found', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  const payloads: JsonObject[] = [{ n: 1, b: true }, { n: [1], b: [true] }, { n: 3 }, { c: [[{ a: 2 }]] }, { c: { a: 1 } }];
  const cases: JsonObject[] = [
    { must: [{ key: 'n', type: 'contains', match: { value: 1 } }] },
    { must: [{ key: 'b', type: 'contains', match: { value: true } }] },
    { must: [{ key: 'c.a', match: { value: 2 } }] },
  ];
  for (const hnsw of [false, true]) {
    for (const [i, json] of cases.entries()) {
      const name = `case-${hnsw}-${i}`;
      await db.createCollection({ name, vector_size: 2, distance: 'euclid', hnsw });
      const c = db.collection(name);
      await c.upsert(payloads.map((payload, id) => ({ id, vector: [id, 1], payload })));
      const expected = payloads
        .map((p, id) => [String(id), p] as const)
        .filter(([, p]) => refFilter(json, p))
        .map(([id]) => id);
      const at = `${hnsw ? 'HNSW' : 'Flat'} ${JSON.stringify(json)}`;
      assert.deepEqual(sortedIds(c.search({ vector: [0, 0], limit: 100, filter: parseFilter(json) })), expected, `${at}: search`);
      assert.deepEqual(await c.deleteByFilter(parseFilter(json) as Filter), { deleted: expected.length }, `${at}: delete by filter`);
      assert.equal(c.pointsCount, payloads.length - expected.length, `${at}: points left`);
    }
  }
});
