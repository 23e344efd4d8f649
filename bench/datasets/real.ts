/**
 * Loaders for the small real k-NN sets kept in the repository's datasets/ folder (see its README for
 * sources and licences), found from the running file whether it runs from dist/ or dist-<name>/.
 *
 * | name     | base × dim     | queries          | metric | file                         |
 * |----------|----------------|------------------|--------|------------------------------|
 * | sift5k   | 4,500 × 128    | last 500 rows    | L2     | TSV, 128 values + an id      |
 * | mnist10k | 9,000 × 784    | last 1,000 rows  | L2     | IDX (gzip), with digit labels|
 * | glove12k | 10,925 × 25    | last 1,000 rows  | cosine | fvecs                        |
 *
 * None ships with k-NN ground truth; bench/lib/ground-truth.ts computes and caches it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { REPO_DIR } from '../lib/results.js';
import { type AnnDataset, matrix } from './dataset.js';

export const DEFAULT_DATA_DIR = join(REPO_DIR, 'datasets');

function readData(dataDir: string, ...parts: string[]): Buffer {
  const path = join(dataDir, ...parts);
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`dataset file ${path} cannot be read (${(error as Error).message}); see datasets/README.md`, { cause: error });
  }
}

/** Splits `count` rows of `data` into the first `count - queries` (base) and the last `queries`. */
function split(data: Float32Array, dim: number, queries: number): { base: Float32Array; queries: Float32Array } {
  const count = data.length / dim;
  const cut = (count - queries) * dim;
  return { base: data.slice(0, cut), queries: data.slice(cut) };
}

/**
 * SIFT, 5,000 × 128 (yahoojapan/NGT data/sift-dataset-5k.tsv): 129 tab-separated fields per line,
 * 128 integer components then an object id (100001…). First 4,500 rows base, last 500 queries, L2.
 */
export function loadSift5k(dataDir = DEFAULT_DATA_DIR): AnnDataset {
  const dim = 128;
  const expectedRows = 5000;
  const queries = 500;
  const text = readData(dataDir, 'sift5k-ngt', 'sift-dataset-5k.tsv').toString('utf8');
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length !== expectedRows) throw new Error(`sift5k: expected ${expectedRows} rows, got ${lines.length}`);
  const data = new Float32Array(expectedRows * dim);
  lines.forEach((line, r) => {
    const fields = line.trimEnd().split('\t');
    if (fields.length !== dim + 1) throw new Error(`sift5k: row ${r + 1} has ${fields.length} fields, expected ${dim + 1}`);
    for (let j = 0; j < dim; j++) {
      const x = Number(fields[j]);
      if (!Number.isFinite(x)) throw new Error(`sift5k: row ${r + 1}, field ${j + 1} is not a number: ${JSON.stringify(fields[j])}`);
      data[r * dim + j] = x;
    }
  });
  const parts = split(data, dim, queries);
  return {
    name: 'sift5k',
    label: 'sift5k',
    id: 'sift5k-ngt-4500b-500q',
    description: 'SIFT descriptors, 4,500 base + last 500 rows as queries',
    source: 'datasets/sift5k-ngt/sift-dataset-5k.tsv (yahoojapan/NGT)',
    metric: 'l2',
    dim,
    base: matrix(parts.base, dim),
    queries: matrix(parts.queries, dim, true),
  };
}

/**
 * MNIST test split, 10,000 × 784 uint8 pixels (IDX, gzip) with digit labels: first 9,000 base,
 * last 1,000 queries, L2 on the raw 0–255 values (as ann-benchmarks' mnist-784-euclidean).
 */
export function loadMnist10k(dataDir = DEFAULT_DATA_DIR): AnnDataset {
  const images = gunzipSync(readData(dataDir, 'mnist-10k', 't10k-images-idx3-ubyte.gz'));
  const labels = gunzipSync(readData(dataDir, 'mnist-10k', 't10k-labels-idx1-ubyte.gz'));
  const magic = images.readUInt32BE(0);
  const count = images.readUInt32BE(4);
  const rows = images.readUInt32BE(8);
  const cols = images.readUInt32BE(12);
  if (magic !== 2051 || rows !== 28 || cols !== 28) throw new Error(`mnist10k: bad image header ${magic} ${count} ${rows} ${cols}`);
  const dim = rows * cols;
  if (images.length !== 16 + count * dim) throw new Error(`mnist10k: image file is ${images.length} bytes, expected ${16 + count * dim}`);
  if (labels.readUInt32BE(0) !== 2049 || labels.readUInt32BE(4) !== count || labels.length !== 8 + count) {
    throw new Error('mnist10k: bad label file header or length');
  }
  const data = new Float32Array(count * dim);
  for (let i = 0; i < data.length; i++) data[i] = images[16 + i] as number;
  const allLabels = new Uint8Array(labels.subarray(8, 8 + count));
  const queries = 1000;
  const parts = split(data, dim, queries);
  return {
    name: 'mnist10k',
    label: 'mnist10k',
    id: 'mnist10k-9000b-1000q',
    description: 'MNIST test split, raw pixels 0–255, 9,000 base + last 1,000 as queries; digit labels kept',
    source: 'datasets/mnist-10k/t10k-{images-idx3,labels-idx1}-ubyte.gz (daniel-e/machine_learning)',
    metric: 'l2',
    dim,
    base: matrix(parts.base, dim),
    queries: matrix(parts.queries, dim, true),
    baseLabels: allLabels.slice(0, count - queries),
    queryLabels: allLabels.slice(count - queries),
  };
}

/**
 * GloVe Twitter 25d, 11,925 words (fvecs: per row an int32 LE dimension, then that many float32
 * LE), not normalised: last 1,000 rows queries, cosine.
 */
export function loadGlove12k(dataDir = DEFAULT_DATA_DIR): AnnDataset {
  const file = readData(dataDir, 'glove-twitter-25d-12k', 'vectors.fvecs');
  const dim = file.readInt32LE(0);
  const rowBytes = 4 + 4 * dim;
  if (dim < 1 || file.length % rowBytes !== 0) throw new Error(`glove12k: ${file.length} bytes is not a whole number of ${dim}-d fvecs rows`);
  const count = file.length / rowBytes;
  const data = new Float32Array(count * dim);
  for (let r = 0; r < count; r++) {
    const at = r * rowBytes;
    if (file.readInt32LE(at) !== dim) throw new Error(`glove12k: row ${r} declares dimension ${file.readInt32LE(at)}, expected ${dim}`);
    for (let j = 0; j < dim; j++) data[r * dim + j] = file.readFloatLE(at + 4 + 4 * j);
  }
  const queries = 1000;
  const parts = split(data, dim, queries);
  return {
    name: 'glove12k',
    label: 'glove12k',
    id: `glove12k-${count - queries}b-${queries}q`,
    description: `GloVe Twitter 25d, ${(count - queries).toLocaleString('en-US')} base + last 1,000 words as queries, not normalised`,
    source: 'datasets/glove-twitter-25d-12k/vectors.fvecs (rimonim/embedplyr, GloVe PDDL)',
    metric: 'cosine',
    dim,
    base: matrix(parts.base, dim),
    queries: matrix(parts.queries, dim, true),
  };
}
