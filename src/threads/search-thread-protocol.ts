/**
 * Messages between the service's thread and its search threads (threads/search-threads.ts and
 * threads/search-thread.ts). Typed arrays over SharedArrayBuffers and the shared wasm memory
 * travel by reference; query vectors and bitsets are copied; hits come back transferred.
 */
import type { Distance } from '../core/distance.js';
import type { SharedGraphArrays } from '../index/hnsw/hnsw-graph.js';
import type { InsertJob } from '../index/hnsw/insert-job.js';
import type { SharedPayloadArrays } from '../payload/shared-payloads.js';
import type { PortableFilter } from '../payload/thread-filter.js';
import type { CalibrationOptions, CalibrationResult } from '../segment/recall-calibration.js';
import type { SegmentHeader, StoredVectorContext } from '../segment/segment.js';
import type { SearchWork } from '../segment/search-work.js';

/** What a thread needs to build its read-only view of a segment. */
export interface SegmentSpec {
  readonly dim: number;
  readonly distance: Distance;
  readonly quantization: 'none' | 'sq8';
  /** HNSW m, or null without a graph. */
  readonly m: number | null;
  /** HNSW ef_construction, for inserting alongside the owner (null without a graph). */
  readonly efConstruction: number | null;
  readonly scratchAreas: number;
}

/**
 * Search work a thread can do (segment/search-work.ts, the same type the service thread runs): a
 * predicate travels as a portable filter, run on the shared payload records.
 */
export type ThreadWork = SearchWork<PortableFilter>;

export type ToThread =
  | {
      readonly type: 'attach';
      readonly key: number;
      readonly spec: SegmentSpec;
      readonly memory: WebAssembly.Memory;
      readonly graph: SharedGraphArrays | null;
      readonly live: Uint8Array<ArrayBufferLike>;
      readonly payloads: SharedPayloadArrays | null;
    }
  | {
      readonly type: 'remap';
      readonly key: number;
      readonly graph: SharedGraphArrays | null;
      readonly live: Uint8Array<ArrayBufferLike>;
      readonly payloads: SharedPayloadArrays | null;
    }
  | { readonly type: 'detach'; readonly key: number }
  /**
   * Run one slice (about `sliceMs`) of calibration `job` on a segment (segment/recall-calibration.ts);
   * `options` start it, and only the first message of a job has them.
   */
  | {
      readonly type: 'calibrate';
      readonly key: number;
      readonly job: number;
      readonly header: SegmentHeader;
      readonly context: StoredVectorContext;
      readonly sliceMs: number;
      readonly options?: CalibrationOptions;
    }
  /** Calibration `job` will not be continued. */
  | { readonly type: 'calibrate-cancel'; readonly key: number; readonly job: number }
  /** Join a batch of graph inserts (index/hnsw/insert-job.ts). */
  | { readonly type: 'insert'; readonly key: number; readonly job: InsertJob; readonly context: StoredVectorContext }
  | { readonly type: 'searches'; readonly items: readonly SearchItem[] };

/** One search's work; the searches sent in one turn travel in one message. */
export interface SearchItem {
  readonly id: number;
  readonly key: number;
  readonly header: SegmentHeader;
  readonly work: ThreadWork;
}

export type SearchReply =
  | { readonly id: number; readonly slots: Int32Array; readonly sims: Float64Array; readonly scored: number }
  | { readonly id: number; readonly error: string };

/** How a calibration slice ended: not yet, done (with its result, if it had enough points), or failed. */
export type CalibrationReply =
  | { readonly job: number; readonly done: false }
  | { readonly job: number; readonly done: true; readonly result: CalibrationResult | undefined }
  | { readonly job: number; readonly error: string };

/** The replies to one message's searches, in one message; a calibration slice's end; or why a thread's part of an insert job failed. */
export type FromThread = { readonly replies: readonly SearchReply[] } | { readonly calibration: CalibrationReply } | { readonly insertFailed: string };
