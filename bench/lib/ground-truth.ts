/**
 * Exact top-k for a dataset's queries by brute force in float64 (on the float32 values every
 * engine receives), cached on disk under bench/results/.cache/ (gitignored), keyed by dataset,
 * metric and k; the file also records a SHA-256 of the vectors and is recomputed when it differs.
 *
 * Distances, smaller is closer: `l2` squared Euclidean, `cosine` 1 − cosine similarity, `ip` the
 * negative inner product. Ties break by the lower row index.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnnDataset, Metric } from '../datasets/dataset.js';
import { RESULTS_DIR } from './results.js';

export const CACHE_DIR = join(RESULTS_DIR, '.cache');
const CACHE_FORMAT = 1;

export interface ExactNeighbours {
  readonly metric: Metric;
  readonly k: number;
  readonly queries: number;
  /** Row indices, `k` per query, closest first. */
  readonly ids: Int32Array;
  /** Their float64 distances. */
  readonly distances: Float64Array;
}

export interface GroundTruthResult {
  readonly truth: ExactNeighbours;
  readonly cached: boolean;
  readonly seconds: number;
  readonly path: string;
}

/** Float64 distance between float32 rows `a` and `b`; `normA`/`normB` are their norms (cosine only). */
function distance(metric: Metric, a: Float32Array, b: Float32Array, normA: number, normB: number): number {
  const dim = a.length;
  if (metric === 'l2') {
    let s = 0;
    for (let j = 0; j < dim; j++) {
      const d = (a[j] as number) - (b[j] as number);
      s += d * d;
    }
    return s;
  }
  let dot = 0;
  for (let j = 0; j < dim; j++) dot += (a[j] as number) * (b[j] as number);
  if (metric === 'ip') return -dot;
  return normA === 0 || normB === 0 ? 1 : 1 - dot / (normA * normB);
}

function norm(v: Float32Array): number {
  let s = 0;
  for (let j = 0; j < v.length; j++) s += (v[j] as number) * (v[j] as number);
  return Math.sqrt(s);
}

/** The exact float64 distance of query `qi` to base row `row`: what recall compares returned ids with. */
export function exactDistance(dataset: AnnDataset, qi: number, row: number): number {
  const q = dataset.queries.rows[qi] as Float32Array;
  const b = dataset.base.rows[row] as Float32Array;
  return distance(dataset.metric, q, b, norm(q), norm(b));
}

/** The exact top-k of every query; with `accept`, among the base rows it accepts only (a filter's ground truth). */
export function computeExactTopK(
  dataset: AnnDataset,
  k: number,
  progress?: (done: number, total: number) => void,
  accept?: (row: number) => boolean,
): ExactNeighbours {
  const { metric } = dataset;
  const base = dataset.base.rows;
  const queries = dataset.queries.rows;
  const n = base.length;
  const kk = Math.min(k, n);
  const baseNorms = new Float64Array(n);
  if (metric === 'cosine') for (let r = 0; r < n; r++) baseNorms[r] = norm(base[r] as Float32Array);
  const ids = new Int32Array(queries.length * k).fill(-1);
  const distances = new Float64Array(queries.length * k).fill(Number.POSITIVE_INFINITY);
  const topIds = new Int32Array(kk);
  const topDist = new Float64Array(kk);
  for (let qi = 0; qi < queries.length; qi++) {
    const q = queries[qi] as Float32Array;
    const qNorm = metric === 'cosine' ? norm(q) : 0;
    topIds.fill(-1);
    topDist.fill(Number.POSITIVE_INFINITY);
    for (let r = 0; r < n; r++) {
      if (accept !== undefined && !accept(r)) continue;
      const d = distance(metric, q, base[r] as Float32Array, qNorm, baseNorms[r] as number);
      // Strictly closer only, so the lower index wins a tie.
      if (d >= (topDist[kk - 1] as number)) continue;
      let pos = kk - 1;
      while (pos > 0 && d < (topDist[pos - 1] as number)) {
        topDist[pos] = topDist[pos - 1] as number;
        topIds[pos] = topIds[pos - 1] as number;
        pos--;
      }
      topDist[pos] = d;
      topIds[pos] = r;
    }
    ids.set(topIds, qi * k);
    distances.set(topDist, qi * k);
    if (progress !== undefined && (qi + 1) % 100 === 0) progress(qi + 1, queries.length);
  }
  return { metric, k, queries: queries.length, ids, distances };
}

/** SHA-256 over the dimension, metric and every base and query value. */
export function fingerprint(dataset: AnnDataset): string {
  const hash = createHash('sha256');
  hash.update(`${dataset.metric}|${dataset.dim}|${dataset.base.count}|${dataset.queries.count}|`);
  const bytes = (a: Float32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  hash.update(bytes(dataset.base.data));
  hash.update(bytes(dataset.queries.data));
  return hash.digest('hex');
}

interface CacheFile {
  readonly format: number;
  readonly dataset: string;
  readonly metric: Metric;
  readonly k: number;
  readonly fingerprint: string;
  readonly base: number;
  readonly queries: number;
  readonly compute_seconds: number;
  readonly ids: number[];
  /** JSON has no Infinity (fewer than k base rows): null stands for it. */
  readonly distances: (number | null)[];
}

function cachePath(dataset: AnnDataset, k: number): string {
  return join(CACHE_DIR, `${dataset.id}-${dataset.metric}-k${k}.json`);
}

function readCache(path: string, dataset: AnnDataset, k: number, print: string): ExactNeighbours | undefined {
  let parsed: CacheFile;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as CacheFile;
  } catch {
    return undefined;
  }
  const size = dataset.queries.count * k;
  if (
    parsed.format !== CACHE_FORMAT ||
    parsed.fingerprint !== print ||
    parsed.k !== k ||
    parsed.metric !== dataset.metric ||
    parsed.ids?.length !== size ||
    parsed.distances?.length !== size
  ) {
    return undefined;
  }
  return {
    metric: dataset.metric,
    k,
    queries: dataset.queries.count,
    ids: Int32Array.from(parsed.ids),
    distances: Float64Array.from(parsed.distances, (d) => (d === null ? Number.POSITIVE_INFINITY : d)),
  };
}

/** The exact top-k of every query: from the cache when it matches the vectors, else computed and cached. */
export function groundTruth(dataset: AnnDataset, k: number, log?: (message: string) => void): GroundTruthResult {
  const path = cachePath(dataset, k);
  const print = fingerprint(dataset);
  const t0 = performance.now();
  const cached = readCache(path, dataset, k, print);
  if (cached !== undefined) return { truth: cached, cached: true, seconds: (performance.now() - t0) / 1000, path };
  log?.(`${dataset.label}: computing exact top-${k} (float64 brute force, ${dataset.base.count} × ${dataset.queries.count})`);
  const truth = computeExactTopK(dataset, k, (done, total) => {
    if (done % 250 === 0 && done < total) log?.(`${dataset.label}: ground truth ${done}/${total}`);
  });
  const seconds = (performance.now() - t0) / 1000;
  const file: CacheFile = {
    format: CACHE_FORMAT,
    dataset: dataset.id,
    metric: dataset.metric,
    k,
    fingerprint: print,
    base: dataset.base.count,
    queries: dataset.queries.count,
    compute_seconds: Math.round(seconds * 10) / 10,
    ids: Array.from(truth.ids),
    distances: Array.from(truth.distances, (d) => (Number.isFinite(d) ? d : null)),
  };
  mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(file));
  renameSync(tmp, path);
  return { truth, cached: false, seconds, path };
}

export interface RecallAtK {
  /**
   * Mean over queries of (distinct returned ids among the first k whose exact distance is at most
   * the true k-th distance) / k: a returned point tied with the k-th true neighbour counts as
   * found (SIFT's integer components make exact ties common).
   */
  readonly recall: number;
  /** The same, counting only ids in the true top-k list (ties broken by row index). */
  readonly recall_ids: number;
  /** Queries that got fewer than k distinct ids. */
  readonly short_answers: number;
}

/** Relative slack for "equal to the k-th distance": float64 round-off only. */
const TIE_RELATIVE = 1e-9;

/** `returned`: `k` ids per query (−1 for none), as the engines answered. */
export function recallAtK(dataset: AnnDataset, truth: ExactNeighbours, returned: Int32Array, k: number): RecallAtK {
  const nq = truth.queries;
  const tk = truth.k;
  if (k > tk) throw new RangeError(`recall@${k} needs ground truth of at least k=${k}, have ${tk}`);
  let found = 0;
  let foundIds = 0;
  let short = 0;
  const expected = new Set<number>();
  const seen = new Set<number>();
  for (let qi = 0; qi < nq; qi++) {
    expected.clear();
    seen.clear();
    for (let i = 0; i < k; i++) expected.add(truth.ids[qi * tk + i] as number);
    const kth = truth.distances[qi * tk + k - 1] as number;
    const slack = TIE_RELATIVE * Math.max(1, Math.abs(kth));
    for (let i = 0; i < k; i++) {
      const id = returned[qi * k + i] as number;
      if (id < 0 || seen.has(id) || id >= dataset.base.count) continue;
      seen.add(id);
      if (expected.has(id)) {
        found++;
        foundIds++;
      } else if (exactDistance(dataset, qi, id) <= kth + slack) {
        found++;
      }
    }
    if (seen.size < Math.min(k, dataset.base.count)) short++;
  }
  return { recall: nq === 0 ? Number.NaN : found / (nq * k), recall_ids: nq === 0 ? Number.NaN : foundIds / (nq * k), short_answers: short };
}
