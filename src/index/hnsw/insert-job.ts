/**
 * One batch of HNSW inserts shared out between threads (HnswIndex.addMany). The owner adds the
 * nodes (levels drawn in slot order) and fixes the entry point; then it and every helper thread
 * take slots from the job one at a time, with one atomic add on a shared counter, and link them
 * in under the lists' locks (index/hnsw/link-locks.ts). A thread that joins late finds nothing
 * left and does nothing; a thread that fails marks the job failed, the others skip what is left,
 * and the owner reports it.
 *
 * What is reproducible: levels, and with them the entry point and each node's layers, are the
 * same for any number of threads. Which links a node gets depends on which nodes were already
 * linked when it searched, and so on timing: graphs built by several threads differ from run to
 * run; their recall does not, within noise (test/integration/parallel-build.test.ts).
 */

/** Below this many slots a batch is inserted by the owner alone: waking a thread costs about one insert. */
export const PARALLEL_INSERT_MIN = 16;

/** The owner gives up on helpers that make no progress for this long (one slot takes about a millisecond). */
const STALLED_AFTER_MS = 60_000;
const WAIT_SLICE_MS = 1000;

/** Words of `control`. */
const NEXT = 0;
const DONE = 1;
const FAILED = 2;

export interface InsertJob {
  /** The slots to link; their nodes are in the graph already. */
  readonly slots: Int32Array;
  /** `[next slot to claim, slots done, failed]`. */
  readonly control: Int32Array;
  /** Where every insert starts; it does not move while the job runs. */
  readonly entryPoint: number;
  readonly maxLevel: number;
}

/** Whoever can send a job to other threads (threads/search-threads.ts); each runs `HnswIndex.runInsertJob`. */
export interface InsertHelpers {
  join(job: InsertJob): void;
}

/** A job's arrays never grow: plain SharedArrayBuffers (a growable one reserves 4 GiB of address space). */
function fixedInt32(length: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(length * 4));
}

export function newInsertJob(slots: readonly number[], entryPoint: number, maxLevel: number): InsertJob {
  const shared = fixedInt32(slots.length);
  shared.set(slots);
  return { slots: shared, control: fixedInt32(3), entryPoint, maxLevel };
}

/** Claims the job's slots one by one and inserts each, until none are left. */
export function forEachClaim(job: InsertJob, insert: (slot: number) => void): void {
  const { control, slots } = job;
  const total = slots.length;
  for (;;) {
    const at = Atomics.add(control, NEXT, 1);
    if (at >= total) return;
    try {
      if (Atomics.load(control, FAILED) === 0) insert(slots[at] as number);
    } catch (error) {
      Atomics.store(control, FAILED, 1);
      throw error;
    } finally {
      if (Atomics.add(control, DONE, 1) + 1 === total) Atomics.notify(control, DONE);
    }
  }
}

/** Blocks until every slot of the job is done; throws if a thread failed or the helpers stalled. */
export function awaitInsertJob(job: InsertJob): void {
  const { control } = job;
  const total = job.slots.length;
  let stalledMs = 0;
  for (;;) {
    const done = Atomics.load(control, DONE);
    if (done >= total) break;
    const outcome = Atomics.wait(control, DONE, done, WAIT_SLICE_MS);
    if (outcome === 'timed-out' && Atomics.load(control, DONE) === done) {
      stalledMs += WAIT_SLICE_MS;
      if (stalledMs >= STALLED_AFTER_MS) throw new Error(`parallel insert: no progress for ${STALLED_AFTER_MS / 1000} s (${done} of ${total} slots done)`);
    } else {
      stalledMs = 0;
    }
  }
  if (Atomics.load(control, FAILED) !== 0) throw new Error('parallel insert: an insert thread failed (its error is logged); the graph is incomplete');
}
