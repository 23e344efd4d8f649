/**
 * The live ids of a collection in scroll order (core/point-id.ts compareIds), each with its slot,
 * kept in step by the point table on every change (point-table.ts). A scroll page seeks its cursor
 * and walks forward (O(log n + page)) instead of looking at every point (docs/architecture.md,
 * "Scroll order").
 *
 * The order has three classes, one after the other: integer ids by value, then UUIDs, then every
 * other id by UTF-16 code unit. Each class is a list of sorted blocks keyed so that two keys of one
 * class compare with `<` (numbers for integer ids, the id string itself otherwise): the costly
 * part of compareIds (telling the class of an id) runs once per change, not once per comparison.
 *
 * Sorted blocks rather than a balanced tree: a block is two flat arrays (keys, and slots as an
 * Int32Array), so a point costs about 12 bytes here (a reference to the id string the table
 * already holds, or a number, and a slot) and a walk reads memory in order; an insert or a delete
 * moves at most BLOCK_MAX entries, and finding the block is a binary search over blocks' first keys.
 */
import { compareIds, idRank, type PointId } from '../core/point-id.js';

/** Entries a block holds at most; a full block splits, a block under a quarter of it merges into a neighbour. */
const BLOCK_MAX = 512;

interface Block<K> {
  readonly keys: K[];
  readonly slots: Int32Array;
}

/** One class of ids, sorted by a key that compares with `<`. */
class SortedBlocks<K extends number | string> {
  readonly blocks: Block<K>[] = [];
  size = 0;

  constructor(private readonly blockMax: number) {}

  add(key: K, slot: number): void {
    const blocks = this.blocks;
    if (blocks.length === 0) {
      blocks.push(this.newBlock([key], [slot]));
      this.size++;
      return;
    }
    const b = this.blockFor(key);
    const block = blocks[b] as Block<K>;
    const keys = block.keys;
    const at = lowerBound(keys, key);
    const max = this.blockMax;
    if (keys.length === max) {
      // Appending past the end of the last block (or before the first) starts a new block, so
      // that ids added in order (a load, growing integer ids) leave full blocks behind.
      if (at === max && b === blocks.length - 1) {
        blocks.push(this.newBlock([key], [slot]));
        this.size++;
        return;
      }
      if (at === 0 && b === 0) {
        blocks.unshift(this.newBlock([key], [slot]));
        this.size++;
        return;
      }
      const half = max >> 1;
      const upper = this.newBlock(keys.splice(half), block.slots.subarray(half, max));
      blocks.splice(b + 1, 0, upper);
      if (at > half) insertAt(upper, at - half, key, slot);
      else insertAt(block, at, key, slot);
    } else {
      insertAt(block, at, key, slot);
    }
    this.size++;
  }

  /** Removes `key`; returns whether it was there. */
  remove(key: K): boolean {
    const blocks = this.blocks;
    if (blocks.length === 0) return false;
    const b = this.blockFor(key);
    const block = blocks[b] as Block<K>;
    const keys = block.keys;
    const at = lowerBound(keys, key);
    if (at === keys.length || keys[at] !== key) return false;
    keys.splice(at, 1);
    block.slots.copyWithin(at, at + 1, keys.length + 1);
    this.size--;
    if (keys.length === 0) blocks.splice(b, 1);
    else if (keys.length < this.blockMax / 4) this.mergeSmall(b);
    return true;
  }

  /** The block and index of the first key ≥ `key` (the index may be one past the block's end). */
  seek(key: K): { block: number; index: number } {
    if (this.blocks.length === 0) return { block: 0, index: 0 };
    const b = this.blockFor(key);
    return { block: b, index: lowerBound((this.blocks[b] as Block<K>).keys, key) };
  }

  /** The block that holds `key` or would: the last whose first key is ≤ it (the first block when none is). */
  private blockFor(key: K): number {
    const blocks = this.blocks;
    let lo = 0;
    let hi = blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (((blocks[mid] as Block<K>).keys[0] as K) <= key) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private newBlock(keys: K[], slots: ArrayLike<number>): Block<K> {
    const block = { keys, slots: new Int32Array(this.blockMax) };
    block.slots.set(slots);
    return block;
  }

  /** Merges a small block into its next (or previous) neighbour when both fit in three quarters of a block. */
  private mergeSmall(b: number): void {
    const blocks = this.blocks;
    for (const left of [b, b - 1]) {
      const first = blocks[left];
      const second = blocks[left + 1];
      if (first === undefined || second === undefined || first.keys.length + second.keys.length > (this.blockMax * 3) / 4) continue;
      first.slots.set(second.slots.subarray(0, second.keys.length), first.keys.length);
      for (const key of second.keys) first.keys.push(key);
      blocks.splice(left + 1, 1);
      return;
    }
  }
}

function insertAt<K>(block: Block<K>, at: number, key: K, slot: number): void {
  block.keys.splice(at, 0, key);
  block.slots.copyWithin(at + 1, at, block.keys.length - 1);
  block.slots[at] = slot;
}

/** The first index whose key is ≥ `key`. */
function lowerBound<K extends number | string>(keys: readonly K[], key: K): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((keys[mid] as K) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A walk over the ids in order from a starting id, giving slots; valid while the order does not change. */
export interface IdOrderWalk {
  /** The next slot in id order, or -1 at the end. */
  next(): number;
}

export class IdOrder {
  private readonly integers: SortedBlocks<number>;
  private readonly uuids: SortedBlocks<string>;
  private readonly others: SortedBlocks<string>;

  /** `blockMax`: entries per block at most (tests make it small, to split and merge often). */
  constructor(blockMax = BLOCK_MAX) {
    if (!Number.isInteger(blockMax) || blockMax < 4) throw new Error(`blockMax must be an integer of at least 4, got ${blockMax}`);
    this.integers = new SortedBlocks(blockMax);
    this.uuids = new SortedBlocks(blockMax);
    this.others = new SortedBlocks(blockMax);
  }

  get size(): number {
    return this.integers.size + this.uuids.size + this.others.size;
  }

  /** Adds `id` (which must be absent) at `slot`. */
  add(id: PointId, slot: number): void {
    const rank = idRank(id);
    if (rank === 0) this.integers.add(Number(id), slot);
    else (rank === 1 ? this.uuids : this.others).add(id, slot);
  }

  /** Removes `id`; returns whether it was there. */
  remove(id: PointId): boolean {
    const rank = idRank(id);
    if (rank === 0) return this.integers.remove(Number(id));
    return (rank === 1 ? this.uuids : this.others).remove(id);
  }

  /** Walks the ids from the first ≥ `from` (from the first id without it). */
  walk(from?: PointId): IdOrderWalk {
    const classes: readonly SortedBlocks<number | string>[] = [this.integers, this.uuids, this.others];
    let part = 0;
    let block = 0;
    let index = 0;
    if (from !== undefined) {
      part = idRank(from);
      const at = part === 0 ? this.integers.seek(Number(from)) : (classes[part] as SortedBlocks<string>).seek(from);
      block = at.block;
      index = at.index;
    }
    return {
      next(): number {
        while (part < classes.length) {
          const blocks = (classes[part] as SortedBlocks<number | string>).blocks;
          const current = blocks[block];
          if (current === undefined) {
            part++;
            block = 0;
            index = 0;
            continue;
          }
          if (index < current.keys.length) return current.slots[index++] as number;
          block++;
          index = 0;
        }
        return -1;
      },
    };
  }

  /**
   * Problems with the order against the table it mirrors: every id once, in compareIds order,
   * at its slot, and as many as the table's live points. Empty when sound (checkIntegrity).
   */
  problems(table: { readonly liveCount: number; idOf(slot: number): PointId | undefined; slotOf(id: PointId): number | undefined }): string[] {
    const problems: string[] = [];
    if (this.size !== table.liveCount) problems.push(`id order holds ${this.size} ids, the table ${table.liveCount} live points`);
    const walk = this.walk();
    let previous: PointId | undefined;
    let seen = 0;
    for (let slot = walk.next(); slot !== -1; slot = walk.next()) {
      seen++;
      const id = table.idOf(slot);
      if (id === undefined || table.slotOf(id) !== slot) {
        problems.push(`id order names slot ${slot}, which holds no live point there`);
        continue;
      }
      if (previous !== undefined && compareIds(previous, id) >= 0) problems.push(`id order has ${JSON.stringify(previous)} before ${JSON.stringify(id)}`);
      previous = id;
    }
    if (seen !== this.size) problems.push(`id order walks ${seen} ids but counts ${this.size}`);
    return problems.slice(0, 20);
  }
}
