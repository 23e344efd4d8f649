/**
 * The snapshot container (src/segment/snapshot.ts) as stored bytes: encode → decode gives the
 * graph and every slot's (id, version) back exactly, including ids the point keys found tricky;
 * any flipped byte, cut or extension is refused with a reason instead of decoding to something else.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32 } from '../../../src/core/crc32.js';
import { decodeSnapshot, encodeSnapshot, type SlotEntry } from '../../../src/segment/snapshot.js';
import { testSeed, withSeed } from '../../helpers/data.js';
import { trickyIds } from './tricky-ids.js';

function bytesOf(parts: readonly Uint8Array[]): Buffer {
  return Buffer.concat(parts);
}

/** The same entry at every slot (a decoded list has holes where an expected one has undefined). */
function sameSlots(actual: ReadonlyArray<SlotEntry | undefined> | undefined, expected: ReadonlyArray<SlotEntry | undefined>, label: string): void {
  assert.equal(actual?.length, expected.length, label);
  for (const [slot, entry] of expected.entries()) assert.deepEqual(actual?.[slot], entry, `${label}, slot ${slot}`);
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

test("named vectors' graphs round-trip beside the main one, each with its own slots; flipped bytes in them are refused", () => {
  withSeed(testSeed(78), (rng) => {
    const ids = trickyIds();
    const named = new Map<string, { graph: Uint8Array; slots: Array<SlotEntry | undefined> }>();
    // Names of every length modulo 8 (the padding), one not ASCII, one graph empty.
    for (const [name, graphLength] of [
      ['e', 13],
      ['image', 0],
      ['ünï', 4096 + 5],
      ['12345678', 8],
    ] as const) {
      named.set(name, {
        graph: Uint8Array.from({ length: graphLength }, () => rng.int(256)),
        slots: slotsFor(
          ids.filter(() => rng.int(2) === 0),
          () => rng.int(4) === 0,
        ),
      });
    }
    const main = slotsFor(ids, (slot) => slot % 3 === 0);
    const toEncode = new Map(
      [...named].map(([name, part]) => [name, { graph: part.graph, slotCount: part.slots.length, entryAt: (slot: number) => part.slots[slot] }]),
    );
    const bytes = bytesOf(encodeSnapshot(new Uint8Array([1, 2, 3]), main.length, (slot) => main[slot], toEncode));
    const decoded = decodeSnapshot(bytes);
    assert.notEqual(typeof decoded, 'string', String(decoded));
    if (typeof decoded === 'string') return;
    assert.deepEqual([...decoded.graph], [1, 2, 3]);
    sameSlots(decoded.slots, main, 'main');
    assert.deepEqual([...decoded.named.keys()], [...named.keys()]);
    for (const [name, part] of named) {
      const got = decoded.named.get(name);
      assert.deepEqual(Buffer.from(got?.graph ?? []), Buffer.from(part.graph), name);
      sameSlots(got?.slots, part.slots, name);
    }
    for (let at = 0; at < bytes.length; at += 7) {
      const flipped = Buffer.from(bytes);
      flipped[at] = (flipped[at] as number) ^ 0x81;
      assert.equal(typeof decodeSnapshot(flipped), 'string', `flip at ${at}`);
    }
  });
});

test('a format 1 container (before named graphs: a 32-byte header, the slot section unpadded) still decodes, with no named graphs', () => {
  const ids = ['a', 'bb', 'ccc'];
  const slots = slotsFor(ids, (slot) => slot === 1);
  // Built by hand from the format 1 table (docs/storage.md before format 2).
  const graph = Buffer.from([7, 7, 7, 7, 7]);
  const idBytes = Buffer.from('accc');
  const slotSection = Buffer.alloc(8 + 12 * 3 + idBytes.length);
  slotSection.writeUInt32LE(3, 0);
  for (const [slot, entry] of slots.entries()) {
    if (entry !== undefined) slotSection.writeBigUInt64LE(entry.version, 8 + 8 * slot);
    slotSection.writeUInt32LE(entry === undefined ? 0xffffffff : Buffer.byteLength(entry.id), 8 + 24 + 4 * slot);
  }
  idBytes.copy(slotSection, 8 + 36);
  const header = Buffer.alloc(32);
  header.write('KITHSNP\0', 0, 'latin1');
  header.writeUInt32LE(1, 8);
  header.writeUInt32LE(1, 12);
  header.writeBigUInt64LE(BigInt(graph.length), 16);
  header.writeBigUInt64LE(BigInt(slotSection.length), 24);
  const body = Buffer.concat([header, graph, Buffer.alloc(3), slotSection]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(crc32(body), 0);
  const decoded = decodeSnapshot(Buffer.concat([body, crc]));
  assert.notEqual(typeof decoded, 'string', String(decoded));
  if (typeof decoded === 'string') return;
  assert.deepEqual([...decoded.graph], [...graph]);
  sameSlots(decoded.slots, slots, 'format 1');
  assert.equal(decoded.named.size, 0);
});
