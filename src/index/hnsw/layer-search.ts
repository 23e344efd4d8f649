/**
 * Walking an HNSW graph (Malkov & Yashunin, Alg. 2 and the greedy descent of Alg. 1 and 5): the
 * scratch one thread's walks share, and three walks over it.
 *
 * - `descend`: greedy search with ef = 1 through the upper layers.
 * - `forLinks`: the beam search of construction (hnswlib's searchBaseLayer), on any layer. It may
 *   run beside inserts on other threads, so it reads lists under their locks when told to, and
 *   its results include pending nodes (only tombstones and the node itself are left out).
 * - `forResults`: the beam search of queries and of the mender's search for hosts (hnswlib's
 *   searchBaseLayerST), on layer 0 only, with an optional filter and a second start. It never
 *   runs while the graph changes (the read-write gate, threads/read-write-gate.ts), so it
 *   takes no locks; only live nodes become results.
 *
 * What an operation walks with (graph, kernel, locks) comes with each call (`Walk`), never from
 * a mode left set on a shared object.
 */
import { hasBit } from '../../core/slot-bits.js';
import { CandidateHeap } from './candidate-heap.js';
import { type HnswGraph, PENDING, TOMBSTONE } from './hnsw-graph.js';
import { lockSlot, unlockSlot } from './link-locks.js';
import type { SlotScorer } from './slot-scorer.js';
import { VisitedSet } from './visited-set.js';

/** What one operation walks: the graph, the kernel it scores with, and whether others insert alongside. */
export interface Walk {
  readonly graph: HnswGraph;
  readonly scorer: SlotScorer;
  /**
   * The graph's lock table while other threads insert at once (index/hnsw/insert-job.ts): every
   * list is then read, and written, under its lock. null when this thread has the graph alone.
   */
  readonly locks: Int32Array | null;
}

/** A construction search: the walk of one node's insert. */
export interface LinkWalk extends Walk {
  /** Beam width (ef_construction). */
  readonly ef: number;
  /** The node being linked: never its own neighbour. */
  readonly self: number;
}

/**
 * A search for results (a query, or the mender's search for hosts): a descent, then layer 0. It
 * runs only while no thread changes the graph, so it reads lists without locks.
 */
export interface LayerQuery extends Walk {
  readonly locks: null;
  /** Beam width: at most this many results are left in `found`. */
  readonly ef: number;
  /** Only slots that pass become results; null: every live slot. */
  readonly accept: ((slot: number) => boolean) | null;
  /** `accept` as a bitset, tested inline, when the caller has one. */
  readonly bits: Uint32Array | null;
  /** A neighbour `accept` rejects is not scored: its own neighbours that pass are (gatherTwoHop). Only with `accept`. */
  readonly twoHop: boolean;
  /** A slot never returned (the node the mender roots), or -1. */
  readonly exclude: number;
  /**
   * A second start, or -1: the anchor, from which every live node can be reached. With ef at
   * least the number of nodes, the walk then visits every node, wherever the first start lies.
   */
  readonly alsoFrom: number;
}

export class LayerSearch {
  private readonly visited = new VisitedSet();
  private readonly queue = new CandidateHeap('best');
  /** The results of the last `forLinks` or `forResults` (at most ef; worst on top). */
  readonly found = new CandidateHeap('worst');
  /** `found` best first, after `drainSorted`; reused across operations. */
  sortedSlots = new Int32Array(256);
  sortedSims = new Float32Array(256);
  /** Where the last `descend` ended, and its similarity to the query. */
  descentSlot = -1;
  descentSim = 0;

  /** Greedy search with ef = 1 from `entry`, one layer at a time from `fromLayer` down to just above `toLayer`. */
  descend(walk: Walk, entry: number, entrySim: number, fromLayer: number, toLayer: number): void {
    const { graph: g, scorer, locks } = walk;
    const arena = scorer.arena;
    const idsBase = scorer.idsBase;
    const scoresBase = scorer.scoresBase;
    const ids = arena.uint32s;
    let current = entry;
    let currentSim = entrySim;
    for (let layer = fromLayer; layer > toLayer; layer--) {
      for (let improved = true; improved; ) {
        improved = false;
        const { array, offset } = g.links(current, layer);
        // The list is copied to the kernel's id list (under its lock when others insert) and scored there.
        if (locks !== null) lockSlot(locks, current);
        const count = array[offset] as number;
        for (let i = 0; i < count; i++) ids[idsBase + i] = array[offset + 1 + i] as number;
        if (locks !== null) unlockSlot(locks, current);
        if (count === 0) break;
        scorer.scoreIds(count);
        const scores = arena.floats;
        let best = current;
        for (let i = 0; i < count; i++) {
          if ((scores[scoresBase + i] as number) > currentSim) {
            currentSim = scores[scoresBase + i] as number;
            best = ids[idsBase + i] as number;
          }
        }
        if (best !== current) {
          current = best;
          improved = true;
        }
      }
    }
    this.descentSlot = current;
    this.descentSim = currentSim;
  }

  /**
   * The construction beam search of one layer (Alg. 2) from `entry`: leaves in `found` the ef
   * nodes nearest to the query (the arena's, set to `walk.self`'s vector), pending ones included,
   * tombstones and `walk.self` walked but never among them.
   */
  forLinks(walk: LinkWalk, layer: number, entry: number, entrySim: number): void {
    const { graph: g, scorer, locks, ef, self } = walk;
    const queue = this.queue;
    const found = this.found;
    const deleted = g.deleted;
    const idsBase = scorer.idsBase;
    const scoresBase = scorer.scoresBase;
    this.begin(g, entry, entrySim);
    if (((deleted[entry] as number) & TOMBSTONE) === 0 && entry !== self) found.push(entry, entrySim);
    const stride0 = 1 + g.maxM0;
    const links0 = g.links0;
    const ids = scorer.arena.uint32s;
    const scores = scorer.arena.floats;
    for (let current = this.next(ef); current >= 0; current = this.next(ef)) {
      let array: Int32Array;
      let offset: number;
      if (layer === 0) {
        array = links0;
        offset = current * stride0;
      } else {
        const list = g.links(current, layer);
        array = list.array;
        offset = list.offset;
      }
      // Inserts on other threads may be rewriting the list: read it under its lock.
      if (locks !== null) lockSlot(locks, current);
      const n = this.gatherUnvisited(array, offset, ids, idsBase);
      if (locks !== null) unlockSlot(locks, current);
      if (n === 0) continue;
      scorer.scoreIds(n);
      for (let i = 0; i < n; i++) {
        const sim = scores[scoresBase + i] as number;
        if (found.size < ef || sim > found.topSim) {
          const neighbor = ids[idsBase + i] as number;
          queue.push(neighbor, sim);
          if (((deleted[neighbor] as number) & TOMBSTONE) === 0 && neighbor !== self) {
            found.push(neighbor, sim);
            if (found.size > ef) found.pop();
          }
        }
      }
    }
  }

  /**
   * The query beam search of layer 0 (Alg. 2, as Alg. 5 uses it) from `entry` and `q.alsoFrom`:
   * leaves in `found` at most `q.ef` live nodes that pass `q.accept`, nearest to the arena's
   * query. Nodes that fail the filter, tombstones, pending nodes and `q.exclude` are walked but
   * never become results.
   */
  forResults(q: LayerQuery, entry: number, entrySim: number): void {
    const { graph: g, scorer, ef, accept, bits, exclude, alsoFrom } = q;
    const twoHop = q.twoHop && accept !== null;
    const queue = this.queue;
    const found = this.found;
    const visited = this.visited;
    const deleted = g.deleted;
    const idsBase = scorer.idsBase;
    const scoresBase = scorer.scoresBase;
    const hidden = TOMBSTONE | PENDING;
    this.begin(g, entry, entrySim);
    if (((deleted[entry] as number) & hidden) === 0 && entry !== exclude && (accept === null || accept(entry))) found.push(entry, entrySim);
    if (alsoFrom >= 0 && !visited.visit(alsoFrom)) {
      const sim = scorer.one(alsoFrom);
      queue.push(alsoFrom, sim);
      if (((deleted[alsoFrom] as number) & hidden) === 0 && alsoFrom !== exclude && (accept === null || accept(alsoFrom))) {
        found.push(alsoFrom, sim);
        if (found.size > ef) found.pop();
      }
    }

    // Hot loop: lists are read straight from the flat layer-0 array (no per-node allocation), and
    // the visited marks are tested inline.
    const stride0 = 1 + g.maxM0;
    const links0 = g.links0;
    const ids = scorer.arena.uint32s;
    const scores = scorer.arena.floats;
    for (let current = this.next(ef); current >= 0; current = this.next(ef)) {
      const offset = current * stride0;
      const n = twoHop
        ? this.gatherTwoHop(g, offset, accept as (slot: number) => boolean, bits, ids, idsBase)
        : this.gatherUnvisited(links0, offset, ids, idsBase);
      if (n === 0) continue;
      scorer.scoreIds(n);
      for (let i = 0; i < n; i++) {
        const sim = scores[scoresBase + i] as number;
        if (found.size < ef || sim > found.topSim) {
          const neighbor = ids[idsBase + i] as number;
          queue.push(neighbor, sim);
          // Two-hop gathering only lists slots that passed `accept` already. A tombstone is never
          // a result, whatever the filter says of it.
          if (
            ((deleted[neighbor] as number) & hidden) === 0 &&
            neighbor !== exclude &&
            (accept === null || twoHop || (bits !== null ? hasBit(bits, neighbor) : accept(neighbor)))
          ) {
            found.push(neighbor, sim);
            if (found.size > ef) found.pop();
          }
        }
      }
    }
  }

  /** Starts a beam at `entry`: no results yet, nothing visited but the entry, which is the one candidate. */
  private begin(g: HnswGraph, entry: number, entrySim: number): void {
    this.queue.clear();
    this.found.clear();
    this.visited.reset(g.capacity);
    this.visited.visit(entry);
    this.queue.push(entry, entrySim);
  }

  /**
   * Pops the nearest candidate to expand next, or returns -1 when the beam is done: no candidate
   * left, or the nearest is farther than the farthest of `ef` results (Alg. 2's stop).
   */
  private next(ef: number): number {
    const queue = this.queue;
    if (queue.size === 0) return -1;
    const current = queue.topSlot;
    if (this.found.size >= ef && queue.topSim < this.found.topSim) return -1;
    queue.pop();
    return current;
  }

  /** Lists the unvisited slots of the list at `array[offset]` (a count, then the links) in `ids`, marking them visited; returns how many. */
  private gatherUnvisited(array: Int32Array, offset: number, ids: Uint32Array, idsBase: number): number {
    const visited = this.visited;
    const count = array[offset] as number;
    let n = 0;
    for (let i = 1; i <= count; i++) {
      const neighbor = array[offset + i] as number;
      if (!visited.visit(neighbor)) ids[idsBase + n++] = neighbor;
    }
    return n;
  }

  /**
   * Lists the unvisited layer-0 neighbours of the node whose list starts at `offset` that pass
   * `accept`; for each one that does not, lists instead its own unvisited neighbours that pass.
   * Stops at 2m slots, as ACORN truncates its two-hop lists: a node then offers as many
   * candidates as an unfiltered expansion, and the checks stay bounded. `bits`, when given, is
   * `accept` as a bitset, tested inline. Returns how many slots were written to `ids`.
   */
  private gatherTwoHop(g: HnswGraph, offset: number, accept: (slot: number) => boolean, bits: Uint32Array | null, ids: Uint32Array, idsBase: number): number {
    const deleted = g.deleted;
    const visited = this.visited;
    const cap = g.maxM0;
    const links0 = g.links0;
    const stride0 = 1 + g.maxM0;
    const count = links0[offset] as number;
    let n = 0;
    for (let i = 1; i <= count && n < cap; i++) {
      const neighbor = links0[offset + i] as number;
      if (visited.visit(neighbor)) continue;
      if (deleted[neighbor] === 0 && (bits !== null ? hasBit(bits, neighbor) : accept(neighbor))) {
        ids[idsBase + n++] = neighbor;
        continue;
      }
      const at = neighbor * stride0;
      const secondCount = links0[at] as number;
      for (let j = 1; j <= secondCount && n < cap; j++) {
        const next = links0[at + j] as number;
        // Only passing slots are marked: a rejected one may still be reached, and looked past, later.
        if (!visited.has(next) && deleted[next] === 0 && (bits !== null ? hasBit(bits, next) : accept(next))) {
          visited.visit(next);
          ids[idsBase + n++] = next;
        }
      }
    }
    return n;
  }

  /** Empties `found` into sortedSlots/sortedSims, best first; returns the count. */
  drainSorted(): number {
    const found = this.found;
    const n = found.size;
    if (n > this.sortedSlots.length) {
      this.sortedSlots = new Int32Array(n * 2);
      this.sortedSims = new Float32Array(n * 2);
    }
    for (let i = n - 1; i >= 0; i--) {
      this.sortedSlots[i] = found.topSlot;
      this.sortedSims[i] = found.topSim;
      found.pop();
    }
    return n;
  }
}
