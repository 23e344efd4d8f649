/**
 * (value, slot) pairs of one numeric payload field, for range and equality lookups.
 *
 * A sorted run (binary-searched) plus a small unsorted delta of recent additions, merged into the
 * run once it passes 4·sqrt(run): adds stay O(1) amortised (a merge copies the run, every
 * 4·sqrt(n) adds, so O(sqrt n)/4 per add), lookups O(log n + sqrt n + matches). The run is sorted
 * by value, then slot, so a removal finds its pair by binary search (a scan of the value's pairs
 * made deleting 200,000 points with a 10-valued field take tens of seconds); it marks the pair in
 * place (slot s becomes −s − 1) and the next merge purges it. Datetime fields use the same
 * structure keyed by epoch milliseconds.
 */

/** Merge when the delta holds more than this many pairs, or 4·sqrt(run), whichever is larger. */
const MIN_DELTA = 256;

export class NumberIndex {
  private values = new Float64Array(0);
  private slots = new Int32Array(0);
  private runLength = 0;
  private removedInRun = 0;
  private deltaValues: number[] = [];
  private deltaSlots: number[] = [];
  /** While loading in bulk, additions only accumulate; `endBulk` sorts them once. */
  private bulk = false;

  /** Pairs held, removed ones excluded. */
  get size(): number {
    return this.runLength - this.removedInRun + this.deltaValues.length;
  }

  add(value: number, slot: number): void {
    this.deltaValues.push(value);
    this.deltaSlots.push(slot);
    if (!this.bulk && this.deltaValues.length > Math.max(MIN_DELTA, 4 * Math.sqrt(this.runLength))) this.merge();
  }

  /**
   * Start-up adds every pair before the first lookup: merging as they come would cost O(n^1.5);
   * deferring to one sort at the end costs O(n log n).
   */
  beginBulk(): void {
    this.bulk = true;
  }

  endBulk(): void {
    this.bulk = false;
    if (this.deltaValues.length > 0) this.merge();
  }

  remove(value: number, slot: number): void {
    for (let i = this.deltaValues.length - 1; i >= 0; i--) {
      if (this.deltaSlots[i] === slot && this.deltaValues[i] === value) {
        const last = this.deltaValues.length - 1;
        this.deltaValues[i] = this.deltaValues[last] as number;
        this.deltaSlots[i] = this.deltaSlots[last] as number;
        this.deltaValues.pop();
        this.deltaSlots.pop();
        return;
      }
    }
    for (let i = this.pairLowerBound(value, slot); i < this.runLength && this.values[i] === value && held(this.slots[i] as number) === slot; i++) {
      if ((this.slots[i] as number) >= 0) {
        this.slots[i] = -slot - 1;
        this.removedInRun++;
        if (this.removedInRun > this.runLength >> 2) this.merge();
        return;
      }
    }
  }

  /** Removed pairs still held in the sorted run (until the next merge). */
  get removedHeld(): number {
    return this.removedInRun;
  }

  /**
   * Pairs with a value in the range, as an upper bound on the points that have one (a point with
   * several values in range counts several times, and up to `removedHeld` removed pairs may be
   * counted). `lo`/`hi` undefined: unbounded.
   */
  count(lo: number | undefined, loInclusive: boolean, hi: number | undefined, hiInclusive: boolean): number {
    const [from, to] = this.runRange(lo, loInclusive, hi, hiInclusive);
    let n = to - from;
    for (const value of this.deltaValues) if (inRange(value, lo, loInclusive, hi, hiInclusive)) n++;
    return Math.min(n, this.size);
  }

  /** Calls `visit` with the slot of every pair in the range (a slot may come more than once). */
  forEachIn(lo: number | undefined, loInclusive: boolean, hi: number | undefined, hiInclusive: boolean, visit: (slot: number) => void): void {
    const [from, to] = this.runRange(lo, loInclusive, hi, hiInclusive);
    const slots = this.slots;
    for (let i = from; i < to; i++) {
      const slot = slots[i] as number;
      if (slot >= 0) visit(slot);
    }
    for (let i = 0; i < this.deltaValues.length; i++) {
      if (inRange(this.deltaValues[i] as number, lo, loInclusive, hi, hiInclusive)) visit(this.deltaSlots[i] as number);
    }
  }

  /** Allocated bytes, for the memory bound. */
  get bytes(): number {
    return this.values.byteLength + this.slots.byteLength + this.deltaValues.length * 16;
  }

  private runRange(lo: number | undefined, loInclusive: boolean, hi: number | undefined, hiInclusive: boolean): [number, number] {
    const from = lo === undefined ? 0 : this.lowerBound(lo, loInclusive);
    const to = hi === undefined ? this.runLength : this.lowerBound(hi, !hiInclusive);
    return [from, Math.max(from, to)];
  }

  /** First index whose value is >= x (inclusive) or > x (exclusive). */
  private lowerBound(x: number, inclusive: boolean): number {
    let lo = 0;
    let hi = this.runLength;
    const values = this.values;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const v = values[mid] as number;
      if (inclusive ? v < x : v <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose (value, slot) is >= the given pair (removed pairs compare by the slot they held). */
  private pairLowerBound(value: number, slot: number): number {
    let lo = 0;
    let hi = this.runLength;
    const values = this.values;
    const slots = this.slots;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const v = values[mid] as number;
      if (v < value || (v === value && held(slots[mid] as number) < slot)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private merge(): void {
    const total = this.runLength - this.removedInRun + this.deltaValues.length;
    const order = new Int32Array(this.deltaValues.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    const dv = this.deltaValues;
    const ds = this.deltaSlots;
    order.sort((a, b) => (dv[a] as number) - (dv[b] as number) || (ds[a] as number) - (ds[b] as number));
    const values = new Float64Array(total);
    const slots = new Int32Array(values.length);
    let i = 0;
    let j = 0;
    let out = 0;
    while (i < this.runLength || j < order.length) {
      if (i < this.runLength && (this.slots[i] as number) < 0) {
        i++;
        continue;
      }
      const takeRun =
        j >= order.length ||
        (i < this.runLength &&
          comparePairs(this.values[i] as number, this.slots[i] as number, dv[order[j] as number] as number, ds[order[j] as number] as number) <= 0);
      if (takeRun) {
        values[out] = this.values[i] as number;
        slots[out++] = this.slots[i++] as number;
      } else {
        const k = order[j++] as number;
        values[out] = dv[k] as number;
        slots[out++] = ds[k] as number;
      }
    }
    this.values = values;
    this.slots = slots;
    this.runLength = out;
    this.removedInRun = 0;
    this.deltaValues = [];
    this.deltaSlots = [];
  }
}

/** The slot a run entry holds, or held before it was removed. */
function held(entry: number): number {
  return entry < 0 ? -entry - 1 : entry;
}

function comparePairs(valueA: number, slotA: number, valueB: number, slotB: number): number {
  return valueA < valueB ? -1 : valueA > valueB ? 1 : slotA - slotB;
}

function inRange(value: number, lo: number | undefined, loInclusive: boolean, hi: number | undefined, hiInclusive: boolean): boolean {
  if (lo !== undefined && (loInclusive ? value < lo : value <= lo)) return false;
  if (hi !== undefined && (hiInclusive ? value > hi : value >= hi)) return false;
  return true;
}
