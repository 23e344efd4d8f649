/**
 * Long loops on the service thread, cut into slices: the loop asks `due(i)` as it goes (cheap: it
 * reads the clock every CHECK_EVERY iterations) and, when the slice's time is up, awaits `pause()`,
 * a turn of the event loop in which requests, timers and I/O run. Work that takes less than one
 * slice never pauses, so small requests cost no extra turn.
 */

/** A slice's length: other work waits at most about this long for a sliced loop. */
export const SLICE_MS = 8;

/**
 * Iterations between two looks at the clock (a power of two; a look costs ~30 ns). Small, because
 * one iteration may cost milliseconds: a map growing rehashes its entries (core/sharded-map.ts).
 */
const CHECK_EVERY = 8;

export class TimeSlices {
  private until: number;

  constructor(private readonly sliceMs = SLICE_MS) {
    this.until = performance.now() + sliceMs;
  }

  /** Whether the loop at iteration `i` should pause (`await pause()`) before going on. */
  due(i: number): boolean {
    return (i & (CHECK_EVERY - 1)) === 0 && performance.now() >= this.until;
  }

  /** Yields one turn of the event loop, then starts a new slice. */
  async pause(): Promise<void> {
    await nextTurn();
    this.until = performance.now() + this.sliceMs;
  }
}

/** Resolves in a later turn of the event loop, after pending I/O callbacks. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** `items.map(map)` in slices: for conversions of request arrays as long as the body limit allows. */
export async function mapInSlices<T, U>(items: readonly T[], map: (item: T, i: number) => U): Promise<U[]> {
  const slices = new TimeSlices();
  const out: U[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    if (slices.due(i)) await slices.pause();
    out[i] = map(items[i] as T, i);
  }
  return out;
}
