/**
 * Which shard holds a point: a stable hash of its id (the normalised id: 7 and "7" are one), then
 * jump consistent hashing (Lamping & Veach, 2014) onto the shard count.
 *
 * - Stable: the same id goes to the same shard on every node and in every release; the test pins
 *   known values. Changing this function moves points, so it never changes for an existing
 *   collection.
 * - Consistent: going from n to n + 1 shards moves about 1/(n + 1) of the ids, all of them to the
 *   new shard, which resharding will need.
 *
 * The id is hashed with 32-bit FNV-1a over its UTF-8 bytes; the jump's random stream is
 * splitmix32 seeded with that hash (the paper's 64-bit LCG, in 32-bit arithmetic).
 */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function mix(hash: number, byte: number): number {
  return Math.imul(hash ^ byte, FNV_PRIME);
}

/** 32-bit FNV-1a over the UTF-8 bytes of `text` (a lone surrogate as U+FFFD, as TextEncoder writes it), without encoding it first. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      const low = c <= 0xdbff && i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      } else {
        c = 0xfffd;
      }
    }
    if (c < 0x80) {
      hash = mix(hash, c);
    } else if (c < 0x800) {
      hash = mix(mix(hash, 0xc0 | (c >> 6)), 0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      hash = mix(mix(mix(hash, 0xe0 | (c >> 12)), 0x80 | ((c >> 6) & 0x3f)), 0x80 | (c & 0x3f));
    } else {
      hash = mix(mix(mix(mix(hash, 0xf0 | (c >> 18)), 0x80 | ((c >> 12) & 0x3f)), 0x80 | ((c >> 6) & 0x3f)), 0x80 | (c & 0x3f));
    }
  }
  return hash >>> 0;
}

/** The shard of `id` among `shards` (an integer ≥ 1): 0 … shards − 1. */
export function shardOf(id: string, shards: number): number {
  return jump(fnv1a32(id), shards);
}

/** Jump consistent hashing of a 32-bit `hash` onto `shards` buckets (exported for its test). */
export function jump(hash: number, shards: number): number {
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`shards: expected an integer >= 1, got ${shards}`);
  let state = hash >>> 0;
  let bucket = 0;
  let next = 0;
  while (next < shards) {
    bucket = next;
    // splitmix32
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z = (z ^ (z >>> 16)) >>> 0;
    // A uniform draw in (0, 1]; the next shard this id would jump to.
    next = Math.floor((bucket + 1) / ((z + 1) / 4294967296));
  }
  return bucket;
}
