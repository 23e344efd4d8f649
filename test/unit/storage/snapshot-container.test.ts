/**
 * The snapshot container (src/segment/snapshot.ts) as stored bytes: encode → decode gives the
 * graph and every slot's (id, version) back exactly, including ids the point keys found tricky;
 * any flipped byte, cut or extension is refused with a reason instead of decoding to something else.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeSnapshot, encodeSnapshot, type SlotEntry } from '../../../src/segment/snapshot.js';
import { testSeed, withSeed } from '../../helpers/data.js';
import { trickyIds } from './tricky-ids.js';

function bytesOf(parts: readonly Uint8Array[]): Buffer {
  return Buffer.concat(parts);
}

function slotsFor(ids: readonly string[], holes: (slot: number) => boolean): Array<SlotEntry | undefined> {
  return ids.map((id, slot) => (holes(slot) ? undefined : { id, version: 1_790_000_000_000_000_000n + BigInt(slot) * 7919n }));
}

test('a container round-trips the graph and every slot exactly', () => {
  withSeed(testSeed(77), (rng) => {
    const ids = trickyIds();
    for (const graphLength of [0, 1, 7, 8, 9, 4096 + 3]) {
      const graph = Uint8Array.from({ length: graphLength }, () => rng.int(256));
      const slots = slotsFor(ids, (slot) => slot % 5 === 3);
      const bytes = bytesOf(encodeSnapshot(graph, slots.length, (slot) => slots[slot]));
      const decoded = decodeSnapshot(bytes);
      assert.notEqual(typeof decoded, 'string', String(decoded));
      if (typeof decoded === 'string') return;
      assert.deepEqual(Buffer.from(decoded.graph), Buffer.from(graph));
      assert.equal(decoded.slots.length, slots.length);
      for (const [slot, entry] of slots.entries()) assert.deepEqual(decoded.slots[slot], entry, `slot ${slot}`);
    }
  });
});

test('every single flipped byte, every cut and an extension are refused with a reason', () => {
  const ids = ['a', 'b\u0000c', 'é'.repeat(20)];
  const slots = slotsFor(ids, (slot) => slot === 1);
  const good = bytesOf(encodeSnapshot(new Uint8Array([9, 8, 7, 6, 5]), slots.length, (slot) => slots[slot]));
  assert.notEqual(typeof decodeSnapshot(good), 'string');
  for (let at = 0; at < good.length; at++) {
    const flipped = Buffer.from(good);
    flipped[at] = (flipped[at] as number) ^ 0x5a;
    assert.equal(typeof decodeSnapshot(flipped), 'string', `flip at ${at}`);
  }
  for (let length = 0; length < good.length; length++) {
    assert.equal(typeof decodeSnapshot(good.subarray(0, length)), 'string', `cut to ${length}`);
  }
  assert.equal(typeof decodeSnapshot(Buffer.concat([good, Buffer.from([0])])), 'string');
  assert.equal(decodeSnapshot(Buffer.from('not a snapshot at all, but long enough')), 'not a kith snapshot');
});

test('a container with no slots (an empty graph) round-trips', () => {
  const graph = new Uint8Array([1, 2, 3, 4, 5]);
  const parts = encodeSnapshot(graph, 0, () => undefined);
  const decoded = decodeSnapshot(Buffer.concat(parts));
  assert.notEqual(typeof decoded, 'string', String(decoded));
  if (typeof decoded === 'string') return;
  assert.deepEqual([...decoded.graph], [...graph]);
  assert.equal(decoded.slots.length, 0);
});
