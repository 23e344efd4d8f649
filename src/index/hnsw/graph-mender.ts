/**
 * Keeps an HNSW graph whole while it changes (index/hnsw/reachability.ts says what "whole" means):
 * re-attaches nodes that lost their last layer-0 in-link, links in live nodes the entry point
 * cannot reach, and gives stranded search starts a way back to the entry point. Every fix adds
 * one link: where a list has room, else in place of a link to a node that keeps other in-links,
 * and only as a last resort in place of one that does not (that node is then mended in turn).
 * Links made during one mending are never given up by a later fix of the same mending, so fixes
 * do not undo each other.
 */
import type { HnswGraph } from './hnsw-graph.js';
import { markReachable, reachedFromEntry, strandedStarts } from './reachability.js';

/** What the mender needs of the index: its graph, its scoring and its searches. */
export interface MendingHost {
  readonly graph: HnswGraph;
  /** Makes a stored vector the query of `score` and `nearest`. */
  setQuery(slot: number): void;
  /** Similarities of `slots` to the query; the view is valid until the next call. */
  score(slots: ArrayLike<number>, count: number): Float32Array;
  /**
   * The nodes nearest to the query that pass `accept` (tombstones and `exclude` never), best
   * first: from a descent when any node will do, from the entry point when `accept` asks for
   * nodes it reaches.
   */
  nearest(exclude: number, accept: ((slot: number) => boolean) | undefined): number[];
}

/** Bounds the rounds of mending: a last-resort fix can orphan another node, which is then mended. */
const MAX_ROUNDS = 8;
const MAX_PASSES = 16;

export class GraphMender {
  private readonly justAttached = new Set<number>();

  constructor(private readonly host: MendingHost) {}

  /** Starts a new mending: links made by earlier ones may be given up again. */
  begin(): void {
    this.justAttached.clear();
  }

  /**
   * Gives every live node that lost its last layer-0 in-link one again, from the nearest host
   * among its own neighbours, then theirs, then the nodes a search finds. A few distances each.
   */
  mendOrphans(orphans: number[]): void {
    const g = this.host.graph;
    for (let round = 0; orphans.length > 0 && round < MAX_ROUNDS; round++) {
      for (const orphan of orphans) {
        if (!g.isLive(orphan) || g.inDegreeOf(orphan) > 0) continue;
        this.host.setQuery(orphan);
        const own = g.neighbors(orphan, 0).filter((s) => s !== orphan && g.has(s));
        if (this.attachFromNearest(orphan, own, false)) continue;
        const twoHop = new Set<number>();
        for (const neighbor of own) for (const second of g.neighbors(neighbor, 0)) if (second !== orphan && g.has(second)) twoHop.add(second);
        if (this.attachFromNearest(orphan, [...twoHop], false)) continue;
        this.attachFromNearest(orphan, this.host.nearest(orphan, undefined), true);
      }
      orphans = g.takeOrphans();
    }
  }

  /**
   * Mends layer 0 until a walk from wherever a search can start reaches every live node: a live
   * node the entry point cannot reach gets a link from its nearest reachable node; a possible
   * start that cannot reach the entry point gets a link to it (checked only with `startsToo`, or
   * when reachability needed mending). Returns how many links were made.
   */
  ensureConnected(startsToo: boolean): number {
    const g = this.host.graph;
    if (g.entryPoint < 0) return 0;
    let mended = 0;
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      let mendedThisPass = 0;
      this.justAttached.clear();
      const reached = reachedFromEntry(g);
      const isReached = (s: number): boolean => reached[s] === 1;
      for (let slot = 0; slot < g.capacity; slot++) {
        if (!g.isLive(slot) || reached[slot] === 1) continue;
        this.host.setQuery(slot);
        if (this.attachFromNearest(slot, this.host.nearest(slot, isReached), true) || this.attachFromAnyReached(slot, reached)) {
          markReachable(g, reached, slot);
          mendedThisPass++;
        }
      }
      this.mendOrphans(g.takeOrphans());
      // Few nodes have a level ≥ 1 (about 1/m), so a direct link to the entry point is cheap.
      if (startsToo || mendedThisPass > 0) {
        for (const start of strandedStarts(g)) if (this.linkOut(start, g.entryPoint)) mendedThisPass++;
        this.mendOrphans(g.takeOrphans());
      }
      mended += mendedThisPass;
      if (mendedThisPass === 0) break;
    }
    return mended;
  }

  /**
   * Links a host among `hosts` (any order; the query must be `target`) to `target` on layer 0:
   * the nearest that has room; else the nearest that can give up a link to a node with other
   * in-links; else, with `force`, the nearest that can give up any link not made by this mending.
   * Returns whether a link was made.
   */
  private attachFromNearest(target: number, hosts: readonly number[], force: boolean): boolean {
    const g = this.host.graph;
    const candidates = hosts.filter((h) => h !== target);
    if (candidates.length === 0) return false;
    const scores = this.host.score(candidates, candidates.length);
    const sims = new Map(candidates.map((h, i) => [h, scores[i] as number]));
    const order = [...candidates].sort((a, b) => (sims.get(b) as number) - (sims.get(a) as number));
    for (const host of order) if (g.linksTo(host, 0, target)) return true;
    for (const host of order) {
      if ((g.links0[host * (1 + g.maxM0)] as number) < g.maxM0) {
        g.appendLink(host, 0, target);
        this.justAttached.add(target);
        return true;
      }
    }
    for (const host of order) if (this.replaceMostLinked(host, target, 2)) return true;
    if (force) for (const host of order) if (this.replaceMostLinked(host, target, 1)) return true;
    return false;
  }

  /** Last resort: the first reachable live node with room links to `target`. O(nodes), and rare. */
  private attachFromAnyReached(target: number, reached: Uint8Array): boolean {
    const g = this.host.graph;
    for (let host = 0; host < g.capacity; host++) {
      if (host === target || reached[host] === 0 || !g.isLive(host)) continue;
      if ((g.links0[host * (1 + g.maxM0)] as number) < g.maxM0) {
        g.appendLink(host, 0, target);
        this.justAttached.add(target);
        return true;
      }
    }
    return false;
  }

  /** Adds `node` → `target` on layer 0, in place of the link to its most linked-to neighbour when full. */
  private linkOut(node: number, target: number): boolean {
    const g = this.host.graph;
    if (g.linksTo(node, 0, target)) return true;
    if ((g.links0[node * (1 + g.maxM0)] as number) < g.maxM0) {
      g.appendLink(node, 0, target);
      return true;
    }
    return this.replaceMostLinked(node, target, 1);
  }

  /**
   * Makes `host`'s layer-0 link to its most linked-to neighbour (in-degree ≥ `minDegree`, not
   * attached during this mending) point at `target` instead. Returns whether it did.
   */
  private replaceMostLinked(host: number, target: number, minDegree: number): boolean {
    const g = this.host.graph;
    const { array, offset } = g.links(host, 0);
    const count = array[offset] as number;
    let victim = -1;
    let victimDegree = minDegree - 1;
    for (let i = 0; i < count; i++) {
      const node = array[offset + 1 + i] as number;
      const degree = g.inDegreeOf(node);
      if (degree > victimDegree && !this.justAttached.has(node)) {
        victim = i;
        victimDegree = degree;
      }
    }
    if (victim < 0) return false;
    g.replaceLink(host, 0, victim, target);
    this.justAttached.add(target);
    return true;
  }
}
