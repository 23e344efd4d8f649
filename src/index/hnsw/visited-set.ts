/**
 * Which slots a graph search has visited, reset in O(1) by bumping a generation counter
 * (hnswlib's VisitedList, Qdrant's visited_pool): a slot is visited when its mark equals the
 * current generation.
 */
export class VisitedSet {
  private marks = new Uint16Array(0);
  private generation = 1;

  /** Starts a new search over slots `[0, slots)`. */
  reset(slots: number): void {
    if (slots > this.marks.length) {
      this.marks = new Uint16Array(Math.max(slots, Math.ceil(this.marks.length * 1.5)));
      this.generation = 1;
      return;
    }
    this.generation++;
    if (this.generation === 0xffff) {
      this.marks.fill(0);
      this.generation = 1;
    }
  }

  /** Marks the slot; returns whether it was already visited. */
  visit(slot: number): boolean {
    if (this.marks[slot] === this.generation) return true;
    this.marks[slot] = this.generation;
    return false;
  }

  has(slot: number): boolean {
    return this.marks[slot] === this.generation;
  }
}
