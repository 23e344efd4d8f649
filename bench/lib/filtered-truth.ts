/**
 * Exact filtered top-k for the `filtered` benchmark: for every shape and query, float64 brute force
 * over the base rows that match that query's filter; also how many rows match (the measured
 * selectivity). Cached as gzipped JSON beside the unfiltered ground truth (bench/results/.cache/),
 * keyed by dataset, metric, k and workload, and checked against a SHA-256 of the vectors, every
 * payload and every filter.
 *
 * One pass per query scores each row once (when any shape matches it) and offers it to every
 * matching shape's top-k: about the cost of the unfiltered ground truth, not one pass per shape.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AnnDataset } from '../datasets/dataset.js';
import type { FilteredWorkload } from '../datasets/filtered-workload.js';
import { CACHE_DIR, exactDistance, fingerprint } from './ground-truth.js';

const CACHE_FORMAT = 1;

export interface ShapeTruth {
  readonly shape: string;
  readonly k: number;
  /** Row indices, `k` per query, closest first; −1 when fewer than k rows match. */
  readonly ids: Int32Array;
  /** Their float64 distances (+∞ for −1). */
  readonly distances: Float64Array;
  /** Matching base rows per query. */
  readonly matches: Int32Array;
}

export interface FilteredTruth {
  readonly shapes: ReadonlyMap<string, ShapeTruth>;
  readonly cached: boolean;
  readonly seconds: number;
  readonly path: string;
}

interface CacheFile {
  readonly format: number;
  readonly dataset: string;
  readonly workload: string;
  readonly fingerprint: string;
  readonly k: number;
  readonly queries: number;
  readonly compute_seconds: number;
  readonly shapes: Record<string, { ids: number[]; distances: (number | null)[]; matches: number[] }>;
}

/** The vectors' fingerprint, then every payload and every query's filter of every shape. */
function truthFingerprint(dataset: AnnDataset, workload: FilteredWorkload): string {
  const hash = createHash('sha256');
  hash.update(fingerprint(dataset));
  hash.update(workload.id);
  for (let row = 0; row < dataset.base.count; row++) hash.update(JSON.stringify(workload.payload(row)));
  for (const shape of workload.shapes) {
    hash.update(`|${shape.name}|`);
    for (let qi = 0; qi < dataset.queries.count; qi++) hash.update(JSON.stringify(shape.filter(qi)));
  }
  return hash.digest('hex');
}

function cachePath(dataset: AnnDataset, workload: FilteredWorkload, k: number): string {
  // Gzipped: seven shapes of ids and float64 distances pass 1 MiB as JSON, which biome (linting bench/**) refuses to read.
  return join(CACHE_DIR, `${dataset.id}-${dataset.metric}-k${k}-filtered-${workload.id}.json.gz`);
}

function norm(v: Float32Array): number {
  let s = 0;
  for (let j = 0; j < v.length; j++) s += (v[j] as number) * (v[j] as number);
  return Math.sqrt(s);
}

function compute(dataset: AnnDataset, workload: FilteredWorkload, k: number, log?: (message: string) => void): Map<string, ShapeTruth> {
  const { metric } = dataset;
  const base = dataset.base.rows;
  const n = base.length;
  const nq = dataset.queries.count;
  const dim = dataset.dim;
  const shapes = workload.shapes;
  const s = shapes.length;
  const baseNorms = new Float64Array(n);
  if (metric === 'cosine') for (let r = 0; r < n; r++) baseNorms[r] = norm(base[r] as Float32Array);
  const out = shapes.map((shape) => ({
    shape: shape.name,
    k,
    ids: new Int32Array(nq * k).fill(-1),
    distances: new Float64Array(nq * k).fill(Number.POSITIVE_INFINITY),
    matches: new Int32Array(nq),
  }));
  const hit = new Uint8Array(s);
  for (let qi = 0; qi < nq; qi++) {
    const q = dataset.queries.rows[qi] as Float32Array;
    const qNorm = norm(q);
    const tests = shapes.map((shape) => shape.matcher(qi));
    const at = qi * k;
    for (let r = 0; r < n; r++) {
      let any = false;
      for (let i = 0; i < s; i++) {
        const m = (tests[i] as (row: number) => boolean)(r);
        hit[i] = m ? 1 : 0;
        any ||= m;
      }
      if (!any) continue;
      const b = base[r] as Float32Array;
      let d: number;
      if (metric === 'l2') {
        d = 0;
        for (let j = 0; j < dim; j++) {
          const x = (q[j] as number) - (b[j] as number);
          d += x * x;
        }
      } else {
        let dot = 0;
        for (let j = 0; j < dim; j++) dot += (q[j] as number) * (b[j] as number);
        const bn = baseNorms[r] as number;
        d = metric === 'ip' ? -dot : qNorm === 0 || bn === 0 ? 1 : 1 - dot / (qNorm * bn);
      }
      for (let i = 0; i < s; i++) {
        if (hit[i] === 0) continue;
        const t = out[i] as (typeof out)[number];
        t.matches[qi] = (t.matches[qi] as number) + 1;
        // Strictly closer only, so the lower row index wins a tie (as the unfiltered ground truth).
        if (d >= (t.distances[at + k - 1] as number)) continue;
        let pos = k - 1;
        while (pos > 0 && d < (t.distances[at + pos - 1] as number)) {
          t.distances[at + pos] = t.distances[at + pos - 1] as number;
          t.ids[at + pos] = t.ids[at + pos - 1] as number;
          pos--;
        }
        t.distances[at + pos] = d;
        t.ids[at + pos] = r;
      }
    }
    if ((qi + 1) % 250 === 0 && qi + 1 < nq) log?.(`${dataset.label}: filtered ground truth ${qi + 1}/${nq}`);
  }
  return new Map(out.map((t) => [t.shape, t]));
}

function readCache(path: string, print: string, workload: FilteredWorkload, k: number, nq: number): Map<string, ShapeTruth> | undefined {
  let parsed: CacheFile;
  try {
    parsed = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as CacheFile;
  } catch {
    return undefined;
  }
  if (parsed.format !== CACHE_FORMAT || parsed.fingerprint !== print || parsed.k !== k || parsed.queries !== nq) return undefined;
  const out = new Map<string, ShapeTruth>();
  for (const shape of workload.shapes) {
    const entry = parsed.shapes?.[shape.name];
    if (entry === undefined || entry.ids.length !== nq * k || entry.distances.length !== nq * k || entry.matches.length !== nq) return undefined;
    out.set(shape.name, {
      shape: shape.name,
      k,
      ids: Int32Array.from(entry.ids),
      distances: Float64Array.from(entry.distances, (d) => (d === null ? Number.POSITIVE_INFINITY : d)),
      matches: Int32Array.from(entry.matches),
    });
  }
  return out;
}

/** Every shape's exact filtered top-k: from the cache when it matches, else computed and cached. */
export function filteredGroundTruth(dataset: AnnDataset, workload: FilteredWorkload, k: number, log?: (message: string) => void): FilteredTruth {
  const t0 = performance.now();
  const path = cachePath(dataset, workload, k);
  const print = truthFingerprint(dataset, workload);
  const cached = readCache(path, print, workload, k, dataset.queries.count);
  if (cached !== undefined) return { shapes: cached, cached: true, seconds: (performance.now() - t0) / 1000, path };
  log?.(`${dataset.label}: computing exact filtered top-${k} for ${workload.shapes.length} shapes (float64 brute force over the matching rows)`);
  const shapes = compute(dataset, workload, k, log);
  const seconds = (performance.now() - t0) / 1000;
  const file: CacheFile = {
    format: CACHE_FORMAT,
    dataset: dataset.id,
    workload: workload.id,
    fingerprint: print,
    k,
    queries: dataset.queries.count,
    compute_seconds: Math.round(seconds * 10) / 10,
    shapes: Object.fromEntries(
      [...shapes].map(([name, t]) => [
        name,
        { ids: Array.from(t.ids), distances: Array.from(t.distances, (d) => (Number.isFinite(d) ? d : null)), matches: Array.from(t.matches) },
      ]),
    ),
  };
  mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, gzipSync(JSON.stringify(file)));
  renameSync(tmp, path);
  return { shapes, cached: false, seconds, path };
}

export interface Selectivity {
  /** Mean share of the base rows matching a query's filter. */
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  /** Mean matching rows per query. */
  readonly mean_matches: number;
}

export function selectivity(truth: ShapeTruth, n: number): Selectivity {
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const m of truth.matches) {
    sum += m;
    min = Math.min(min, m);
    max = Math.max(max, m);
  }
  const count = truth.matches.length;
  return { mean: sum / count / n, min: min / n, max: max / n, mean_matches: sum / count };
}

export interface FilteredRecall {
  /**
   * Σ found / Σ min(k, matches) over queries. Found: a distinct returned row that matches the
   * query's filter and is in the exact list, or ties its last distance (as the unfiltered recall).
   */
  readonly recall: number;
  /** The same, counting only rows of the exact list. */
  readonly recall_ids: number;
  /** Returned rows that do not match the filter (never counted as found). */
  readonly violations: number;
  /** Queries with fewer distinct rows than min(k, matches). */
  readonly short_answers: number;
}

const TIE_RELATIVE = 1e-9;

/**
 * `returned`: `k` row ids per query (−1 for none). For an unfiltered run, `matcher` is null and
 * `truth` is the unfiltered ground truth with every row matching (`unfilteredTruth`).
 */
export function filteredRecall(
  dataset: AnnDataset,
  truth: ShapeTruth,
  matcher: ((qi: number) => (row: number) => boolean) | null,
  returned: Int32Array,
  k: number,
): FilteredRecall {
  const nq = dataset.queries.count;
  const tk = truth.k;
  if (k > tk) throw new RangeError(`recall@${k} needs ground truth of at least k=${k}, have ${tk}`);
  let found = 0;
  let foundIds = 0;
  let wanted = 0;
  let violations = 0;
  let short = 0;
  const expected = new Set<number>();
  const seen = new Set<number>();
  for (let qi = 0; qi < nq; qi++) {
    const want = Math.min(k, truth.matches[qi] as number);
    wanted += want;
    expected.clear();
    seen.clear();
    for (let i = 0; i < want; i++) expected.add(truth.ids[qi * tk + i] as number);
    const kth = want === 0 ? Number.POSITIVE_INFINITY : (truth.distances[qi * tk + want - 1] as number);
    const slack = TIE_RELATIVE * Math.max(1, Math.abs(kth));
    const test = matcher?.(qi);
    for (let i = 0; i < k; i++) {
      const id = returned[qi * k + i] as number;
      if (id < 0 || id >= dataset.base.count || seen.has(id)) continue;
      seen.add(id);
      if (test !== undefined && !test(id)) {
        violations++;
        continue;
      }
      if (expected.has(id)) {
        found++;
        foundIds++;
      } else if (exactDistance(dataset, qi, id) <= kth + slack) {
        found++;
      }
    }
    if (seen.size < want) short++;
  }
  return {
    recall: wanted === 0 ? Number.NaN : found / wanted,
    recall_ids: wanted === 0 ? Number.NaN : foundIds / wanted,
    violations,
    short_answers: short,
  };
}

/** The unfiltered ground truth in the shape of a filtered one (every row matches). */
export function unfilteredTruth(ids: Int32Array, distances: Float64Array, k: number, n: number): ShapeTruth {
  return { shape: 'unfiltered', k, ids, distances, matches: new Int32Array(ids.length / k).fill(n) };
}
