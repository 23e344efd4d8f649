/**
 * Principal component analysis of a few hundred or thousand vectors, in the browser: the top two
 * eigenvectors of the covariance matrix by power iteration, without ever forming the d×d matrix
 * (each step multiplies by Xᵀ(X·v), O(n·d)), the second deflated against the first.
 */

export interface Projection {
  /** x, y of each row, in the order given. */
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  /** Share of the total variance along each of the two axes (0..1). */
  readonly explained: readonly [number, number];
}

/** Enough for two well-separated components; close eigenvalues stop here with a good-enough plane. */
const MAX_ITERATIONS = 100;
const TOLERANCE = 1e-8;

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

function normalize(v: Float64Array): number {
  const norm = Math.sqrt(dot(v, v));
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return norm;
}

/** C·v for C = XᵀX / n, X the centred rows. */
function covarianceTimes(rows: readonly Float64Array[], v: Float64Array): Float64Array {
  const out = new Float64Array(v.length);
  for (const row of rows) {
    const projection = dot(row, v);
    for (let i = 0; i < row.length; i++) out[i] = (out[i] as number) + projection * (row[i] as number);
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / Math.max(1, rows.length);
  return out;
}

/** A deterministic start that is unlikely to be orthogonal to the leading eigenvector. */
function start(dim: number, salt: number): Float64Array {
  const v = new Float64Array(dim);
  let x = 0x9e3779b9 ^ salt;
  for (let i = 0; i < dim; i++) {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    v[i] = ((x >>> 8) / 0x1000000) * 2 - 1;
  }
  normalize(v);
  return v;
}

/** The leading eigenvector (orthogonal to `against`, if given) and its eigenvalue. */
function powerIteration(rows: readonly Float64Array[], dim: number, against?: Float64Array): { vector: Float64Array; value: number } {
  let v = start(dim, against === undefined ? 1 : 2);
  let value = 0;
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
    const next = covarianceTimes(rows, v);
    if (against !== undefined) {
      const overlap = dot(next, against);
      for (let i = 0; i < dim; i++) next[i] = (next[i] as number) - overlap * (against[i] as number);
    }
    const norm = normalize(next);
    const delta = Math.abs(norm - value);
    value = norm;
    v = next;
    if (norm === 0 || delta <= TOLERANCE * Math.max(1, norm)) break;
  }
  return { vector: v, value };
}

export function pca2(vectors: readonly (readonly number[])[]): Projection {
  const n = vectors.length;
  const dim = vectors[0]?.length ?? 0;
  const mean = new Float64Array(dim);
  for (const vector of vectors) for (let i = 0; i < dim; i++) mean[i] = (mean[i] as number) + (vector[i] ?? 0) / n;
  const rows = vectors.map((vector) => Float64Array.from({ length: dim }, (_, i) => (vector[i] ?? 0) - (mean[i] as number)));
  let total = 0;
  for (const row of rows) total += dot(row, row) / Math.max(1, n);
  const first = powerIteration(rows, dim);
  const second = powerIteration(rows, dim, first.vector);
  return {
    xs: Float64Array.from(rows, (row) => dot(row, first.vector)),
    ys: Float64Array.from(rows, (row) => dot(row, second.vector)),
    explained: [total > 0 ? first.value / total : 0, total > 0 ? second.value / total : 0],
  };
}
