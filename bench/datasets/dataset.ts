/**
 * A k-NN test set as the `index` benchmark uses it: base vectors, query vectors, the metric, and
 * (when the source has one) a label per vector for later filtered benchmarks. The real sets come
 * from the repository's datasets/ folder (datasets/real.ts); `synthetic` is the peers' Gaussian mixture
 * (datasets/synthetic.ts).
 */
import { GaussianMixture, PEER_MIXTURE } from './synthetic.js';

/** `l2`: squared Euclidean; `cosine`: 1 − cosine similarity; `ip`: negative inner product. */
export type Metric = 'l2' | 'cosine' | 'ip';

/** Rows of one contiguous buffer. */
export interface Matrix {
  readonly dim: number;
  readonly count: number;
  readonly data: Float32Array;
  readonly rows: readonly Float32Array[];
}

export interface AnnDataset {
  /** What `--datasets` selects: sift5k, mnist10k, glove12k, synthetic. */
  readonly name: string;
  /** For tables and file names (docs/img/recall-qps-<label>.svg): the name, with the size for synthetic. */
  readonly label: string;
  /** Every parameter that changes the vectors: the ground-truth cache key. */
  readonly id: string;
  readonly description: string;
  readonly source: string;
  readonly metric: Metric;
  readonly dim: number;
  readonly base: Matrix;
  /** Each query row has its own buffer (byteOffset 0): some peers ignore a view's offset. */
  readonly queries: Matrix;
  /** A small-integer label per base vector (MNIST digit, synthetic category), for filtered runs. */
  readonly baseLabels?: Uint8Array;
  readonly queryLabels?: Uint8Array;
}

export const DATASET_NAMES = ['sift5k', 'mnist10k', 'glove12k', 'synthetic'] as const;
export type DatasetName = (typeof DATASET_NAMES)[number];

/** Serializable: the scenario sends it to its worker processes, which load the same data. */
export interface DatasetRequest {
  readonly name: DatasetName;
  /** Folder of the real sets (default: the repository's datasets/). */
  readonly dataDir?: string;
  /** Synthetic only. */
  readonly n?: number;
  readonly dim?: number;
  readonly queries?: number;
  readonly seed?: number;
}

/** Rows of `data` as views, or (for queries) as copies with their own buffers. */
export function matrix(data: Float32Array, dim: number, ownBuffers = false): Matrix {
  const count = data.length / dim;
  if (!Number.isInteger(count)) throw new RangeError(`matrix: ${data.length} values are not a multiple of ${dim}`);
  const rows = Array.from({ length: count }, (_, i) => {
    const row = data.subarray(i * dim, (i + 1) * dim);
    return ownBuffers ? row.slice() : row;
  });
  return { dim, count, data, rows };
}

/** The peers' workload: a 100-cluster Gaussian mixture, unit-normalised, cosine. */
export function syntheticDataset(n: number, dim: number, queries: number, seed: number = PEER_MIXTURE.seed): AnnDataset {
  const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim, seed });
  const base = mixture.base(n);
  const q = mixture.queries(queries);
  const thousands = n % 1000 === 0 ? `${n / 1000}k` : String(n);
  return {
    name: 'synthetic',
    label: `synthetic${thousands}${dim === 128 ? '' : `-d${dim}`}`,
    id: `synthetic-n${n}-d${dim}-q${queries}-c${PEER_MIXTURE.clusters}-s${PEER_MIXTURE.sigma}-seed${seed}`,
    description: `Gaussian mixture: ${PEER_MIXTURE.clusters} clusters, sigma ${PEER_MIXTURE.sigma}, unit-normalised, seed ${seed}`,
    source: 'bench/datasets/synthetic.ts (the peers README workload)',
    metric: 'cosine',
    dim,
    base: { dim, count: n, data: base.data, rows: base.rows },
    queries: matrix(q.data, dim, true),
    baseLabels: mixture.categories(n),
  };
}
