/**
 * The HNSW graph in typed arrays (hnswlib's layout): layer 0 is one `Int32Array` with a fixed
 * stride of `1 + maxM0` per slot (`[count, n1, n2, …]`); the few nodes above layer 0 (about 1/m of
 * them) keep their upper layers in one `Int32Array` each, stride `1 + maxM` per layer.
 *
 * Tombstones: a deleted node stays in the graph (its vector and links still guide searches) until
 * compaction scrubs every link to it; it is never returned. Pending nodes: a node being inserted
 * while searches go on (a batch linked in steps, HnswIndex.addPending) is walked and linked like
 * any node but returned by no search until it is published. Both are flags in one byte per slot
 * (`deleted`: 0 live, TOMBSTONE, PENDING), which searches test for 0.
 *
 * The upper layers of all nodes share one pool (`upperPool`, bump-allocated, grown by copying;
 * `upperOffset[slot]` is where a node's lists start, -1 below layer 1), so that every array of
 * the graph is a SharedArrayBuffer view: search threads attach to the same memory (`attach`) and
 * walk the graph without a copy. A dropped node's pool space is left unused until the graph is
 * rebuilt from a snapshot; nodes are dropped only by compaction, after deletions.
 *
 * The graph owns its arrays: every change goes through a method here, so the derived layer-0
 * in-degrees stay exact.
 *
 * The rooted tree over layer 0 (`tree`, index/hnsw/rooted-tree.ts; graph-mender.ts says why)
 * lives beside the links: every node but the anchor may have a parent that links to it, and that
 * link is pinned, so every rooted node stays reachable from the anchor whatever is pruned.
 *
 * Inserts may run on several threads at once (index/hnsw/insert-job.ts): each thread then has
 * its own `HnswGraph` over the same arrays (`attach`), changes a list only under its lock
 * (`locks`, index/hnsw/link-locks.ts), counts in-degrees with atomic adds, and sets parents with
 * compare-and-swap.
 */
import { grownArray, sharedArray } from '../../core/shared-array.js';
import { newLockTable } from './link-locks.js';
import { RootedTree, type TreeParts } from './rooted-tree.js';

/** `deleted[slot]` of a tombstone. */
export const TOMBSTONE = 1;
/** `deleted[slot]` of a node not yet published: a live node to the graph, not to searches. */
export const PENDING = 2;

export interface LinkList {
  /** The array holding the list: `array[offset]` is the count, the neighbours follow. */
  readonly array: Int32Array;
  readonly offset: number;
}

/** A graph's arrays as a snapshot holds them (index/hnsw/graph-codec.ts). */
export interface GraphParts {
  readonly levels: Int8Array;
  readonly deleted: Uint8Array;
  readonly links0: Int32Array;
  readonly upper: ReadonlyArray<Int32Array | undefined>;
  readonly entryPoint: number;
  readonly maxLevel: number;
  /** The rooted tree; absent in snapshots written before it existed (graph-codec.ts grows one). */
  readonly tree?: TreeParts;
}

/** Every array of a graph, as search threads attach to it (views over SharedArrayBuffers). */
export interface SharedGraphArrays {
  readonly levels: Int8Array;
  readonly tombstones: Uint8Array;
  readonly layer0: Int32Array;
  readonly upperOffset: Int32Array;
  readonly upperPool: Int32Array;
  readonly inDegree: Int32Array;
  readonly parents: Int32Array;
  readonly ranks: Int32Array;
  readonly locks: Int32Array;
}

export class HnswGraph {
  /** Links per node on layers ≥ 1. */
  readonly maxM: number;
  /** Links per node on layer 0. */
  readonly maxM0: number;
  private levelOfSlot: Int8Array<ArrayBufferLike> = new Int8Array(0);
  private layer0: Int32Array<ArrayBufferLike> = new Int32Array(0);
  /** Start of each node's upper-layer lists in `upperPool`, or -1. */
  private upperOffset: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private upperPool: Int32Array<ArrayBufferLike> = sharedArray(Int32Array, 0);
  private upperUsed = 0;
  private tombstones: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  /** Layer-0 links pointing at each slot, from any node in the graph (tombstones included); changed atomically. */
  private inDegree0: Int32Array<ArrayBufferLike> = sharedArray(Int32Array, 0);
  private rooted = new RootedTree();
  /** Lock words of the link lists, for inserts on several threads. */
  private linkLocks: Int32Array<ArrayBufferLike> = newLockTable();
  private entry = -1;
  private topLevel = -1;
  private nodes = 0;
  private deletedNodes = 0;

  constructor(readonly m: number) {
    this.maxM = m;
    this.maxM0 = 2 * m;
  }

  /** Rebuilds a graph from a snapshot's arrays; a string says why they do not describe a sound graph. */
  static fromParts(m: number, parts: GraphParts): HnswGraph | string {
    const g = new HnswGraph(m);
    const capacity = parts.levels.length;
    const stride0 = 1 + g.maxM0;
    if (parts.deleted.length !== capacity || parts.links0.length !== capacity * stride0) return 'array lengths disagree';
    g.reserve(capacity);
    g.levelOfSlot.set(parts.levels);
    g.tombstones.set(parts.deleted);
    g.layer0.set(parts.links0);
    for (let slot = 0; slot < capacity; slot++) {
      const level = parts.levels[slot] as number;
      if (level < 0) {
        if (parts.deleted[slot] !== 0 || parts.links0[slot * stride0] !== 0) return `slot ${slot} is not in the graph but has links`;
        continue;
      }
      if ((parts.deleted[slot] as number) > TOMBSTONE) return `slot ${slot}: unknown node state ${parts.deleted[slot]}`;
      const upper = parts.upper[slot];
      if ((upper?.length ?? 0) !== level * (1 + g.maxM)) return `slot ${slot}: upper-layer lists do not match level ${level}`;
      if (upper !== undefined) {
        // Allocate first: allocation may replace the pool.
        const start = g.allocateUpper(slot, level);
        g.upperPool.set(upper, start);
      }
      g.nodes++;
      if (parts.deleted[slot] === 1) g.deletedNodes++;
      for (let layer = 0; layer <= level; layer++) {
        const { array, offset } = g.links(slot, layer);
        const count = array[offset] as number;
        if (count < 0 || count > g.capacityAt(layer)) return `slot ${slot} layer ${layer}: ${count} links`;
        for (let i = 1; i <= count; i++) {
          const target = array[offset + i] as number;
          if (target < 0 || target >= capacity || (parts.levels[target] as number) < layer) return `slot ${slot} layer ${layer}: bad link ${target}`;
          if (layer === 0) g.inDegree0[target] = (g.inDegree0[target] as number) + 1;
        }
      }
    }
    if (g.nodes > 0 && (parts.entryPoint < 0 || parts.entryPoint >= capacity || parts.levels[parts.entryPoint] !== parts.maxLevel)) {
      return 'entry point is not a node of the top level';
    }
    g.entry = g.nodes > 0 ? parts.entryPoint : -1;
    g.topLevel = g.nodes > 0 ? parts.maxLevel : -1;
    const tree = parts.tree;
    if (tree !== undefined) {
      if (tree.parents.length !== capacity || tree.ranks.length !== capacity) return 'array lengths disagree';
      g.rooted.load(tree);
    }
    return g;
  }

  get capacity(): number {
    return this.levelOfSlot.length;
  }

  get entryPoint(): number {
    return this.entry;
  }

  get maxLevel(): number {
    return this.topLevel;
  }

  /** The rooted tree over layer 0 (index/hnsw/rooted-tree.ts). */
  get tree(): RootedTree {
    return this.rooted;
  }

  /** Nodes in the graph, tombstones included. */
  get nodeCount(): number {
    return this.nodes;
  }

  get deletedCount(): number {
    return this.deletedNodes;
  }

  /** Layer-0 lists of every slot (stride `1 + maxM0`), for the search's hot loop. Read only. */
  get links0(): Int32Array {
    return this.layer0;
  }

  /** Tombstone flag per slot, for the search's hot loop. Read only. */
  get deleted(): Uint8Array {
    return this.tombstones;
  }

  /** Lock words of the link lists (index/hnsw/link-locks.ts); only concurrent inserts take them. */
  get locks(): Int32Array {
    return this.linkLocks;
  }

  /** The arrays as a snapshot stores them (views, not copies; read only). */
  parts(): GraphParts & { readonly tree: TreeParts } {
    const upper: Array<Int32Array | undefined> = [];
    const stride = 1 + this.maxM;
    for (let slot = 0; slot < this.levelOfSlot.length; slot++) {
      const level = this.levelOfSlot[slot] as number;
      const start = this.upperOffset[slot] as number;
      upper.push(level > 0 && start >= 0 ? this.upperPool.subarray(start, start + level * stride) : undefined);
    }
    return {
      levels: this.levelOfSlot,
      deleted: this.tombstones,
      links0: this.layer0,
      upper,
      entryPoint: this.entry,
      maxLevel: this.topLevel,
      tree: { parents: this.rooted.parents, ranks: this.rooted.ranks, anchor: this.rooted.anchor },
    };
  }

  /** The arrays search threads attach to; replaced by larger ones when they grow (compare them). */
  sharedArrays(): SharedGraphArrays {
    return {
      levels: this.levelOfSlot,
      tombstones: this.tombstones,
      layer0: this.layer0,
      upperOffset: this.upperOffset,
      upperPool: this.upperPool,
      inDegree: this.inDegree0,
      parents: this.rooted.parents,
      ranks: this.rooted.ranks,
      locks: this.linkLocks,
    };
  }

  /**
   * Another thread's view of a graph's arrays: read-only for searches, or for inserting nodes the
   * owner has added (`addNode`) under the locks. Entry point, top level and anchor travel with
   * each search or insert job (`setEntry`); node counts and the pool are the owner's business.
   */
  static attach(m: number, arrays: SharedGraphArrays): HnswGraph {
    const g = new HnswGraph(m);
    g.levelOfSlot = arrays.levels;
    g.tombstones = arrays.tombstones;
    g.layer0 = arrays.layer0;
    g.upperOffset = arrays.upperOffset;
    g.upperPool = arrays.upperPool;
    g.inDegree0 = arrays.inDegree;
    g.rooted = RootedTree.attach(arrays.parents, arrays.ranks);
    g.linkLocks = arrays.locks;
    return g;
  }

  /** A view's entry point, top level and anchor, as the owner had them when the search or job was sent. */
  setEntry(entryPoint: number, maxLevel: number, anchor = this.rooted.anchor): void {
    this.entry = entryPoint;
    this.topLevel = maxLevel;
    this.rooted.setAnchor(anchor);
  }

  /** Grows the per-slot arrays to hold slots `[0, slots)`. */
  reserve(slots: number): void {
    if (slots <= this.levelOfSlot.length) return;
    // 1.25×: the layer-0 links are a quarter of a float32 vector's size or more, so slack matters.
    // The arrays grow in place (core/shared-array.ts): threads holding the old views hold no copy.
    const capacity = Math.max(slots, Math.ceil(this.levelOfSlot.length * 1.25), 1024);
    const previous = this.levelOfSlot.length;
    this.levelOfSlot = grownArray(Int8Array, this.levelOfSlot, capacity);
    this.levelOfSlot.fill(-1, previous);
    this.layer0 = grownArray(Int32Array, this.layer0, capacity * (1 + this.maxM0));
    this.tombstones = grownArray(Uint8Array, this.tombstones, capacity);
    this.upperOffset = grownArray(Int32Array, this.upperOffset, capacity);
    this.upperOffset.fill(-1, previous);
    // Shared for inserts on several threads (search threads never read them).
    this.inDegree0 = grownArray(Int32Array, this.inDegree0, capacity);
    this.rooted.reserve(capacity);
  }

  /** Room in the pool for `level` upper-layer lists of `slot`, zeroed; returns its start. */
  private allocateUpper(slot: number, level: number): number {
    const ints = level * (1 + this.maxM);
    if (this.upperUsed + ints > this.upperPool.length) {
      this.upperPool = grownArray(Int32Array, this.upperPool, Math.max(this.upperUsed + ints, Math.ceil(this.upperPool.length * 1.5), 4096));
    }
    const start = this.upperUsed;
    this.upperPool.fill(0, start, start + ints);
    this.upperUsed += ints;
    this.upperOffset[slot] = start;
    return start;
  }

  /** Bytes held by the graph's arrays (allocated, not only used). */
  get allocatedBytes(): number {
    return (
      this.levelOfSlot.byteLength +
      this.layer0.byteLength +
      this.tombstones.byteLength +
      this.inDegree0.byteLength +
      this.rooted.parents.byteLength +
      this.rooted.ranks.byteLength +
      this.upperOffset.byteLength +
      this.upperPool.byteLength
    );
  }

  has(slot: number): boolean {
    return slot < this.levelOfSlot.length && (this.levelOfSlot[slot] as number) >= 0;
  }

  /** In the graph and not a tombstone (pending nodes included: to the graph they are live). */
  isLive(slot: number): boolean {
    return this.has(slot) && this.tombstones[slot] !== TOMBSTONE;
  }

  levelOf(slot: number): number {
    return this.levelOfSlot[slot] as number;
  }

  /** How many layer-0 links point at `slot`. */
  inDegreeOf(slot: number): number {
    return this.inDegree0[slot] as number;
  }

  /** Where the link list of `slot` at `layer` lives; `layer <= levelOf(slot)`. Read only: change lists through the methods below. */
  links(slot: number, layer: number): LinkList {
    if (layer === 0) return { array: this.layer0, offset: slot * (1 + this.maxM0) };
    return { array: this.upperPool, offset: (this.upperOffset[slot] as number) + (layer - 1) * (1 + this.maxM) };
  }

  /** The neighbours of `slot` at `layer`, as a copy. */
  neighbors(slot: number, layer: number): number[] {
    const { array, offset } = this.links(slot, layer);
    return Array.from(array.subarray(offset + 1, offset + 1 + (array[offset] as number)));
  }

  capacityAt(layer: number): number {
    return layer === 0 ? this.maxM0 : this.maxM;
  }

  linksTo(slot: number, layer: number, target: number): boolean {
    const { array, offset } = this.links(slot, layer);
    const count = array[offset] as number;
    for (let i = 1; i <= count; i++) if (array[offset + i] === target) return true;
    return false;
  }

  setLinks(slot: number, layer: number, neighbors: ArrayLike<number>, count: number): void {
    const { array, offset } = this.links(slot, layer);
    if (layer === 0) {
      const old = array[offset] as number;
      for (let i = 1; i <= old; i++) this.loseInLink(array[offset + i] as number);
      for (let i = 0; i < count; i++) Atomics.add(this.inDegree0, neighbors[i] as number, 1);
    }
    array[offset] = count;
    for (let i = 0; i < count; i++) array[offset + 1 + i] = neighbors[i] as number;
  }

  /** Appends `target` to a list that has room. */
  appendLink(slot: number, layer: number, target: number): void {
    const { array, offset } = this.links(slot, layer);
    const count = array[offset] as number;
    if (count >= this.capacityAt(layer)) throw new Error(`slot ${slot} layer ${layer}: list is full`);
    array[offset + 1 + count] = target;
    array[offset] = count + 1;
    if (layer === 0) Atomics.add(this.inDegree0, target, 1);
  }

  /** Replaces the link at list position `index` (0-based) with `target`. */
  replaceLink(slot: number, layer: number, index: number, target: number): void {
    const { array, offset } = this.links(slot, layer);
    const old = array[offset + 1 + index] as number;
    array[offset + 1 + index] = target;
    if (layer === 0) {
      this.loseInLink(old);
      Atomics.add(this.inDegree0, target, 1);
    }
  }

  /**
   * Adds a pending node with empty link lists up to `level`: left out of searches until `publish`,
   * and not the entry point (its inserter sets that once it is linked).
   */
  addNode(slot: number, level: number): void {
    this.levelOfSlot[slot] = level;
    this.tombstones[slot] = PENDING;
    this.rooted.clear(slot);
    this.layer0[slot * (1 + this.maxM0)] = 0;
    if (level > 0) this.allocateUpper(slot, level);
    else this.upperOffset[slot] = -1;
    this.nodes++;
  }

  /** A pending node becomes searchable. */
  publish(slot: number): void {
    if (this.tombstones[slot] === PENDING) this.tombstones[slot] = 0;
  }

  markDeleted(slot: number): void {
    if (this.tombstones[slot] === TOMBSTONE) return;
    this.tombstones[slot] = TOMBSTONE;
    this.deletedNodes++;
  }

  /** Takes a node out of the graph entirely (after every link to it is gone). */
  dropNode(slot: number): void {
    if (!this.has(slot)) return;
    this.setLinks(slot, 0, [], 0);
    if (this.tombstones[slot] === TOMBSTONE) this.deletedNodes--;
    this.levelOfSlot[slot] = -1;
    this.tombstones[slot] = 0;
    this.upperOffset[slot] = -1;
    this.rooted.clear(slot);
    this.nodes--;
  }

  /** Re-picks the entry point as a live node of the highest level (after its deletion). */
  chooseEntryPoint(): void {
    let best = -1;
    let bestLevel = -1;
    for (let slot = 0; slot < this.levelOfSlot.length; slot++) {
      const level = this.levelOfSlot[slot] as number;
      if (level > bestLevel && this.tombstones[slot] === 0) {
        best = slot;
        bestLevel = level;
      }
    }
    if (best < 0) {
      // Only tombstones left (or nothing): keep one as a traversal start, searches return nothing.
      for (let slot = 0; slot < this.levelOfSlot.length; slot++) {
        if ((this.levelOfSlot[slot] as number) > bestLevel) {
          best = slot;
          bestLevel = this.levelOfSlot[slot] as number;
        }
      }
    }
    this.entry = best;
    this.topLevel = bestLevel;
  }

  private loseInLink(target: number): void {
    Atomics.sub(this.inDegree0, target, 1);
  }
}
