/**
 * The beam width of one HNSW search, and where it came from (reported by `explain`): the
 * request's `params.ef`, else the collection's `ef_search` when it was given at create, else the
 * ef calibrated for the collection's target recall (search/ef-calibration.ts), else the
 * default `ef_search`. Never below the number of hits the search must return.
 */
import type { CollectionConfig } from '../segment/collection-config.js';

export type EfSource = 'request' | 'collection' | 'calibrated' | 'default';

export interface EfChoice {
  readonly ef: number;
  readonly source: EfSource;
}

export function searchEf(requested: number | null | undefined, config: CollectionConfig, k: number): EfChoice {
  if (requested !== undefined && requested !== null) return { ef: Math.max(requested, k), source: 'request' };
  const parameters = config.parameters;
  if (parameters.efSearchExplicit) return { ef: Math.max(parameters.efSearch, k), source: 'collection' };
  const calibrated = Atomics.load(config.calibratedEf, 0);
  if (calibrated > 0) return { ef: Math.max(calibrated, k), source: 'calibrated' };
  return { ef: Math.max(parameters.efSearch, k), source: 'default' };
}
