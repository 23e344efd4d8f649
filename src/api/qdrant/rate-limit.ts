/**
 * Strict mode's read_rate_limit and write_rate_limit: one token bucket per collection and
 * direction, as Qdrant keeps one per shard replica. A bucket holds `limit` tokens, starts full and
 * refills at limit/60 tokens a second; a request takes its cost (strict-mode.ts) or is refused
 * with Qdrant's 429 and the seconds to wait in Retry-After. The buckets live in this process: a
 * restart starts them full again, as Qdrant's do.
 */
import { QdrantHttpError } from './errors.js';

export type RateDirection = 'read' | 'write';

class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly capacity: number,
    private readonly now: () => number,
  ) {
    this.tokens = capacity;
    this.last = now();
  }

  /** Takes `cost` tokens, or throws the 429 that says why not. */
  take(cost: number, direction: RateDirection): void {
    const kind = direction === 'read' ? 'Read' : 'Write';
    if (cost > this.capacity) {
      throw new QdrantHttpError(
        429,
        `Rate limiting exceeded: ${kind} rate limit exceeded, request larger than rate limiter capacity, please try to split your request`,
      );
    }
    const now = this.now();
    const perSecond = this.capacity / 60;
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * perSecond);
    this.last = now;
    if (this.tokens >= cost) {
      this.tokens -= cost;
      return;
    }
    const wait = Math.ceil((cost - this.tokens) / perSecond);
    throw new QdrantHttpError(
      429,
      `Rate limiting exceeded: ${kind} rate limit exceeded: Operation requires ${cost} tokens but only ${this.tokens.toFixed(1)} were available. Retry after ${wait}s`,
      wait,
    );
  }
}

/** The buckets of every collection, by collection name and direction. */
export class RateLimiters {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Takes `cost` tokens from the collection's bucket for `direction`, sized `limit` per minute (no
   * limit: nothing taken, and the bucket forgotten). A bucket whose limit changed starts full at
   * the new size, as Qdrant's do when the config changes.
   */
  take(collection: string, direction: RateDirection, limit: number | undefined, cost: number): void {
    const key = `${direction}\u0000${collection}`;
    if (limit === undefined) {
      this.buckets.delete(key);
      return;
    }
    let bucket = this.buckets.get(key);
    if (bucket === undefined || bucket.capacity !== limit) {
      bucket = new TokenBucket(limit, this.now);
      this.buckets.set(key, bucket);
    }
    bucket.take(cost, direction);
  }

  /** Drops a collection's buckets (it was dropped or created anew). */
  forget(collection: string): void {
    this.buckets.delete(`read\u0000${collection}`);
    this.buckets.delete(`write\u0000${collection}`);
  }
}
