/**
 * The peers' synthetic workload (see the peers' README): a mixture of `clusters` Gaussian clusters
 * in `dim` dimensions, centres drawn from N(0, 1) per component, points = centre + N(0, sigma²)
 * per component, then unit-normalised (so cosine = inner product and L2 ranks the same).
 *
 * Everything comes from one integer seed through independent SeededRng (sfc32) streams:
 * centres, base points, queries and payload categories each have their own stream, so asking for
 * more queries never changes the base points and vice versa. The definition matches the peers'
 * workload; the bytes are ours (their generator is not published).
 */
import { SeededRng } from '../../src/core/rng.js';

export interface MixtureSpec {
  readonly dim: number;
  /** Number of Gaussian clusters (peers: 100). */
  readonly clusters: number;
  /** Within-cluster standard deviation per component (peers: 0.5). */
  readonly sigma: number;
  /** The one seed everything derives from (peers: 42). */
  readonly seed: number;
}

export const PEER_MIXTURE: Omit<MixtureSpec, 'dim'> = { clusters: 100, sigma: 0.5, seed: 42 };

/** Rows of one contiguous buffer: `rows[i]` is a view of `data` at `i * dim`. */
export interface VectorSet {
  readonly dim: number;
  readonly data: Float32Array;
  readonly rows: readonly Float32Array[];
  /** The cluster each row was drawn from. */
  readonly cluster: Uint16Array;
}

/** Distinct, fixed stream numbers: changing one kind of data never shifts another. */
const STREAM = { centres: 1, base: 2, queries: 3, categories: 4 } as const;

function streamSeed(seed: number, stream: number): number {
  // A splitmix-style mix so that seeds 42/43 and streams 1/2 do not give overlapping sequences.
  return (Math.imul((seed >>> 0) ^ Math.imul(stream, 0x9e3779b9), 0x85ebca6b) ^ stream) >>> 0;
}

export class GaussianMixture {
  readonly centres: Float64Array;

  constructor(readonly spec: MixtureSpec) {
    if (!Number.isInteger(spec.dim) || spec.dim < 1) throw new RangeError(`dim: expected a positive integer, got ${spec.dim}`);
    if (!Number.isInteger(spec.clusters) || spec.clusters < 1 || spec.clusters > 65535) {
      throw new RangeError(`clusters: expected an integer 1–65535, got ${spec.clusters}`);
    }
    const rng = new SeededRng(streamSeed(spec.seed, STREAM.centres));
    this.centres = new Float64Array(spec.clusters * spec.dim);
    for (let i = 0; i < this.centres.length; i++) this.centres[i] = rng.gaussian();
  }

  /** The `n` base vectors. */
  base(n: number): VectorSet {
    return this.sample(n, STREAM.base);
  }

  /** `n` query vectors from the same mixture, drawn from their own stream. */
  queries(n: number): VectorSet {
    return this.sample(n, STREAM.queries);
  }

  /** Payload `category` uniform in [0, count) per base point (peers: 10 categories). */
  categories(n: number, count = 10): Uint8Array {
    const rng = new SeededRng(streamSeed(this.spec.seed, STREAM.categories));
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = rng.int(count);
    return out;
  }

  private sample(n: number, stream: number): VectorSet {
    const { dim, clusters, sigma } = this.spec;
    const rng = new SeededRng(streamSeed(this.spec.seed, stream));
    const data = new Float32Array(n * dim);
    const cluster = new Uint16Array(n);
    const row = new Float64Array(dim);
    for (let i = 0; i < n; i++) {
      const c = rng.int(clusters);
      cluster[i] = c;
      let norm2 = 0;
      for (let j = 0; j < dim; j++) {
        const x = (this.centres[c * dim + j] as number) + sigma * rng.gaussian();
        row[j] = x;
        norm2 += x * x;
      }
      const inv = norm2 > 0 ? 1 / Math.sqrt(norm2) : 0;
      for (let j = 0; j < dim; j++) data[i * dim + j] = (row[j] as number) * inv;
    }
    const rows = Array.from({ length: n }, (_, i) => data.subarray(i * dim, (i + 1) * dim));
    return { dim, data, rows, cluster };
  }
}
