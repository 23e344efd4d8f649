/**
 * Construction (Malkov & Yashunin, Alg. 1): a node's level, then its links. Levels come from a
 * seeded generator: ⌊−ln(U)·mL⌋ with mL = 1/ln(m) (§4.1). Linking is a greedy descent with ef = 1
 * to the node's level, then per layer a beam search of width ef_construction and the
 * neighbour-selection heuristic for m links (neighbor-selection.ts); reverse links are added and
 * an overfull list (m above layer 0, 2m on it) is re-selected with the same heuristic. On layer 0
 * a rooted node that ends up linking to an unrooted one becomes its tree parent
 * (graph-mender.ts). Lists are read and written under their locks when the walk says others
 * insert alongside (insert-job.ts).
 */
import type { SeededRng } from '../../core/rng.js';
import type { LayerSearch, LinkWalk, Walk } from './layer-search.js';
import { lockSlot, unlockSlot } from './link-locks.js';
import { type NeighborSelection, orderTiesByInDegree } from './neighbor-selection.js';

/** A level for a new node, from the index's generator: ⌊−ln(U)·mL⌋, at most 63. */
export function drawLevel(rng: SeededRng, mL: number): number {
  return Math.min(63, Math.floor(-Math.log(1 - rng.next()) * mL));
}

/** mL = 1/ln(m) (§4.1), for `drawLevel`. */
export function levelMultiplier(m: number): number {
  return 1 / Math.log(Math.max(2, m));
}

/** Links nodes into the graph, with one thread's search and selection scratch. */
export class Linker {
  constructor(
    private readonly search: LayerSearch,
    private readonly selection: NeighborSelection,
    /** Links a new node gets per layer. */
    private readonly m: number,
  ) {}

  /**
   * Links `walk.self`, a node already added at `level`, into the graph below `entry`, the entry
   * point at `topLevel`. Changes the arena's query.
   */
  link(walk: LinkWalk, level: number, entry: number, topLevel: number): void {
    const { graph: g, scorer, locks, self: slot } = walk;
    const { search, selection } = this;
    const arena = scorer.arena;
    arena.setQueryFromSlot(slot);
    const selfSim = scorer.one(slot);
    search.descend(walk, entry, scorer.one(entry), topLevel, level);
    let ep = search.descentSlot;
    let epSim = search.descentSim;
    for (let layer = Math.min(level, topLevel); layer >= 0; layer--) {
      // Re-selecting a neighbour's full list (below) moves the query; each layer needs it back.
      arena.setQueryFromSlot(slot);
      search.forLinks(walk, layer, ep, epSim);
      const n = search.drainSorted();
      if (n === 0) continue;
      const slots = search.sortedSlots;
      const sims = search.sortedSims;
      ep = slots[0] as number;
      epSim = sims[0] as number;
      orderTiesByInDegree(g, slots, sims, n);
      // m links on every layer for the new node, as hnswlib; on layer 0 its list grows to 2m through
      // links back from later nodes.
      const count = selection.select(walk, slot, selfSim, slots, sims, n, this.m);
      if (locks !== null) lockSlot(locks, slot);
      try {
        g.setLinks(slot, layer, selection.selected, count);
      } finally {
        if (locks !== null) unlockSlot(locks, slot);
      }
      const chosen = selection.selected.slice(0, count);
      for (const neighbor of chosen) this.connect(walk, neighbor, slot, layer);
    }
  }

  /**
   * Adds `target` to `node`'s links at `layer`, re-selecting them if the list is full. On layer 0
   * a rooted node that ends up linking to an unrooted target becomes its parent.
   */
  private connect(walk: Walk, node: number, target: number, layer: number): void {
    const { graph: g, locks } = walk;
    if (locks !== null) lockSlot(locks, node);
    try {
      if (g.linksTo(node, layer, target)) return;
      const { array, offset } = g.links(node, layer);
      if ((array[offset] as number) < g.capacityAt(layer)) {
        g.appendLink(node, layer, target);
      } else {
        const candidates = g.neighbors(node, layer);
        candidates.push(target);
        this.selection.reselect(walk, node, layer, candidates);
      }
      if (layer === 0 && g.linksTo(node, 0, target)) g.tree.adopt(target, node);
    } finally {
      if (locks !== null) unlockSlot(locks, node);
    }
  }
}
