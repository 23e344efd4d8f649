/**
 * HNSW after Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search using
 * Hierarchical Navigable Small World graphs" (2016/2018). Section numbers below refer to it.
 *
 * - Levels come from a seeded generator: ⌊−ln(U)·mL⌋ with mL = 1/ln(m) (§4.1).
 * - Insert (Alg. 1): greedy descent with ef = 1 to the node's level, then per layer a beam search
 *   of width ef_construction (Alg. 2) and the neighbour-selection heuristic (Alg. 4) for m links;
 *   reverse links are added and an overfull list (m above layer 0, 2m on it) is re-selected with
 *   the same heuristic.
 * - Search (Alg. 5): greedy descent, then a beam of max(ef, k) on layer 0. With a filter, nodes
 *   that fail it are still walked but never enter the result set.
 * - Delete: the node becomes a tombstone (still walked, never returned); every neighbour that linked
 *   to it re-selects its links among its other links and the tombstone's. Compaction later scrubs
 *   every remaining link to tombstones and frees their slots.
 *
 * Similarities are "higher is better" throughout (core/distance.ts).
 */
import { SeededRng } from '../../core/rng.js';
import { hasBit } from '../../core/slot-bits.js';
import { TopK } from '../../core/top-k.js';
import type { DistanceKernel } from '../../kernels/distance-kernel.js';
import type { SearchHits, SearchOptions, SlotTable, VectorIndex } from '../vector-index.js';
import { CandidateHeap } from './candidate-heap.js';
import { HnswGraph } from './hnsw-graph.js';
import { VisitedSet } from './visited-set.js';

/** The arena as HNSW needs it: kernel scratch views and a way to make a stored vector the query. */
export interface GraphArena {
  readonly uint32s: Uint32Array;
  readonly floats: Float32Array;
  readonly idsByteOffset: number;
  readonly scoresByteOffset: number;
  setQueryFromSlot(slot: number): void;
}

export interface HnswParams {
  readonly m: number;
  readonly efConstruction: number;
  readonly efSearch: number;
  readonly seed: number;
}

/** Share of tombstones in the graph above which `needsCompaction()` says so. */
export const COMPACTION_SHARE = 0.1;

/** Below this many nodes, connectivity is checked (and mended) after every write. */
export const ALWAYS_CHECK_CONNECTIVITY_BELOW = 20000;

export class HnswIndex implements VectorIndex {
  readonly kind = 'hnsw' as const;
  readonly graph: HnswGraph;
  private rng: SeededRng;
  private readonly mL: number;
  private readonly visited = new VisitedSet();
  private readonly queue = new CandidateHeap('best');
  private readonly found = new CandidateHeap('worst');
  /** Sorted copies of the result set, reused across inserts. */
  private bufSlots = new Int32Array(256);
  private bufSims = new Float32Array(256);
  private readonly selected: Int32Array;
  /** Distances computed since the current search began (for `stats`). */
  private scored = 0;

  constructor(
    private readonly arena: GraphArena,
    private readonly kernel: DistanceKernel,
    private readonly table: SlotTable,
    readonly params: HnswParams,
  ) {
    this.graph = new HnswGraph(params.m);
    this.rng = new SeededRng(params.seed);
    this.mL = 1 / Math.log(Math.max(2, params.m));
    this.selected = new Int32Array(2 * params.m + 1);
  }

  /** The level generator's state, saved with graph snapshots so levels stay reproducible. */
  get rngState(): SeededRng {
    return this.rng;
  }

  restoreRng(rng: SeededRng): void {
    this.rng = rng;
  }

  // ---- insert (Alg. 1) ------------------------------------------------------------------------

  add(slot: number): void {
    const g = this.graph;
    g.reserve(slot + 1);
    if (g.has(slot)) throw new Error(`slot ${slot} is already in the graph`);
    const level = Math.min(63, Math.floor(-Math.log(1 - this.rng.next()) * this.mL));
    const entry = g.entryPoint;
    const topLevel = g.maxLevel;
    g.addNode(slot, level);
    if (entry < 0) return;

    this.arena.setQueryFromSlot(slot);
    let ep = entry;
    let epSim = this.scoreOne(ep);
    for (let layer = topLevel; layer > level; layer--) [ep, epSim] = this.greedy(ep, epSim, layer);
    for (let layer = Math.min(level, topLevel); layer >= 0; layer--) {
      this.searchLayer(ep, epSim, this.params.efConstruction, layer, undefined, slot);
      const n = this.drainFoundSorted();
      if (n === 0) continue;
      ep = this.bufSlots[0] as number;
      epSim = this.bufSims[0] as number;
      const count = this.selectNeighbors(this.bufSlots, this.bufSims, n, this.params.m, this.selected);
      g.setLinks(slot, layer, this.selected, count);
      const chosen = this.selected.slice(0, count);
      for (const neighbor of chosen) this.connect(neighbor, slot, layer);
      // Re-selecting a full list moved the query; the next layer down needs it back.
      if (layer > 0) this.arena.setQueryFromSlot(slot);
    }
  }

  /** Adds `target` to `node`'s links at `layer`, re-selecting them if the list is full. */
  private connect(node: number, target: number, layer: number): void {
    const g = this.graph;
    if (this.linksTo(node, layer, target)) return;
    const { array, offset } = g.links(node, layer);
    const count = array[offset] as number;
    const cap = g.capacityAt(layer);
    if (count < cap) {
      array[offset + 1 + count] = target;
      array[offset] = count + 1;
      return;
    }
    const candidates = Array.from(array.subarray(offset + 1, offset + 1 + count));
    candidates.push(target);
    this.reselect(node, layer, candidates);
  }

  /** Sets `node`'s links at `layer` to the heuristic's choice among `candidates` (live, ≠ node). */
  private reselect(node: number, layer: number, candidates: number[]): void {
    const n = candidates.length;
    this.ensureBuffers(n);
    this.arena.setQueryFromSlot(node);
    const scores = this.scoreSlots(candidates, n);
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (scores[b] as number) - (scores[a] as number));
    for (let i = 0; i < n; i++) {
      this.bufSlots[i] = candidates[order[i] as number] as number;
      this.bufSims[i] = scores[order[i] as number] as number;
    }
    const count = this.selectNeighbors(this.bufSlots, this.bufSims, n, this.graph.capacityAt(layer), this.selected);
    this.graph.setLinks(node, layer, this.selected, count);
  }

  /**
   * The neighbour-selection heuristic (Alg. 4, without extending candidates or keeping pruned
   * ones, as hnswlib): walk candidates best first, keep one unless it is closer to an already
   * kept neighbour than to the base. Candidates must be sorted by similarity to the base, best first.
   */
  private selectNeighbors(slots: Int32Array, sims: Float32Array, count: number, max: number, out: Int32Array): number {
    if (count <= max) {
      out.set(slots.subarray(0, count));
      return count;
    }
    let kept = 0;
    for (let i = 0; i < count && kept < max; i++) {
      const candidate = slots[i] as number;
      let good = true;
      if (kept > 0) {
        this.arena.setQueryFromSlot(candidate);
        const toKept = this.scoreSlots(out, kept);
        const toBase = sims[i] as number;
        for (let j = 0; j < kept; j++) {
          if ((toKept[j] as number) > toBase) {
            good = false;
            break;
          }
        }
      }
      if (good) out[kept++] = candidate;
    }
    return kept;
  }

  // ---- search (Alg. 2 and 5) ------------------------------------------------------------------

  search(options: SearchOptions): SearchHits {
    const g = this.graph;
    const top = new TopK(options.k, (slot) => this.table.idOf(slot));
    if (options.k <= 0 || g.entryPoint < 0) return top.drainSorted();
    const ef = Math.max(options.ef ?? this.params.efSearch, options.k);
    this.scored = 0;
    let ep = g.entryPoint;
    let epSim = this.scoreOne(ep);
    for (let layer = g.maxLevel; layer > 0; layer--) [ep, epSim] = this.greedy(ep, epSim, layer);
    const bits = options.acceptBits;
    const accept = options.accept ?? (bits !== undefined ? (slot: number) => hasBit(bits, slot) : null);
    this.searchLayer(ep, epSim, ef, 0, accept, -1, accept !== null && options.twoHop === true, bits ?? null);
    const { slots, sims, count } = this.found.entries();
    for (let i = 0; i < count; i++) top.offer(slots[i] as number, sims[i] as number);
    if (options.stats !== undefined) options.stats.scored += this.scored;
    return top.drainSorted();
  }

  /**
   * Beam search of one layer (Alg. 2) from one entry point; leaves at most `ef` results in
   * `this.found`. Tombstones, `exclude`, and (when given) slots `accept` rejects are walked but
   * never become results. `accept` undefined means construction (only tombstones are excluded).
   * With `twoHop`, a neighbour `accept` rejects is not scored: its own neighbours that pass are.
   * `bits`, when given, is `accept` as a bitset, tested inline.
   */
  private searchLayer(
    entry: number,
    entrySim: number,
    ef: number,
    layer: number,
    accept: ((slot: number) => boolean) | null | undefined,
    exclude: number,
    twoHop = false,
    bits: Uint32Array | null = null,
  ): void {
    const g = this.graph;
    const queue = this.queue;
    const found = this.found;
    const deleted = g.deleted;
    const arena = this.arena;
    const idsBase = arena.idsByteOffset >> 2;
    const scoresBase = arena.scoresByteOffset >> 2;
    queue.clear();
    found.clear();
    this.visited.reset(g.capacity);
    this.visited.visit(entry);
    queue.push(entry, entrySim);
    if (deleted[entry] === 0 && entry !== exclude && (accept == null || accept(entry))) found.push(entry, entrySim);

    // Hot loop: layer 0 is read straight from the flat link array (no per-node allocation), and
    // the visited marks are tested inline.
    const stride0 = 1 + g.maxM0;
    const links0 = g.links0;
    const ids = arena.uint32s;
    const scores = arena.floats;
    const visited = this.visited;
    while (queue.size > 0) {
      const current = queue.topSlot;
      if (found.size >= ef && queue.topSim < found.topSim) break;
      queue.pop();
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
      const count = array[offset] as number;
      let n = 0;
      if (twoHop && accept != null) {
        n = this.gatherTwoHop(array, offset, count, layer, accept, bits, ids, idsBase);
      } else {
        for (let i = 1; i <= count; i++) {
          const neighbor = array[offset + i] as number;
          if (!visited.visit(neighbor)) ids[idsBase + n++] = neighbor;
        }
      }
      if (n === 0) continue;
      this.kernel.scoreIds(n);
      this.scored += n;
      for (let i = 0; i < n; i++) {
        const sim = scores[scoresBase + i] as number;
        if (found.size < ef || sim > found.topSim) {
          const neighbor = ids[idsBase + i] as number;
          queue.push(neighbor, sim);
          // Two-hop gathering only lists slots that passed `accept` already.
          if (deleted[neighbor] === 0 && neighbor !== exclude && (accept == null || twoHop || (bits !== null ? hasBit(bits, neighbor) : accept(neighbor)))) {
            found.push(neighbor, sim);
            if (found.size > ef) found.pop();
          }
        }
      }
    }
  }

  /**
   * Lists the unvisited neighbours of a node that pass `accept`; for each one that does not, lists
   * instead its own unvisited neighbours that pass. Stops at 2m slots, as ACORN truncates its
   * two-hop lists: a node then offers as many candidates as an unfiltered expansion, and the
   * checks stay bounded. `bits`, when given, is `accept` as a bitset, tested inline. Returns how
   * many slots were written to `ids`.
   */
  private gatherTwoHop(
    array: Int32Array,
    offset: number,
    count: number,
    layer: number,
    accept: (slot: number) => boolean,
    bits: Uint32Array | null,
    ids: Uint32Array,
    idsBase: number,
  ): number {
    const g = this.graph;
    const visited = this.visited;
    const cap = g.maxM0;
    const links0 = g.links0;
    const stride0 = 1 + g.maxM0;
    let n = 0;
    for (let i = 1; i <= count && n < cap; i++) {
      const neighbor = array[offset + i] as number;
      if (visited.visit(neighbor)) continue;
      if (bits !== null ? hasBit(bits, neighbor) : accept(neighbor)) {
        ids[idsBase + n++] = neighbor;
        continue;
      }
      let second: Int32Array;
      let at: number;
      if (layer === 0) {
        second = links0;
        at = neighbor * stride0;
      } else {
        const list = g.links(neighbor, layer);
        second = list.array;
        at = list.offset;
      }
      const secondCount = second[at] as number;
      for (let j = 1; j <= secondCount && n < cap; j++) {
        const next = second[at + j] as number;
        // Only passing slots are marked: a rejected one may still be reached, and looked past, later.
        if (!visited.has(next) && (bits !== null ? hasBit(bits, next) : accept(next))) {
          visited.visit(next);
          ids[idsBase + n++] = next;
        }
      }
    }
    return n;
  }

  /** Greedy search with ef = 1 on an upper layer. */
  private greedy(entry: number, entrySim: number, layer: number): [number, number] {
    let current = entry;
    let currentSim = entrySim;
    for (let improved = true; improved; ) {
      improved = false;
      const { array, offset } = this.graph.links(current, layer);
      const count = array[offset] as number;
      if (count === 0) break;
      const scores = this.scoreSlots(array.subarray(offset + 1, offset + 1 + count), count);
      let best = current;
      for (let i = 0; i < count; i++) {
        if ((scores[i] as number) > currentSim) {
          currentSim = scores[i] as number;
          best = array[offset + 1 + i] as number;
        }
      }
      if (best !== current) {
        current = best;
        improved = true;
      }
    }
    return [current, currentSim];
  }

  // ---- delete, repair, compaction -------------------------------------------------------------

  /** Tombstones the slot and repairs its neighbours. The slot is not reusable until compaction. */
  remove(slot: number): void {
    const g = this.graph;
    if (!g.isLive(slot)) return;
    g.markDeleted(slot);
    for (let layer = 0; layer <= g.levelOf(slot); layer++) {
      const { array, offset } = g.links(slot, layer);
      const neighbors = Array.from(array.subarray(offset + 1, offset + 1 + (array[offset] as number)));
      for (const neighbor of neighbors) if (g.isLive(neighbor) && this.linksTo(neighbor, layer, slot)) this.repair(neighbor, layer);
    }
    if (g.entryPoint === slot) g.chooseEntryPoint();
  }

  needsCompaction(): boolean {
    return this.graph.deletedCount > 0 && this.graph.deletedCount > COMPACTION_SHARE * this.graph.nodeCount;
  }

  /** Scrubs every link to a tombstone, drops the tombstones and returns their (now free) slots. */
  compact(): number[] {
    const g = this.graph;
    const dead: number[] = [];
    for (let slot = 0; slot < g.capacity; slot++) {
      if (!g.has(slot)) continue;
      if (g.deleted[slot] === 1) {
        dead.push(slot);
        continue;
      }
      for (let layer = 0; layer <= g.levelOf(slot); layer++) {
        const { array, offset } = g.links(slot, layer);
        const count = array[offset] as number;
        for (let i = 1; i <= count; i++) {
          if (g.deleted[array[offset + i] as number] === 1) {
            this.repair(slot, layer);
            break;
          }
        }
      }
    }
    for (const slot of dead) g.dropNode(slot);
    if (g.entryPoint < 0 || !g.has(g.entryPoint) || g.deleted[g.entryPoint] === 1) g.chooseEntryPoint();
    this.ensureConnected();
    return dead;
  }

  /**
   * Re-selects `node`'s links at `layer` without tombstones: candidates are its live links plus
   * the live links of every tombstone it linked to (Qdrant and hnswlib repair the same way).
   */
  private repair(node: number, layer: number): void {
    const g = this.graph;
    const { array, offset } = g.links(node, layer);
    const count = array[offset] as number;
    const candidates = new Set<number>();
    for (let i = 1; i <= count; i++) {
      const neighbor = array[offset + i] as number;
      if (g.deleted[neighbor] === 0) {
        candidates.add(neighbor);
        continue;
      }
      if (g.levelOf(neighbor) < layer) continue;
      const via = g.links(neighbor, layer);
      const viaCount = via.array[via.offset] as number;
      for (let j = 1; j <= viaCount; j++) {
        const second = via.array[via.offset + j] as number;
        if (second !== node && g.isLive(second)) candidates.add(second);
      }
    }
    if (candidates.size === 0) {
      g.setLinks(node, layer, [], 0);
      return;
    }
    this.reselect(node, layer, [...candidates]);
  }

  private linksTo(node: number, layer: number, target: number): boolean {
    const { array, offset } = this.graph.links(node, layer);
    const count = array[offset] as number;
    for (let i = 1; i <= count; i++) if (array[offset + i] === target) return true;
    return false;
  }

  // ---- connectivity ---------------------------------------------------------------------------

  /** Live nodes not reachable on layer 0 from the entry point (tombstones are walked). */
  unreachable(): number[] {
    const g = this.graph;
    if (g.entryPoint < 0) return [];
    const reached = this.reachedFromEntry();
    const out: number[] = [];
    for (let slot = 0; slot < g.capacity; slot++) if (g.isLive(slot) && reached[slot] === 0) out.push(slot);
    return out;
  }

  /**
   * Mends reachability: each live node the entry point cannot reach on layer 0 gets a link from
   * its nearest reachable node (found by a graph search), replacing that node's link to the
   * target with the most in-links when the list is full. Returns how many nodes were re-attached.
   */
  ensureConnected(): number {
    const g = this.graph;
    if (g.entryPoint < 0) return 0;
    let mended = 0;
    let inDegree: Int32Array | undefined;
    // A replaced link can orphan its old target; a few passes settle that.
    for (let pass = 0; pass < 4; pass++) {
      const reached = this.reachedFromEntry();
      let mendedThisPass = 0;
      for (let slot = 0; slot < g.capacity; slot++) {
        if (!g.isLive(slot) || reached[slot] === 1) continue;
        this.arena.setQueryFromSlot(slot);
        this.searchLayer(g.entryPoint, this.scoreOne(g.entryPoint), this.params.efConstruction, 0, (s) => reached[s] === 1, slot);
        if (this.drainFoundSorted() === 0) continue;
        inDegree ??= this.inDegrees();
        this.attach(this.bufSlots[0] as number, slot, inDegree);
        this.markReachable(reached, slot);
        mendedThisPass++;
      }
      mended += mendedThisPass;
      if (mendedThisPass === 0) break;
    }
    return mended;
  }

  /** Links `from` → `target` on layer 0; a full list gives up its link to the most linked-to node. */
  private attach(from: number, target: number, inDegree: Int32Array): void {
    const g = this.graph;
    const { array, offset } = g.links(from, 0);
    const count = array[offset] as number;
    inDegree[target] = (inDegree[target] as number) + 1;
    if (count < g.maxM0) {
      array[offset + 1 + count] = target;
      array[offset] = count + 1;
      return;
    }
    let victim = 1;
    for (let i = 2; i <= count; i++) {
      if ((inDegree[array[offset + i] as number] as number) > (inDegree[array[offset + victim] as number] as number)) victim = i;
    }
    const old = array[offset + victim] as number;
    inDegree[old] = (inDegree[old] as number) - 1;
    array[offset + victim] = target;
  }

  private inDegrees(): Int32Array {
    const g = this.graph;
    const inDegree = new Int32Array(g.capacity);
    for (let slot = 0; slot < g.capacity; slot++) {
      if (!g.has(slot)) continue;
      const { array, offset } = g.links(slot, 0);
      const count = array[offset] as number;
      for (let i = 1; i <= count; i++) inDegree[array[offset + i] as number]++;
    }
    return inDegree;
  }

  private reachedFromEntry(): Uint8Array {
    const reached = new Uint8Array(this.graph.capacity);
    this.markReachable(reached, this.graph.entryPoint);
    return reached;
  }

  private markReachable(reached: Uint8Array, start: number): void {
    const g = this.graph;
    const stack = [start];
    reached[start] = 1;
    while (stack.length > 0) {
      const node = stack.pop() as number;
      const { array, offset } = g.links(node, 0);
      const count = array[offset] as number;
      for (let i = 1; i <= count; i++) {
        const next = array[offset + i] as number;
        if (reached[next] === 0) {
          reached[next] = 1;
          stack.push(next);
        }
      }
    }
  }

  // ---- scoring helpers ------------------------------------------------------------------------

  private scoreOne(slot: number): number {
    this.arena.uint32s[this.arena.idsByteOffset >> 2] = slot;
    this.kernel.scoreIds(1);
    this.scored++;
    return this.arena.floats[this.arena.scoresByteOffset >> 2] as number;
  }

  /** Scores slots against the query; the returned view is valid until the next kernel call. */
  private scoreSlots(slots: ArrayLike<number>, count: number): Float32Array {
    const arena = this.arena;
    const idsBase = arena.idsByteOffset >> 2;
    const ids = arena.uint32s;
    for (let i = 0; i < count; i++) ids[idsBase + i] = slots[i] as number;
    this.kernel.scoreIds(count);
    this.scored += count;
    const scoresBase = arena.scoresByteOffset >> 2;
    return arena.floats.subarray(scoresBase, scoresBase + count);
  }

  /** Empties `found` into bufSlots/bufSims, best first; returns the count. */
  private drainFoundSorted(): number {
    const n = this.found.size;
    this.ensureBuffers(n);
    for (let i = n - 1; i >= 0; i--) {
      this.bufSlots[i] = this.found.topSlot;
      this.bufSims[i] = this.found.topSim;
      this.found.pop();
    }
    return n;
  }

  private ensureBuffers(n: number): void {
    if (n <= this.bufSlots.length) return;
    this.bufSlots = new Int32Array(n * 2);
    this.bufSims = new Float32Array(n * 2);
  }
}
