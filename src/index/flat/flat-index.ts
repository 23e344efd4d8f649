/**
 * The exact index: scores every live (and accepted) slot and keeps the best `k`. Unfiltered scans
 * score contiguous runs of slots; filtered scans first gather the accepted slots into the kernel's
 * candidate list, so rejected points cost a predicate call but no distance.
 */
import { TopK } from '../../core/top-k.js';
import type { DistanceKernel } from '../../kernels/distance-kernel.js';
import { SCRATCH_BATCH, type SlotArena } from '../../kernels/slot-arena.js';
import type { SearchHits, SearchOptions, SearchStats, SlotTable, VectorIndex } from '../vector-index.js';

export class FlatIndex implements VectorIndex {
  readonly kind = 'flat' as const;

  /** Scratch for scoreSlots' similarities, grown to the longest list scored (one index per thread). */
  private sims = new Float64Array(SCRATCH_BATCH);

  constructor(
    private readonly arena: SlotArena,
    private readonly kernel: DistanceKernel,
    private readonly table: SlotTable,
  ) {}

  add(_slot: number): void {}

  remove(_slot: number): void {}

  search(options: SearchOptions): SearchHits {
    const top = new TopK(options.k, options.keepTies === true ? null : (slot) => this.table.idOf(slot));
    if (options.k > 0 && this.table.liveCount > 0) {
      this.arena.setQuery(options.query);
      const scored = options.accept === undefined ? this.scanAll(top) : this.scanAccepted(top, options.accept);
      if (options.stats !== undefined) options.stats.scored += scored;
    }
    return top.drainSorted();
  }

  /**
   * Scores candidate slots `slots` (any order) exactly; used by planners for small candidate sets.
   * `keepTies`: as SearchOptions.keepTies.
   */
  scoreSlots(query: Float32Array, slots: ArrayLike<number>, k: number, stats?: SearchStats, keepTies = false): SearchHits {
    const top = new TopK(k, keepTies ? null : (slot) => this.table.idOf(slot));
    if (this.sims.length < slots.length) this.sims = new Float64Array(Math.max(slots.length, 2 * this.sims.length));
    const sims = this.sims;
    this.scoreEach(query, slots, sims, stats);
    for (let i = 0; i < slots.length; i++) top.offer(slots[i] as number, sims[i] as number);
    return top.drainSorted();
  }

  /** Scores `slots` against `query` into `out` (similarity of slots[i] in out[i]), with no ranking. */
  scoreEach(query: Float32Array, slots: ArrayLike<number>, out: Float64Array, stats?: SearchStats): void {
    if (stats !== undefined) stats.scored += slots.length;
    const arena = this.arena;
    arena.setQuery(query);
    const idsBase = arena.idsByteOffset >> 2;
    const scoresBase = arena.scoresByteOffset >> 2;
    for (let start = 0; start < slots.length; start += SCRATCH_BATCH) {
      const n = Math.min(SCRATCH_BATCH, slots.length - start);
      const ids = arena.uint32s;
      for (let i = 0; i < n; i++) ids[idsBase + i] = slots[start + i] as number;
      this.kernel.scoreIds(n);
      const scores = arena.floats;
      for (let i = 0; i < n; i++) out[start + i] = scores[scoresBase + i] as number;
    }
  }

  /** Returns how many slots it scored. */
  private scanAll(top: TopK): number {
    const table = this.table;
    const arena = this.arena;
    const scoresBase = arena.scoresByteOffset >> 2;
    const end = table.slotCount;
    for (let start = 0; start < end; start += SCRATCH_BATCH) {
      const n = Math.min(SCRATCH_BATCH, end - start);
      this.kernel.scoreRange(start, n);
      const scores = arena.floats;
      for (let i = 0; i < n; i++) {
        const sim = scores[scoresBase + i] as number;
        if (sim >= top.floor && table.isLive(start + i)) top.offer(start + i, sim);
      }
    }
    return end;
  }

  /** Returns how many slots it scored. */
  private scanAccepted(top: TopK, accept: (slot: number) => boolean): number {
    let scored = 0;
    const table = this.table;
    const arena = this.arena;
    const idsBase = arena.idsByteOffset >> 2;
    const scoresBase = arena.scoresByteOffset >> 2;
    const end = table.slotCount;
    let slot = 0;
    while (slot < end) {
      const ids = arena.uint32s;
      let n = 0;
      for (; slot < end && n < SCRATCH_BATCH; slot++) {
        if (table.isLive(slot) && accept(slot)) ids[idsBase + n++] = slot;
      }
      if (n === 0) continue;
      this.kernel.scoreIds(n);
      scored += n;
      const scores = arena.floats;
      for (let i = 0; i < n; i++) {
        const sim = scores[scoresBase + i] as number;
        if (sim >= top.floor) top.offer(ids[idsBase + i] as number, sim);
      }
    }
    return scored;
  }
}
