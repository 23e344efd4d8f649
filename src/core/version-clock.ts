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
