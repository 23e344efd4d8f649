/**
 * Which links a node keeps: the neighbour-selection heuristic (Malkov & Yashunin, Alg. 4, without
 * extending candidates, as hnswlib), with two additions that keep every point reachable on any
 * data, and re-selection of a full list that keeps its pinned links (index/hnsw/graph-mender.ts).
 * Used by inserts (a new node's links, a neighbour's full list) and by repair (a list that linked
 * to a tombstone).
 */
import { type HnswGraph, TOMBSTONE } from './hnsw-graph.js';
import type { Walk } from './layer-search.js';
import { tryLockSlot, unlockSlot } from './link-locks.js';

/**
 * The heuristic keeps at least this share of a list's capacity, filling up with the nearest
 * pruned candidates. Without it, inner product on non-negative vectors keeps about one link per
 * node (every candidate is "closer" to a high-norm hub than to the node) and the graph falls apart.
 */
const MIN_DEGREE_SHARE = 0.25;

/**
 * At most this share of a list may link to exact duplicates of its node. Without the cap, a node
 * among many copies of one vector links only to copies: the copies then form a component the
 * walk cannot leave, and a greedy descent that enters it is trapped.
 */
const DUPLICATE_SHARE = 0.5;

export class NeighborSelection {
  /** The last selection: `select` and `reselect` write their choice here. */
  readonly selected: Int32Array;
  /** Scratch of `select`: kept non-duplicate links, and pruned candidates by kind. */
  private readonly diverse: Int32Array;
  private prunedNear = new Int32Array(256);
  private prunedCopies = new Int32Array(256);
  /** `reselect`'s candidates, best first. */
  private candidateSlots = new Int32Array(256);
  private candidateSims = new Float32Array(256);

  constructor(m: number) {
    this.selected = new Int32Array(2 * m + 1);
    this.diverse = new Int32Array(2 * m + 1);
  }

  /**
   * The heuristic over `slots`/`sims`[0, count) (candidates for `base`, best first), keeping at
   * most `max`, into `selected`; returns how many. A candidate is skipped when it is closer to an
   * already kept neighbour than to the base. Exact copies of the base take at most
   * DUPLICATE_SHARE of the list (they never prune others, since they are as close to everything
   * as the base is), and a list the heuristic leaves shorter than MIN_DEGREE_SHARE of its
   * capacity is filled with the nearest skipped candidates (copies last). Changes the arena's query.
   */
  select(walk: Walk, base: number, selfSim: number, slots: Int32Array, sims: Float32Array, count: number, max: number): number {
    const out = this.selected;
    if (count <= max) {
      out.set(slots.subarray(0, count));
      return count;
    }
    if (this.prunedNear.length < count) {
      this.prunedNear = new Int32Array(count * 2);
      this.prunedCopies = new Int32Array(count * 2);
    }
    const scorer = walk.scorer;
    const arena = scorer.arena;
    const copyCap = Math.max(1, Math.floor(max * DUPLICATE_SHARE));
    let kept = 0;
    let copies = 0;
    let diverse = 0;
    let prunedNear = 0;
    let prunedCopies = 0;
    for (let i = 0; i < count && kept < max; i++) {
      const candidate = slots[i] as number;
      const toBase = sims[i] as number;
      if (toBase === selfSim && arena.sameVector(candidate, base)) {
        if (copies < copyCap) {
          out[kept++] = candidate;
          copies++;
        } else {
          this.prunedCopies[prunedCopies++] = candidate;
        }
        continue;
      }
      let good = true;
      if (diverse > 0) {
        arena.setQueryFromSlot(candidate);
        const toKept = scorer.many(this.diverse, diverse);
        for (let j = 0; j < diverse; j++) {
          if ((toKept[j] as number) > toBase) {
            good = false;
            break;
          }
        }
      }
      if (good) {
        out[kept++] = candidate;
        this.diverse[diverse++] = candidate;
      } else {
        this.prunedNear[prunedNear++] = candidate;
      }
    }
    const minKeep = Math.ceil(max * MIN_DEGREE_SHARE);
    for (let i = 0; kept < minKeep && i < prunedNear; i++) out[kept++] = this.prunedNear[i] as number;
    for (let i = 0; kept < minKeep && i < prunedCopies; i++) out[kept++] = this.prunedCopies[i] as number;
    return kept;
  }

  /**
   * Sets `node`'s links at `layer` to the heuristic's choice among `candidates` (≠ node); on
   * layer 0, its pinned links stay whatever the heuristic thinks of them. The caller holds
   * `node`'s lock when others insert.
   */
  reselect(walk: Walk, node: number, layer: number, candidates: number[]): void {
    const g = walk.graph;
    const n = candidates.length;
    if (n > this.candidateSlots.length) {
      this.candidateSlots = new Int32Array(n * 2);
      this.candidateSims = new Float32Array(n * 2);
    }
    walk.scorer.arena.setQueryFromSlot(node);
    // The node itself rides along as the last entry: its similarity to itself marks exact copies.
    candidates.push(node);
    const scores = walk.scorer.many(candidates, n + 1);
    const selfSim = scores[n] as number;
    // Best first; exact ties go to the less linked-to node, so a tied newcomer is not always the one dropped.
    const order = Array.from({ length: n }, (_, i) => i).sort(
      (a, b) =>
        (scores[b] as number) - (scores[a] as number) ||
        g.inDegreeOf(candidates[a] as number) - g.inDegreeOf(candidates[b] as number) ||
        (candidates[a] as number) - (candidates[b] as number),
    );
    const slots = this.candidateSlots;
    const sims = this.candidateSims;
    for (let i = 0; i < n; i++) {
      slots[i] = candidates[order[i] as number] as number;
      sims[i] = scores[order[i] as number] as number;
    }
    let count = this.select(walk, node, selfSim, slots, sims, n, g.capacityAt(layer));
    if (layer === 0) count = this.keepPinned(walk, node, count);
    g.setLinks(node, layer, this.selected, count);
  }

  /**
   * Puts back into `selected[0, count)` every pinned link of `node`'s current layer-0 list the
   * heuristic left out: appended while there is room, else in place of the last (weakest) choice
   * that is not pinned. Returns the new count. A list never holds more pinned links than its
   * capacity, so there is always a place.
   */
  private keepPinned(walk: Walk, node: number, count: number): number {
    const g = walk.graph;
    const out = this.selected;
    const { array, offset } = g.links(node, 0);
    const current = array[offset] as number;
    let replaceable = count;
    for (let i = 1; i <= current; i++) {
      const child = array[offset + i] as number;
      if (!g.tree.isPinned(node, child) || out.subarray(0, count).includes(child)) continue;
      if (handOver(walk, child, node)) continue;
      if (count < g.maxM0) {
        out[count++] = child;
        continue;
      }
      do replaceable--;
      while (g.tree.isPinned(node, out[replaceable] as number));
      out[replaceable] = child;
    }
    return count;
  }
}

/**
 * Hands `child`, whose pinned link from `from` the heuristic would drop, to another parent: a
 * node of its own list that links back to it, is no tombstone and can take it (lower rank:
 * index/hnsw/rooted-tree.ts). The heuristic dropped the link because a kept neighbour leads to
 * `child` as well; moving the pin lets it, so pins cost the graph almost nothing (SIFT's recall
 * at ef 16 fell by 0.007 with pins that never moved). With other threads inserting, `child`'s
 * list is only a hint (read without its lock); the new parent's list is read and the pin moved
 * under that list's lock, taken only if free (the caller holds `from`'s). Returns whether
 * `child` was handed over.
 */
function handOver(walk: Walk, child: number, from: number): boolean {
  const { graph: g, locks } = walk;
  const tree = g.tree;
  const { array, offset } = g.links(child, 0);
  const count = array[offset] as number;
  for (let i = 1; i <= count; i++) {
    const to = array[offset + i] as number;
    if (to === from || g.deleted[to] === TOMBSTONE || !tree.canHandOver(child, to)) continue;
    if (locks !== null && !tryLockSlot(locks, to, from)) continue;
    try {
      if (g.linksTo(to, 0, child) && tree.handOver(child, from, to)) return true;
    } finally {
      if (locks !== null) unlockSlot(locks, to);
    }
  }
  return false;
}

/** Within runs of equal similarity in `slots`/`sims`[0, n), puts less linked-to nodes first. */
export function orderTiesByInDegree(g: HnswGraph, slots: Int32Array, sims: Float32Array, n: number): void {
  for (let i = 1; i < n; i++) {
    if (sims[i] !== sims[i - 1]) continue;
    const slot = slots[i] as number;
    const degree = g.inDegreeOf(slot);
    let j = i;
    while (j > 0 && sims[j - 1] === sims[i] && g.inDegreeOf(slots[j - 1] as number) > degree) {
      slots[j] = slots[j - 1] as number;
      j--;
    }
    slots[j] = slot;
  }
}
