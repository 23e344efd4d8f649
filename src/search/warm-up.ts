/**
 * Warm-up after load: a short burst of searches for a collection's own stored vectors, run at the
 * end of its load, so that the first user queries after a start do not pay for cold code.
 *
 * Measured before this existed (bench/results/HISTORY.md, "Issue 10: serving over HTTP"): after a
 * restart the first searches cost several times the steady state, because V8 had not yet
 * optimised the search path (graph walk, query preparation, hit shaping); a few hundred searches
 * are enough for it to tier up.
 *
 * Decisions (docs/architecture.md, "The serving path"):
 * - Synchronous, inside the load: the service listens only once every collection is loaded, so
 *   the burst delays readiness by at most `maxMs` per collection, and no user query ever waits
 *   behind it or runs cold. A background burst would not delay readiness, but the first queries
 *   would then queue behind its slices or run before it finished: the very queries it is for.
 * - Bounded: at most `maxSearches` searches and `maxMs` of wall time, whichever comes first.
 * - Skipped below `minPoints` live points: a small collection is answered in microseconds
 *   anyway, and tests open many of them.
 * - Read only: the same `searchSegment` a user search runs on this thread, with the collection's
 *   default limit, on stored vectors spread over the slots; nothing is written or counted.
 * - At the default ef (`UNCALIBRATED`): a stored calibration is adopted on the collection's first
 *   use, after its load.
 */
import { runSteps, type Steps } from '../core/steps.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import { searchSegment } from './collection-search.js';
import type { PointTableReader } from '../segment/point-table.js';
import { UNCALIBRATED } from './search-ef.js';
import type { SegmentReader } from '../segment/segment.js';
import { vectorArray } from '../core/vector-math.js';

export interface WarmUpLimits {
  /** Below this many live points there is no warm-up. */
  readonly minPoints: number;
  readonly maxSearches: number;
  /** Wall-time budget in milliseconds; the search running when it ends finishes. */
  readonly maxMs: number;
}

export const WARM_UP_LIMITS: WarmUpLimits = { minPoints: 1000, maxSearches: 300, maxMs: 250 };

export interface WarmUpReport {
  readonly searches: number;
  readonly ms: number;
}

/** Runs the burst; returns what it did (0 searches when the collection is too small). */
export function warmUp(segment: SegmentReader, config: CollectionConfig, limits: WarmUpLimits = WARM_UP_LIMITS): WarmUpReport {
  return runSteps(warmUpSteps(segment, config, limits));
}

/** The burst as steps (core/steps.ts), one search each: a service loading in slices answers requests between them. */
export function* warmUpSteps(segment: SegmentReader, config: CollectionConfig, limits: WarmUpLimits = WARM_UP_LIMITS): Steps<WarmUpReport> {
  const table = segment.table;
  if (table.liveCount < limits.minPoints || limits.maxSearches < 1) return { searches: 0, ms: 0 };
  // The budget counts the burst's own time, not the turns of the event loop between its steps.
  let ms = 0;
  let searches = 0;
  for (const slot of spreadLiveSlots(table, limits.maxSearches)) {
    if (ms >= limits.maxMs) break;
    const started = performance.now();
    searchSegment(segment, config, UNCALIBRATED, { vector: vectorArray(segment.readVector(slot)), limit: config.parameters.k });
    ms += performance.now() - started;
    searches++;
    yield;
  }
  return { searches, ms };
}

/**
 * Up to `count` live slots spread evenly over the table, so that a burst of searches from their
 * vectors touches the whole graph, not one corner of it (also the search threads' warm-up).
 */
export function* spreadLiveSlots(table: PointTableReader, count: number): Generator<number> {
  const slots = table.slotCount;
  for (let i = 0; i < count && slots > 0; i++) {
    let slot = Math.floor(((i + 0.5) * slots) / count);
    for (let tries = 0; !table.isLive(slot) && tries < 64; tries++) slot = (slot + 1) % slots;
    if (table.isLive(slot)) yield slot;
  }
}
