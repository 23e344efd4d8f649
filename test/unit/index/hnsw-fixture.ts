/**
 * An HNSW index over a real arena and kernels with a minimal slot table, as the collection's
 * segment sets one up, for the index tests that need no database. Not a test file itself.
 */
import type { Distance } from '../../../src/core/distance.js';
import { HnswGraph } from '../../../src/index/hnsw/hnsw-graph.js';
import { HnswIndex } from '../../../src/index/hnsw/hnsw-index.js';
import type { InsertHelpers } from '../../../src/index/hnsw/insert-job.js';
import { SeededRng } from '../../../src/core/rng.js';
import type { SlotTable } from '../../../src/index/vector-index.js';
import { createKernel } from '../../../src/kernels/distance-kernel.js';
import { MipsGraphKernel } from '../../../src/kernels/mips-graph-kernel.js';
import { VectorArena } from '../../../src/kernels/vector-arena.js';

/** Slots with liveness and ids, as the collection's point table offers them to an index. */
export class Slots implements SlotTable {
  private readonly live: boolean[] = [];
  liveCount = 0;

  get slotCount(): number {
    return this.live.length;
  }

  isLive(slot: number): boolean {
    return this.live[slot] === true;
  }

  idOf(slot: number): string {
    return `p${String(slot).padStart(6, '0')}`;
  }

  setLive(slot: number, live: boolean): void {
    if (this.isLive(slot) !== live) this.liveCount += live ? 1 : -1;
    this.live[slot] = live;
  }
}

export interface Fixture {
  readonly index: HnswIndex;
  readonly arena: VectorArena;
  readonly slots: Slots;
  readonly mips: MipsGraphKernel | undefined;
  /** Writes the vector (normalized under Cosine) and marks the slot live, without inserting it. */
  write(slot: number, vector: readonly number[]): void;
  add(slot: number, vector: readonly number[]): void;
  /** Writes the vectors, then inserts them all with `HnswIndex.addMany`. */
  addMany(entries: ReadonlyArray<readonly [number, readonly number[]]>, helpers?: InsertHelpers): void;
  remove(slot: number): void;
}

/** `scratchAreas` above 1 leaves room for other threads' views of the same memory (`helperIndex`). */
export function fixture(distance: Distance, dim: number, m: number, efConstruction = 64, scratchAreas = 1): Fixture {
  const arena = new VectorArena(dim, { scratchAreas, scratchIndex: 0 });
  const kernel = createKernel(arena, distance);
  const mips = distance === 'Dot' ? new MipsGraphKernel(arena, kernel) : undefined;
  const slots = new Slots();
  const index = new HnswIndex(arena, kernel, mips ?? kernel, slots, { m, efConstruction, efSearch: 16, seed: 100 });
  const write = (slot: number, vector: readonly number[]): void => {
    arena.reserve(slot + 1);
    const v = Float32Array.from(vector);
    if (distance === 'Cosine') {
      const norm = Math.hypot(...v);
      if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
    }
    arena.write(slot, v);
    mips?.noteVector(slot);
    slots.setLive(slot, true);
  };
  return {
    index,
    arena,
    slots,
    mips,
    write,
    add(slot, vector) {
      write(slot, vector);
      index.add(slot);
    },
    addMany(entries, helpers) {
      for (const [slot, vector] of entries) write(slot, vector);
      index.addMany(
        entries.map(([slot]) => slot),
        helpers,
      );
    },
    remove(slot) {
      slots.setLive(slot, false);
      index.remove(slot);
    },
  };
}

/**
 * Another thread's index over a fixture's memory and graph, as a search thread builds one
 * (threads/search-thread.ts), in scratch area `scratchIndex`: it can run the fixture's insert
 * jobs. Its `join` runs the whole job at once, on this thread: the job's mechanics without the
 * timing (test/integration/parallel-build.test.ts runs real threads).
 */
export function helperIndex(f: Fixture, distance: Distance, scratchIndex: number): InsertHelpers {
  const arena = new VectorArena(f.arena.dim, { scratchAreas: f.arena.scratchAreas, scratchIndex, memory: f.arena.wasmMemory });
  const kernel = createKernel(arena, distance);
  const mips = f.mips === undefined ? undefined : new MipsGraphKernel(arena, kernel);
  const { m, efConstruction } = f.index.params;
  const index = new HnswIndex(arena, kernel, mips ?? kernel, f.slots, { m, efConstruction, efSearch: 1, seed: 1 });
  return {
    join(job) {
      index.restore(HnswGraph.attach(m, f.index.graph.sharedArrays()), new SeededRng(1));
      arena.refreshViews(f.arena.slotCapacity);
      if (f.mips !== undefined) mips?.follow(f.mips.shared);
      index.runInsertJob(job);
    },
  };
}
