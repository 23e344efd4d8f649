/**
 * Shard placement (src/cluster/shard-of.ts): pinned values (changing them would move every
 * stored point), the hash equal to FNV-1a over TextEncoder's bytes on any string, an even spread,
 * and the consistency resharding relies on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { jump, shardOf } from '../../../src/cluster/shard-of.js';
import { splitByShard } from '../../../src/cluster/shard-split.js';
import { testSeed } from '../../helpers/data.js';

const SEED = testSeed(0x5ba2d);

test('the shard of an id is pinned: these values never change', () => {
  const pinned: [string, number, number, number, number][] = [
    ['a', 0, 2, 5, 355],
    ['7', 0, 2, 4, 748],
    ['α', 0, 2, 5, 711],
    ['point-1', 0, 2, 3, 585],
    ['', 0, 0, 0, 260],
    ['550e8400-e29b-41d4-a716-446655440000', 0, 0, 0, 728],
  ];
  for (const [id, two, three, eight, thousand] of pinned) {
    assert.deepEqual([shardOf(id, 2), shardOf(id, 3), shardOf(id, 8), shardOf(id, 1000)], [two, three, eight, thousand], id);
    assert.equal(shardOf(id, 1), 0);
  }
  assert.throws(() => shardOf('a', 0), RangeError);
});

/** The reference: FNV-1a over TextEncoder's bytes (the jump is pinned by the test above). */
function referenceShard(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(id)) hash = Math.imul(hash ^ byte, 0x01000193);
  return jump(hash >>> 0, shards);
}

test(`hashes the UTF-8 bytes TextEncoder writes, lone surrogates included (seed ${SEED})`, () => {
  const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string());
  fc.assert(
    fc.property(text, fc.integer({ min: 1, max: 64 }), (id, shards) => shardOf(id, shards) === referenceShard(id, shards)),
    { seed: SEED, numRuns: 3000 },
  );
  assert.equal(shardOf('\ud800x', 8), referenceShard('\ud800x', 8));
});

test('spreads ids evenly, and a sixth shard takes a sixth of the ids, only from the others', () => {
  const counts = new Array<number>(8).fill(0);
  for (let i = 0; i < 80_000; i++) counts[shardOf(`id-${i}`, 8)] = (counts[shardOf(`id-${i}`, 8)] as number) + 1;
  for (const count of counts) assert.ok(Math.abs(count - 10_000) < 400, `uneven: ${counts.join(', ')}`);
  let moved = 0;
  for (let i = 0; i < 60_000; i++) {
    const before = shardOf(`id-${i}`, 5);
    const after = shardOf(`id-${i}`, 6);
    if (before !== after) {
      moved++;
      assert.equal(after, 5, `id-${i} moved from ${before} to ${after}, not to the new shard`);
    }
  }
  assert.ok(Math.abs(moved - 10_000) < 500, `${moved} of 60,000 ids moved to the sixth shard`);
});

test('a write splits into one part per shard it touches; a delete by filter goes to all', () => {
  const points = Array.from({ length: 50 }, (_, i) => ({ id: `p${i}`, vector: [i, 0] }));
  const parts = splitByShard({ op: 'upsert', points }, 4);
  const seen: string[] = [];
  for (const [shard, part] of parts) {
    assert.equal(part.op, 'upsert');
    if (part.op !== 'upsert') continue;
    for (const p of part.points) {
      assert.equal(shardOf(p.id, 4), shard);
      seen.push(p.id);
    }
  }
  assert.deepEqual(seen.sort(), points.map((p) => p.id).sort());
  assert.equal(parts.size, 4);
  const deletes = splitByShard({ op: 'delete_ids', ids: ['p1', 'p2'] }, 4);
  assert.deepEqual([...deletes.values()].flatMap((d) => (d.op === 'delete_ids' ? d.ids : [])).sort(), ['p1', 'p2']);
  const filter = { must: [{ key: 'g', match: { value: 1 } }] };
  assert.deepEqual([...splitByShard({ op: 'delete_filter', filter }, 3).keys()], [0, 1, 2]);
});
