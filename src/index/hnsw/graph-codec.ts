/**
 * The HNSW graph as bytes, for snapshots (byte table in docs/storage.md). Little-endian; every
 * section starts 4-byte aligned so the link arrays can be copied as Int32Array views.
 *
 * | offset | size          | field                                            |
 * |--------|---------------|--------------------------------------------------|
 * | 0      | 8             | magic "KHNSWG\0\0"                               |
 * | 8      | 4             | format version (2)                               |
 * | 12     | 4             | m                                                |
 * | 16     | 4             | capacity C (slots covered)                       |
 * | 20     | 4             | entry point (i32, −1 when empty)                 |
 * | 24     | 4             | max level (i32)                                  |
 * | 28     | 4             | node count                                       |
 * | 32     | 4             | tombstone count                                  |
 * | 36     | 4             | upper-layer int count U                          |
 * | 40     | 4·4           | level generator state (sfc32)                    |
 * | 56     | 4             | anchor of the rooted tree (i32, −1 when empty)   |
 * | 60     | C (pad 4)     | levels (i8, −1 = not in graph)                   |
 * | …      | C (pad 4)     | tombstone flags (u8)                             |
 * | …      | 4·C           | tree parent per slot (i32, −1 = none)            |
 * | …      | 4·C           | tree rank per slot (i32)                         |
 * | …      | 4·C·(1+2m)    | layer-0 link lists                               |
 * | …      | 4·U           | upper-layer link lists, by slot, of nodes with level > 0 |
 *
 * Format 1 (before the rooted tree) is format 2 without the anchor, parents and ranks: its graph is
 * rooted anew from the entry point as it is read (every live node was reachable from there when
 * it was written). Integrity (a checksum over the whole snapshot) is the container's job
 * (segment/snapshot.ts).
 */
import { SeededRng } from '../../core/rng.js';
import { HnswGraph } from './hnsw-graph.js';
import type { HnswIndex } from './hnsw-index.js';
import { adoptReachable, treeProblems } from './reachability.js';
import type { TreeParts } from './rooted-tree.js';

const MAGIC = Buffer.from('KHNSWG\0\0', 'latin1');
const FORMAT = 2;
/** Format 1 had no rooted tree: no anchor in the header, no parents and ranks. */
const FORMAT_WITHOUT_TREE = 1;
const HEADER_BYTES = 60;
const HEADER_BYTES_WITHOUT_TREE = 56;

function pad4(n: number): number {
  return (n + 3) & ~3;
}

export function encodeGraph(index: HnswIndex): Uint8Array {
  const g = index.graph;
  const parts = g.parts();
  const capacity = g.capacity;
  const layer0Ints = capacity * (1 + g.maxM0);
  let upperInts = 0;
  for (let slot = 0; slot < capacity; slot++) upperInts += parts.upper[slot]?.length ?? 0;
  const bytes = HEADER_BYTES + 2 * pad4(capacity) + 8 * capacity + 4 * layer0Ints + 4 * upperInts;
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  view.setUint32(8, FORMAT, true);
  view.setUint32(12, g.m, true);
  view.setUint32(16, capacity, true);
  view.setInt32(20, parts.entryPoint, true);
  view.setInt32(24, parts.maxLevel, true);
  view.setUint32(28, g.nodeCount, true);
  view.setUint32(32, g.deletedCount, true);
  view.setUint32(36, upperInts, true);
  index.rngState.state.forEach((word, i) => {
    view.setUint32(40 + 4 * i, word, true);
  });
  view.setInt32(56, g.tree.anchor, true);
  let at = HEADER_BYTES;
  out.set(new Uint8Array(parts.levels.buffer, parts.levels.byteOffset, capacity), at);
  at += pad4(capacity);
  out.set(parts.deleted.subarray(0, capacity), at);
  at += pad4(capacity);
  new Int32Array(out.buffer, at, capacity).set(parts.tree.parents.subarray(0, capacity));
  at += 4 * capacity;
  new Int32Array(out.buffer, at, capacity).set(parts.tree.ranks.subarray(0, capacity));
  at += 4 * capacity;
  new Int32Array(out.buffer, at, layer0Ints).set(parts.links0.subarray(0, layer0Ints));
  at += 4 * layer0Ints;
  const upper = new Int32Array(out.buffer, at, upperInts);
  let u = 0;
  for (let slot = 0; slot < capacity; slot++) {
    const lists = parts.upper[slot];
    if (lists === undefined) continue;
    upper.set(lists, u);
    u += lists.length;
  }
  return out;
}

/**
 * Loads a graph written by `encodeGraph` into an empty index. Returns a reason string when the
 * bytes do not describe a sound graph of this index's parameters (the caller then rebuilds instead).
 */
export function decodeGraphInto(index: HnswIndex, bytes: Uint8Array): string | undefined {
  if (bytes.length < HEADER_BYTES_WITHOUT_TREE || !Buffer.from(bytes.subarray(0, 8)).equals(MAGIC)) return 'not a graph snapshot';
  const copy = bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes);
  const view = new DataView(copy.buffer, copy.byteOffset, copy.byteLength);
  const format = view.getUint32(8, true);
  if (format !== FORMAT && format !== FORMAT_WITHOUT_TREE) return `unknown graph format ${format}`;
  const withTree = format === FORMAT;
  const m = index.params.m;
  if (view.getUint32(12, true) !== m) return `graph has m=${view.getUint32(12, true)}, the collection m=${m}`;
  const capacity = view.getUint32(16, true);
  const upperInts = view.getUint32(36, true);
  const layer0Ints = capacity * (1 + 2 * m);
  const treeBytes = withTree ? HEADER_BYTES - HEADER_BYTES_WITHOUT_TREE + 8 * capacity : 0;
  const expected = HEADER_BYTES_WITHOUT_TREE + treeBytes + 2 * pad4(capacity) + 4 * layer0Ints + 4 * upperInts;
  if (copy.length !== expected) return `graph section is ${copy.length} bytes, expected ${expected}`;

  let at = withTree ? HEADER_BYTES : HEADER_BYTES_WITHOUT_TREE;
  const levels = new Int8Array(copy.buffer, copy.byteOffset + at, capacity);
  at += pad4(capacity);
  const deleted = copy.subarray(at, at + capacity);
  at += pad4(capacity);
  let tree: TreeParts | undefined;
  if (withTree) {
    const parents = new Int32Array(copy.buffer, copy.byteOffset + at, capacity);
    const ranks = new Int32Array(copy.buffer, copy.byteOffset + at + 4 * capacity, capacity);
    tree = { parents, ranks, anchor: view.getInt32(56, true) };
    at += 8 * capacity;
  }
  const links0 = new Int32Array(copy.buffer, copy.byteOffset + at, layer0Ints);
  at += 4 * layer0Ints;
  const upperInput = new Int32Array(copy.buffer, copy.byteOffset + at, upperInts);

  const upper: Array<Int32Array | undefined> = new Array(capacity);
  let u = 0;
  for (let slot = 0; slot < capacity; slot++) {
    const level = levels[slot] as number;
    if (level <= 0) continue;
    const ints = level * (1 + m);
    if (u + ints > upperInts) return 'upper-layer section too short';
    upper[slot] = upperInput.slice(u, u + ints);
    u += ints;
  }
  if (u !== upperInts) return 'upper-layer section too long';
  const graph = HnswGraph.fromParts(m, { levels, deleted, links0, upper, entryPoint: view.getInt32(20, true), maxLevel: view.getInt32(24, true), tree });
  if (typeof graph === 'string') return graph;
  if (graph.nodeCount !== view.getUint32(28, true) || graph.deletedCount !== view.getUint32(32, true)) return 'node counts disagree';
  if (!withTree && graph.nodeCount > 0) {
    graph.tree.reset(graph.entryPoint);
    adoptReachable(graph, graph.entryPoint);
  }
  const problems = treeProblems(graph);
  if (problems.length > 0) return `rooted tree: ${problems[0]}`;
  const state = [0, 1, 2, 3].map((i) => view.getUint32(40 + 4 * i, true)) as [number, number, number, number];
  index.restore(graph, SeededRng.fromState(index.params.seed, state));
  return undefined;
}
