/**
 * One term's postings: (slot, weight) pairs kept sorted by slot in two growable typed arrays.
 *
 * Appending a slot above the last one (the usual insert: new slots grow) is O(1) amortised; any
 * other insert or a removal finds the slot by binary search and shifts the tail with copyWithin,
 * O(posting) at worst but a native memmove. Capacity doubles when full and halves when a quarter
 * is used, so memory stays within 4× the live postings (plus a small floor).
 *
 * `max` and `min` bound the weights: raised and lowered on insert, never tightened on removal,
 * so they stay valid bounds (possibly loose ones) for pruning.
 */
const MIN_CAPACITY = 4;

export class PostingList {
  slots: Int32Array;
  weights: Float32Array;
  length = 0;
  max = Number.NEGATIVE_INFINITY;
  min = Number.POSITIVE_INFINITY;

  constructor() {
    this.slots = new Int32Array(MIN_CAPACITY);
    this.weights = new Float32Array(MIN_CAPACITY);
  }

  /** Adds (slot, weight); the slot must not be in the list. */
  insert(slot: number, weight: number): void {
    if (this.length === this.slots.length) this.resize(this.length * 2);
    const n = this.length;
    if (weight > this.max) this.max = weight;
    if (weight < this.min) this.min = weight;
    if (n === 0 || (this.slots[n - 1] as number) < slot) {
      this.slots[n] = slot;
      this.weights[n] = weight;
      this.length = n + 1;
      return;
    }
    const at = this.find(slot);
    if (at < n && this.slots[at] === slot) throw new Error(`posting list: slot ${slot} is already present`);
    this.slots.copyWithin(at + 1, at, n);
    this.weights.copyWithin(at + 1, at, n);
    this.slots[at] = slot;
    this.weights[at] = weight;
    this.length = n + 1;
  }

  /** Whether the slot is in the list. */
  has(slot: number): boolean {
    const at = this.find(slot);
    return at < this.length && this.slots[at] === slot;
  }

  /** Removes the slot; returns false (and changes nothing) when it is not in the list. */
  remove(slot: number): boolean {
    const at = this.find(slot);
    const n = this.length;
    if (at >= n || this.slots[at] !== slot) return false;
    this.slots.copyWithin(at, at + 1, n);
    this.weights.copyWithin(at, at + 1, n);
    this.length = n - 1;
    if (this.slots.length > MIN_CAPACITY && this.length <= this.slots.length >> 2) {
      this.resize(Math.max(MIN_CAPACITY, this.slots.length >> 1));
    }
    return true;
  }

  /** Drops the spare capacity (keeps MIN_CAPACITY at least): for a list that is done growing. */
  trim(): void {
    const capacity = Math.max(MIN_CAPACITY, this.length);
    if (capacity < this.slots.length) this.resize(capacity);
  }

  /** Bytes held by the two arrays (capacity, not length). */
  get byteLength(): number {
    return this.slots.byteLength + this.weights.byteLength;
  }

  /** First position whose slot is ≥ `slot`. */
  private find(slot: number): number {
    const slots = this.slots;
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((slots[mid] as number) < slot) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private resize(capacity: number): void {
    const slots = new Int32Array(capacity);
    const weights = new Float32Array(capacity);
    slots.set(this.slots.subarray(0, this.length));
    weights.set(this.weights.subarray(0, this.length));
    this.slots = slots;
    this.weights = weights;
  }
}
