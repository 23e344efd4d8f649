/**
 * Large point writes, committed by a thread of their own so that they do not hold the service
 * thread. One LMDB transaction must hold a whole batch (all or nothing in the file), and its
 * puts are synchronous native calls of about 1–2 µs each: 51,500 records (a 64 MiB upsert) held
 * the service thread 65–400 ms in one transaction, and a batch of millions of small points or
 * deletes for seconds. lmdb-js cannot keep one transaction open across turns of the event loop
 * safely (reads and writes elsewhere in the process would run inside it), so a batch of
 * LARGE_WRITE_OPERATIONS or more is handed to a worker thread that opens the same environment
 * (lmdb-js shares it between the threads of a process), writes the batch in one transaction and
 * commits it, fsync included, before answering. LMDB's writer lock orders it with the store's own
 * writes; readers see all of it or none of it.
 *
 * The keys and records are packed into a few buffers, a slice at a time, and handed over without
 * a copy (transferred); a thread is started per large write and ends with it, so nothing outlives
 * the write or the store (starting one costs tens of milliseconds, on the thread itself).
 */
import { Worker } from 'node:worker_threads';
import { type AppliedPosition, encodeAppliedPosition } from '../core/applied-position.js';
import { KithError } from '../core/errors.js';
import { TimeSlices } from '../core/time-slices.js';

/** Puts plus removes from which a write goes to a thread of its own (below, the store's own transaction takes ≤ ~15 ms). */
export const LARGE_WRITE_OPERATIONS = 8192;
/** Record bytes from which a write goes to a thread of its own (copying them into LMDB's pages takes long too). */
export const LARGE_WRITE_BYTES = 16 * 1048576;

/** Byte strings end to end in one transferable buffer: item i is `bytes[ends[i − 1] … ends[i])`. */
export interface Packed {
  readonly bytes: ArrayBuffer;
  readonly ends: Float64Array;
}

/** What the thread is given (workerData). */
export interface PointWriterJob {
  readonly path: string;
  readonly uid: number;
  readonly removeKeys: Packed;
  readonly putKeys: Packed;
  readonly records: Packed;
  /** The collection's new last version, as a decimal string; null to leave it. */
  readonly lastVersion: string | null;
  /** The collection's new applied position, encoded (applied-position.ts); null to leave it. */
  readonly applied: string | null;
}

/** What the thread answers: done, or why not. */
export type PointWriterResult = { readonly ok: true } | { readonly ok: false; readonly message: string };

export function isLargeWrite(operations: number, bytes: number): boolean {
  return operations >= LARGE_WRITE_OPERATIONS || bytes >= LARGE_WRITE_BYTES;
}

/**
 * Removes `removeKeys`, then puts `records` under `putKeys`, and sets the last version and the
 * applied position, in one transaction of the file at `path` on a thread of its own; resolves
 * once durable.
 */
export async function writeOnThread(
  path: string,
  uid: number,
  removeKeys: readonly Uint8Array[],
  puts: ReadonlyArray<readonly [Uint8Array, Uint8Array]>,
  lastVersion: bigint | undefined,
  applied?: AppliedPosition,
): Promise<void> {
  const slices = new TimeSlices();
  const job: PointWriterJob = {
    path,
    uid,
    removeKeys: await pack(removeKeys.length, (i) => removeKeys[i] as Uint8Array, slices),
    putKeys: await pack(puts.length, (i) => (puts[i] as readonly [Uint8Array, Uint8Array])[0], slices),
    records: await pack(puts.length, (i) => (puts[i] as readonly [Uint8Array, Uint8Array])[1], slices),
    lastVersion: lastVersion === undefined ? null : lastVersion.toString(),
    applied: applied === undefined ? null : encodeAppliedPosition(applied),
  };
  const transfer = [
    job.removeKeys.bytes,
    job.removeKeys.ends.buffer,
    job.putKeys.bytes,
    job.putKeys.ends.buffer,
    job.records.bytes,
    job.records.ends.buffer,
  ] as ArrayBuffer[];
  const worker = new Worker(new URL('./point-writer-thread.js', import.meta.url), { workerData: job, transferList: transfer });
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  const result = await new Promise<PointWriterResult>((resolve) => {
    worker.once('message', resolve);
    worker.once('error', (error) => resolve({ ok: false, message: error.message }));
    void exited.then((code) => resolve({ ok: false, message: `the writing thread ended (exit code ${code}) before answering` }));
  });
  // The thread has closed its handle on the file when it answers: it ends by itself.
  await exited;
  if (!result.ok) throw new KithError('ERR_STORAGE', `write to ${path} failed: ${result.message}`);
}

/** Packs `count` byte strings into one buffer, copying a slice at a time. */
async function pack(count: number, item: (i: number) => Uint8Array, slices: TimeSlices): Promise<Packed> {
  const ends = new Float64Array(count);
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (slices.due(i)) await slices.pause();
    total += item(i).length;
    ends[i] = total;
  }
  const bytes = new ArrayBuffer(total);
  const view = new Uint8Array(bytes);
  for (let i = 0; i < count; i++) {
    if (slices.due(i)) await slices.pause();
    view.set(item(i), i === 0 ? 0 : (ends[i - 1] as number));
  }
  return { bytes, ends };
}

/** Item i of a packed buffer, as a view (no copy). */
export function unpacked(packed: Packed, i: number): Buffer {
  const start = i === 0 ? 0 : (packed.ends[i - 1] as number);
  return Buffer.from(packed.bytes, start, (packed.ends[i] as number) - start);
}
