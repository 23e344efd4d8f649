/**
 * An HNSW index over a real arena and kernels with a minimal slot table, as the collection's
 * segment sets one up, for the index tests that need no database. Not a test file itself.
 */
import type { Distance } from '../../../src/core/distance.js';
import { HnswIndex } from '../../../src/index/hnsw/hnsw-index.js';
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
  add(slot: number, vector: readonly number[]): void;
  remove(slot: number): void;
}

export function fixture(distance: Distance, dim: number, m: number, efConstruction = 64): Fixture {
  const arena = new VectorArena(dim);
  const kernel = createKernel(arena, distance);
  const mips = distance === 'Dot' ? new MipsGraphKernel(arena, kernel) : undefined;
  const slots = new Slots();
  const index = new HnswIndex(arena, kernel, mips ?? kernel, slots, { m, efConstruction, efSearch: 16, seed: 100 });
  return {
    index,
    arena,
    slots,
    add(slot, vector) {
      arena.reserve(slot + 1);
      const v = Float32Array.from(vector);
      if (distance === 'Cosine') {
        const norm = Math.hypot(...v);
        if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
      }
      arena.write(slot, v);
      mips?.noteVector(slot);
      slots.setLive(slot, true);
      index.add(slot);
    },
    remove(slot) {
      slots.setLive(slot, false);
      index.remove(slot);
    },
  };
}

