/**
 * The slots of one scroll page: the matching points in id order (core/point-id.ts compareIds)
 * from a cursor id, in slices (core/time-slices.ts) so that no page holds the service thread for
 * longer than one. The caller keeps writes out for the whole page (the read gate).
 *
 * Two ways, picked by the filter's estimate (payload/filter-estimate.ts):
 * - walk: seek the cursor in the id order (id-order.ts) and go forward, checking the filter on
 *   each point until the page is full. About `wanted · n / matches` points checked: a page costs
 *   its own size without a filter, more the rarer the matches.
 * - candidates: when the payload indexes name fewer candidates than the walk would check, keep the
 *   lowest `wanted` candidate ids at or after the cursor (a bounded heap, lowest-ids.ts).
 */
import { compareIds, type PointId } from '../core/point-id.js';
import { TimeSlices } from '../core/time-slices.js';
import { compileFilter } from '../payload/filter-compile.js';
import { estimateFilter } from '../payload/filter-estimate.js';
import { bindFilter } from './filter-bind.js';
import { type Filter, isEmptyFilter } from '../payload/filter-types.js';
import { collectMatches } from './collection-search.js';
import { LowestIds } from './lowest-ids.js';
import type { SegmentReader } from '../segment/segment.js';

export interface PageQuery {
  readonly filter: Filter | undefined;
  /** The first id of the page (inclusive); from the first id without it. */
  readonly from: PointId | undefined;
  /** Matches passed over first. */
  readonly skip: number;
  /** Matches wanted after them (a page and the next page's first). */
  readonly take: number;
}

/** The page's slots in id order; which way they were found and how many points were looked at (for tests). */
export interface Page {
  readonly slots: number[];
  readonly way: 'walk' | 'candidates';
  readonly looked: number;
}

export async function pageSlots(segment: SegmentReader, query: PageQuery): Promise<Page> {
  const table = segment.table;
  const { from, skip, take } = query;
  const wanted = skip + take;
  if (query.filter === undefined || isEmptyFilter(query.filter)) return walk(segment, from, skip, take, () => true);
  const filter = bindFilter(query.filter, segment);
  const estimated = estimateFilter(filter, segment.payloadIndex, table.liveCount, (id) => table.slotOf(id));
  const predicate = compileFilter(filter, estimated.conditions);
  const accept = (slot: number): boolean => predicate(table.payloadOf(slot), table.idOf(slot));
  const candidates = estimated.candidates;
  if (candidates === undefined) return walk(segment, from, skip, take, accept);
  // Points the walk would check: the page over the share of points that match.
  const walked = (wanted * table.liveCount) / Math.max(1, estimated.estimate.expected);
  if (walked <= candidates.count) {
    const has = candidates.has;
    const exact = candidates.exact === true;
    const check = has === undefined ? accept : exact ? (slot: number) => has(slot) : (slot: number) => has(slot) && accept(slot);
    return walk(segment, from, skip, take, check);
  }
  // The candidates as distinct live slots, in one synchronous pass (index work, no payload checks).
  const slots = collectMatches(segment, candidates);
  const page = new LowestIds(wanted);
  const slices = new TimeSlices();
  for (let i = 0; i < slots.length; i++) {
    if (slices.due(i)) await slices.pause();
    const slot = slots[i] as number;
    const id = table.idOf(slot);
    if ((from === undefined || compareIds(id, from) >= 0) && (candidates.exact === true || accept(slot))) page.offer(id, slot);
  }
  return {
    slots: page
      .sorted()
      .slice(skip)
      .map((entry) => entry.slot),
    way: 'candidates',
    looked: slots.length,
  };
}

/** Walks the id order from `from`, passing over `skip` accepted points, and returns the next `take`. */
async function walk(segment: SegmentReader, from: PointId | undefined, skip: number, take: number, accept: (slot: number) => boolean): Promise<Page> {
  const out: number[] = [];
  const ids = segment.table.walkIds(from);
  const slices = new TimeSlices();
  let skipped = 0;
  let looked = 0;
  for (let slot = ids.next(); slot !== -1; slot = ids.next()) {
    if (slices.due(looked++)) await slices.pause();
    if (!accept(slot)) continue;
    if (skipped < skip) skipped++;
    else if (out.push(slot) === take) break;
  }
  return { slots: out, way: 'walk', looked };
}
