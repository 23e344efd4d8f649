/**
 * The shapes of kith's API the dashboard reads: the server's own types (src/api/client/api-types.ts,
 * each the `Static<>` of a route schema), imported as types only, so the build fails when a schema
 * changes under the dashboard. Versions are `bigint` (nanoseconds, beyond 2^53): api.ts reads
 * answers with lib/exact-json.ts.
 */
import type { ScrollRequest as ApiScrollRequest, SearchRequest as ApiSearchRequest, ScoredPoint, SearchExplain } from '../../src/api/client/api-types.js';

export type {
  Calibration,
  CollectionInfo,
  FilterEstimate as Estimate,
  PointRecord,
  ScoredPoint,
  ScrollPage,
  SearchExplain as Explain,
  StoredRecord as ListedPoint,
} from '../../src/api/client/api-types.js';

export type Payload = Record<string, unknown>;

/** The filter as the user typed it (JSON, unchecked): the server judges it and names the field at fault. */
type UncheckedFilter = { filter?: unknown };
export type SearchRequest = Omit<ApiSearchRequest, 'filter'> & UncheckedFilter;
export type ScrollRequest = Omit<ApiScrollRequest, 'filter'> & UncheckedFilter;

export interface SearchAnswer {
  points: ScoredPoint[];
  explain?: SearchExplain;
  /** Seconds the server spent (the envelope's `time`). */
  time: number;
}
