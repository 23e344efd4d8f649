/**
 * Delete-side repair of an HNSW graph. A deleted node becomes a tombstone (still walked, never
 * returned); every live node that linked to it re-selects its links among its other links and
 * the tombstone's (Qdrant and hnswlib repair the same way). Compaction later scrubs every
 * remaining link to tombstones and frees their slots, then grows the rooted tree anew
 * (graph-mender.ts). Every layer-0 list keeps its pinned links through every re-selection
 * (neighbor-selection.ts), so no repair can cut a live node off.
 */
import type { GraphMender } from './graph-mender.js';
import { type HnswGraph, TOMBSTONE } from './hnsw-graph.js';
import type { Walk } from './layer-search.js';
import type { NeighborSelection } from './neighbor-selection.js';

/** Re-selects the links of every live node that links to tombstone `slot`. */
export function repairAround(selection: NeighborSelection, walk: Walk, slot: number): void {
  for (const _ of repairAroundSteps(selection, walk, slot));
}

/**
 * `repairAround` one neighbour at a time: a step after each re-selection. At 65,536 dimensions one
 * tombstone's neighbours took up to 100 ms together; the graph is searchable between any two
 * (the tombstone is hidden, and a repair only adds better links). The tombstone's own lists are
 * read as they were at the start.
 */
export function* repairAroundSteps(selection: NeighborSelection, walk: Walk, slot: number): Generator<void, void, undefined> {
  const g = walk.graph;
  for (let layer = 0; layer <= g.levelOf(slot); layer++) {
    for (const neighbor of [...g.neighbors(slot, layer)]) {
      if (!g.isLive(neighbor) || !g.linksTo(neighbor, layer, slot)) continue;
      repairLinks(selection, walk, neighbor, layer);
      yield;
    }
  }
}

/**
 * Scrubs every link to a tombstone, drops the tombstones and returns their (now free) slots.
 * The tree is emptied first (its pins would keep links to tombstones) and grown anew after,
 * from the entry point.
 */
export function compact(selection: NeighborSelection, walk: Walk, mender: GraphMender): number[] {
  const g = walk.graph;
  g.tree.reset(-1);
  const dead: number[] = [];
  for (let slot = 0; slot < g.capacity; slot++) {
    if (!g.has(slot)) continue;
    if (g.deleted[slot] === TOMBSTONE) {
      dead.push(slot);
      continue;
    }
    for (let layer = 0; layer <= g.levelOf(slot); layer++) {
      const { array, offset } = g.links(slot, layer);
      const count = array[offset] as number;
      for (let i = 1; i <= count; i++) {
        if (g.deleted[array[offset + i] as number] === TOMBSTONE) {
          repairLinks(selection, walk, slot, layer);
          break;
        }
      }
    }
  }
  for (const slot of dead) g.dropNode(slot);
  if (g.entryPoint < 0 || !g.has(g.entryPoint) || g.deleted[g.entryPoint] === TOMBSTONE) g.chooseEntryPoint();
  g.tree.reset(g.entryPoint);
  mender.regrow();
  return dead;
}

/**
 * Re-selects `node`'s links at `layer` without tombstones: candidates are its live links plus
 * the live links of every tombstone it linked to. A tombstone it is the tree parent of stays,
 * pinned, while a node of the tree hangs from it.
 */
function repairLinks(selection: NeighborSelection, walk: Walk, node: number, layer: number): void {
  const g = walk.graph;
  const candidates = new Set<number>();
  for (const neighbor of g.neighbors(node, layer)) {
    if (g.deleted[neighbor] !== TOMBSTONE) {
      candidates.add(neighbor);
      continue;
    }
    if (layer === 0 && g.tree.isPinned(node, neighbor) && !hasChildren(g, neighbor)) g.tree.release(neighbor);
    if (g.levelOf(neighbor) < layer) continue;
    for (const second of g.neighbors(neighbor, layer)) if (second !== node && g.isLive(second)) candidates.add(second);
  }
  selection.reselect(walk, node, layer, [...candidates]);
}

/** Whether `slot` is the tree parent of some node (a node's parent always links to it, so its children are in its own list). */
function hasChildren(g: HnswGraph, slot: number): boolean {
  const { array, offset } = g.links(slot, 0);
  const count = array[offset] as number;
  for (let i = 1; i <= count; i++) if (g.tree.isPinned(slot, array[offset + i] as number)) return true;
  return false;
}
