import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PointTable } from '../../../src/segment/point-table.js';
import { ProjectionKeys, SharedPayloadReader } from '../../../src/payload/shared-payloads.js';

/** The shared payload records follow the table: filled in slices, then kept in step by every change. */

const read = (table: PointTable, slot: number): unknown => {
  const arrays = table.sharedPayloads;
  assert.ok(arrays !== undefined, 'payloads not shared');
  const reader = new SharedPayloadReader(arrays);
  return reader.has(slot) ? { id: reader.idOf(slot), ...reader.project(slot, new ProjectionKeys(['n'])) } : undefined;
};

test('payloads are shared in slices, and changes during and after the copy are kept in step', () => {
  const table = new PointTable();
  table.reserve(10);
  for (let i = 0; i < 6; i++) table.upsert(`p${i}`, 1n, { n: i });
  assert.equal(table.sharePayloads(2), 'more');
  assert.equal(table.sharedPayloads, undefined, 'shared before the copy ended');
  // During the copy: a change below the copy's progress, one above it, a delete of each.
  table.upsert('p0', 2n, { n: 100 });
  table.upsert('p5', 2n, { n: 500 });
  table.delete('p1', true);
  table.delete('p4', true);
  assert.equal(table.sharePayloads(100), 'done');
  assert.deepEqual(read(table, 0), { id: 'p0', n: 100 });
  assert.equal(read(table, 1), undefined);
  assert.deepEqual(read(table, 2), { id: 'p2', n: 2 });
  assert.equal(read(table, 4), undefined);
  assert.deepEqual(read(table, 5), { id: 'p5', n: 500 });
  // After it: new points (in freed slots too) and deletes.
  const slot = table.upsert('new', 3n, { n: 7 });
  assert.deepEqual(read(table, slot), { id: 'new', n: 7 });
  table.delete('p2', true);
  assert.equal(read(table, 2), undefined);
});

test('a copy that outgrows its limit is dropped, writes go on, and sharing stays off', () => {
  const limit = 1 << 16;
  const table = new PointTable(limit);
  table.reserve(400);
  const big = 'x'.repeat(100);
  for (let i = 0; i < 300; i++) table.upsert(`p${i}`, 1n, { n: i, big });
  assert.equal(table.sharePayloads(1000), 'done', 'the first 300 records fit in 64 KiB');
  // Larger payloads: the copy passes its limit on a write, which must still succeed.
  const bigger = 'y'.repeat(2000);
  for (let i = 0; i < 300; i++) table.upsert(`p${i}`, 2n, { n: i, big: bigger });
  assert.equal(table.sharedPayloads, undefined);
  assert.match(String(table.payloadSharingFailure?.message), /would pass 65536 bytes/);
  assert.equal(table.sharePayloads(1000), 'failed');
  assert.deepEqual(table.payloadOf(table.slotOf('p299') as number), { n: 299, big: bigger });
});
