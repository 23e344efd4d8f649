/**
 * Locks on link lists for inserts running on several threads at once (index/hnsw/insert-job.ts),
 * after hnswlib's per-node mutexes. A fixed table of lock words over a SharedArrayBuffer, a slot
 * mapped to word `slot mod size`: the table never grows (so threads never need a new one), and two
 * slots sharing a word only wait for each other. No thread ever waits for a lock while it holds
 * one (a second lock is only ever tried: `tryLockSlot`), so sharing cannot deadlock.
 *
 * Each word is a futex-style mutex (Drepper, "Futexes Are Tricky", mutex 2): 0 free, 1 held, 2
 * held with waiters. Taking a free lock is one compare-and-swap; releasing one nobody waits for is
 * one atomic subtraction; only a contended lock sleeps (`Atomics.wait`) and wakes (`Atomics.notify`).
 */

/** Lock words per table: a power of two. 4,096 words are 16 KiB per graph. */
export const LOCK_WORDS = 4096;

/** A lock not taken for this long means its holder died: the insert fails instead of hanging. */
const STUCK_AFTER_MS = 30_000;
/** Sleep in slices this long, so a stuck lock is noticed. */
const WAIT_SLICE_MS = 100;

export function newLockTable(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(LOCK_WORDS * 4));
}

export function lockSlot(locks: Int32Array, slot: number): void {
  const word = slot & (LOCK_WORDS - 1);
  let state = Atomics.compareExchange(locks, word, 0, 1);
  if (state === 0) return;
  let waited = 0;
  if (state !== 2) state = Atomics.exchange(locks, word, 2);
  while (state !== 0) {
    if (Atomics.wait(locks, word, 2, WAIT_SLICE_MS) === 'timed-out') {
      waited += WAIT_SLICE_MS;
      if (waited >= STUCK_AFTER_MS) throw new Error(`link lock ${word} held for over ${STUCK_AFTER_MS / 1000} s: an insert thread died holding it`);
    }
    state = Atomics.exchange(locks, word, 2);
  }
}

/**
 * Takes `slot`'s lock if it is free, without waiting, for a thread that holds `held`'s: waiting
 * while holding a lock could deadlock, and `held` may share `slot`'s word. Returns whether it did.
 */
export function tryLockSlot(locks: Int32Array, slot: number, held: number): boolean {
  const word = slot & (LOCK_WORDS - 1);
  return word !== (held & (LOCK_WORDS - 1)) && Atomics.compareExchange(locks, word, 0, 1) === 0;
}

export function unlockSlot(locks: Int32Array, slot: number): void {
  const word = slot & (LOCK_WORDS - 1);
  if (Atomics.sub(locks, word, 1) !== 1) {
    Atomics.store(locks, word, 0);
    Atomics.notify(locks, word, 1);
  }
}
