/**
 * A named dense vector's configuration (segment/named-vectors.ts holds the vectors): its own file,
 * without imports, so that the collection configuration, which the dashboard's schemas reach, does
 * not pull in the distance kernels.
 */
import type { Distance } from '../core/distance.js';

export interface NamedVectorConfig {
  readonly size: number;
  readonly distance: Distance;
  /** Several rows per point, scored by max_sim. */
  readonly multivector: boolean;
  /** Its graph's m, 0 for none (exact scans); undefined: the collection's. Only a one-row name in an HNSW collection has a graph. */
  readonly m?: number | undefined;
  /** Its graph's ef_construction; undefined: the collection's. */
  readonly efConstruction?: number | undefined;
}

/** The JSON form of a named vector's configuration, as created, stored and shown. */
export interface NamedVectorConfigJson {
  size: number;
  distance: Distance;
  multivector: boolean;
  /** Only when set for this name. */
  m?: number;
  ef_construction?: number;
}
