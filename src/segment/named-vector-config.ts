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
}
