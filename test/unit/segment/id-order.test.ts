/**
 * The id order (src/segment/id-order.ts) against a sorted array, with blocks of eight so that
 * splits, merges and empty blocks come every few changes; and the scroll page's way through it
 * (src/search/scroll-page.ts): a page looks at about its own size, not at every point.
 * Seeded: the seed is in each test's name; KITH_SEED=n replays one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCollectionConfig } from '../../../src/segment/collection-config.js';
import { IdOrder } from '../../../src/segment/id-order.js';
import { pageSlots } from '../../../src/search/scroll-page.js';
import { Segment, type SegmentPoint } from '../../../src/segment/segment.js';
import { SeededRng } from '../../../src/core/rng.js';
import { parseFilter } from '../../../src/payload/filter-parse.js';
import { idKey } from '../../helpers/id-key.js';
import { controlId, longUnicodeId } from '../../helpers/nasty-data.js';
import { referenceOrder } from '../../helpers/scroll-order.js';

const SEED = process.env.KITH_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.KITH_SEED);

/** A pool of ids of every kind the order tells apart, and the strings that sit between them. */
function idPool(rng: SeededRng, size: number): string[] {
  const pool = new Set<string>(['0', '7', '10', '9', String(Number.MAX_SAFE_INTEGER), '9007199254740993', '07', '-1', '1e3', ' ', 'a', 'A', '\u0000']);
  while (pool.size < size) {
    const r = rng.next();
    if (r < 0.35) pool.add(String(rng.next() < 0.5 ? rng.int(2000) : rng.int(2 ** 31) * 4096 + rng.int(4096)));
    else if (r < 0.55) pool.add(idKey(Array.from({ length: 32 }, () => '0123456789abcdef'[rng.int(16)]).join('')));
    else if (r < 0.7) pool.add(controlId(rng, pool.size));
    else if (r < 0.75) pool.add(longUnicodeId(rng, pool.size));
    else pool.add(`p${rng.int(5000)}`);
  }
  return [...pool];
}

function walkAll(order: IdOrder, slotToId: Map<number, string>, from?: string): string[] {
  const out: string[] = [];
  const walk = order.walk(from);
  for (let slot = walk.next(); slot !== -1; slot = walk.next()) out.push(slotToId.get(slot) ?? `<slot ${slot}>`);
  return out;
}

test(`id order follows a sorted model through adds, removes and seeks (blocks of 8; seed ${SEED})`, () => {
  const rng = new SeededRng(SEED);
  const pool = idPool(rng, 400);
  const order = new IdOrder(8);
  const slotOf = new Map<string, number>();
  const idAt = new Map<number, string>();
  let nextSlot = 0;
  const table = {
    get liveCount() {
      return slotOf.size;
    },
    idOf: (slot: number) => idAt.get(slot),
    slotOf: (id: string) => slotOf.get(id),
  };
  for (let step = 0; step < 3000; step++) {
    // Runs of adds in pool order (sorted or reversed), as a load brings them, as well as random ones.
    const r = rng.next();
    const batch =
      r < 0.1
        ? [...pool].sort(referenceOrder).slice(rng.int(pool.length)).slice(0, 40)
        : r < 0.15
          ? [...pool].sort(referenceOrder).reverse().slice(0, 40)
          : [rng.pick(pool)];
    for (const id of batch) {
      if (slotOf.has(id) && rng.next() < 0.6) {
        const slot = slotOf.get(id) as number;
        assert.equal(order.remove(id), true, `seed ${SEED} step ${step}: remove ${JSON.stringify(id)}`);
        slotOf.delete(id);
        idAt.delete(slot);
      } else if (!slotOf.has(id)) {
        const slot = nextSlot++;
        order.add(id, slot);
        slotOf.set(id, slot);
        idAt.set(slot, id);
      }
    }
    if (rng.next() < 0.05) assert.equal(order.remove(`absent${step}`), false);
    const sorted = [...slotOf.keys()].sort(referenceOrder);
    assert.equal(order.size, sorted.length, `seed ${SEED} step ${step}: size`);
    if (step % 10 === 0) {
      assert.deepEqual(walkAll(order, idAt), sorted, `seed ${SEED} step ${step}: whole walk`);
      assert.deepEqual(order.problems(table), [], `seed ${SEED} step ${step}: problems`);
    }
    const from = rng.pick(pool);
    const expected = sorted.filter((id) => referenceOrder(id, from) >= 0).slice(0, 12);
    assert.deepEqual(walkAll(order, idAt, from).slice(0, 12), expected, `seed ${SEED} step ${step}: walk from ${JSON.stringify(from)}`);
  }
});

test('problems names an order that disagrees with its table', () => {
  const order = new IdOrder(4);
  const ids = ['3', '1', 'b', 'a'];
  for (const [slot, id] of ids.entries()) order.add(id, slot);
  const slotOf = new Map(ids.map((id, slot) => [id, slot]));
  assert.deepEqual(order.problems({ liveCount: 4, idOf: (slot) => ids[slot], slotOf: (id) => slotOf.get(id) }), []);
  // The table lost a point the order still holds.
  slotOf.delete('b');
  const problems = order.problems({ liveCount: 3, idOf: (slot) => (slot === 2 ? undefined : ids[slot]), slotOf: (id) => slotOf.get(id) });
  assert.ok(problems.some((p) => p.includes('4 ids')) && problems.some((p) => p.includes('slot 2')), problems.join('; '));
});

function segmentOf(n: number): Segment {
  const segment = new Segment(parseCollectionConfig({ name: 'scroll', vector_size: 2, distance: 'Euclid', hnsw: false, payload_index: true }));
  const points: SegmentPoint[] = [];
  for (let i = 0; i < n; i++) {
    // Every 1000th point is rare; ids are integers, shuffled against slot order.
    const id = String((i * 7919) % n);
    points.push({ id, version: 1n, payload: { rare: i % 1000 === 0, g: i % 2 }, vector: { encoding: 'f32', values: Float32Array.of(i, 1) } });
  }
  segment.reserveFor(points);
  segment.upsertMany(points);
  return segment;
}

test('a scroll page looks at about its own size, wherever its cursor is', async () => {
  const n = 20000;
  const segment = segmentOf(n);
  const table = segment.table;
  const page = await pageSlots(segment, { filter: undefined, from: '12345', skip: 0, take: 101 });
  assert.deepEqual(
    page.slots.map((slot) => table.idOf(slot)),
    Array.from({ length: 101 }, (_, i) => String(12345 + i)),
  );
  assert.equal(page.way, 'walk');
  assert.equal(page.looked, 101, 'an unfiltered page looks at its own points only');
  // Half the points match: the walk checks about twice the page.
  const half = await pageSlots(segment, { filter: parseFilter({ must: [{ key: 'g', match: { value: 1 } }] }), from: '100', skip: 10, take: 50 });
  assert.equal(half.slots.length, 50);
  assert.ok(half.looked < 4 * 60, `a page of half the points looked at ${half.looked}`);
  // One point in 1000 matches: the index's 20 candidates are fewer than a walk would check.
  const rare = await pageSlots(segment, { filter: parseFilter({ must: [{ key: 'rare', match: { value: true } }] }), from: undefined, skip: 0, take: 11 });
  assert.equal(rare.way, 'candidates');
  assert.ok(rare.looked <= 20, `looked at ${rare.looked}`);
  const rareIds = [...Array(n).keys()]
    .filter((i) => i % 1000 === 0)
    .map((i) => (i * 7919) % n)
    .sort((a, b) => a - b)
    .slice(0, 11)
    .map(String);
  assert.deepEqual(
    rare.slots.map((slot) => table.idOf(slot)),
    rareIds,
  );
});
