/**
 * HNSW after Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search using
 * Hierarchical Navigable Small World graphs" (2016/2018). Section numbers below refer to it.
 *
 * - Levels come from a seeded generator: ⌊−ln(U)·mL⌋ with mL = 1/ln(m) (§4.1).
 * - Insert (Alg. 1): greedy descent with ef = 1 to the node's level, then per layer a beam search
 *   of width ef_construction (Alg. 2) and the neighbour-selection heuristic (Alg. 4) for m links;
 *   reverse links are added and an overfull list (m above layer 0, 2m on it) is re-selected with
 *   the same heuristic.
 * - Search (Alg. 5): greedy descent, then a beam of max(ef, k) on layer 0, started from where the
 *   descent ended and from the anchor of the rooted tree (graph-mender.ts), which reaches every
 *   live node. With a filter, nodes that fail it are still walked but never enter the result set.
 * - Delete: the node becomes a tombstone (still walked, never returned); every neighbour that linked
 *   to it re-selects its links among its other links and the tombstone's. Compaction later scrubs
 *   every remaining link to tombstones and frees their slots.
 * - Every layer-0 list keeps its pinned links (to the nodes it is the tree parent of) through
 *   every re-selection, so no write can cut a live node off (graph-mender.ts).
 *
 * Similarities are "higher is better" throughout (core/distance.ts).
 */
import { SeededRng } from '../../core/rng.js';
import { hasBit } from '../../core/slot-bits.js';
import { TopK } from '../../core/top-k.js';
import type { DistanceKernel } from '../../kernels/distance-kernel.js';
import type { SearchHits, SearchOptions, SlotTable, VectorIndex } from '../vector-index.js';
import { CandidateHeap } from './candidate-heap.js';
import { GraphMender } from './graph-mender.js';
import { HnswGraph, PENDING, TOMBSTONE } from './hnsw-graph.js';
import { awaitInsertJob, forEachClaim, type InsertHelpers, type InsertJob, newInsertJob, PARALLEL_INSERT_MIN } from './insert-job.js';
import { lockSlot, tryLockSlot, unlockSlot } from './link-locks.js';
import { unreachableNodes } from './reachability.js';
import { VisitedSet } from './visited-set.js';

/** The arena as HNSW needs it: kernel scratch views, the query, and the stored vectors. */
export interface GraphArena {
  readonly uint32s: Uint32Array;
  readonly floats: Float32Array;
  readonly idsByteOffset: number;
  readonly scoresByteOffset: number;
  setQuery(query: Float32Array): void;
  /** Makes a stored vector the query (construction searches for a stored point's neighbours). */
  setQueryFromSlot(slot: number): void;
  sameVector(a: number, b: number): boolean;
}

export interface HnswParams {
  readonly m: number;
  readonly efConstruction: number;
  readonly efSearch: number;
  readonly seed: number;
}

/** Share of tombstones in the graph above which `needsCompaction()` says so. */
export const COMPACTION_SHARE = 0.1;

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

/** The narrowest beam searching for hosts to root a node under. */
const MENDING_EF = 64;

export class HnswIndex implements VectorIndex {
  readonly kind = 'hnsw' as const;
  private g: HnswGraph;
  private rng: SeededRng;
  private readonly mL: number;
  private readonly visited = new VisitedSet();
  private readonly queue = new CandidateHeap('best');
  private readonly found = new CandidateHeap('worst');
  /** Sorted copies of the result set, reused across inserts. */
  private bufSlots = new Int32Array(256);
  private bufSims = new Float32Array(256);
  private readonly selected: Int32Array;
  /** Scratch of selectNeighbors: kept non-duplicate links, and pruned candidates by kind. */
  private readonly diverse: Int32Array;
  private prunedNear = new Int32Array(256);
  private prunedCopies = new Int32Array(256);
  /** Distances computed since the current search began (for `stats`). */
  private scored = 0;
  private readonly mender: GraphMender;

  /** The kernel of the operation under way: `buildKernel` while the graph changes, `kernel` in searches. */
  private scorer: DistanceKernel;
  /** Inserting alongside other threads (`runInsertJob`): lists are read and written under their locks. */
  private concurrent = false;
  /** Nodes inserted by this index's owner alone, and through jobs shared with other threads (`addMany`). */
  readonly inserts = { alone: 0, shared: 0 };

  /**
   * @param kernel scores searches (the collection's metric)
   * @param buildKernel scores while building and mending the graph: the same kernel, except where
   *   the metric is not a distance (inner product), whose graph is built by Euclidean distance
   */
  constructor(
    private readonly arena: GraphArena,
    private readonly kernel: DistanceKernel,
    private readonly buildKernel: DistanceKernel,
    private readonly table: SlotTable,
    readonly params: HnswParams,
  ) {
    this.scorer = buildKernel;
    this.g = new HnswGraph(params.m);
    this.rng = new SeededRng(params.seed);
    this.mL = 1 / Math.log(Math.max(2, params.m));
    this.selected = new Int32Array(2 * params.m + 1);
    this.diverse = new Int32Array(2 * params.m + 1);
    const index = this;
    this.mender = new GraphMender({
      get graph() {
        return index.g;
      },
      setQuery: (slot) => this.arena.setQueryFromSlot(slot),
      score: (slots, count) => this.scoreSlots(slots, count),
      nearest: (exclude, accept) => Array.from(this.bufSlots.subarray(0, this.nearestTo(exclude, accept))),
    });
  }

  get graph(): HnswGraph {
    return this.g;
  }

  /** The level generator's state, saved with graph snapshots so levels stay reproducible. */
  get rngState(): SeededRng {
    return this.rng;
  }

  /** Takes over a graph decoded from a snapshot (index/hnsw/graph-codec.ts), with its generator state. */
  restore(graph: HnswGraph, rng: SeededRng): void {
    if (graph.m !== this.params.m) throw new Error(`graph has m=${graph.m}, the index m=${this.params.m}`);
    this.g = graph;
    this.rng = rng;
  }

  // ---- insert (Alg. 1) ------------------------------------------------------------------------

  /** Inserts a slot whose vector is already in the arena. Changes the arena's query. */
  add(slot: number): void {
    this.addMany([slot]);
  }

  /**
   * Inserts many slots whose vectors are already in the arena, searchable at once: `addPending`,
   * `linkPending` and `publish` in one step. Without helpers this builds exactly what `add` in
   * order builds.
   */
  addMany(slots: readonly number[], helpers?: InsertHelpers): void {
    const shared = helpers !== undefined && slots.length >= PARALLEL_INSERT_MIN;
    this.linkPending(this.addPending(slots, shared), shared ? helpers : undefined);
    this.publish(slots);
  }

  /**
   * The first step of an insert that searches may watch (a batch linked in steps, searches
   * between them): adds a pending node for each slot (HnswGraph PENDING: linked and walked like
   * any node, returned by no search until `publish`), levels drawn in slot order exactly as `add`
   * draws them. Returns the slots to link, in order. With `linkNow` (inserts shared with other
   * threads), a slot that raises the top level is linked here at once, so that the entry point
   * holds still while the threads work; without, each is linked at its turn, as `add` does.
   */
  addPending(slots: readonly number[], linkNow = false): number[] {
    const g = this.g;
    const toLink: number[] = [];
    for (const slot of slots) {
      this.checkNew(slot);
      const level = this.drawLevel();
      if (g.entryPoint < 0) {
        // The first node: nothing to link it to; it roots the tree.
        g.addNode(slot, level);
        g.setEntry(slot, level);
        g.tree.reset(slot);
        this.inserts.alone++;
        continue;
      }
      const promotes = level > g.maxLevel;
      g.addNode(slot, level);
      if (promotes && linkNow) this.linkOne(slot);
      else toLink.push(slot);
    }
    return toLink;
  }

  /**
   * Links pending nodes (`addPending`). With `helpers` and enough slots, other threads link
   * alongside this one (index/hnsw/insert-job.ts): each claims the next slot through a shared
   * counter and reads and writes lists under their locks; the nodes no rooted node links to then
   * are rooted here afterwards. Otherwise each is linked in order, and rooted, as `add` does.
   */
  linkPending(slots: readonly number[], helpers?: InsertHelpers): void {
    const g = this.g;
    const entryMoves = slots.some((slot) => g.levelOf(slot) > g.maxLevel);
    if (helpers === undefined || slots.length < PARALLEL_INSERT_MIN || entryMoves) {
      for (const slot of slots) this.linkOne(slot);
      return;
    }
    this.inserts.shared += slots.length;
    const job = newInsertJob(slots, g.entryPoint, g.maxLevel);
    helpers.join(job);
    this.runInsertJob(job);
    awaitInsertJob(job);
    this.scorer = this.buildKernel;
    this.mender.root(slots);
  }

  /** Pending nodes become searchable. */
  publish(slots: readonly number[]): void {
    for (const slot of slots) this.g.publish(slot);
  }

  /** Links one pending node below the current entry point (which it becomes, if it is higher), and roots it. */
  private linkOne(slot: number): void {
    const g = this.g;
    const level = g.levelOf(slot);
    const entry = g.entryPoint;
    const topLevel = g.maxLevel;
    this.inserts.alone++;
    this.link(slot, level, entry, topLevel);
    if (level > topLevel) g.setEntry(slot, level);
    // Only the new node can be unrooted: every other node keeps its pinned in-link.
    if (!g.tree.isRooted(slot)) this.mender.root([slot]);
  }

  /**
   * Takes slots from a job and inserts them (their nodes added, at their levels, by the owner)
   * until none are left; runs on the owner's thread and on each helper at once.
   */
  runInsertJob(job: InsertJob): void {
    const g = this.g;
    g.setEntry(job.entryPoint, job.maxLevel);
    this.concurrent = true;
    try {
      forEachClaim(job, (slot) => this.link(slot, g.levelOf(slot), job.entryPoint, job.maxLevel));
    } finally {
      this.concurrent = false;
    }
  }

  private checkNew(slot: number): void {
    this.g.reserve(slot + 1);
    if (this.g.has(slot)) throw new Error(`slot ${slot} is already in the graph`);
  }

  private drawLevel(): number {
    return Math.min(63, Math.floor(-Math.log(1 - this.rng.next()) * this.mL));
  }

  /**
   * Links a node already added at `level` into the graph below `entry` (Alg. 1 after the level is
   * drawn). Changes the arena's query. With `concurrent`, every list it reads or writes is read or
   * written under that list's lock.
   */
  private link(slot: number, level: number, entry: number, topLevel: number): void {
    const g = this.g;
    this.scorer = this.buildKernel;
    this.arena.setQueryFromSlot(slot);
    const selfSim = this.scoreOne(slot);
    let ep = entry;
    let epSim = this.scoreOne(ep);
    for (let layer = topLevel; layer > level; layer--) [ep, epSim] = this.greedy(ep, epSim, layer);
    for (let layer = Math.min(level, topLevel); layer >= 0; layer--) {
      // Re-selecting a neighbour's full list (below) moves the query; each layer needs it back.
      this.arena.setQueryFromSlot(slot);
      this.searchLayer(ep, epSim, this.params.efConstruction, layer, undefined, slot);
      const n = this.drainFoundSorted();
      if (n === 0) continue;
      ep = this.bufSlots[0] as number;
      epSim = this.bufSims[0] as number;
      this.orderTiesByInDegree(n);
      // m links on every layer for the new node, as hnswlib; on layer 0 its list grows to 2m through
      // links back from later nodes.
      const count = this.selectNeighbors(slot, selfSim, n, this.params.m);
      if (this.concurrent) lockSlot(g.locks, slot);
      try {
        g.setLinks(slot, layer, this.selected, count);
      } finally {
        if (this.concurrent) unlockSlot(g.locks, slot);
      }
      const chosen = this.selected.slice(0, count);
      for (const neighbor of chosen) this.connect(neighbor, slot, layer);
    }
  }

  /**
   * Adds `target` to `node`'s links at `layer`, re-selecting them if the list is full. On layer 0
   * a rooted node that ends up linking to an unrooted target becomes its parent.
   */
  private connect(node: number, target: number, layer: number): void {
    const g = this.g;
    if (this.concurrent) lockSlot(g.locks, node);
    try {
      if (g.linksTo(node, layer, target)) return;
      const { array, offset } = g.links(node, layer);
      if ((array[offset] as number) < g.capacityAt(layer)) {
        g.appendLink(node, layer, target);
      } else {
        const candidates = g.neighbors(node, layer);
        candidates.push(target);
        this.reselect(node, layer, candidates);
      }
      if (layer === 0 && g.linksTo(node, 0, target)) g.tree.adopt(target, node);
    } finally {
      if (this.concurrent) unlockSlot(g.locks, node);
    }
  }

  /**
   * Sets `node`'s links at `layer` to the heuristic's choice among `candidates` (≠ node); on
   * layer 0, its pinned links stay whatever the heuristic thinks of them.
   */
  private reselect(node: number, layer: number, candidates: number[]): void {
    const n = candidates.length;
    this.ensureBuffers(n);
    this.arena.setQueryFromSlot(node);
    // The node itself rides along as the last entry: its similarity to itself marks exact copies.
    candidates.push(node);
    const scores = this.scoreSlots(candidates, n + 1);
    const selfSim = scores[n] as number;
    const g = this.g;
    // Best first; exact ties go to the less linked-to node, so a tied newcomer is not always the one dropped.
    const order = Array.from({ length: n }, (_, i) => i).sort(
      (a, b) =>
        (scores[b] as number) - (scores[a] as number) ||
        g.inDegreeOf(candidates[a] as number) - g.inDegreeOf(candidates[b] as number) ||
        (candidates[a] as number) - (candidates[b] as number),
    );
    for (let i = 0; i < n; i++) {
      this.bufSlots[i] = candidates[order[i] as number] as number;
      this.bufSims[i] = scores[order[i] as number] as number;
    }
    let count = this.selectNeighbors(node, selfSim, n, g.capacityAt(layer));
    if (layer === 0) count = this.keepPinned(node, count);
    g.setLinks(node, layer, this.selected, count);
  }

  /**
   * Puts back into `this.selected[0, count)` every pinned link of `node`'s current layer-0 list
   * the heuristic left out: appended while there is room, else in place of the last (weakest)
   * choice that is not pinned. Returns the new count. A list never holds more pinned links than
   * its capacity, so there is always a place.
   */
  private keepPinned(node: number, count: number): number {
    const g = this.g;
    const out = this.selected;
    const { array, offset } = g.links(node, 0);
    const current = array[offset] as number;
    let replaceable = count;
    for (let i = 1; i <= current; i++) {
      const child = array[offset + i] as number;
      if (!g.tree.isPinned(node, child) || out.subarray(0, count).includes(child)) continue;
      if (this.handOver(child, node)) continue;
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
  private handOver(child: number, from: number): boolean {
    const g = this.g;
    const tree = g.tree;
    const { array, offset } = g.links(child, 0);
    const count = array[offset] as number;
    for (let i = 1; i <= count; i++) {
      const to = array[offset + i] as number;
      if (to === from || g.deleted[to] === TOMBSTONE || !tree.canHandOver(child, to)) continue;
      if (this.concurrent && !tryLockSlot(g.locks, to, from)) continue;
      try {
        if (g.linksTo(to, 0, child) && tree.handOver(child, from, to)) return true;
      } finally {
        if (this.concurrent) unlockSlot(g.locks, to);
      }
    }
    return false;
  }

  /**
   * The neighbour-selection heuristic (Alg. 4, without extending candidates, as hnswlib) over
   * bufSlots/bufSims[0, count) (best first), keeping at most `max`, into `this.selected`; returns
   * how many. A candidate
   * is skipped when it is closer to an already kept neighbour than to the base. Two additions keep
   * every point reachable on any data: exact copies of the base take at most DUPLICATE_SHARE of
   * the list (they never prune others, since they are as close to everything as the base is), and
   * a list the heuristic leaves shorter than MIN_DEGREE_SHARE of its capacity is filled with the
   * nearest skipped candidates (copies last). Changes the arena's query.
   */
  private selectNeighbors(base: number, selfSim: number, count: number, max: number): number {
    const slots = this.bufSlots;
    const sims = this.bufSims;
    const out = this.selected;
    if (count <= max) {
      out.set(slots.subarray(0, count));
      return count;
    }
    if (this.prunedNear.length < count) {
      this.prunedNear = new Int32Array(count * 2);
      this.prunedCopies = new Int32Array(count * 2);
    }
    const copyCap = Math.max(1, Math.floor(max * DUPLICATE_SHARE));
    let kept = 0;
    let copies = 0;
    let diverse = 0;
    let prunedNear = 0;
    let prunedCopies = 0;
    for (let i = 0; i < count && kept < max; i++) {
      const candidate = slots[i] as number;
      const toBase = sims[i] as number;
      if (toBase === selfSim && this.arena.sameVector(candidate, base)) {
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
        this.arena.setQueryFromSlot(candidate);
        const toKept = this.scoreSlots(this.diverse, diverse);
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

  /** Within runs of equal similarity in bufSlots/bufSims, puts less linked-to nodes first. */
  private orderTiesByInDegree(n: number): void {
    const slots = this.bufSlots;
    const sims = this.bufSims;
    const g = this.g;
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

  // ---- search (Alg. 2 and 5) ------------------------------------------------------------------

  search(options: SearchOptions): SearchHits {
    const g = this.g;
    const top = new TopK(options.k, options.keepTies === true ? null : (slot) => this.table.idOf(slot));
    if (options.k <= 0 || g.entryPoint < 0) return top.drainSorted();
    const ef = Math.max(options.ef ?? this.params.efSearch, options.k);
    this.arena.setQuery(options.query);
    this.scorer = this.kernel;
    this.scored = 0;
    let ep = g.entryPoint;
    let epSim = this.scoreOne(ep);
    for (let layer = g.maxLevel; layer > 0; layer--) [ep, epSim] = this.greedy(ep, epSim, layer);
    const bits = options.acceptBits;
    const accept = options.accept ?? (bits !== undefined ? (slot: number) => hasBit(bits, slot) : null);
    this.searchLayer(ep, epSim, ef, 0, accept, -1, accept !== null && options.twoHop === true, bits ?? null, g.tree.anchor);
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
   * `bits`, when given, is `accept` as a bitset, tested inline. `alsoFrom`, when given, is a second
   * start (the anchor, from which every live node can be reached): with ef at least the number of
   * nodes, the walk then visits every node, wherever the first start lies.
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
    alsoFrom = -1,
  ): void {
    const g = this.g;
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
    // Searches return only live nodes (0); construction and mending (accept undefined) also take pending ones.
    const hidden = accept === undefined ? TOMBSTONE : TOMBSTONE | PENDING;
    if ((deleted[entry] & hidden) === 0 && entry !== exclude && (accept == null || accept(entry))) found.push(entry, entrySim);
    if (alsoFrom >= 0 && !this.visited.visit(alsoFrom)) {
      const sim = this.scoreOne(alsoFrom);
      queue.push(alsoFrom, sim);
      if ((deleted[alsoFrom] & hidden) === 0 && alsoFrom !== exclude && (accept == null || accept(alsoFrom))) {
        found.push(alsoFrom, sim);
        if (found.size > ef) found.pop();
      }
    }

    // Hot loop: layer 0 is read straight from the flat link array (no per-node allocation), and
    // the visited marks are tested inline.
    const stride0 = 1 + g.maxM0;
    const links0 = g.links0;
    const ids = arena.uint32s;
    const scores = arena.floats;
    const visited = this.visited;
    // Inserts on other threads may be rewriting a list: read each under its lock.
    const locks = this.concurrent ? g.locks : null;
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
      let n = 0;
      if (twoHop && accept != null) {
        n = this.gatherTwoHop(array, offset, array[offset] as number, layer, accept, bits, ids, idsBase);
      } else {
        if (locks !== null) lockSlot(locks, current);
        const count = array[offset] as number;
        for (let i = 1; i <= count; i++) {
          const neighbor = array[offset + i] as number;
          if (!visited.visit(neighbor)) ids[idsBase + n++] = neighbor;
        }
        if (locks !== null) unlockSlot(locks, current);
      }
      if (n === 0) continue;
      this.scorer.scoreIds(n);
      this.scored += n;
      for (let i = 0; i < n; i++) {
        const sim = scores[scoresBase + i] as number;
        if (found.size < ef || sim > found.topSim) {
          const neighbor = ids[idsBase + i] as number;
          queue.push(neighbor, sim);
          // Two-hop gathering only lists slots that passed `accept` already. A tombstone is never
          // a result, whatever the filter says of it.
          if (((deleted[neighbor] as number) & hidden) === 0 && neighbor !== exclude && (accept == null || twoHop || (bits !== null ? hasBit(bits, neighbor) : accept(neighbor)))) {
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
    const g = this.g;
    const deleted = g.deleted;
    const visited = this.visited;
    const cap = g.maxM0;
    const links0 = g.links0;
    const stride0 = 1 + g.maxM0;
    let n = 0;
    for (let i = 1; i <= count && n < cap; i++) {
      const neighbor = array[offset + i] as number;
      if (visited.visit(neighbor)) continue;
      if (deleted[neighbor] === 0 && (bits !== null ? hasBit(bits, neighbor) : accept(neighbor))) {
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
        if (!visited.has(next) && deleted[next] === 0 && (bits !== null ? hasBit(bits, next) : accept(next))) {
          visited.visit(next);
          ids[idsBase + n++] = next;
        }
      }
    }
    return n;
  }

  /** Greedy search with ef = 1 on an upper layer. */
  private greedy(entry: number, entrySim: number, layer: number): [number, number] {
    const g = this.g;
    const ids = this.arena.uint32s;
    const idsBase = this.arena.idsByteOffset >> 2;
    let current = entry;
    let currentSim = entrySim;
    for (let improved = true; improved; ) {
      improved = false;
      const { array, offset } = g.links(current, layer);
      // The list is copied to the kernel's id list (under its lock when others insert) and scored there.
      if (this.concurrent) lockSlot(g.locks, current);
      const count = array[offset] as number;
      for (let i = 0; i < count; i++) ids[idsBase + i] = array[offset + 1 + i] as number;
      if (this.concurrent) unlockSlot(g.locks, current);
      if (count === 0) break;
      this.scorer.scoreIds(count);
      this.scored += count;
      const scores = this.arena.floats;
      const scoresBase = this.arena.scoresByteOffset >> 2;
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
    return [current, currentSim];
  }

  // ---- delete, repair, compaction -------------------------------------------------------------

  /** Tombstones the slot and repairs its neighbours. The slot is not reusable until compaction. */
  remove(slot: number): void {
    if (!this.hide(slot)) return;
    this.repairAround(slot);
  }

  /**
   * Tombstones the slot (searches stop returning it at once) without repairing its neighbours:
   * `repairAround` does that later, in a step of its own. Returns whether the node was live.
   */
  hide(slot: number): boolean {
    const g = this.g;
    if (!g.isLive(slot)) return false;
    g.markDeleted(slot);
    if (g.entryPoint === slot) g.chooseEntryPoint();
    return true;
  }

  /** Re-selects the links of every live node that links to tombstone `slot` (Qdrant and hnswlib repair the same way). */
  repairAround(slot: number): void {
    const g = this.g;
    this.scorer = this.buildKernel;
    for (let layer = 0; layer <= g.levelOf(slot); layer++) {
      for (const neighbor of g.neighbors(slot, layer)) if (g.isLive(neighbor) && g.linksTo(neighbor, layer, slot)) this.repair(neighbor, layer);
    }
  }

  /** Tombstones many nodes at once (no repair each) and compacts, if any were live. */
  dropNodes(slots: readonly number[]): void {
    const g = this.g;
    for (const slot of slots) if (g.isLive(slot)) g.markDeleted(slot);
    if (g.deletedCount > 0) this.compact();
  }

  needsCompaction(): boolean {
    return this.g.deletedCount > 0 && this.g.deletedCount > COMPACTION_SHARE * this.g.nodeCount;
  }

  /**
   * Scrubs every link to a tombstone, drops the tombstones and returns their (now free) slots.
   * The tree is emptied first (its pins would keep links to tombstones) and grown anew after,
   * from the entry point.
   */
  compact(): number[] {
    const g = this.g;
    this.scorer = this.buildKernel;
    g.tree.reset(-1);
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
    g.tree.reset(g.entryPoint);
    this.mender.regrow();
    return dead;
  }

  /**
   * Re-selects `node`'s links at `layer` without tombstones: candidates are its live links plus
   * the live links of every tombstone it linked to (Qdrant and hnswlib repair the same way). A
   * tombstone it is the tree parent of stays, pinned, while a node of the tree hangs from it.
   */
  private repair(node: number, layer: number): void {
    const g = this.g;
    const candidates = new Set<number>();
    for (const neighbor of g.neighbors(node, layer)) {
      if (g.deleted[neighbor] !== TOMBSTONE) {
        candidates.add(neighbor);
        continue;
      }
      if (layer === 0 && g.tree.isPinned(node, neighbor) && !this.hasChildren(neighbor)) g.tree.release(neighbor);
      if (g.levelOf(neighbor) < layer) continue;
      for (const second of g.neighbors(neighbor, layer)) if (second !== node && g.isLive(second)) candidates.add(second);
    }
    this.reselect(node, layer, [...candidates]);
  }

  /** Whether `slot` is the tree parent of some node (a node's parent always links to it, so its children are in its own list). */
  private hasChildren(slot: number): boolean {
    const g = this.g;
    const { array, offset } = g.links(slot, 0);
    const count = array[offset] as number;
    for (let i = 1; i <= count; i++) if (g.tree.isPinned(slot, array[offset + i] as number)) return true;
    return false;
  }

  // ---- connectivity (graph-mender.ts, reachability.ts) ----------------------------------------

  /** Live nodes not reachable on layer 0 from the anchor (tombstones are walked). */
  unreachable(): number[] {
    return unreachableNodes(this.g);
  }

  /**
   * The nodes nearest to the query (a stored slot, set as the query) that pass `accept`, found by
   * a beam of max(ef_construction, MENDING_EF) on layer 0 started from the descent's end and from
   * the anchor, into bufSlots/bufSims best first; returns how many. Tombstones and `exclude` are
   * never returned.
   */
  private nearestTo(exclude: number, accept: (slot: number) => boolean): number {
    const g = this.g;
    let ep = g.entryPoint;
    let epSim = this.scoreOne(ep);
    for (let layer = g.maxLevel; layer > 0; layer--) [ep, epSim] = this.greedy(ep, epSim, layer);
    // At least 64 wide: with a small ef_construction the few nodes found may all be full.
    this.searchLayer(ep, epSim, Math.max(this.params.efConstruction, MENDING_EF), 0, accept, exclude, false, null, g.tree.anchor);
    return this.drainFoundSorted();
  }

  // ---- scoring helpers ------------------------------------------------------------------------

  private scoreOne(slot: number): number {
    this.arena.uint32s[this.arena.idsByteOffset >> 2] = slot;
    this.scorer.scoreIds(1);
    this.scored++;
    return this.arena.floats[this.arena.scoresByteOffset >> 2] as number;
  }

  /** Scores slots against the query; the returned view is valid until the next kernel call. */
  private scoreSlots(slots: ArrayLike<number>, count: number): Float32Array {
    const arena = this.arena;
    const idsBase = arena.idsByteOffset >> 2;
    const ids = arena.uint32s;
    for (let i = 0; i < count; i++) ids[idsBase + i] = slots[i] as number;
    this.scorer.scoreIds(count);
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
