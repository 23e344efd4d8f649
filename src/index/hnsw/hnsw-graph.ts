/**
 * The HNSW graph in typed arrays (hnswlib's layout): layer 0 is one `Int32Array` with a fixed
 * stride of `1 + maxM0` per slot (`[count, n1, n2, …]`); the few nodes above layer 0 (about 1/m of
 * them) keep their upper layers in one `Int32Array` each, stride `1 + maxM` per layer.
 *
 * Tombstones: a deleted node stays in the graph (its vector and links still guide searches) until
 * compaction scrubs every link to it; it is never returned.
 */

export interface LinkList {
  /** The array holding the list: `array[offset]` is the count, the neighbours follow. */
  readonly array: Int32Array;
  readonly offset: number;
}

export class HnswGraph {
  /** Links per node on layers ≥ 1. */
  readonly maxM: number;
  /** Links per node on layer 0. */
  readonly maxM0: number;
  levels = new Int8Array(0);
  links0 = new Int32Array(0);
  upper: Array<Int32Array | undefined> = [];
  deleted = new Uint8Array(0);
  entryPoint = -1;
  maxLevel = -1;
  /** Nodes in the graph, tombstones included. */
  nodeCount = 0;
  deletedCount = 0;

  constructor(readonly m: number) {
    this.maxM = m;
    this.maxM0 = 2 * m;
  }

  get capacity(): number {
    return this.levels.length;
  }

  /** Grows the per-slot arrays to hold slots `[0, slots)`. */
  reserve(slots: number): void {
    if (slots <= this.levels.length) return;
    // 1.25×: the layer-0 links are a quarter of a float32 vector's size or more, so slack matters.
    const capacity = Math.max(slots, Math.ceil(this.levels.length * 1.25), 1024);
    const levels = new Int8Array(capacity).fill(-1);
    levels.set(this.levels);
    this.levels = levels;
    const links0 = new Int32Array(capacity * (1 + this.maxM0));
    links0.set(this.links0);
    this.links0 = links0;
    const deleted = new Uint8Array(capacity);
    deleted.set(this.deleted);
    this.deleted = deleted;
  }

  /** Bytes held by the graph's arrays (allocated, not only used). */
  get allocatedBytes(): number {
    let upper = 0;
    for (const lists of this.upper) upper += lists?.byteLength ?? 0;
    return this.levels.byteLength + this.links0.byteLength + this.deleted.byteLength + upper;
  }

  has(slot: number): boolean {
    return slot < this.levels.length && (this.levels[slot] as number) >= 0;
  }

  isLive(slot: number): boolean {
    return this.has(slot) && this.deleted[slot] === 0;
  }

  levelOf(slot: number): number {
    return this.levels[slot] as number;
  }

  /** Where the link list of `slot` at `layer` lives; `layer <= levelOf(slot)`. */
  links(slot: number, layer: number): LinkList {
    if (layer === 0) return { array: this.links0, offset: slot * (1 + this.maxM0) };
    return { array: this.upper[slot] as Int32Array, offset: (layer - 1) * (1 + this.maxM) };
  }

  capacityAt(layer: number): number {
    return layer === 0 ? this.maxM0 : this.maxM;
  }

  setLinks(slot: number, layer: number, neighbors: ArrayLike<number>, count: number): void {
    const { array, offset } = this.links(slot, layer);
    array[offset] = count;
    for (let i = 0; i < count; i++) array[offset + 1 + i] = neighbors[i] as number;
  }

  /** Adds a node with empty link lists up to `level`. */
  addNode(slot: number, level: number): void {
    this.levels[slot] = level;
    this.deleted[slot] = 0;
    this.links0[slot * (1 + this.maxM0)] = 0;
    this.upper[slot] = level > 0 ? new Int32Array(level * (1 + this.maxM)) : undefined;
    this.nodeCount++;
    if (level > this.maxLevel || this.entryPoint < 0) {
      this.entryPoint = slot;
      this.maxLevel = level;
    }
  }

  markDeleted(slot: number): void {
    if (this.deleted[slot] === 1) return;
    this.deleted[slot] = 1;
    this.deletedCount++;
  }

  /** Takes a node out of the graph entirely (after every link to it is gone). */
  dropNode(slot: number): void {
    if (!this.has(slot)) return;
    if (this.deleted[slot] === 1) this.deletedCount--;
    this.levels[slot] = -1;
    this.deleted[slot] = 0;
    this.links0[slot * (1 + this.maxM0)] = 0;
    this.upper[slot] = undefined;
    this.nodeCount--;
  }

  /** Re-picks the entry point as a live node of the highest level (after its deletion). */
  chooseEntryPoint(): void {
    let best = -1;
    let bestLevel = -1;
    for (let slot = 0; slot < this.levels.length; slot++) {
      const level = this.levels[slot] as number;
      if (level > bestLevel && this.deleted[slot] === 0) {
        best = slot;
        bestLevel = level;
      }
    }
    if (best < 0) {
      // Only tombstones left (or nothing): keep one as a traversal start, searches return nothing.
      for (let slot = 0; slot < this.levels.length; slot++) {
        if ((this.levels[slot] as number) > bestLevel) {
          best = slot;
          bestLevel = this.levels[slot] as number;
        }
      }
    }
    this.entryPoint = best;
    this.maxLevel = bestLevel;
  }
}
