/**
 * A map from strings (point ids) that never asks V8 to hash a key, spread over SHARDS tables.
 *
 * Why not a JS Map:
 * - A Map grows by rehashing every entry at once: growing past 2^20 entries took 0.4 s in one
 *   `set`, past 2^22 entries 2.4 s (measured on a busy 2-core machine). Split into 64 tables,
 *   each growth moves 1/64 of the entries, and moves stored hashes, not strings.
 * - On Node 26 (V8 14.6) a Map, Set or object lookup with a string that is not internalized
 *   internalizes it: every id a request names is added to V8's one string table, which doubles
 *   as it fills, rehashing all its strings on the service thread. A delete of 3.28M ids (the body
 *   limit) crossed 0.7M, 1.4M and 2.8M strings, and held the service 41, 55 and 135-248 ms at
 *   those points (docs/decisions.md, "Point ids are hashed by kith, not by V8"). Node 20-24 do
 *   not do this.
 *
 * Here a key is hashed by `hashKey` (a seeded multiply-xorshift over its UTF-16 code units, seeded
 * per process so that ids chosen to collide cannot be prepared in advance) and compared with
 * `===`, which compares contents and internalizes nothing. Each shard is an open-addressing table
 * with linear probing, kept at most half full; deletion shifts the entries after it back, so
 * there are no tombstones to clean.
 */
const SHARDS = 64;
const SHARD_BITS = 6;
/** Slots of a new shard's table (a power of two). */
const INITIAL_CAPACITY = 16;

/** Per-process seed: the order of a table's entries is not predictable from outside. */
const SEED = (Math.random() * 0x1_0000_0000) >>> 0;

/** A 32-bit hash of the key's code units. */
export function hashKey(key: string): number {
  let h = SEED ^ key.length;
  for (let i = 0; i < key.length; i++) {
    h = Math.imul(h ^ key.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

class Shard<V> {
  size = 0;
  private mask = INITIAL_CAPACITY - 1;
  private keys: (string | undefined)[] = new Array(INITIAL_CAPACITY).fill(undefined);
  private values: (V | undefined)[] = new Array(INITIAL_CAPACITY).fill(undefined);
  /** The hash of the key at each slot, so that growing and shifting never hash a string again. */
  private hashes = new Uint32Array(INITIAL_CAPACITY);

  /** The slot holding `key`, or -1. */
  find(key: string, hash: number): number {
    const keys = this.keys;
    const mask = this.mask;
    for (let at = (hash >>> SHARD_BITS) & mask; ; at = (at + 1) & mask) {
      const held = keys[at];
      if (held === undefined) return -1;
      if (held === key) return at;
    }
  }

  get(key: string, hash: number): V | undefined {
    const at = this.find(key, hash);
    return at === -1 ? undefined : this.values[at];
  }

  /** Sets the key's value; whether the key is new. */
  set(key: string, hash: number, value: V): boolean {
    const at = this.find(key, hash);
    if (at !== -1) {
      this.values[at] = value;
      return false;
    }
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    this.place(key, hash, value);
    this.size++;
    return true;
  }

  delete(key: string, hash: number): boolean {
    let hole = this.find(key, hash);
    if (hole === -1) return false;
    const { keys, values, hashes, mask } = this;
    // Backward shift: an entry after the hole moves into it unless its home lies after the hole
    // (cyclically), which would put it before its home where a lookup never looks.
    for (let at = (hole + 1) & mask; ; at = (at + 1) & mask) {
      const held = keys[at];
      if (held === undefined) break;
      const home = ((hashes[at] as number) >>> SHARD_BITS) & mask;
      if (((at - home) & mask) >= ((at - hole) & mask)) {
        keys[hole] = held;
        values[hole] = values[at];
        hashes[hole] = hashes[at] as number;
        hole = at;
      }
    }
    keys[hole] = undefined;
    values[hole] = undefined;
    this.size--;
    return true;
  }

  private place(key: string, hash: number, value: V | undefined): void {
    const mask = this.mask;
    let at = (hash >>> SHARD_BITS) & mask;
    while (this.keys[at] !== undefined) at = (at + 1) & mask;
    this.keys[at] = key;
    this.values[at] = value;
    this.hashes[at] = hash;
  }

  private grow(): void {
    const { keys, values, hashes } = this;
    const capacity = keys.length * 2;
    this.mask = capacity - 1;
    this.keys = new Array(capacity).fill(undefined);
    this.values = new Array(capacity).fill(undefined);
    this.hashes = new Uint32Array(capacity);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key !== undefined) this.place(key, hashes[i] as number, values[i]);
    }
  }
}

export class ShardedMap<V> {
  private readonly shards: Shard<V>[] = Array.from({ length: SHARDS }, () => new Shard<V>());
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    const hash = hashKey(key);
    return this.shardOf(hash).get(key, hash);
  }

  has(key: string): boolean {
    const hash = hashKey(key);
    return this.shardOf(hash).find(key, hash) !== -1;
  }

  set(key: string, value: V): this {
    const hash = hashKey(key);
    if (this.shardOf(hash).set(key, hash, value)) this.count++;
    return this;
  }

  delete(key: string): boolean {
    const hash = hashKey(key);
    const deleted = this.shardOf(hash).delete(key, hash);
    if (deleted) this.count--;
    return deleted;
  }

  private shardOf(hash: number): Shard<V> {
    return this.shards[hash & (SHARDS - 1)] as Shard<V>;
  }
}
