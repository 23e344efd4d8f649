/**
 * The rooted tree over an HNSW graph's layer 0 (index/hnsw/graph-mender.ts says why it exists):
 * each node but the anchor may have a parent, a node whose layer-0 list links to it; the link from
 * a node's parent is pinned (neighbour selection never drops it). Ranks make the parents acyclic without
 * walking them: a node's rank is set once, when it is first adopted, to its parent's rank + 1, and
 * a node can only ever be handed to a parent of lower rank than its own, so ranks strictly fall
 * along every chain of parents, which therefore ends at the anchor (rank 0, its own parent).
 *
 * The arrays are shared with insert threads. A parent is set by compare-and-swap (two threads may
 * adopt one node; the first wins) while the adopter holds its own list's lock, and a rank is
 * written after its parent, so a rank is UNRANKED for a moment after adoption: such a node adopts
 * no child, is handed to no new parent (its rank is the highest) and is handed on by nobody (its
 * parent's lock is held), which keeps ranks falling even then.
 */
import { grownArray, sharedArray } from '../../core/shared-array.js';

/** `parents[slot]` of a node without a parent: not (yet, or any longer) in the tree. */
export const UNROOTED = -1;
/** `ranks[slot]` until a node's adoption is complete. */
export const UNRANKED = 0x7fffffff;

/** The tree as a snapshot holds it (index/hnsw/graph-codec.ts). */
export interface TreeParts {
  readonly parents: Int32Array;
  readonly ranks: Int32Array;
  readonly anchor: number;
}

export class RootedTree {
  private parent: Int32Array<ArrayBufferLike> = sharedArray(Int32Array, 0);
  private rank: Int32Array<ArrayBufferLike> = sharedArray(Int32Array, 0);
  private root = -1;

  /** Another thread's view of a tree's arrays (its anchor travels with each search: `setAnchor`). */
  static attach(parents: Int32Array, ranks: Int32Array): RootedTree {
    const tree = new RootedTree();
    tree.parent = parents;
    tree.rank = ranks;
    return tree;
  }

  /** The root (-1 when there is no tree). Searches walk layer 0 from it too. */
  get anchor(): number {
    return this.root;
  }

  setAnchor(anchor: number): void {
    this.root = anchor;
  }

  /** The arrays (views, not copies; read only), for snapshots and other threads. */
  get parents(): Int32Array {
    return this.parent;
  }

  get ranks(): Int32Array {
    return this.rank;
  }

  /** Grows the arrays to `capacity` slots; new slots are unrooted. */
  reserve(capacity: number): void {
    const previous = this.parent.length;
    if (capacity <= previous) return;
    this.parent = grownArray(Int32Array, this.parent, capacity);
    this.parent.fill(UNROOTED, previous);
    this.rank = grownArray(Int32Array, this.rank, capacity);
    this.rank.fill(UNRANKED, previous);
  }

  /** Takes over a snapshot's tree (checked by the caller: reachability.ts `treeProblems`). */
  load(parts: TreeParts): void {
    this.parent.set(parts.parents);
    this.rank.set(parts.ranks);
    this.root = parts.anchor;
  }

  /** Empties the tree and makes `anchor` its root (-1: no tree); GraphMender.regrow grows it again. */
  reset(anchor: number): void {
    this.parent.fill(UNROOTED);
    this.rank.fill(UNRANKED);
    this.root = anchor;
    if (anchor >= 0) {
      this.parent[anchor] = anchor;
      this.rank[anchor] = 0;
    }
  }

  /** A slot leaves the tree (a new node before it is linked, or a node dropped from the graph). */
  clear(slot: number): void {
    this.parent[slot] = UNROOTED;
    this.rank[slot] = UNRANKED;
    if (this.root === slot) this.root = -1;
  }

  /** The node's parent, UNROOTED, or the node itself for the anchor. */
  parentOf(slot: number): number {
    return Atomics.load(this.parent, slot);
  }

  rankOf(slot: number): number {
    return Atomics.load(this.rank, slot);
  }

  /** In the tree: reachable on layer 0 from the anchor as long as the tree stands. */
  isRooted(slot: number): boolean {
    return Atomics.load(this.parent, slot) !== UNROOTED;
  }

  /** Whether `node`'s layer-0 link to `target` is pinned: `node` is target's parent. */
  isPinned(node: number, target: number): boolean {
    return target !== node && Atomics.load(this.parent, target) === node;
  }

  /**
   * Makes `parent` (which links to `child` on layer 0, and whose list the caller holds) the parent
   * of `child` if `child` has none and `parent` is rooted, its rank settled. Returns whether
   * `child` is rooted now.
   */
  adopt(child: number, parent: number): boolean {
    // A rank is written after its parent: a settled rank means a rooted node.
    const parentRank = Atomics.load(this.rank, parent);
    if (parentRank === UNRANKED) return this.isRooted(child);
    if (Atomics.compareExchange(this.parent, child, UNROOTED, parent) === UNROOTED) Atomics.store(this.rank, child, parentRank + 1);
    return true;
  }

  /**
   * Whether `child` may be handed from its parent to `to`: `to` is rooted, of lower rank (so no
   * descendant of `child`), and settled. The caller holds the lists of both parents, and checks
   * that `to` links to `child`.
   */
  canHandOver(child: number, to: number): boolean {
    return Atomics.load(this.parent, to) !== UNROOTED && Atomics.load(this.rank, to) < Atomics.load(this.rank, child);
  }

  /** Makes `to` the parent of `child` instead of `from` (see `canHandOver`); false if `from` was not its parent. */
  handOver(child: number, from: number, to: number): boolean {
    return Atomics.compareExchange(this.parent, child, from, to) === from;
  }

  /** Lets go of `child`: its parent is about to drop its link (a tombstone no node hangs from). */
  release(child: number): void {
    Atomics.store(this.parent, child, UNROOTED);
    Atomics.store(this.rank, child, UNRANKED);
  }
}
