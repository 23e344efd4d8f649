/**
 * A search thread (worker_threads): holds a view of each attached segment's shared memory
 * (vectors, graph, liveness) and runs the scoring part of searches on it. Searches never write
 * that memory; the service's thread, the one writer, changes it only while no search is running
 * (threads/read-write-gate.ts), so a view never sees half a batch or a torn list. The one
 * exception is an insert job the writer shares out while it applies a batch (index/hnsw/
 * insert-job.ts): the thread then links graph nodes alongside it, under the lists' locks.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SeededRng } from '../core/rng.js';
import type { Distance } from '../core/distance.js';
import { FlatIndex } from '../index/flat/flat-index.js';
import { HnswGraph } from '../index/hnsw/hnsw-graph.js';
import { HnswIndex } from '../index/hnsw/hnsw-index.js';
import type { SearchHits, SearchOptions, SearchStats, SlotTable } from '../index/vector-index.js';
import { createKernel, createSq8Kernel, type DistanceKernel } from '../kernels/distance-kernel.js';
import { MipsGraphKernel } from '../kernels/mips-graph-kernel.js';
import type { SlotArena } from '../kernels/slot-arena.js';
import { Sq8Arena } from '../kernels/sq8-arena.js';
import { VectorArena } from '../kernels/vector-arena.js';
import { type SharedPayloadArrays, SharedPayloadReader } from '../payload/shared-payloads.js';
import { type PortableFilter, recordPredicate } from '../payload/thread-filter.js';
import { runWork, type WorkView } from '../segment/search-work.js';
import { type CalibrationReader, type CalibrationResult, calibrateEf } from '../segment/recall-calibration.js';
import type { FromThread, SearchReply, SegmentSpec, ThreadWork, ToThread } from './search-thread-protocol.js';
import type { SegmentHeader, StoredVectorContext } from '../segment/segment.js';
import { SlotMemo } from '../segment/slot-memo.js';

/** The slots as a thread sees them: liveness from the shared flags, counts from each search. */
class SharedSlotTable implements SlotTable {
  slotCount = 0;
  liveCount = 0;

  constructor(public live: Uint8Array<ArrayBufferLike>) {}

  isLive(slot: number): boolean {
    return this.live[slot] === 1;
  }

  idOf(): string {
    throw new Error('a search thread has no ids: searches there keep ties for the caller');
  }
}

interface SegmentView {
  readonly spec: SegmentSpec;
  readonly arena: SlotArena;
  readonly table: SharedSlotTable;
  readonly flat: FlatIndex;
  readonly kernel: DistanceKernel;
  /** The kernel a Dot graph is built with (kernels/mips-graph-kernel.ts), following the owner's norms. */
  readonly mips: MipsGraphKernel | undefined;
  hnsw: HnswIndex | undefined;
  /** The payload records, once the owner shares them (filters no index answers run on them). */
  payloads: SharedPayloadReader | undefined;
  /** A filter's answers per slot during one search (a filtered walk meets rejected nodes again and again). */
  readonly filterMemo: SlotMemo;
  /** Calibrations under way on this segment, by job (search/ef-calibration.ts sends their slices). */
  readonly calibrations: Map<number, Generator<void, CalibrationResult | undefined, void>>;
}

const scratchIndex = (workerData as { scratchIndex: number }).scratchIndex;
const views = new Map<number, SegmentView>();

function attach(
  spec: SegmentSpec,
  memory: WebAssembly.Memory,
  graph: ToThreadGraph,
  live: Uint8Array<ArrayBufferLike>,
  payloads: SharedPayloadArrays | null,
): SegmentView {
  const layout = { scratchAreas: spec.scratchAreas, scratchIndex, memory };
  let arena: SlotArena;
  let kernel: DistanceKernel;
  if (spec.quantization === 'sq8') {
    const sq8 = new Sq8Arena(spec.dim, spec.distance, layout);
    arena = sq8;
    kernel = createSq8Kernel(sq8, spec.distance);
  } else {
    const f32 = new VectorArena(spec.dim, layout);
    arena = f32;
    kernel = createKernel(f32, spec.distance);
  }
  const table = new SharedSlotTable(live);
  const mips = spec.distance === 'Dot' && spec.m !== null ? new MipsGraphKernel(arena, kernel) : undefined;
  const view: SegmentView = {
    spec,
    arena,
    table,
    kernel,
    mips,
    flat: new FlatIndex(arena, kernel, table),
    hnsw: undefined,
    payloads: undefined,
    filterMemo: new SlotMemo(),
    calibrations: new Map(),
  };
  view.hnsw = graphIndex(view, graph);
  followPayloads(view, payloads);
  return view;
}

function followPayloads(view: SegmentView, payloads: SharedPayloadArrays | null): void {
  if (payloads === null) view.payloads = undefined;
  else if (view.payloads === undefined) view.payloads = new SharedPayloadReader(payloads);
  else view.payloads.follow(payloads);
}

/**
 * A view as `runWork` reads it (segment/search-work.ts): searches keep score ties, since a thread
 * has no ids to break them (the service re-ranks), and a predicate is run on the shared payload
 * records, its answers remembered per slot for the one work item.
 */
class ThreadWorkView implements WorkView<PortableFilter> {
  constructor(private readonly view: SegmentView) {}

  get distance(): Distance {
    return this.view.spec.distance;
  }

  get dim(): number {
    return this.view.spec.dim;
  }

  searchGraph(options: SearchOptions): SearchHits {
    const hnsw = this.view.hnsw;
    if (hnsw === undefined) throw new Error('graph search on a segment without a graph');
    return hnsw.search({ ...options, keepTies: true });
  }

  searchFlat(options: SearchOptions): SearchHits {
    return this.view.flat.search({ ...options, keepTies: true });
  }

  scoreSlots(query: Float32Array, slots: ArrayLike<number>, k: number, stats: SearchStats): SearchHits {
    return this.view.flat.scoreSlots(query, slots, k, stats, true);
  }

  scoreEach(query: Float32Array, slots: ArrayLike<number>, out: Float64Array, stats?: SearchStats): void {
    this.view.flat.scoreEach(query, slots, out, stats);
  }

  readVector(slot: number): Float32Array {
    return this.view.arena.read(slot);
  }

  acceptOf(filter: PortableFilter): (slot: number) => boolean {
    const payloads = this.view.payloads;
    if (payloads === undefined) throw new Error('a filter sent before the payloads it reads');
    const predicate = recordPredicate(payloads, filter);
    const table = this.view.table;
    return this.view.filterMemo.remember(table.slotCount, (slot) => table.isLive(slot) && predicate(slot));
  }
}

type ToThreadGraph = Extract<ToThread, { type: 'attach' }>['graph'];

function graphIndex(view: SegmentView, graph: ToThreadGraph): HnswIndex | undefined {
  const { m, efConstruction } = view.spec;
  if (graph === null || m === null || efConstruction === null) return undefined;
  // The level generator and ef_search do not matter here: levels are drawn by the owner, and every search names its ef.
  const index = new HnswIndex(view.arena, view.kernel, view.mips ?? view.kernel, view.table, { m, efConstruction, efSearch: 1, seed: 1 });
  index.restore(HnswGraph.attach(m, graph), new SeededRng(1));
  return index;
}

/** Brings a view up to the owner's state as a message describes it: grown memory, counts, entry point. */
function follow(view: SegmentView, header: SegmentHeader): void {
  view.arena.refreshViews(view.arena.slotCapacity);
  view.table.slotCount = header.slotCount;
  view.table.liveCount = header.liveCount;
  view.hnsw?.graph.setEntry(header.entryPoint, header.maxLevel, header.anchor);
}

/** Also reads and scores stored vectors as the owner does (the Dot graph's norms, sq8 maxes). */
function followStored(view: SegmentView, context: StoredVectorContext): void {
  const { mips, sq8Maxes } = context;
  if (mips !== null) view.mips?.follow(mips);
  if (sq8Maxes !== null && view.arena instanceof Sq8Arena) view.arena.followMaxes(sq8Maxes);
}

/** A view as a calibration reads it: graph searches keep ties, since the thread has no ids to break them. */
function calibrationReader(view: SegmentView): CalibrationReader {
  return {
    table: view.table,
    readVector: (slot) => view.arena.read(slot),
    scoreSlots: (query, slots, k, stats) => view.flat.scoreSlots(query, slots, k, stats, true),
    searchGraph: (options) => {
      if (view.hnsw === undefined) throw new Error('calibration of a segment without a graph');
      return view.hnsw.search({ ...options, keepTies: true });
    },
  };
}

/** Runs a calibration's steps for about `sliceMs`; whether it ended, and how. */
function calibrationSlice(view: SegmentView, message: Extract<ToThread, { type: 'calibrate' }>): FromThread {
  const { job, options } = message;
  try {
    let steps = view.calibrations.get(job);
    if (steps === undefined) {
      if (options === undefined) throw new Error(`calibration ${job} is not running here`);
      steps = calibrateEf(calibrationReader(view), options);
      view.calibrations.set(job, steps);
    }
    const until = performance.now() + message.sliceMs;
    for (;;) {
      const step = steps.next();
      if (step.done === true) {
        view.calibrations.delete(job);
        return { calibration: { job, done: true, result: step.value } };
      }
      if (performance.now() >= until) return { calibration: { job, done: false } };
    }
  } catch (error) {
    view.calibrations.delete(job);
    return { calibration: { job, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } };
  }
}

function run(view: SegmentView, header: SegmentHeader, work: ThreadWork, stats: SearchStats): SearchHits {
  // The writer may have grown the memory since the last search: follow it.
  follow(view, header);
  return runWork(new ThreadWorkView(view), work, stats);
}

const port = parentPort;
if (port === null) throw new Error('search-thread.js runs as a worker thread');
port.on('message', (message: ToThread) => {
  switch (message.type) {
    case 'attach':
      views.set(message.key, attach(message.spec, message.memory, message.graph, message.live, message.payloads));
      return;
    case 'remap': {
      const view = views.get(message.key);
      if (view === undefined) return;
      view.table.live = message.live;
      view.hnsw = graphIndex(view, message.graph);
      followPayloads(view, message.payloads);
      return;
    }
    case 'detach':
      views.delete(message.key);
      return;
    case 'calibrate': {
      const view = views.get(message.key);
      if (view === undefined) {
        port.postMessage({ calibration: { job: message.job, error: `segment ${message.key} is not attached` } } satisfies FromThread);
        return;
      }
      follow(view, message.header);
      followStored(view, message.context);
      port.postMessage(calibrationSlice(view, message));
      return;
    }
    case 'calibrate-cancel':
      views.get(message.key)?.calibrations.delete(message.job);
      return;
    case 'insert': {
      const view = views.get(message.key);
      // Without a view (detached since) this thread cannot help; the others finish the job.
      if (view?.hnsw === undefined) return;
      view.arena.refreshViews(view.arena.slotCapacity);
      followStored(view, message.context);
      try {
        view.hnsw.runInsertJob(message.job);
      } catch (error) {
        port.postMessage({ insertFailed: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies FromThread);
      }
      return;
    }
    case 'searches': {
      // One message carries every search sent in one turn; one reply carries their answers.
      const replies: SearchReply[] = [];
      const transfer: ArrayBuffer[] = [];
      for (const item of message.items) {
        try {
          const view = views.get(item.key);
          if (view === undefined) throw new Error(`segment ${item.key} is not attached`);
          const stats = { scored: 0 };
          const hits = run(view, item.header, item.work, stats);
          replies.push({ id: item.id, slots: hits.slots, sims: hits.sims, scored: stats.scored });
          transfer.push(hits.slots.buffer as ArrayBuffer, hits.sims.buffer as ArrayBuffer);
        } catch (error) {
          replies.push({ id: item.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
        }
      }
      port.postMessage({ replies } satisfies FromThread, transfer);
      return;
    }
  }
});
