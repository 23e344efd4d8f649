/**
 * Keeps an HNSW collection's default ef calibrated to its target recall (docs/params.md,
 * "Calibrated ef"): when to calibrate, running the measurement (segment/recall-calibration.ts)
 * in slices of a few milliseconds between other work, publishing the chosen ef to searches
 * (`calibrated`, the one owner of the adopted ef) and keeping it in the collection's annotations so a restart starts
 * calibrated.
 *
 * Nothing here blocks a write or a search for more than one slice, and nothing starts before the
 * collection is used (searched, described or written): opening a file to check it does no work.
 * With search threads, the slices run on one of them (`CalibrationHost.offload`), each while no
 * write is applied, and this thread only waits for them.
 */
import { LIMITS } from '../segment/collection-config.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import { type CalibrationOptions, type CalibrationResult, calibrateEf, efLadder } from '../segment/recall-calibration.js';
import type { SegmentReader } from '../segment/segment.js';
import { CalibratedEf } from './search-ef.js';

/** Collections smaller than this keep the default ef: it reaches 0.95 there (docs/params.md). */
export const MIN_POINTS = 2000;
/** Recalibrate once this share of the points counted at the last calibration has changed. */
export const RECALIBRATE_SHARE = 0.25;
/** Sampled queries per calibration. */
export const SAMPLE_SIZE = 300;
/** The highest ef calibration chooses. */
export const MAX_EF = 2048;
const MAX_FAILURES = 3;
/** Work per turn of the event loop. */
const SLICE_MS = 4;
/** Annotation key of the stored result. */
export const ANNOTATION_KEY = 'ef_calibration';

export interface CalibrationRecord {
  readonly ef: number;
  readonly recall: number;
  readonly recall_lower_bound: number;
  readonly reached: boolean;
  readonly sample: number;
  readonly points: number;
  readonly k: number;
  readonly target_recall: number;
  readonly duration_ms: number;
}

/** What the collection info shows (`calibration`). */
export interface CalibrationInfo {
  /** flat: exact, nothing to calibrate; fixed: ef_search given at create; uncalibrated: the default ef applies. */
  state: 'flat' | 'fixed' | 'uncalibrated' | 'calibrated';
  /** A calibration is under way (the current ef stays in use until it ends). */
  running: boolean;
  /** The ef a search without params.ef uses (at least offset + limit). */
  ef: number;
  target_recall: number;
  /** Mean recall@k measured at `ef` on the sample (k: the collection's default limit). */
  recall: number | null;
  /** One-sided 95% lower bound of that mean; calibration wants it at or above the target. */
  recall_lower_bound: number | null;
  /** Whether the target was reached (else `ef` is the highest tried). */
  reached: boolean | null;
  sample: number | null;
  points_when_calibrated: number | null;
  duration_ms: number | null;
}

/** A calibration run elsewhere (on a search thread), one slice per call. */
export interface CalibrationSlices {
  /** Runs the next slice of about `sliceMs`: the first call starts the job. */
  next(sliceMs: number): Promise<{ readonly done: false } | { readonly done: true; readonly result: CalibrationResult | undefined }>;
  /** The job will not be continued. */
  cancel(): void;
}

/** What the calibration needs of its collection. */
export interface CalibrationHost {
  reader(): SegmentReader;
  /** Where a background calibration can run off this thread, when the collection has search threads. */
  offload?(options: CalibrationOptions): CalibrationSlices | undefined;
  /**
   * Resolves when no write is queued or running. A background calibration pauses for writes: a
   * slice holds off a write's next step (searches and the calibration share the gate), and the
   * points it measures are changing anyway.
   */
  writesIdle?(): Promise<void>;
  /** The stored record (the annotation), if any; may throw if the annotations are unreadable. */
  readRecord(): unknown;
  saveRecord(record: CalibrationRecord): Promise<void>;
  warn(message: string, error?: unknown): void;
}

export class EfCalibration {
  private restored = false;
  private stopped = false;
  private running = false;
  private record: CalibrationRecord | undefined;
  /** Points written or deleted since the last calibration began. */
  private changes = 0;
  private runs = 0;
  /** The run that produced `record`: a run that began before it and ends after it is discarded. */
  private adoptedRun = -1;
  /** Calibrations that threw (a bug): after MAX_FAILURES none starts by itself any more. */
  private failures = 0;
  /** Background calibrations started, on a search thread and on this one (tests and benchmarks). */
  readonly started = { onThread: 0, here: 0 };
  /** The ef searches use by default once adopted; this calibration is its only writer. */
  readonly calibrated = new CalibratedEf();

  constructor(
    private readonly config: CollectionConfig,
    private readonly host: CalibrationHost,
  ) {}

  private get enabled(): boolean {
    return this.config.hnsw && !this.config.parameters.efSearchExplicit;
  }

  /** The collection is in use: adopt the stored result once, and calibrate if due. */
  touch(): void {
    if (!this.enabled || this.stopped) return;
    if (!this.restored) {
      this.restored = true;
      this.restore();
    }
    this.startIfDue();
  }

  /** `count` points were upserted or deleted. */
  noteChanges(count: number): void {
    this.changes += count;
    this.touch();
  }

  /** No more work, no more writes (the collection is closing or dropped). */
  stop(): void {
    this.stopped = true;
  }

  info(): CalibrationInfo {
    const p = this.config.parameters;
    const state = !this.config.hnsw ? 'flat' : p.efSearchExplicit ? 'fixed' : this.record === undefined ? 'uncalibrated' : 'calibrated';
    const r = state === 'calibrated' ? this.record : undefined;
    return {
      state,
      running: this.running,
      ef: r?.ef ?? p.efSearch,
      target_recall: p.targetRecall,
      recall: r?.recall ?? null,
      recall_lower_bound: r?.recall_lower_bound ?? null,
      reached: r?.reached ?? null,
      sample: r?.sample ?? null,
      points_when_calibrated: r?.points ?? null,
      duration_ms: r?.duration_ms ?? null,
    };
  }

  /** Runs a whole calibration now, synchronously, and stores it (tests and benchmarks); undefined when not enabled or too small. */
  calibrateNow(): CalibrationResult | undefined {
    if (!this.enabled) return undefined;
    this.restored = true;
    const began = performance.now();
    const run = this.runs;
    const job = this.job();
    const changesAtStart = this.changes;
    let step = job.next();
    while (step.done !== true) step = job.next();
    if (step.value !== undefined && this.adopt(run, step.value, performance.now() - began, changesAtStart)) this.persist();
    return step.value;
  }

  private job(): Generator<void, CalibrationResult | undefined, void> {
    return calibrateEf(this.host.reader(), this.nextOptions());
  }

  private nextOptions(): CalibrationOptions {
    const k = this.config.parameters.k;
    // Calibration only raises ef above the default: searches never get worse than before it.
    const floor = this.config.parameters.efSearch;
    return {
      k,
      target: this.config.parameters.targetRecall,
      ladder: efLadder(Math.max(floor, k), Math.max(MAX_EF, floor, k)),
      sampleSize: SAMPLE_SIZE,
      seed: 0xca1b + this.runs++,
      unitQueries: this.config.distance === 'Cosine',
    };
  }

  private startIfDue(): void {
    if (this.running || this.failures >= MAX_FAILURES) return;
    const points = this.host.reader().table.liveCount;
    if (points < MIN_POINTS) return;
    if (this.record !== undefined && this.changes < RECALIBRATE_SHARE * this.record.points) return;
    this.running = true;
    const began = performance.now();
    const changesAtStart = this.changes;
    const run = this.runs;
    const finish = (result: CalibrationResult | undefined): void => {
      this.running = false;
      if (result !== undefined && this.adopt(run, result, performance.now() - began, changesAtStart)) this.persist();
      this.startIfDue();
    };
    const fail = (error: unknown): void => {
      this.running = false;
      this.failures++;
      this.host.warn(`collection "${this.config.name}": ef calibration failed; the current ef stays in use`, error);
    };
    const options = this.nextOptions();
    const remote = this.host.offload?.(options);
    if (remote !== undefined) {
      this.started.onThread++;
      void this.runRemote(remote, finish, fail);
      return;
    }
    this.started.here++;
    const job = calibrateEf(this.host.reader(), options);
    const slice = (): void => {
      if (this.stopped) return;
      const until = performance.now() + SLICE_MS;
      try {
        for (;;) {
          const step = job.next();
          if (step.done === true) {
            finish(step.value);
            return;
          }
          if (performance.now() >= until) break;
        }
      } catch (error) {
        fail(error);
        return;
      }
      this.afterWrites(() => setImmediate(slice));
    };
    this.afterWrites(() => setImmediate(slice));
  }

  /** Runs `next` once no write is under way. */
  private afterWrites(next: () => void): void {
    const idle = this.host.writesIdle?.();
    if (idle === undefined) next();
    else void idle.then(next);
  }

  /** Drives a calibration on a search thread, slice after slice, until it ends or the collection stops. */
  private async runRemote(remote: CalibrationSlices, finish: (result: CalibrationResult | undefined) => void, fail: (error: unknown) => void): Promise<void> {
    try {
      for (;;) {
        await this.host.writesIdle?.();
        if (this.stopped) {
          remote.cancel();
          return;
        }
        const step = await remote.next(SLICE_MS);
        if (step.done) {
          finish(step.result);
          return;
        }
      }
    } catch (error) {
      remote.cancel();
      fail(error);
    }
  }

  /**
   * Takes a finished run's result, unless a run that began later has already been adopted (a
   * background run overtaken by `calibrateNow`): its older measurement must not replace the newer.
   */
  private adopt(run: number, result: CalibrationResult, durationMs: number, changesAtStart: number): boolean {
    if (run < this.adoptedRun) return false;
    this.adoptedRun = run;
    // Changes made while it ran count towards the next calibration.
    this.changes = Math.max(0, this.changes - changesAtStart);
    this.record = {
      ef: result.ef,
      recall: result.recall,
      recall_lower_bound: result.lowerBound,
      reached: result.reached,
      sample: result.sample,
      points: result.points,
      k: this.config.parameters.k,
      target_recall: this.config.parameters.targetRecall,
      duration_ms: Math.round(durationMs),
    };
    this.calibrated.adopt(result.ef);
    return true;
  }

  private persist(): void {
    const record = this.record;
    if (record === undefined || this.stopped) return;
    this.host.saveRecord(record).catch((error: unknown) => {
      if (!this.stopped) this.host.warn(`collection "${this.config.name}": calibrated ef not stored; it is measured again after a restart`, error);
    });
  }

  /** Adopts the stored result when it was measured for this collection's k and target. */
  private restore(): void {
    let stored: unknown;
    try {
      stored = this.host.readRecord();
    } catch (error) {
      this.host.warn(`collection "${this.config.name}": stored ef calibration not readable; calibrating again`, error);
      return;
    }
    const record = validRecord(stored, this.config);
    if (record === undefined) return;
    this.record = record;
    // What changed while it was not running is unknown; the difference in points is the least of it.
    this.changes = Math.abs(this.host.reader().table.liveCount - record.points);
    this.calibrated.adopt(record.ef);
  }
}

function validRecord(value: unknown, config: CollectionConfig): CalibrationRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Partial<CalibrationRecord>;
  const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  if (!Number.isInteger(r.ef) || (r.ef as number) < LIMITS.efSearch.min || (r.ef as number) > LIMITS.efSearch.max) return undefined;
  if (r.k !== config.parameters.k || r.target_recall !== config.parameters.targetRecall) return undefined;
  if (!isNumber(r.recall) || !isNumber(r.recall_lower_bound) || !isNumber(r.sample) || !isNumber(r.points) || !isNumber(r.duration_ms)) return undefined;
  if (typeof r.reached !== 'boolean') return undefined;
  return r as CalibrationRecord;
}
