/**
 * The pool of search threads (`-threads`, KITH_THREADS): one worker per thread, each with its own
 * scratch area in every segment's vector memory (scratch area 0 is the service thread's). A
 * search goes to the thread with the fewest searches in flight. Segments are attached once and
 * re-mapped when their arrays grow; the messages to one thread arrive in order, so a search
 * never reaches a thread before the arrays it needs.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { InsertJob } from '../index/hnsw/insert-job.js';
import type { SearchHits } from '../index/vector-index.js';
import type { CalibrationOptions, CalibrationResult } from '../segment/recall-calibration.js';
import type { FromThread, SearchItem, SegmentSpec, ThreadWork, ToThread } from './search-thread-protocol.js';
import type { SegmentHeader, SharedSegmentState, StoredVectorContext } from '../segment/segment.js';
import { ServiceLoad } from './service-load.js';

interface Pending {
  readonly resolve: (result: { hits: SearchHits; scored: number }) => void;
  readonly reject: (error: Error) => void;
}

interface PendingSlice {
  readonly resolve: (outcome: CalibrationSliceOutcome) => void;
  readonly reject: (error: Error) => void;
}

/** How a calibration slice ended: not yet, or done with the calibration's result. */
export type CalibrationSliceOutcome = { readonly done: false } | { readonly done: true; readonly result: CalibrationResult | undefined };

interface Thread {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
  /** Calibration slices sent, by job (one at a time per job). */
  readonly slices: Map<number, PendingSlice>;
  /** Searches given to this thread in the current turn, sent together when it ends. */
  outbox: SearchItem[];
  alive: boolean;
}

export class SearchThreads {
  private readonly threads: Thread[] = [];
  private nextId = 1;
  private nextKey = 1;
  private nextJob = 1;
  /** The thread each calibration job runs on: its state lives there. */
  private readonly jobThreads = new Map<number, Thread>();
  private closed = false;
  private flushQueued = false;
  private readonly serviceLoad = new ServiceLoad();

  private constructor(
    count: number,
    private readonly warn: (message: string) => void,
  ) {
    for (let i = 0; i < count; i++) this.threads.push(this.spawn(i + 1));
  }

  /** Starts `count` (≥ 1) search threads; `warn` hears of failures no request is waiting for. */
  static start(count: number, warn: (message: string) => void = () => {}): SearchThreads {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`search threads: expected a positive integer, got ${count}`);
    return new SearchThreads(count, warn);
  }

  get size(): number {
    return this.threads.length;
  }

  /** Scratch areas a segment's vector memory needs for this pool: one per thread and the service's. */
  get scratchAreas(): number {
    return this.threads.length + 1;
  }

  /** Whether a search starting now came from a backlog of requests (service-load.ts); call once per search. */
  backlogged(): boolean {
    return this.serviceLoad.backlogged();
  }

  /** Whether no thread has a search in flight. */
  get idle(): boolean {
    for (const thread of this.threads) if (thread.pending.size > 0) return false;
    return true;
  }

  /** Whether any thread can take work (threads that crashed are left out). */
  get available(): boolean {
    return !this.closed && this.threads.some((t) => t.alive);
  }

  /** Gives every thread a view of a segment; returns the key later messages name it by. */
  attach(spec: SegmentSpec, state: SharedSegmentState): number {
    const key = this.nextKey++;
    this.broadcast({ type: 'attach', key, spec, memory: state.memory, graph: state.graph, live: state.live, payloads: state.payloads });
    return key;
  }

  /** The segment's arrays were replaced by larger ones. */
  remap(key: number, state: SharedSegmentState): void {
    this.broadcast({ type: 'remap', key, graph: state.graph, live: state.live, payloads: state.payloads });
  }

  detach(key: number): void {
    this.broadcast({ type: 'detach', key });
  }

  /** A new calibration job's number, for `calibrate`. */
  newCalibrationJob(): number {
    return this.nextJob++;
  }

  /**
   * Runs a slice (about `sliceMs`) of calibration `job` on a segment: the first call (with
   * `options`) starts the job on the least busy thread, and the job stays there.
   */
  calibrate(
    key: number,
    job: number,
    header: SegmentHeader,
    context: StoredVectorContext,
    sliceMs: number,
    options?: CalibrationOptions,
  ): Promise<CalibrationSliceOutcome> {
    let thread = this.jobThreads.get(job);
    if (thread === undefined && options !== undefined) {
      thread = this.leastBusy();
      if (thread !== undefined) this.jobThreads.set(job, thread);
    }
    if (thread === undefined || !thread.alive || this.closed) return Promise.reject(new Error('no search thread is running the calibration'));
    const chosen = thread;
    return new Promise((resolve, reject) => {
      chosen.slices.set(job, { resolve, reject });
      this.flush();
      chosen.worker.postMessage({ type: 'calibrate', key, job, header, context, sliceMs, ...(options === undefined ? {} : { options }) } satisfies ToThread);
    });
  }

  /** Drops a calibration job that will not be continued. */
  cancelCalibration(key: number, job: number): void {
    const thread = this.jobThreads.get(job);
    this.jobThreads.delete(job);
    if (thread?.alive === true) thread.worker.postMessage({ type: 'calibrate-cancel', key, job } satisfies ToThread);
  }

  /**
   * Asks threads to join an insert job on a segment (index/hnsw/insert-job.ts); the caller inserts
   * too, so one core is left to it: at most cores − 1 threads, the least busy first. Returns how
   * many were asked.
   */
  insert(key: number, job: InsertJob, context: StoredVectorContext): number {
    this.flush();
    const helpers = this.threads
      .filter((t) => t.alive)
      .sort((a, b) => a.pending.size - b.pending.size)
      .slice(0, Math.max(1, availableParallelism() - 1));
    for (const thread of helpers) thread.worker.postMessage({ type: 'insert', key, job, context } satisfies ToThread);
    return helpers.length;
  }

  /** Runs search work on the least busy thread; hits may hold more than `k` (ties kept). */
  run(key: number, header: SegmentHeader, work: ThreadWork): Promise<{ hits: SearchHits; scored: number }> {
    const best = this.leastBusy();
    if (best === undefined || this.closed) return Promise.reject(new Error('no search thread is running'));
    const id = this.nextId++;
    const chosen = best;
    return new Promise((resolve, reject) => {
      chosen.pending.set(id, { resolve, reject });
      // A message costs tens of µs each way, about a small search: the searches of one turn (a
      // batch request, concurrent requests) share one.
      chosen.outbox.push({ id, key, header, work });
      if (!this.flushQueued) {
        this.flushQueued = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  private leastBusy(): Thread | undefined {
    let best: Thread | undefined;
    for (const thread of this.threads) if (thread.alive && (best === undefined || thread.pending.size < best.pending.size)) best = thread;
    return best;
  }

  private flush(): void {
    this.flushQueued = false;
    for (const thread of this.threads) {
      if (thread.outbox.length === 0) continue;
      const items = thread.outbox;
      thread.outbox = [];
      if (thread.alive) thread.worker.postMessage({ type: 'searches', items } satisfies ToThread);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  private broadcast(message: ToThread): void {
    // Searches already queued this turn were planned against the state before this message.
    this.flush();
    for (const thread of this.threads) if (thread.alive) thread.worker.postMessage(message);
  }

  private spawn(scratchIndex: number): Thread {
    const worker = new Worker(new URL('./search-thread.js', import.meta.url), { workerData: { scratchIndex } });
    // Idle search threads must not keep a process alive that is otherwise done.
    worker.unref();
    const thread: Thread = { worker, pending: new Map(), slices: new Map(), outbox: [], alive: true };
    worker.on('message', (message: FromThread) => {
      if ('insertFailed' in message) {
        this.warn(`search thread ${scratchIndex}: its part of a parallel insert failed: ${message.insertFailed}`);
        return;
      }
      if ('calibration' in message) {
        const reply = message.calibration;
        const slice = thread.slices.get(reply.job);
        if (slice === undefined) return;
        thread.slices.delete(reply.job);
        if ('error' in reply) {
          this.jobThreads.delete(reply.job);
          slice.reject(new Error(`search thread: ${reply.error}`));
        } else if (reply.done) {
          this.jobThreads.delete(reply.job);
          slice.resolve({ done: true, result: reply.result });
        } else {
          slice.resolve({ done: false });
        }
        return;
      }
      for (const reply of message.replies) {
        const pending = thread.pending.get(reply.id);
        if (pending === undefined) continue;
        thread.pending.delete(reply.id);
        if ('error' in reply) pending.reject(new Error(`search thread: ${reply.error}`));
        else pending.resolve({ hits: { slots: reply.slots, sims: reply.sims }, scored: reply.scored });
      }
    });
    const fail = (error: Error): void => {
      thread.alive = false;
      for (const pending of thread.pending.values()) pending.reject(error);
      thread.pending.clear();
      for (const slice of thread.slices.values()) slice.reject(error);
      thread.slices.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`search thread ${scratchIndex} exited with code ${code}`)));
    return thread;
  }
}
