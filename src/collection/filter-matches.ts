/**
 * The points a write selects by filter (delete by filter, payload updates by filter), found in
 * slices: the check runs on every candidate, and without candidates on every point, which for a
 * large collection takes far longer than a slice. Runs inside the collection's write queue, so no
 * write changes the points between slices; searches may run between them and use the segment's
 * scratch marks, so the candidates are deduplicated with marks of its own.
 */
import type { PointId } from '../core/point-id.js';
import { TimeSlices } from '../core/time-slices.js';
import { compileFilter } from '../payload/filter-compile.js';
import { estimateFilter } from '../payload/filter-estimate.js';
import { type Filter, isEmptyFilter } from '../payload/filter-types.js';
import type { SegmentReader } from './segment.js';

/** The ids of the live points matching the filter (all of them for an empty one), in the order `Collection.matchingPoints` gives. */
export async function matchingIds(segment: SegmentReader, filter: Filter): Promise<PointId[]> {
  const table = segment.table;
  const slices = new TimeSlices();
  const ids: PointId[] = [];
  const slotCount = table.slotCount;
  if (isEmptyFilter(filter)) {
    for (let slot = 0; slot < slotCount; slot++) {
      if (slices.due(slot)) await slices.pause();
      if (table.isLive(slot)) ids.push(table.idOf(slot));
    }
    return ids;
  }
  // The payload indexes name the candidates when they can; every candidate is checked, unless they are exactly the matches.
  const estimated = estimateFilter(filter, segment.payloadIndex, table.liveCount, (id) => table.slotOf(id));
  const predicate = compileFilter(filter, estimated.conditions);
  const candidates = estimated.candidates;
  if (candidates === undefined) {
    for (let slot = 0; slot < slotCount; slot++) {
      if (slices.due(slot)) await slices.pause();
      if (table.isLive(slot) && predicate(table.payloadOf(slot), table.idOf(slot))) ids.push(table.idOf(slot));
    }
    return ids;
  }
  const slots: number[] = [];
  candidates.forEach((slot) => {
    slots.push(slot);
  });
  if (candidates.exact === true) {
    for (let i = 0; i < slots.length; i++) {
      if (slices.due(i)) await slices.pause();
      ids.push(table.idOf(slots[i] as number));
    }
    return ids;
  }
  const seen = new Uint8Array(slotCount);
  for (let i = 0; i < slots.length; i++) {
    if (slices.due(i)) await slices.pause();
    const slot = slots[i] as number;
    if (seen[slot] === 1) continue;
    seen[slot] = 1;
    if (table.isLive(slot) && predicate(table.payloadOf(slot), table.idOf(slot))) ids.push(table.idOf(slot));
  }
  return ids;
}
