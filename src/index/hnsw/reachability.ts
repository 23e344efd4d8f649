/**
 * Who can reach whom on layer 0 of an HNSW graph: the checks behind "every live point is
 * findable". A search walks layer 0 from where its descent ended and from the anchor at once
 * (HnswIndex.search), so it can find every node the anchor reaches. The rooted tree
 * (index/hnsw/graph-mender.ts) is what keeps every live node so reached; these functions check
 * it from scratch. Tombstones are walked like any node.
 */
import { type HnswGraph, TOMBSTONE } from './hnsw-graph.js';
import { UNRANKED, UNROOTED } from './rooted-tree.js';

/** Marks (1) every node reachable on layer 0 from `start`, depth first, in `reached`. */
export function markReachable(graph: HnswGraph, reached: Uint8Array, start: number): void {
  const links0 = graph.links0;
  const stride = 1 + graph.maxM0;
  const stack = [start];
  reached[start] = 1;
  while (stack.length > 0) {
    const at = (stack.pop() as number) * stride;
    const count = links0[at] as number;
    for (let i = 1; i <= count; i++) {
      const next = links0[at + i] as number;
      if (reached[next] === 0) {
        reached[next] = 1;
        stack.push(next);
      }
    }
  }
}

/** Roots every unrooted node reachable on layer 0 from rooted `start`, breadth first (each under the node it was first reached from). */
export function adoptReachable(graph: HnswGraph, start: number): void {
  const links0 = graph.links0;
  const stride = 1 + graph.maxM0;
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as number;
    const at = node * stride;
    const count = links0[at] as number;
    for (let i = 1; i <= count; i++) {
      const next = links0[at + i] as number;
      if (!graph.tree.isRooted(next)) {
        graph.tree.adopt(next, node);
        queue.push(next);
      }
    }
  }
}

/** Live nodes not reachable on layer 0 from the anchor. */
export function unreachableNodes(graph: HnswGraph): number[] {
  if (graph.tree.anchor < 0) return [];
  const reached = new Uint8Array(graph.capacity);
  markReachable(graph, reached, graph.tree.anchor);
  const out: number[] = [];
  for (let slot = 0; slot < graph.capacity; slot++) if (graph.isLive(slot) && reached[slot] === 0) out.push(slot);
  return out;
}

/**
 * What is wrong with the rooted tree (index/hnsw/rooted-tree.ts), empty when it is sound: the
 * anchor is a node and its own parent; every node that is not a tombstone has a parent; a parent
 * is a rooted node that links to its child on layer 0 and has a lower rank. Ranks falling along
 * every chain of parents is what makes each chain end at the anchor, so no chain is followed.
 */
export function treeProblems(graph: HnswGraph): string[] {
  const problems: string[] = [];
  if (graph.nodeCount === 0) return problems;
  const tree = graph.tree;
  const anchor = tree.anchor;
  if (!graph.has(anchor)) return [`the anchor ${anchor} is not in the graph`];
  for (let slot = 0; slot < graph.capacity; slot++) {
    const parent = tree.parentOf(slot);
    if (!graph.has(slot)) {
      if (parent !== UNROOTED) problems.push(`slot ${slot} is not in the graph but has parent ${parent}`);
    } else if (parent === UNROOTED) {
      if (graph.deleted[slot] !== TOMBSTONE) problems.push(`slot ${slot} has no parent`);
    } else if (slot === anchor || parent === slot) {
      if (slot !== parent || slot !== anchor) problems.push(`slot ${slot} has parent ${parent}, the anchor is ${anchor}`);
    } else if (!graph.has(parent) || !tree.isRooted(parent) || !graph.linksTo(parent, 0, slot)) {
      problems.push(`slot ${slot}: parent ${parent} is not a rooted node that links to it`);
    } else if (!(tree.rankOf(parent) < tree.rankOf(slot)) || tree.rankOf(slot) === UNRANKED) {
      problems.push(`slot ${slot} has rank ${tree.rankOf(slot)}, its parent ${parent} rank ${tree.rankOf(parent)}`);
    }
  }
  return problems;
}
