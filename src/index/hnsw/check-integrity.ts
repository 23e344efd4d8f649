/**
 * Structural invariants of an HNSW graph (hnswlib's checkIntegrity, extended): returns every
 * violation found, empty when the graph is sound. Used by tests after random operation sequences.
 */
import type { HnswIndex } from './hnsw-index.js';
import { treeProblems } from './reachability.js';

export function checkIntegrity(index: HnswIndex, isLiveSlot: (slot: number) => boolean): string[] {
  const g = index.graph;
  const problems: string[] = [];
  let nodes = 0;
  let tombstones = 0;
  const inDegree = new Int32Array(g.capacity);
  for (let slot = 0; slot < g.capacity; slot++) {
    if (!g.has(slot)) continue;
    nodes++;
    if (g.deleted[slot] === 1) tombstones++;
    else if (!isLiveSlot(slot)) problems.push(`slot ${slot} is in the graph but not a live point`);
    for (let layer = 0; layer <= g.levelOf(slot); layer++) {
      const { array, offset } = g.links(slot, layer);
      const count = array[offset] as number;
      if (layer === 0)
        for (let i = 1; i <= count; i++) {
          const target = array[offset + i] as number;
          inDegree[target] = (inDegree[target] as number) + 1;
        }
      if (count > g.capacityAt(layer)) problems.push(`slot ${slot} layer ${layer}: ${count} links, more than ${g.capacityAt(layer)}`);
      const seen = new Set<number>();
      for (let i = 1; i <= count; i++) {
        const target = array[offset + i] as number;
        if (target === slot) problems.push(`slot ${slot} layer ${layer}: links to itself`);
        if (seen.has(target)) problems.push(`slot ${slot} layer ${layer}: duplicate link to ${target}`);
        seen.add(target);
        if (!g.has(target)) problems.push(`slot ${slot} layer ${layer}: links to ${target}, which is not in the graph`);
        else if (g.levelOf(target) < layer) problems.push(`slot ${slot} layer ${layer}: links to ${target} of level ${g.levelOf(target)}`);
      }
    }
  }
  for (let slot = 0; slot < g.capacity; slot++) {
    if (inDegree[slot] !== g.inDegreeOf(slot)) problems.push(`slot ${slot}: in-degree ${g.inDegreeOf(slot)} recorded, ${inDegree[slot]} counted`);
  }
  if (nodes !== g.nodeCount) problems.push(`nodeCount ${g.nodeCount}, counted ${nodes}`);
  if (tombstones !== g.deletedCount) problems.push(`deletedCount ${g.deletedCount}, counted ${tombstones}`);
  if (nodes > 0) {
    if (!g.has(g.entryPoint)) problems.push(`entry point ${g.entryPoint} is not in the graph`);
    else if (g.levelOf(g.entryPoint) !== g.maxLevel) problems.push(`entry point level ${g.levelOf(g.entryPoint)} ≠ maxLevel ${g.maxLevel}`);
    // A tombstone may sit above the top level: the entry point is re-chosen among live nodes.
    for (let slot = 0; slot < g.capacity; slot++) {
      if (g.isLive(slot) && g.levelOf(slot) > g.maxLevel) problems.push(`live slot ${slot} is above maxLevel`);
    }
    // Searches walk layer 0 from the anchor too: what it reaches, they can find.
    for (const slot of index.unreachable()) problems.push(`live slot ${slot} is unreachable from the anchor`);
    for (const problem of treeProblems(g)) problems.push(`rooted tree: ${problem}`);
  }
  return problems;
}
