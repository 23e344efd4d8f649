/**
 * HNSW after Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search using
 * Hierarchical Navigable Small World graphs" (2016/2018): the index as the collection sees it. It
 * owns the graph and the level generator, and runs each operation with what that operation walks
 * with (layer-search.ts `Walk`: the graph, the kernel, locks or none). The work is done in:
 *
 * - insert.ts: construction (Alg. 1): level choice, the search for links, connecting.
 * - neighbor-selection.ts: the heuristic (Alg. 4) and re-selection of full lists, keeping pins.
 * - layer-search.ts: the greedy descent, the construction search and the query search (Alg. 2, 5).
 * - graph-repair.ts: delete-side repair and compaction.
 * - graph-mender.ts, rooted-tree.ts, reachability.ts: every live node stays reachable.
 * - insert-job.ts, link-locks.ts: one batch's inserts shared between threads.
 *
 * Search (Alg. 5): greedy descent, then a beam of max(ef, k) on layer 0, started from where the
 * descent ended and from the anchor of the rooted tree (graph-mender.ts), which reaches every
 * live node. With a filter, nodes that fail it are still walked but never enter the result set.
 *
 * Similarities are "higher is better" throughout (core/distance.ts).
 */
import { SeededRng } from '../../core/rng.js';
import { hasBit } from '../../core/slot-bits.js';
import { TopK } from '../../core/top-k.js';
import type { DistanceKernel } from '../../kernels/distance-kernel.js';
import type { SearchHits, SearchOptions, SlotTable, VectorIndex } from '../vector-index.js';
import { GraphMender } from './graph-mender.js';
import { compact, repairAround, repairAroundSteps } from './graph-repair.js';
import { HnswGraph } from './hnsw-graph.js';
import { drawLevel, levelMultiplier, Linker } from './insert.js';
import { awaitInsertJob, forEachClaim, type InsertHelpers, type InsertJob, newInsertJob, PARALLEL_INSERT_MIN } from './insert-job.js';
import { type LayerQuery, LayerSearch, type LinkWalk, type Walk } from './layer-search.js';
import { NeighborSelection } from './neighbor-selection.js';
import { unreachableNodes } from './reachability.js';
import { type GraphArena, SlotScorer } from './slot-scorer.js';

export type { GraphArena } from './slot-scorer.js';

export interface HnswParams {
  readonly m: number;
  readonly efConstruction: number;
  readonly efSearch: number;
  readonly seed: number;
}

/** Share of tombstones in the graph above which `needsCompaction()` says so. */
export const COMPACTION_SHARE = 0.1;

/** The narrowest beam searching for hosts to root a node under. */
const MENDING_EF = 64;

export class HnswIndex implements VectorIndex {
  readonly kind = 'hnsw' as const;
  private g: HnswGraph;
  private rng: SeededRng;
  private readonly mL: number;
  /** Scores searches (the collection's metric). */
  private readonly queryScorer: SlotScorer;
  /** Scores while building and mending the graph. */
  private readonly buildScorer: SlotScorer;
  /** This thread's walk scratch, shared by every operation (one runs at a time). */
  private readonly walker = new LayerSearch();
  private readonly selection: NeighborSelection;
  private readonly linker: Linker;
  private readonly mender: GraphMender;
  /** Nodes inserted by this index's owner alone, and through jobs shared with other threads (`addMany`). */
  readonly inserts = { alone: 0, shared: 0 };

  /**
   * @param kernel scores searches (the collection's metric)
   * @param buildKernel scores while building and mending the graph: the same kernel, except where
   *   the metric is not a distance (inner product), whose graph is built by Euclidean distance
   */
  constructor(
    private readonly arena: GraphArena,
    kernel: DistanceKernel,
    buildKernel: DistanceKernel,
    private readonly table: SlotTable,
    readonly params: HnswParams,
  ) {
    this.g = new HnswGraph(params.m);
    this.rng = new SeededRng(params.seed);
    this.mL = levelMultiplier(params.m);
    this.queryScorer = new SlotScorer(arena, kernel);
    this.buildScorer = new SlotScorer(arena, buildKernel);
    this.selection = new NeighborSelection(params.m);
    this.linker = new Linker(this.walker, this.selection, params.m);
    const index = this;
    this.mender = new GraphMender({
      get graph() {
        return index.g;
      },
      setQuery: (slot) => this.arena.setQueryFromSlot(slot),
      score: (slots, count) => this.buildScorer.many(slots, count),
      nearest: (exclude, accept) => this.nearestTo(exclude, accept),
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

  /** How a graph-changing operation walks: the build kernel; with `locks`, beside other threads. */
  private buildWalk(locks: Int32Array | null = null): Walk {
    return { graph: this.g, scorer: this.buildScorer, locks };
  }

  // ---- insert (insert.ts) ---------------------------------------------------------------------

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
      g.reserve(slot + 1);
      if (g.has(slot)) throw new Error(`slot ${slot} is already in the graph`);
      const level = drawLevel(this.rng, this.mL);
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
    const topLevel = g.maxLevel;
    this.inserts.alone++;
    this.linker.link(this.linkWalk(slot, null), level, g.entryPoint, topLevel);
    if (level > topLevel) g.setEntry(slot, level);
    // Only the new node can be unrooted: every other node keeps its pinned in-link.
    if (!g.tree.isRooted(slot)) this.mender.root([slot]);
  }

  /**
   * Takes slots from a job and inserts them (their nodes added, at their levels, by the owner)
   * until none are left; runs on the owner's thread and on each helper at once, every list read
   * and written under its lock.
   */
  runInsertJob(job: InsertJob): void {
    const g = this.g;
    g.setEntry(job.entryPoint, job.maxLevel);
    forEachClaim(job, (slot) => this.linker.link(this.linkWalk(slot, g.locks), g.levelOf(slot), job.entryPoint, job.maxLevel));
  }

  private linkWalk(slot: number, locks: Int32Array | null): LinkWalk {
    return { graph: this.g, scorer: this.buildScorer, locks, ef: this.params.efConstruction, self: slot };
  }

  // ---- search (layer-search.ts) ---------------------------------------------------------------

  search(options: SearchOptions): SearchHits {
    const g = this.g;
    const top = new TopK(options.k, options.keepTies === true ? null : (slot) => this.table.idOf(slot));
    if (options.k <= 0 || g.entryPoint < 0) return top.drainSorted();
    const scorer = this.queryScorer;
    this.arena.setQuery(options.query);
    scorer.scored = 0;
    const bits = options.acceptBits;
    const accept = options.accept ?? (bits !== undefined ? (slot: number) => hasBit(bits, slot) : null);
    const query: LayerQuery = {
      graph: g,
      scorer,
      locks: null,
      ef: Math.max(options.ef ?? this.params.efSearch, options.k),
      accept,
      bits: bits ?? null,
      twoHop: accept !== null && options.twoHop === true,
      exclude: -1,
      alsoFrom: g.tree.anchor,
    };
    this.walkLayer0(query);
    const { slots, sims, count } = this.walker.found.entries();
    for (let i = 0; i < count; i++) top.offer(slots[i] as number, sims[i] as number);
    if (options.stats !== undefined) options.stats.scored += scorer.scored;
    return top.drainSorted();
  }

  /** Descends from the entry point to layer 1, then searches layer 0 for `query` (the arena's query set); results in `found`. */
  private walkLayer0(query: LayerQuery): void {
    const g = query.graph;
    const search = this.walker;
    search.descend(query, g.entryPoint, query.scorer.one(g.entryPoint), g.maxLevel, 0);
    search.forResults(query, search.descentSlot, search.descentSim);
  }

  /**
   * For the mender: the nodes nearest to the query (a stored slot, set as the query) that pass
   * `accept`, found by a beam of max(ef_construction, MENDING_EF) on layer 0 started from the
   * descent's end and from the anchor, best first. Tombstones and `exclude` are never returned.
   */
  private nearestTo(exclude: number, accept: (slot: number) => boolean): number[] {
    const g = this.g;
    this.walkLayer0({
      graph: g,
      scorer: this.buildScorer,
      locks: null,
      // At least 64 wide: with a small ef_construction the few nodes found may all be full.
      ef: Math.max(this.params.efConstruction, MENDING_EF),
      accept,
      bits: null,
      twoHop: false,
      exclude,
      alsoFrom: g.tree.anchor,
    });
    const n = this.walker.drainSorted();
    return Array.from(this.walker.sortedSlots.subarray(0, n));
  }

  // ---- delete, repair, compaction (graph-repair.ts) -------------------------------------------

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

  /** Re-selects the links of every live node that links to tombstone `slot`. */
  repairAround(slot: number): void {
    repairAround(this.selection, this.buildWalk(), slot);
  }

  /** `repairAround` one neighbour per step (graph-repair.ts, repairAroundSteps). */
  repairAroundSteps(slot: number): Generator<void, void, undefined> {
    return repairAroundSteps(this.selection, this.buildWalk(), slot);
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

  /** Scrubs every link to a tombstone, drops the tombstones and returns their (now free) slots. */
  compact(): number[] {
    return compact(this.selection, this.buildWalk(), this.mender);
  }

  /** Live nodes not reachable on layer 0 from the anchor (tombstones are walked). */
  unreachable(): number[] {
    return unreachableNodes(this.g);
  }
}
