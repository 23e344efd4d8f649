/**
 * Walks over a collection's points that match a filter, in slices (core/time-slices.ts): every
 * slice the walk gives the event loop a turn, so counting, scrolling, inspecting or selecting a
 * million points never holds other requests for longer than one slice. The caller keeps writes
 * out for the whole walk (the read gate, or the write queue for a write's own selection), so the
 * walk sees one state.
 *
 * The payload indexes name the candidates when they can (as a search's planner uses them); every
 * candidate is checked, unless they are exactly the matches. Without a filter, every live slot is
 * visited.
 */
import type { PointId } from '../core/point-id.js';
import { TimeSlices } from '../core/time-slices.js';
import { compileFilter } from '../payload/filter-compile.js';
import { estimateFilter } from '../payload/filter-estimate.js';
import { bindFilter } from './filter-bind.js';
import { type Filter, isEmptyFilter } from '../payload/filter-types.js';
import { collectMatches } from './collection-search.js';
import type { SegmentReader } from '../segment/segment.js';

/** Calls `visit` with each live slot matching `filter` (every live slot without one). */
export async function scanMatches(segment: SegmentReader, filter: Filter | undefined, visit: (slot: number) => void): Promise<void> {
  const table = segment.table;
  const slices = new TimeSlices();
  const slotCount = table.slotCount;
  if (filter === undefined || isEmptyFilter(filter)) {
    for (let slot = 0; slot < slotCount; slot++) {
      if (slices.due(slot)) await slices.pause();
      if (table.isLive(slot)) visit(slot);
    }
    return;
  }
  const bound = bindFilter(filter, segment);
  const estimated = estimateFilter(bound, segment.payloadIndex, table.liveCount, (id) => table.slotOf(id));
  const predicate = compileFilter(bound, estimated.conditions);
  const candidates = estimated.candidates;
  if (candidates === undefined) {
    for (let slot = 0; slot < slotCount; slot++) {
      if (slices.due(slot)) await slices.pause();
      if (table.isLive(slot) && predicate(table.payloadOf(slot), table.idOf(slot))) visit(slot);
    }
    return;
  }
  // The candidates as distinct live slots, in one synchronous pass (index work, no payload checks).
  const slots = collectMatches(segment, candidates);
  for (let i = 0; i < slots.length; i++) {
    if (slices.due(i)) await slices.pause();
    const slot = slots[i] as number;
    if (candidates.exact === true || predicate(table.payloadOf(slot), table.idOf(slot))) visit(slot);
  }
}

/** The ids of the live points matching the filter (all of them for an empty one). */
export async function matchingIds(segment: SegmentReader, filter: Filter): Promise<PointId[]> {
  const ids: PointId[] = [];
  await scanMatches(segment, filter, (slot) => ids.push(segment.table.idOf(slot)));
  return ids;
}
