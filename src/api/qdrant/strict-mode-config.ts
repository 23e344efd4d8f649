/**
 * Qdrant's `strict_mode_config` on the Qdrant port: its fields, their ranges (Qdrant 1.18's
 * StrictModeConfig) and how a PATCH merges into the stored one. The config is kept with the
 * collection's other Qdrant options (collections.ts, QdrantExtras.options.strict_mode_config),
 * so it survives a restart, and GET echoes it as stored: only the fields that were set.
 * What each field limits is strict-mode.ts's business.
 */
import { childPath } from '../../core/field-path.js';
import { describeJson } from '../../core/point-id.js';
import { asObject, formatError, validationError } from './errors.js';

/** A collection's strict mode as stored: every field optional, absent when never set. */
export interface StrictModeConfig {
  readonly enabled?: boolean;
  readonly max_query_limit?: number;
  readonly max_timeout?: number;
  readonly unindexed_filtering_retrieve?: boolean;
  readonly unindexed_filtering_update?: boolean;
  readonly search_max_hnsw_ef?: number;
  readonly search_allow_exact?: boolean;
  readonly search_max_oversampling?: number;
  readonly upsert_max_batchsize?: number;
  readonly search_max_batchsize?: number;
  readonly max_collection_vector_size_bytes?: number;
  readonly read_rate_limit?: number;
  readonly write_rate_limit?: number;
  readonly max_collection_payload_size_bytes?: number;
  readonly max_points_count?: number;
  readonly filter_max_conditions?: number;
  readonly condition_max_size?: number;
  /** Vector name → the most vectors one multi-vector may hold. */
  readonly multivector_config?: Readonly<Record<string, { readonly max_vectors?: number }>>;
  /** Sparse vector name → the most indices one sparse vector may hold. */
  readonly sparse_config?: Readonly<Record<string, { readonly max_length?: number }>>;
  readonly max_payload_index_count?: number;
  readonly max_resident_memory_percent?: number;
}

/** How a field is read: a flag, a count (≥ 0, or ≥ 1 where Qdrant says so), a float, a percentage. */
type FieldKind = 'flag' | 'count' | 'positive' | 'float' | 'percent';

const FIELDS: Readonly<Record<string, FieldKind>> = {
  enabled: 'flag',
  max_query_limit: 'positive',
  max_timeout: 'positive',
  unindexed_filtering_retrieve: 'flag',
  unindexed_filtering_update: 'flag',
  search_max_hnsw_ef: 'count',
  search_allow_exact: 'flag',
  search_max_oversampling: 'float',
  upsert_max_batchsize: 'count',
  search_max_batchsize: 'count',
  max_collection_vector_size_bytes: 'count',
  read_rate_limit: 'positive',
  write_rate_limit: 'positive',
  max_collection_payload_size_bytes: 'count',
  max_points_count: 'positive',
  filter_max_conditions: 'count',
  condition_max_size: 'count',
  max_payload_index_count: 'count',
  max_resident_memory_percent: 'percent',
};

function fieldValue(kind: FieldKind, raw: unknown, path: string): boolean | number {
  if (kind === 'flag') {
    if (typeof raw !== 'boolean') throw formatError(path, `expected a boolean, got ${describeJson(raw)}`);
    return raw;
  }
  if (kind === 'float') {
    if (typeof raw !== 'number' || !Number.isFinite(raw)) throw formatError(path, `expected a number, got ${describeJson(raw)}`);
    return raw;
  }
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0)
    throw formatError(path, `expected a non-negative integer, got ${typeof raw === 'number' ? raw : describeJson(raw)}`);
  if (kind === 'positive' && raw < 1) throw validationError(path, `value ${raw} invalid, must be 1 or larger`);
  if (kind === 'percent' && (raw < 1 || raw > 100)) throw validationError(path, `value ${raw} invalid, must be from 1 to 100`);
  return raw;
}

/** `multivector_config` / `sparse_config`: vector name → `{<limit>: n ≥ 1}`. */
function perVector(raw: unknown, path: string, limit: 'max_vectors' | 'max_length'): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = Object.create(null);
  for (const [name, spec] of Object.entries(asObject(raw, path))) {
    const at = childPath(path, name);
    const fields = asObject(spec, at);
    for (const key of Object.keys(fields)) if (key !== limit) throw formatError(childPath(at, key), `unknown field, expected ${limit}`);
    const value = fields[limit];
    out[name] = value === undefined || value === null ? {} : { [limit]: fieldValue('positive', value, childPath(at, limit)) as number };
  }
  return { ...out };
}

/**
 * The fields a request sets (create's whole config, or a PATCH's changes), checked; a null field
 * sets nothing (Qdrant's PATCH keeps the stored value then). Unknown fields are refused: a typo
 * would otherwise turn a limit off without a word.
 */
export function parseStrictModeConfig(raw: unknown, path = 'strict_mode_config'): StrictModeConfig {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(asObject(raw, path))) {
    if (value === null || value === undefined) continue;
    const at = childPath(path, key);
    if (key === 'multivector_config') out[key] = perVector(value, at, 'max_vectors');
    else if (key === 'sparse_config') out[key] = perVector(value, at, 'max_length');
    else {
      const kind = FIELDS[key];
      if (kind === undefined) throw formatError(at, 'unknown field');
      out[key] = fieldValue(kind, value, at);
    }
  }
  return out as StrictModeConfig;
}

/** A PATCH's fields over the stored ones, field by field; multivector_config and sparse_config are replaced whole, as Qdrant does. */
export function mergeStrictModeConfig(current: StrictModeConfig | undefined, change: StrictModeConfig): StrictModeConfig {
  return { ...current, ...change };
}

/** The stored config of a collection's options (undefined when none was ever set). */
export function storedStrictModeConfig(options: Readonly<Record<string, unknown>>): StrictModeConfig | undefined {
  const stored = options.strict_mode_config;
  return typeof stored === 'object' && stored !== null && !Array.isArray(stored) ? (stored as StrictModeConfig) : undefined;
}

/** The config whose limits apply: the stored one when it is enabled. */
export function activeStrictMode(options: Readonly<Record<string, unknown>>): StrictModeConfig | undefined {
  const config = storedStrictModeConfig(options);
  return config?.enabled === true ? config : undefined;
}
