/**
 * Walks over a collection's points that match a filter, in slices: every SCAN_SLICE_MS the walk
 * gives the event loop a turn, so counting, scrolling or inspecting a million points never holds
 * other requests for longer than one slice. The caller holds the segment's read gate for the whole
 * walk (Collection.scanMatches), so no write is applied in between: the walk sees one state.
 *
 * The payload indexes name the candidates when they can (as a search's planner uses them); every
 * candidate is checked. Without a filter, every live slot is visited.
 */
import { compileFilter } from '../payload/filter-compile.js';
import { estimateFilter } from '../payload/filter-estimate.js';
import { type Filter, isEmptyFilter } from '../payload/filter-types.js';
import { collectMatches } from './collection-search.js';
import type { SegmentReader } from './segment.js';

/** How long one slice of a walk may hold the event loop. */
export const SCAN_SLICE_MS = 8;
/** Slots between two looks at the clock. */
const CHECK_EVERY = 256;

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Calls `visit` with each live slot matching `filter` (every live slot without one), in slot order. */
export async function scanMatches(segment: SegmentReader, filter: Filter | undefined, visit: (slot: number) => void): Promise<void> {
  const table = segment.table;
  let sliceStart = performance.now();
  const maybeYield = async (): Promise<void> => {
    if (performance.now() - sliceStart < SCAN_SLICE_MS) return;
    await turn();
    sliceStart = performance.now();
  };
  if (filter === undefined || isEmptyFilter(filter)) {
    for (let slot = 0; slot < table.slotCount; slot++) {
      if (table.isLive(slot)) visit(slot);
      if (slot % CHECK_EVERY === CHECK_EVERY - 1) await maybeYield();
    }
    return;
  }
  const estimated = estimateFilter(filter, segment.payloadIndex, table.liveCount, (id) => table.slotOf(id));
  const predicate = compileFilter(filter, estimated.conditions);
  const accept = (slot: number): boolean => table.isLive(slot) && predicate(table.payloadOf(slot), table.idOf(slot));
  if (estimated.candidates !== undefined) {
    // The indexes' candidates as distinct slots (cheap: index work, no payload checks); checked below.
    const slots = collectMatches(segment, estimated.candidates);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as number;
      if (accept(slot)) visit(slot);
      if (i % CHECK_EVERY === CHECK_EVERY - 1) await maybeYield();
    }
    return;
  }
  for (let slot = 0; slot < table.slotCount; slot++) {
    if (accept(slot)) visit(slot);
    if (slot % CHECK_EVERY === CHECK_EVERY - 1) await maybeYield();
  }
}
