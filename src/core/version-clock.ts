/**
 * Point versions: wall-clock nanoseconds since the Unix epoch, as `bigint` (about 1.8e18, beyond
 * the 2^53 a JS number holds exactly). Each upsert batch of a collection gets one version that is
 * strictly greater than every earlier version of that collection, even if the clock stepped back.
 */

const wallAtStartNs = BigInt(Date.now()) * 1_000_000n;
const monotonicAtStartNs = process.hrtime.bigint();

/**
 * Nanoseconds since the epoch. `Date.now()` has only millisecond resolution, so the sub-millisecond
 * part comes from the monotonic clock measured since this process started.
 */
export function wallClockNs(): bigint {
  return wallAtStartNs + (process.hrtime.bigint() - monotonicAtStartNs);
}

/** The next version after `last`: the clock if it has moved past `last`, else `last + 1`. */
export function nextVersion(last: bigint): bigint {
  const now = wallClockNs();
  return now > last ? now : last + 1n;
}

/**
 * Where a collection's write path takes each batch's version from: the clock (`CLOCK_VERSIONS`)
 * by default; a replica applying an ordered log can hand out the log's positions instead, so that
 * every node stores the same version for the same write. `next` must return a version above `last`
 * and at most 2^64 − 1 (the point record holds a u64); the collection refuses anything else.
 */
export interface VersionSource {
  next(last: bigint): bigint;
}

/** The clock: `nextVersion`. */
export const CLOCK_VERSIONS: VersionSource = { next: nextVersion };

/** The largest version a point record can hold. */
export const MAX_VERSION = (1n << 64n) - 1n;
