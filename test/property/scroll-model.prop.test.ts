/**
 * Model-based test of scroll: seeded random upserts (new ids, re-upserts with the same or a new
 * vector, payload changes), deletes by id and by filter, and restarts run on kith (the embedded
 * API, a real database file) and on a plain Map; after every step, random pages (random filters,
 * cursors, limits and offsets) must equal the model's ids sorted in scroll order, and the id order
 * must agree with the point table (checkIntegrity). Ids: integers (as numbers and as text), UUIDs
 * in every spelling, control characters, long Unicode, number lookalikes; the pool is large enough
 * that the order's blocks split and merge.
 *
 * One scroll also runs across the steps, a page per step: it must never repeat an id, go back, or
 * miss an id that existed (and matched its filter) from its first page to its last.
 *
 * Seeds 0–3 (Flat and HNSW, with and without a search thread) and one random seed, in the test
 * names; KITH_SEED=n replays one seed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/lib.js';
import type { JsonObject } from '../helpers/filter-reference.js';
import { refFilter } from '../helpers/filter-reference.js';
import { drawFilter, drawPayload, idPool, type PoolId, type RawId } from '../helpers/nasty-data.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { referenceOrder } from '../helpers/scroll-order.js';

const STEPS = 40;
const POOL = 2400;
const MAX_BATCH = 500;
const NAME = 'scroll';

interface ModelPoint {
  readonly vector: number[];
  readonly payload: JsonObject;
}

/** A scroll in progress across steps. */
interface OpenScroll {
  readonly filter: JsonObject | undefined;
  readonly limit: number;
  cursor: string | undefined;
  readonly seen: string[];
  /** Ids present and matching at every step since the scroll began. */
  stable: Set<string>;
}

const kinds = new Set(['numeric', 'plain', 'control', 'long-unicode', 'lookalike', 'uuid'] as const);

/** What a run exercised, so that one that did nothing shows it. */
interface Exercised {
  maxPoints: number;
  restarts: number;
  pagesWithNext: number;
  scrollsEnded: number;
}

async function runSeed(seed: number, dbPath: string): Promise<Exercised> {
  const exercised: Exercised = { maxPoints: 0, restarts: 0, pagesWithNext: 0, scrollsEnded: 0 };
  const rng = new SeededRng(seed);
  const hnsw = seed % 2 === 1;
  const threads = (seed >> 1) % 2;
  const at = (step: number, what: string): string => `seed ${seed} (${hnsw ? 'hnsw' : 'flat'}, threads ${threads}) step ${step}: ${what}`;
  const pool: PoolId[] = idPool(rng, POOL, kinds);
  const model = new Map<string, ModelPoint>();
  let db = Database.open(dbPath, { threads });
  await db.createCollection({ name: NAME, vector_size: 2, distance: 'Euclid', hnsw, parameters: { m: 4, ef_construction: 8 } });
  const matching = (filter: JsonObject | undefined): string[] =>
    [...model.entries()]
      .filter(([id, p]) => filter === undefined || refFilter(filter, p.payload, id))
      .map(([id]) => id)
      .sort(referenceOrder);
  const drawPageFilter = (): JsonObject | undefined => (rng.next() < 0.4 ? undefined : drawFilter(rng, new Set()));
  const newScroll = (): OpenScroll => {
    const filter = drawPageFilter();
    return { filter, limit: 1 + rng.int(200), cursor: undefined, seen: [], stable: new Set(matching(filter)) };
  };
  let open = newScroll();
  try {
    for (let step = 0; step < STEPS; step++) {
      const c = db.collection(NAME);
      const r = rng.next();
      if (r < 0.55) {
        const size = 1 + rng.int(rng.next() < 0.4 ? MAX_BATCH : 20);
        const batch = new Map<string, { id: RawId; vector: number[]; payload: JsonObject }>();
        for (let i = 0; i < size; i++) {
          const p = rng.pick(pool);
          const old = model.get(p.key);
          // A re-upsert keeps its vector (a payload change only) half the time.
          const vector = old !== undefined && rng.next() < 0.5 ? old.vector : [rng.int(50), rng.int(50)];
          batch.set(p.key, { id: rng.pick(p.raws), vector, payload: drawPayload(rng, new Set()) });
        }
        await c.upsert([...batch.values()]);
        for (const [key, p] of batch) model.set(key, { vector: p.vector, payload: p.payload });
      } else if (r < 0.77) {
        const ids = Array.from({ length: 1 + rng.int(rng.next() < 0.2 ? MAX_BATCH : 20) }, () => rng.pick(pool));
        const expected = new Set(ids.filter((p) => model.has(p.key)).map((p) => p.key)).size;
        const { deleted } = await c.deleteIds(ids.map((p) => rng.pick(p.raws)));
        assert.equal(deleted, expected, at(step, 'deleted count'));
        for (const p of ids) model.delete(p.key);
      } else if (r < 0.83) {
        const filter = drawFilter(rng, new Set());
        const gone = matching(filter);
        const { deleted } = await c.deleteByFilter(filter);
        assert.equal(deleted, gone.length, at(step, `deleted by ${JSON.stringify(filter)}`));
        for (const id of gone) model.delete(id);
      } else {
        await db.close();
        db = Database.open(dbPath, { threads });
        exercised.restarts++;
      }
      exercised.maxPoints = Math.max(exercised.maxPoints, model.size);
      const collection = db.collection(NAME);
      assert.deepEqual(collection.checkIntegrity(), [], at(step, 'integrity'));
      assert.equal(collection.pointsCount, model.size, at(step, 'points count'));

      // Random pages against the model.
      for (let page = 0; page < 4; page++) {
        const filter = drawPageFilter();
        const expected = matching(filter);
        const limit = 1 + rng.int(rng.next() < 0.2 ? 400 : 30);
        const offset = rng.next() < 0.2 ? rng.int(20) : 0;
        const cursorPoint = rng.next() < 0.7 ? rng.pick(pool) : undefined;
        const from = cursorPoint === undefined ? undefined : rng.pick(cursorPoint.raws);
        const after = cursorPoint === undefined ? expected : expected.filter((id) => referenceOrder(id, cursorPoint.key) >= 0);
        const got = await collection.scroll({ filter, from, limit, offset, with_payload: false });
        const what = `page ${JSON.stringify({ filter, from, limit, offset })}`;
        assert.deepEqual(
          got.points.map((p) => p.id),
          after.slice(offset, offset + limit),
          at(step, what),
        );
        assert.equal(got.next, after[offset + limit], at(step, `${what}: next`));
        if (got.next !== undefined) exercised.pagesWithNext++;
      }

      // The scroll across steps: the writes of this step came between its pages.
      const now = new Set(matching(open.filter));
      open.stable = new Set([...open.stable].filter((id) => now.has(id)));
      const page = await collection.scroll({ filter: open.filter, from: open.cursor, limit: open.limit, with_payload: false });
      const ids = page.points.map((p) => p.id);
      const last = open.seen.at(-1);
      for (const [i, id] of ids.entries()) {
        const before = i === 0 ? last : ids[i - 1];
        assert.ok(
          before === undefined || referenceOrder(before, id) < 0,
          at(step, `the open scroll gave ${JSON.stringify(id)} after ${JSON.stringify(before)}`),
        );
      }
      open.seen.push(...ids);
      open.cursor = page.next;
      if (page.next === undefined) {
        const seen = new Set(open.seen);
        const missed = [...open.stable].filter((id) => !seen.has(id));
        assert.deepEqual(missed, [], at(step, `the open scroll (${JSON.stringify(open.filter)}) missed points that existed throughout`));
        open = newScroll();
        exercised.scrollsEnded++;
      }
    }
  } finally {
    await db.close();
  }
  return exercised;
}

const fixed = process.env.KITH_SEED === undefined ? [0, 1, 2, 3, Math.floor(Math.random() * 2 ** 31)] : [Number(process.env.KITH_SEED)];
for (const seed of fixed) {
  test(`scroll model: seed ${seed}`, async (t) => {
    t.diagnostic(JSON.stringify(await runSeed(seed, tempDbPath(t))));
  });
}
