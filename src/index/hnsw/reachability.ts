/**
 * Who can reach whom on layer 0 of an HNSW graph: the checks behind "every live point is
 * findable". A search descends the upper layers and then walks layer 0 from where the descent
 * ended (a node of level ≥ 1, or the entry point); it finds a node only if that walk can get to
 * it. So every live node must be reachable from the entry point, and every possible start must
 * be able to walk back to the entry point. Tombstones are walked like any node.
 */
import type { HnswGraph } from './hnsw-graph.js';

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

/** 1 for every node reachable on layer 0 from the entry point. */
export function reachedFromEntry(graph: HnswGraph): Uint8Array {
  const reached = new Uint8Array(graph.capacity);
  if (graph.entryPoint >= 0) markReachable(graph, reached, graph.entryPoint);
  return reached;
}

/** 1 for every node from which the entry point is reachable on layer 0: a search backwards over in-links. */
export function reachingEntry(graph: HnswGraph): Uint8Array {
  const capacity = graph.capacity;
  const back = new Uint8Array(capacity);
  if (graph.entryPoint < 0) return back;
  const links0 = graph.links0;
  const stride = 1 + graph.maxM0;
  // In-links as compressed rows: the graph keeps exact in-degrees, so one pass fills them.
  const start = new Int32Array(capacity + 1);
  for (let slot = 0; slot < capacity; slot++) start[slot + 1] = (start[slot] as number) + graph.inDegreeOf(slot);
  const fill = start.slice(0, capacity);
  const from = new Int32Array(start[capacity] as number);
  for (let slot = 0; slot < capacity; slot++) {
    if (!graph.has(slot)) continue;
    const at = slot * stride;
    const count = links0[at] as number;
    for (let i = 1; i <= count; i++) {
      const target = links0[at + i] as number;
      from[fill[target]++] = slot;
    }
  }
  const stack = [graph.entryPoint];
  back[graph.entryPoint] = 1;
  while (stack.length > 0) {
    const node = stack.pop() as number;
    for (let i = start[node] as number; i < (start[node + 1] as number); i++) {
      const source = from[i] as number;
      if (back[source] === 0) {
        back[source] = 1;
        stack.push(source);
      }
    }
  }
  return back;
}

/** Live nodes not reachable on layer 0 from the entry point. */
export function unreachableNodes(graph: HnswGraph): number[] {
  if (graph.entryPoint < 0) return [];
  const reached = reachedFromEntry(graph);
  const out: number[] = [];
  for (let slot = 0; slot < graph.capacity; slot++) if (graph.isLive(slot) && reached[slot] === 0) out.push(slot);
  return out;
}

/** Possible search starts (nodes of level ≥ 1) from which the entry point cannot be reached on layer 0. */
export function strandedStarts(graph: HnswGraph): number[] {
  if (graph.entryPoint < 0) return [];
  const back = reachingEntry(graph);
  const out: number[] = [];
  for (let slot = 0; slot < graph.capacity; slot++) if (graph.has(slot) && graph.levelOf(slot) >= 1 && back[slot] === 0) out.push(slot);
  return out;
}
