/**
 * The `capacity` lowest ids offered, in id order (core/point-id.ts compareIds): a bounded max-heap,
 * so a scroll page over n matches costs O(n · log page) and no sort of every match.
 */
import { compareIds, type PointId } from '../core/point-id.js';

interface Entry {
  readonly id: PointId;
  readonly slot: number;
}

export class LowestIds {
  /** A max-heap by id: the highest kept id is at the top, the first to go. */
  private readonly heap: Entry[] = [];

  constructor(private readonly capacity: number) {}

  offer(id: PointId, slot: number): void {
    const heap = this.heap;
    if (heap.length < this.capacity) {
      heap.push({ id, slot });
      this.up(heap.length - 1);
      return;
    }
    if (this.capacity === 0 || compareIds(id, (heap[0] as Entry).id) >= 0) return;
    heap[0] = { id, slot };
    this.down(0);
  }

  /** The kept entries, lowest id first. */
  sorted(): Entry[] {
    return [...this.heap].sort((a, b) => compareIds(a.id, b.id));
  }

  private up(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compareIds((heap[i] as Entry).id, (heap[parent] as Entry).id) <= 0) return;
      [heap[i], heap[parent]] = [heap[parent] as Entry, heap[i] as Entry];
      i = parent;
    }
  }

  private down(i: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < heap.length && compareIds((heap[left] as Entry).id, (heap[largest] as Entry).id) > 0) largest = left;
      if (right < heap.length && compareIds((heap[right] as Entry).id, (heap[largest] as Entry).id) > 0) largest = right;
      if (largest === i) return;
      [heap[i], heap[largest]] = [heap[largest] as Entry, heap[i] as Entry];
      i = largest;
    }
  }
}
