/** The shapes of kith's API responses the dashboard reads (docs/api.md). */

export interface CollectionInfo {
  name: string;
  vector_size: number;
  distance: 'Cosine' | 'Euclid' | 'Dot';
  hnsw: boolean;
  parameters: { m: number; ef_construction: number; ef_search: number; k: number; target_recall?: number };
  quantization: 'none' | 'sq8';
  payload_index: boolean;
  points_count: number;
  /** How the default ef was chosen (docs/params.md, "Calibrated ef"); absent from older servers. */
  calibration?: Calibration;
}

export interface Calibration {
  state: 'flat' | 'fixed' | 'uncalibrated' | 'calibrated';
  running: boolean;
  ef: number;
  target_recall: number;
  recall: number | null;
  recall_lower_bound: number | null;
  reached: boolean | null;
  sample: number | null;
  points_when_calibrated: number | null;
  duration_ms: number | null;
}

export type Payload = Record<string, unknown>;

/** A point's version: nanoseconds, beyond 2^53, so a bigint (lib/exact-json.ts); a number only when small. */
export type Version = bigint | number;

export interface PointRecord {
  id: string;
  version: Version;
  payload: Payload;
  vector: number[];
}

export interface ScoredPoint {
  id: string;
  version: Version;
  score: number;
  payload?: Payload;
  vector?: number[];
}

/** A point of a scroll page (POST …/points/scroll): payload and vector as asked for. */
export interface ListedPoint {
  id: string;
  version: Version;
  payload?: Payload;
  vector?: number[];
}

/** One page of a scroll; `next_cursor` starts the next page, null on the last. */
export interface ScrollPage {
  points: ListedPoint[];
  next_cursor: string | null;
}

export interface ScrollRequest {
  limit: number;
  cursor?: string;
  filter?: unknown;
  with_payload?: boolean;
  with_vector?: boolean;
}

export interface Explain {
  strategy: 'graph' | 'flat-scan' | 'candidates-exact' | 'graph-filtered';
  fallback: boolean;
  estimate: Estimate | null;
  candidates: number | null;
  sample: { size: number; matched: number } | null;
  scored: number;
  exact: boolean;
  indexed_keys: string[];
}

/** The filter's estimated matches (docs/filters.md); `counted` false: `expected` is a midpoint, not a count. */
export interface Estimate {
  min: number;
  expected: number;
  max: number;
  counted: boolean;
}

export interface SearchRequest {
  vector: number[];
  limit?: number;
  offset?: number;
  filter?: unknown;
  with_payload?: boolean;
  with_vector?: boolean;
  params?: { exact?: boolean; explain?: boolean; ef?: number };
}

export interface SearchAnswer {
  points: ScoredPoint[];
  explain?: Explain;
  /** Seconds the server spent (the envelope's `time`). */
  time: number;
}
