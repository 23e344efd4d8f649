/**
 * The beam width of one HNSW search, and where it came from (reported by `explain`): the
 * request's `params.ef`, else the collection's `ef_search` when it was given at create, else the
 * ef calibrated for the collection's target recall (search/ef-calibration.ts), else the
 * default `ef_search`. Never below the number of hits the search must return.
 */
import type { CollectionConfig } from '../segment/collection-config.js';

/**
 * The default ef a collection's calibration adopted, as its searches read it (0: none adopted).
 * Runtime state, not configuration: each collection's EfCalibration owns one (`CalibratedEf`) and
 * is its only writer; a collection built again from the same configuration starts from none.
 */
export interface CalibratedEfReader {
  readonly ef: number;
}

/** No calibrated ef: searches use the collection's `ef_search` (warm-up after load, tests). */
export const UNCALIBRATED: CalibratedEfReader = { ef: 0 };

/** The one owner of a collection's calibrated ef (search/ef-calibration.ts writes it). */
export class CalibratedEf implements CalibratedEfReader {
  private adopted = 0;

  get ef(): number {
    return this.adopted;
  }

  adopt(ef: number): void {
    this.adopted = ef;
  }
}

export type EfSource = 'request' | 'collection' | 'calibrated' | 'default';

export interface EfChoice {
  readonly ef: number;
  readonly source: EfSource;
}

export function searchEf(requested: number | null | undefined, config: CollectionConfig, calibratedEf: CalibratedEfReader, k: number): EfChoice {
  if (requested !== undefined && requested !== null) return { ef: Math.max(requested, k), source: 'request' };
  const parameters = config.parameters;
  if (parameters.efSearchExplicit) return { ef: Math.max(parameters.efSearch, k), source: 'collection' };
  const calibrated = calibratedEf.ef;
  if (calibrated > 0) return { ef: Math.max(calibrated, k), source: 'calibrated' };
  return { ef: Math.max(parameters.efSearch, k), source: 'default' };
}
