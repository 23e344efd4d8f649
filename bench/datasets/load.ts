/** One entry point for every dataset the `index` benchmark can run: real sets and the synthetic mixture. */
import type { AnnDataset, DatasetRequest } from './dataset.js';
import { syntheticDataset } from './dataset.js';
import { DEFAULT_DATA_DIR, loadGlove12k, loadMnist10k, loadSift5k } from './real.js';
import { PEER_MIXTURE } from './synthetic.js';

export const SYNTHETIC_DEFAULTS = { n: 100_000, dim: 128, queries: 1000, seed: PEER_MIXTURE.seed } as const;

export function loadDataset(request: DatasetRequest): AnnDataset {
  const dataDir = request.dataDir ?? DEFAULT_DATA_DIR;
  switch (request.name) {
    case 'sift5k':
      return loadSift5k(dataDir);
    case 'mnist10k':
      return loadMnist10k(dataDir);
    case 'glove12k':
      return loadGlove12k(dataDir);
    case 'synthetic':
      return syntheticDataset(
        request.n ?? SYNTHETIC_DEFAULTS.n,
        request.dim ?? SYNTHETIC_DEFAULTS.dim,
        request.queries ?? SYNTHETIC_DEFAULTS.queries,
        request.seed ?? SYNTHETIC_DEFAULTS.seed,
      );
  }
}
