/**
 * A Map from strings spread over SHARDS Maps. A JS Map grows by rehashing every entry at once:
 * growing past 2^20 entries took 0.4 s in one `set`, past 2^22 entries 2.4 s (measured on a busy
 * 2-core machine), a stall for whatever write crossed the line. Split into 64 maps, each growth
 * rehashes 1/64 of the entries. The shard is picked from the key's last two characters, which
 * differ between the ids a collection holds (decimal numbers, UUIDs, names). With keys spread
 * evenly the shards grow together, so a loop that adds many keys looks at the clock often
 * (core/time-slices.ts): a few rehashes of 1/64 each may fall between two looks.
 */
const SHARDS = 64;

export class ShardedMap<V> {
  private readonly shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return this.shard(key).get(key);
  }

  has(key: string): boolean {
    return this.shard(key).has(key);
  }

  set(key: string, value: V): this {
    const shard = this.shard(key);
    const before = shard.size;
    shard.set(key, value);
    this.count += shard.size - before;
    return this;
  }

  delete(key: string): boolean {
    const deleted = this.shard(key).delete(key);
    if (deleted) this.count--;
    return deleted;
  }

  private shard(key: string): Map<string, V> {
    const n = key.length;
    const h = n < 2 ? key.charCodeAt(0) | 0 : key.charCodeAt(n - 1) * 7 + key.charCodeAt(n - 2);
    return this.shards[h & (SHARDS - 1)] as Map<string, V>;
  }
}
