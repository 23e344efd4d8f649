/**
 * Measures an HNSW collection's recall on its own points and picks the smallest ef that reaches a
 * target (docs/params.md, "Calibrated ef"). A generator: every `yield` is a point where the caller
 * may pause (search/ef-calibration.ts runs a few milliseconds of steps per turn of the event
 * loop); tests drain it at once.
 *
 * Queries are sampled points moved off the stored point (QueryMode), answered exactly by brute
 * force over every live point and by the graph at each ef of the ladder. A hit counts as correct
 * when its similarity reaches the k-th best exact similarity, so ties (duplicates) are not held
 * against the graph, and writes between steps can only make the measure stricter (a deleted true
 * neighbour cannot be found again; a new point that the graph finds and is better counts as
 * correct).
 */
import { SeededRng } from '../core/rng.js';
import type { PointTableReader } from './point-table.js';
import type { SegmentReader } from './segment.js';

/**
 * What a calibration reads: a segment on the service thread, or a search thread's view of one
 * (threads/search-thread.ts), whose graph searches keep ties.
 */
export interface CalibrationReader extends Pick<SegmentReader, 'readVector' | 'scoreSlots' | 'searchGraph'> {
  readonly table: Pick<PointTableReader, 'liveCount' | 'slotCount' | 'isLive'>;
}

export interface CalibrationOptions {
  /** recall@k is measured for this k (the collection's default limit). */
  readonly k: number;
  /** Mean recall@k to reach, with the confidence margin below. */
  readonly target: number;
  /** The ef values to try, ascending; the first that reaches the target is chosen. */
  readonly ladder: readonly number[];
  /** Sampled queries (fewer when the collection has fewer points, or very long vectors). */
  readonly sampleSize: number;
  readonly seed: number;
  /** How sampled points become queries (see QueryMode); default 'noise'. */
  readonly queries?: QueryMode;
  /** Cosine collections: stored vectors and queries are unit length, so moved queries are normalised. */
  readonly unitQueries?: boolean;
}

/**
 * How a sampled point becomes a query. noise (the default): the point moved in a random direction
 * by about its distance to its nearest distinct neighbour, so the query sits between stored points
 * as a new one would. left-out: the point itself, its own slot excluded from both answers.
 * between: a point a quarter to three quarters of the way to one of its nearest distinct
 * neighbours. Against real query sets (docs/params.md, "Calibrated ef") noise predicted recall
 * within about 0.01–0.03; the other two overestimated it by up to 0.12, most on clustered data and
 * duplicates, where the left-out point's own copies and neighbours are trivially found.
 */
export type QueryMode = 'left-out' | 'between' | 'noise';

export interface LadderStep {
  readonly ef: number;
  /** Mean recall@k over the sample. */
  readonly recall: number;
  /** One-sided 95% lower confidence bound of the mean. */
  readonly lowerBound: number;
}

export interface CalibrationResult {
  /** The chosen ef: the first ladder value whose lower bound reaches the target, else the last. */
  readonly ef: number;
  readonly recall: number;
  readonly lowerBound: number;
  readonly reached: boolean;
  readonly sample: number;
  /** Live points when the calibration began. */
  readonly points: number;
  /** Every ef tried, in order. */
  readonly steps: readonly LadderStep[];
}

/** z for a one-sided 95% bound: the chosen ef's true mean recall is below target about 1 time in 20. */
const Z_95 = 1.645;

/** Floats scored per step of the exact pass (~1–2 ms of kernel time). */
const CHUNK_FLOATS = 1 << 21;

/** Memory the sampled query vectors may take (floats): caps the sample for very long vectors. */
const SAMPLE_FLOATS = 1 << 22;

/** Similarities this close (relative) to the k-th exact one count as ties. */
const TIE_TOLERANCE = 1e-5;

/** The ef ladder: roughly ×1.5 steps from `from` up to `to`, both included. */
export function efLadder(from: number, to: number): number[] {
  const out: number[] = [];
  for (let ef = from; ef < to; ef = Math.max(ef + 1, Math.round((ef * 1.5) / 8) * 8)) out.push(ef);
  out.push(to);
  return out;
}

/** Mean and one-sided 95% lower bound of per-query recalls. */
export function meanWithLowerBound(values: Float64Array): { mean: number; lowerBound: number } {
  const n = values.length;
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / n;
  if (n < 2) return { mean, lowerBound: mean };
  let squares = 0;
  for (const v of values) squares += (v - mean) * (v - mean);
  const sd = Math.sqrt(squares / (n - 1));
  return { mean, lowerBound: mean - (Z_95 * sd) / Math.sqrt(n) };
}

export function* calibrateEf(reader: CalibrationReader, options: CalibrationOptions): Generator<void, CalibrationResult | undefined, void> {
  const { k, target, ladder } = options;
  const table = reader.table;
  const points = table.liveCount;
  if (points < k + 2 || ladder.length === 0) return undefined;

  const first = reader.readVector(firstLiveSlot(reader));
  const dim = first.length;
  const wanted = Math.max(2, Math.min(options.sampleSize, points, Math.floor(SAMPLE_FLOATS / dim)));
  const rng = new SeededRng(options.seed);
  const mode = options.queries ?? 'noise';
  const sampled = sampleLiveSlots(reader, wanted, rng);
  const queries: Float32Array[] = [];
  for (const slot of sampled) {
    const x = Float32Array.from(reader.readVector(slot));
    queries.push(mode === 'left-out' ? x : moveAway(reader, x, slot, mode, k, rng, options.unitQueries === true));
    yield;
  }
  // Only left-out queries are stored points whose own slot must not count.
  const slots = mode === 'left-out' ? sampled : sampled.map(() => -1);
  const size = slots.length;

  // Exact pass: the k-th best similarity of each query among the other points.
  const kth = new Float64Array(size);
  const chunk = Math.max(64, Math.floor(CHUNK_FLOATS / dim));
  const list = new Int32Array(chunk);
  const best = new Float64Array(k);
  for (let q = 0; q < size; q++) {
    best.fill(Number.NEGATIVE_INFINITY);
    const self = slots[q] as number;
    for (let start = 0; start < table.slotCount; start += chunk) {
      // Rebuilt every step: writes between steps may free or fill slots.
      const end = Math.min(start + chunk, table.slotCount);
      let n = 0;
      for (let slot = start; slot < end; slot++) if (slot !== self && table.isLive(slot)) list[n++] = slot;
      if (n > 0) {
        const hits = reader.scoreSlots(queries[q] as Float32Array, list.subarray(0, n), k);
        for (const sim of hits.sims) insertDescending(best, sim);
      }
      yield;
    }
    kth[q] = best[k - 1] as number;
  }

  // Graph pass: the ladder, lowest ef first.
  const steps: LadderStep[] = [];
  const recalls = new Float64Array(size);
  for (const ef of ladder) {
    for (let q = 0; q < size; q++) {
      const self = slots[q] as number;
      const threshold = kth[q] as number;
      const hits = reader.searchGraph({ query: queries[q] as Float32Array, k: k + 1, ef: Math.max(ef, k + 1) });
      let found = 0;
      for (let i = 0; i < hits.slots.length; i++) {
        if (hits.slots[i] === self) continue;
        if ((hits.sims[i] as number) >= threshold - TIE_TOLERANCE * Math.max(1, Math.abs(threshold))) found++;
      }
      recalls[q] = Math.min(found, k) / k;
      yield;
    }
    const { mean, lowerBound } = meanWithLowerBound(recalls);
    steps.push({ ef, recall: mean, lowerBound });
    if (lowerBound >= target) return { ef, recall: mean, lowerBound, reached: true, sample: size, points, steps };
  }
  const last = steps[steps.length - 1] as LadderStep;
  return { ef: last.ef, recall: last.recall, lowerBound: last.lowerBound, reached: false, sample: size, points, steps };
}

/** A query near `x` that is not a stored point (QueryMode); `x` itself when all its neighbours are copies of it. */
function moveAway(reader: CalibrationReader, x: Float32Array, self: number, mode: 'between' | 'noise', k: number, rng: SeededRng, unit: boolean): Float32Array {
  const hits = reader.searchGraph({ query: x, k: k + 1, ef: Math.max(64, 2 * k + 2) });
  const distinct: Array<{ y: Float32Array; d2: number }> = [];
  for (const slot of hits.slots) {
    if (slot === self) continue;
    const y = reader.readVector(slot);
    let d2 = 0;
    for (let j = 0; j < x.length; j++) d2 += ((x[j] as number) - (y[j] as number)) ** 2;
    if (d2 > 0) distinct.push({ y: Float32Array.from(y), d2 });
  }
  if (distinct.length === 0) return x;
  const q = new Float32Array(x.length);
  if (mode === 'between') {
    const { y } = distinct[rng.int(Math.min(distinct.length, k))] as { y: Float32Array };
    const u = 0.25 + 0.5 * rng.next();
    for (let j = 0; j < x.length; j++) q[j] = (x[j] as number) + u * ((y[j] as number) - (x[j] as number));
  } else {
    const nearest = Math.sqrt(Math.min(...distinct.map((d) => d.d2)));
    const scale = nearest / Math.sqrt(x.length);
    for (let j = 0; j < x.length; j++) q[j] = (x[j] as number) + rng.gaussian() * scale;
  }
  if (unit) normalize(q);
  return q;
}

function normalize(v: Float32Array): void {
  let n = 0;
  for (const a of v) n += a * a;
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  for (let j = 0; j < v.length; j++) v[j] = (v[j] as number) * s;
}

/** Keeps `best` (descending, fixed length) the largest values seen. */
function insertDescending(best: Float64Array, value: number): void {
  let i = best.length - 1;
  if (!(value > (best[i] as number))) return;
  while (i > 0 && value > (best[i - 1] as number)) {
    best[i] = best[i - 1] as number;
    i--;
  }
  best[i] = value;
}

function firstLiveSlot(reader: CalibrationReader): number {
  for (let slot = 0; slot < reader.table.slotCount; slot++) if (reader.table.isLive(slot)) return slot;
  throw new Error('no live point');
}

/** `wanted` distinct live slots, drawn uniformly (all of them when there are not more). */
function sampleLiveSlots(reader: CalibrationReader, wanted: number, rng: SeededRng): number[] {
  const table = reader.table;
  if (wanted * 2 >= table.liveCount) {
    const live: number[] = [];
    for (let slot = 0; slot < table.slotCount; slot++) if (table.isLive(slot)) live.push(slot);
    // Partial Fisher–Yates: the first `wanted` entries are a uniform sample.
    for (let i = 0; i < wanted && i < live.length - 1; i++) {
      const j = i + rng.int(live.length - i);
      [live[i], live[j]] = [live[j] as number, live[i] as number];
    }
    return live.slice(0, wanted);
  }
  const chosen = new Set<number>();
  while (chosen.size < wanted) {
    const slot = rng.int(table.slotCount);
    if (table.isLive(slot)) chosen.add(slot);
  }
  return [...chosen];
}
