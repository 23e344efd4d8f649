/**
 * Keeps every live node of an HNSW graph findable, by construction rather than by checking.
 *
 * The neighbour heuristic prunes links: a full list that takes a new neighbour drops another, and
 * a list repaired after a delete keeps only some of its candidates. Each such drop can cut off a
 * group of nodes whose remaining in-links all come from inside the group (a group of exact copies
 * is the common case). Checking reachability after every write costs O(links), so it was done
 * only now and then, and between checks a search could miss live points.
 *
 * The rooted tree (index/hnsw/rooted-tree.ts) makes such drops impossible: every node but the
 * anchor has a parent whose layer-0 list links to it, parents lead to the anchor, and a parent's
 * link to its child is pinned. The index never drops a pinned link (neighbor-selection.ts `keepPinned`): when
 * the heuristic would, the child is first handed to another node of its list that links to it
 * (`handOver`), and only if none can take it does the link stay; this file never replaces one.
 * A node gets its parent when a rooted node first links to it; a node no rooted node links to
 * once it is linked in gets a link from one here (`root`). A search walks layer 0 from the anchor as well as from where its descent
 * ended, so every rooted node is within its reach: a search whose ef is at least the number of
 * points returns every live point, after every step of every write.
 *
 * Deleted nodes (tombstones) keep their pinned links while a child depends on them; compaction
 * empties the tree and grows it again over the graph without the tombstones (`regrow`), as does
 * the first start from a snapshot written before the tree existed.
 *
 * Every fix adds one layer-0 link: from a host that already has room; else in place of the
 * host's link to its most linked-to neighbour that keeps other in-links; else in place of any
 * link that is not pinned. Only unrooted nodes can lose their last in-link that way, and they
 * are rooted in turn.
 */
import { type HnswGraph, TOMBSTONE } from './hnsw-graph.js';
import { adoptReachable } from './reachability.js';

/** What the mender needs of the index: its graph, its scoring and its searches. */
export interface MendingHost {
  readonly graph: HnswGraph;
  /** Makes a stored vector the query of `score` and `nearest`. */
  setQuery(slot: number): void;
  /** Similarities of `slots` to the query; the view is valid until the next call. */
  score(slots: ArrayLike<number>, count: number): Float32Array;
  /** The nodes nearest to the query that pass `accept` (tombstones and `exclude` never), best first, found by a walk from the anchor. */
  nearest(exclude: number, accept: (slot: number) => boolean): number[];
}

export class GraphMender {
  constructor(private readonly host: MendingHost) {}

  /**
   * Gives each node of `slots` that needs one (in the graph, not a tombstone, not rooted) a
   * parent: a rooted node among its own neighbours, then theirs, then the nodes a search finds,
   * that links to it or is made to. Returns how many links were made.
   */
  root(slots: Iterable<number>): number {
    const g = this.host.graph;
    let made = 0;
    for (const slot of slots) {
      if (!g.has(slot) || g.deleted[slot] === TOMBSTONE || g.tree.isRooted(slot)) continue;
      made += this.attach(slot);
    }
    return made;
  }

  /**
   * Grows the tree anew from the anchor, after `HnswGraph.resetTree`: parents along a walk from
   * the anchor, then each node the walk did not reach (tombstones excepted) linked in from its
   * nearest rooted node, and what it reaches rooted under it. Returns how many links were made.
   */
  regrow(): number {
    const g = this.host.graph;
    if (g.tree.anchor < 0) return 0;
    adoptReachable(g, g.tree.anchor);
    let made = 0;
    for (let slot = 0; slot < g.capacity; slot++) {
      if (!g.has(slot) || g.deleted[slot] === TOMBSTONE || g.tree.isRooted(slot)) continue;
      made += this.attach(slot);
      adoptReachable(g, slot);
    }
    return made;
  }

  /** Roots `target` under a rooted host, nearest hosts first (see `root`). Returns the links made (0 or 1). */
  private attach(target: number): number {
    const g = this.host.graph;
    this.host.setQuery(target);
    const own = g.neighbors(target, 0).filter((s) => s !== target);
    const fromOwn = this.attachFromNearest(target, own, false);
    if (fromOwn >= 0) return fromOwn;
    const twoHop = new Set<number>();
    for (const neighbor of own) for (const second of g.neighbors(neighbor, 0)) if (second !== target) twoHop.add(second);
    const fromTwoHop = this.attachFromNearest(target, [...twoHop], false);
    if (fromTwoHop >= 0) return fromTwoHop;
    const fromSearch = this.attachFromNearest(
      target,
      this.host.nearest(target, (s) => g.tree.isRooted(s)),
      true,
    );
    if (fromSearch >= 0) return fromSearch;
    return this.attachFromAnyRooted(target);
  }

  /**
   * Roots `target` (the query) under a rooted host among `hosts`: the nearest that links to it
   * already; else the nearest with room; else the nearest that can give up a link to a node with
   * other in-links; else, with `force`, the nearest that can give up any link that is not pinned.
   * Returns the links made (0 or 1), or -1 when no host would do.
   */
  private attachFromNearest(target: number, hosts: readonly number[], force: boolean): number {
    const g = this.host.graph;
    const candidates = hosts.filter((h) => h !== target && g.tree.isRooted(h));
    if (candidates.length === 0) return -1;
    const scores = this.host.score(candidates, candidates.length);
    const sims = new Map(candidates.map((h, i) => [h, scores[i] as number]));
    const order = [...candidates].sort((a, b) => (sims.get(b) as number) - (sims.get(a) as number));
    for (const host of order) if (g.linksTo(host, 0, target) && g.tree.adopt(target, host)) return 0;
    for (const host of order) {
      if ((g.links0[host * (1 + g.maxM0)] as number) < g.maxM0) {
        g.appendLink(host, 0, target);
        g.tree.adopt(target, host);
        return 1;
      }
    }
    for (const host of order) if (this.replaceMostLinked(host, target, 2)) return 1;
    if (force) for (const host of order) if (this.replaceMostLinked(host, target, 0)) return 1;
    return -1;
  }

  /** Last resort: the first rooted node with room, else with a link that is not pinned, links to `target`. O(nodes), and rare. */
  private attachFromAnyRooted(target: number): number {
    const g = this.host.graph;
    for (let host = 0; host < g.capacity; host++) {
      if (host === target || !g.has(host) || !g.tree.isRooted(host)) continue;
      if (g.linksTo(host, 0, target)) {
        g.tree.adopt(target, host);
        return 0;
      }
      if ((g.links0[host * (1 + g.maxM0)] as number) < g.maxM0) {
        g.appendLink(host, 0, target);
        g.tree.adopt(target, host);
        return 1;
      }
    }
    for (let host = 0; host < g.capacity; host++) {
      if (host !== target && g.has(host) && g.tree.isRooted(host) && this.replaceMostLinked(host, target, 0)) return 1;
    }
    throw new Error(`HNSW: no node can link to slot ${target}`);
  }

  /**
   * Makes `host`'s layer-0 link to its most linked-to neighbour that is not pinned (in-degree ≥
   * `minDegree`) point at `target` instead, and roots `target` under `host`. Returns whether it did.
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
      if (degree > victimDegree && !g.tree.isPinned(host, node)) {
        victim = i;
        victimDegree = degree;
      }
    }
    if (victim < 0) return false;
    g.replaceLink(host, 0, victim, target);
    g.tree.adopt(target, host);
    return true;
  }
}
