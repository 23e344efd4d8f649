/**
 * The collection's points in memory, by slot (dense internal id): external id, version, payload
 * and liveness. Freed slots are reused, so the vector arena stays dense. A slot the index still
 * references (an HNSW tombstone) is "held": neither live nor free until the index releases it.
 *
 * Invariant: `ids[s] !== undefined` exactly when `live[s] === 1` and `slotOf(ids[s]) === s`; the
 * id order (id-order.ts) holds exactly those ids, each with its slot.
 */

import type { PointId } from '../core/point-id.js';
import { IdOrder, type IdOrderWalk } from './id-order.js';
import { ShardedMap } from '../core/sharded-map.js';
import { grownArray } from '../core/shared-array.js';
import type { SlotTable } from '../index/vector-index.js';
import { type SharedPayloadArrays, SharedPayloadWriter } from '../payload/shared-payloads.js';

export type Payload = Record<string, unknown>;

/** What readers (searches, the API) may use of a point table. */
export type PointTableReader = Pick<PointTable, 'slotCount' | 'liveCount' | 'isLive' | 'idOf' | 'slotOf' | 'versionOf' | 'payloadOf' | 'liveSlots' | 'walkIds'>;

export class PointTable implements SlotTable {
  /** Sharded: a plain Map rehashes every id at once when it grows (core/sharded-map.ts). */
  private readonly slotById = new ShardedMap<number>();
  private ids: Array<PointId | undefined> = [];
  private payloads: Array<Payload | undefined> = [];
  private versions = new BigUint64Array(0);
  /** 1 where a slot holds a live point; shared with the search threads (their flat scans test it). */
  private live: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private readonly freeSlots: number[] = [];
  /** The live ids in scroll order: changed wherever an id gains or loses its slot below. */
  private readonly order = new IdOrder();
  private highWater = 0;
  /**
   * The payloads (and ids) as records in shared memory, for search threads' filter predicates;
   * made on first need (`startSharingPayloads`), then kept in step with every change. While it is
   * being filled, slots below `sharedUpTo` are kept in step and the rest are copied as it goes.
   */
  private shared: SharedPayloadWriter | undefined;
  private sharedUpTo = 0;
  private sharedReady = false;
  /** Why sharing the payloads stopped (past the copy's limit): then it stays off for this table. */
  private sharingFailure: Error | undefined;

  /** `sharedPayloadLimit`: the most bytes of payload records to share (shared-payloads.ts; tests lower it). */
  constructor(private readonly sharedPayloadLimit?: number) {}

  get slotCount(): number {
    return this.highWater;
  }

  get liveCount(): number {
    return this.slotById.size;
  }

  /** The liveness flags as search threads read them; replaced when the table grows. */
  get sharedLive(): Uint8Array<ArrayBufferLike> {
    return this.live;
  }

  isLive(slot: number): boolean {
    return this.live[slot] === 1;
  }

  idOf(slot: number): PointId {
    return this.ids[slot] as PointId;
  }

  slotOf(id: PointId): number | undefined {
    return this.slotById.get(id);
  }

  versionOf(slot: number): bigint {
    return this.versions[slot] as bigint;
  }

  payloadOf(slot: number): Payload {
    return this.payloads[slot] as Payload;
  }

  /** One past the highest slot that adding `newPoints` new ids can use; for pre-sizing. */
  slotsNeededFor(newPoints: number): number {
    return this.highWater + Math.max(0, newPoints - this.freeSlots.length);
  }

  /** Grows the per-slot arrays so `set` on slots below `slots` cannot allocate. */
  reserve(slots: number): void {
    if (slots <= this.live.length) return;
    const capacity = Math.max(slots, Math.ceil(this.live.length * 1.5), 1024);
    // Grown in place (core/shared-array.ts): search threads holding the old view hold no copy.
    this.live = grownArray(Uint8Array, this.live, capacity);
    const versions = new BigUint64Array(capacity);
    versions.set(this.versions);
    this.versions = versions;
  }

  /**
   * Stores a point, in its current slot or a free or new one, and returns the slot. Call
   * `reserve(slotsNeededFor(n))` first: then this never allocates typed arrays.
   */
  upsert(id: PointId, version: bigint, payload: Payload): number {
    const slot = this.slotById.get(id);
    if (slot === undefined) {
      const taken = this.takeSlot();
      this.place(taken, id, version, payload);
      return taken;
    }
    this.versions[slot] = version;
    this.payloads[slot] = payload;
    this.mirror(slot);
    return slot;
  }

  /**
   * A free or new slot for a point that is not stored yet (`bind` stores it): not live, mapped to
   * no id, so searches pass it by meanwhile. Call `reserve(slotsNeededFor(n))` first.
   */
  takeSlot(): number {
    return this.freeSlots.pop() ?? this.highWater++;
  }

  /** Stores `id`, which must be absent, at a slot from `takeSlot`. */
  bind(slot: number, id: PointId, version: bigint, payload: Payload): void {
    if (this.slotById.has(id)) throw new Error(`point ${JSON.stringify(id)} is stored already`);
    this.place(slot, id, version, payload);
  }

  /**
   * Removes `id`; returns its slot, or undefined if the id is absent. The slot is free at once
   * when `reusable`, else held until `release`.
   */
  delete(id: PointId, reusable: boolean): number | undefined {
    const slot = this.slotById.get(id);
    if (slot === undefined) return undefined;
    this.slotById.delete(id);
    this.order.remove(id);
    this.live[slot] = 0;
    this.ids[slot] = undefined;
    this.payloads[slot] = undefined;
    this.mirror(slot);
    if (reusable) this.freeSlots.push(slot);
    return slot;
  }

  /** Makes held slots free for reuse. */
  release(slots: readonly number[]): void {
    for (const slot of slots) if (this.live[slot] !== 1) this.freeSlots.push(slot);
  }

  /** Puts a point at a given slot (restoring a snapshot's layout); call `rebuildFreeSlots` after. */
  insertAt(slot: number, id: PointId, version: bigint, payload: Payload): void {
    this.reserve(slot + 1);
    if (slot >= this.highWater) this.highWater = slot + 1;
    this.place(slot, id, version, payload);
  }

  /** Stores an absent `id` at `slot`: the id map, the id order, liveness and the point's fields. */
  private place(slot: number, id: PointId, version: bigint, payload: Payload): void {
    this.slotById.set(id, slot);
    this.order.add(id, slot);
    this.live[slot] = 1;
    this.ids[slot] = id;
    this.versions[slot] = version;
    this.payloads[slot] = payload;
    this.mirror(slot);
  }

  /** Recomputes the free list: every slot below the high-water mark that is neither live nor held. */
  rebuildFreeSlots(isHeld: (slot: number) => boolean): void {
    this.freeSlots.length = 0;
    for (let slot = this.highWater - 1; slot >= 0; slot--) if (this.live[slot] !== 1 && !isHeld(slot)) this.freeSlots.push(slot);
  }

  // ---- payloads in shared memory ---------------------------------------------------------------

  /**
   * Copies up to `count` more slots' payloads into shared memory, starting to share them if not
   * yet: 'done' when all are there, 'more' when some are left, 'failed' when they do not fit
   * (`payloadSharingFailure` says why; sharing then stays off).
   */
  sharePayloads(count: number): 'done' | 'more' | 'failed' {
    if (this.sharingFailure !== undefined) return 'failed';
    this.shared ??= new SharedPayloadWriter(this.sharedPayloadLimit);
    const shared = this.shared;
    const end = Math.min(this.highWater, this.sharedUpTo + count);
    try {
      for (let slot = this.sharedUpTo; slot < end; slot++) {
        const id = this.ids[slot];
        if (id !== undefined) shared.set(slot, id, this.payloads[slot] as Payload);
      }
    } catch (error) {
      this.stopSharing(error);
      return 'failed';
    }
    this.sharedUpTo = end;
    this.sharedReady = end === this.highWater;
    return this.sharedReady ? 'done' : 'more';
  }

  /** Why the payloads are not shared and will not be (they outgrew the copy's limit); undefined otherwise. */
  get payloadSharingFailure(): Error | undefined {
    return this.sharingFailure;
  }

  /** The shared payload records once every slot is there (undefined before); replaced when they grow or are compacted. */
  get sharedPayloads(): SharedPayloadArrays | undefined {
    return this.sharedReady ? this.shared?.arrays() : undefined;
  }

  /** Bytes the shared payload records reserve (0 when not shared). */
  get sharedPayloadBytes(): number {
    return this.shared?.allocatedBytes ?? 0;
  }

  /**
   * Keeps the shared record of `slot` in step with the table (the caller holds off readers: a write
   * step). A copy that outgrows its limit is dropped rather than failing the write: searches then
   * run such filters on the service thread, as before the copy.
   */
  private mirror(slot: number): void {
    const shared = this.shared;
    if (shared === undefined || (!this.sharedReady && slot >= this.sharedUpTo)) return;
    const id = this.ids[slot];
    try {
      if (id === undefined) shared.clear(slot);
      else shared.set(slot, id, this.payloads[slot] as Payload);
      if (shared.wantsCompaction) shared.compact();
    } catch (error) {
      this.stopSharing(error);
    }
  }

  private stopSharing(error: unknown): void {
    this.shared = undefined;
    this.sharedUpTo = 0;
    this.sharedReady = false;
    this.sharingFailure = error instanceof Error ? error : new Error(String(error));
  }

  /**
   * The live slots in id order (core/point-id.ts compareIds) from the first id ≥ `from`: a scroll's
   * walk. Valid while the table does not change (the caller holds writes off).
   */
  walkIds(from?: PointId): IdOrderWalk {
    return this.order.walk(from);
  }

  /** Problems with the id order against the table; empty when sound. */
  orderProblems(): string[] {
    return this.order.problems(this);
  }

  /** Live slots in slot order. */
  *liveSlots(): IterableIterator<number> {
    for (let slot = 0; slot < this.highWater; slot++) if (this.live[slot] === 1) yield slot;
  }
}
