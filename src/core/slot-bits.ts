/**
 * Membership of slots as a bitset: bit `slot & 31` of word `slot >>> 5`. Filtered walks test it
 * inline (one array read and a shift) instead of calling a predicate for every neighbour they meet.
 * Slots past the end read as absent (`undefined >>> n` is 0).
 */
export function bitsWords(slots: number): number {
  return (slots + 31) >>> 5;
}

export function hasBit(bits: Uint32Array, slot: number): boolean {
  return (((bits[slot >>> 5] as number) >>> (slot & 31)) & 1) === 1;
}

export function setBit(bits: Uint32Array, slot: number): void {
  bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
}

/** A bitset of `slots` bits with the given members set. */
export function bitsOf(members: ArrayLike<number>, slots: number): Uint32Array {
  const bits = new Uint32Array(bitsWords(slots));
  for (let i = 0; i < members.length; i++) setBit(bits, members[i] as number);
  return bits;
}

/** Calls `visit` for every member, ascending. */
export function forEachBit(bits: Uint32Array, visit: (slot: number) => void): void {
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w] as number;
    while (word !== 0) {
      const low = word & -word;
      visit((w << 5) + 31 - Math.clz32(low));
      word ^= low;
    }
  }
}

/** How many members. */
export function countBits(bits: Uint32Array): number {
  let count = 0;
  for (let w = 0; w < bits.length; w++) count += popcount(bits[w] as number);
  return count;
}

/** The members, ascending. */
export function bitsToArray(bits: Uint32Array): Int32Array {
  const out = new Int32Array(countBits(bits));
  let i = 0;
  forEachBit(bits, (slot) => {
    out[i++] = slot;
  });
  return out;
}

function popcount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
