/**
 * A collection's configuration: defaults, validation and the wire/stored shape.
 * Staged as better-sqlite3 does: apply defaults → validate → interpret.
 */
import { type Distance, parseDistance } from '../core/distance.js';
import { badInput, KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import type { NamedVectorConfig, NamedVectorConfigJson } from './named-vector-config.js';

export type Quantization = 'none' | 'sq8';

export interface HnswParameters {
  /** Links per node on upper layers (2·m on layer 0). */
  readonly m: number;
  /** Beam width while building. */
  readonly efConstruction: number;
  /** Beam width while searching (at least the request's limit). */
  readonly efSearch: number;
  /** Default search `limit`. */
  readonly k: number;
  /** Whether `ef_search` was given at create: then it is used as given and never calibrated. */
  readonly efSearchExplicit: boolean;
  /** Mean recall@k that calibration picks the default ef for (search/ef-calibration.ts). */
  readonly targetRecall: number;
}

export interface CollectionConfig {
  readonly name: string;
  readonly vectorSize: number;
  readonly distance: Distance;
  readonly hnsw: boolean;
  readonly parameters: HnswParameters;
  readonly quantization: Quantization;
  /** Payload indexes built automatically (payload/payload-index.ts); false opts out. */
  readonly payloadIndex: boolean;
  /** The dense vector's name: "" (the unnamed vector) unless the collection names it (Qdrant's named vectors). */
  readonly vectorName: string;
  /** Sparse vectors by name (index/sparse/), each its own inverted index; empty for most collections. */
  readonly sparseVectors: ReadonlyMap<string, SparseVectorConfig>;
  /** Dense vectors by name beyond the main one (multi-vectors among them), scored exactly (segment/named-vectors.ts). */
  readonly namedVectors: ReadonlyMap<string, NamedVectorConfig>;
}

/** A sparse vector's configuration: Qdrant's `modifier` (`idf` weighs query terms by inverse document frequency). */
export interface SparseVectorConfig {
  readonly modifier: 'none' | 'idf';
}

/** Inclusive bounds of every numeric setting; the TypeBox schemas and docs/params.md use these. */
export const LIMITS = {
  vectorSize: { min: 1, max: 65536 },
  m: { min: 2, max: 100 },
  efConstruction: { min: 4, max: 1000 },
  efSearch: { min: 1, max: 10000 },
  k: { min: 1, max: 10000 },
  targetRecall: { min: 0.5, max: 0.999 },
  limit: { min: 1, max: 10000 },
  offset: { min: 0, max: 100000 },
  /** MMR candidates of one search (Qdrant's bound for `candidates_limit`). */
  mmrCandidates: { min: 1, max: 16384 },
  /**
   * m × ef_construction × vector_size of a new HNSW collection: one insert scores a few times that
   * many vector components (its beam, then the neighbour heuristic over up to 2m picks), all of it
   * in one step of the service thread. A 65,536-d node at m 32, ef_construction 128 (this bound)
   * took 100-200 ms on a busy 2-core machine; at 2^30 (m 64, ef_construction 256) up to 500 ms.
   */
  insertWork: { min: 1, max: 2 ** 28 },
  nameLength: { min: 1, max: 255 },
  /** Characters of a vector's name. */
  vectorNameLength: { min: 1, max: 255 },
  /** Sparse vectors of one collection. */
  sparseVectors: { min: 0, max: 16 },
  /** Named dense vectors of one collection beyond the main one. */
  namedVectors: { min: 0, max: 8 },
  /** Rows of one multi-vector. */
  multivectorRows: { min: 1, max: 1024 },
} as const;

/**
 * What earlier versions accepted at create (m up to 128, ef_construction up to 4096): collections
 * stored with them keep loading. New collections get LIMITS, whose insert cost is bounded
 * (docs/params.md, "Request limits").
 */
const STORED_LIMITS = { ...LIMITS, m: { min: 2, max: 128 }, efConstruction: { min: 4, max: 4096 } } as const;

export const DEFAULT_PARAMETERS = { m: 16, efConstruction: 200, efSearch: 64, k: 10, targetRecall: 0.95 } as const;

const COLLECTION_NAME_PATTERN = '^[A-Za-z0-9_.-]{1,255}$';
const NAME = new RegExp(COLLECTION_NAME_PATTERN);

/** The create request as it arrives (already shape-checked by the route schema). */
export interface CollectionConfigInput {
  name: string;
  vector_size: number;
  distance: string;
  hnsw?: boolean | null;
  parameters?: { m?: number; ef_construction?: number; ef_search?: number; k?: number; target_recall?: number } | null;
  quantization?: unknown;
  payload_index?: boolean | null;
  vector_name?: string | null;
  sparse_vectors?: Record<string, { modifier?: string | null } | null> | null;
  named_vectors?: Record<
    string,
    { size?: unknown; distance?: unknown; multivector?: boolean | null; m?: number | null; ef_construction?: number | null } | null
  > | null;
}

export function validateCollectionName(name: string, path = 'name'): void {
  if (!NAME.test(name)) {
    throw badInput(path, `expected 1 to 255 characters of A-Z a-z 0-9 _ - ., got ${JSON.stringify(name.slice(0, 300))}`);
  }
  if (name === '.' || name === '..') throw badInput(path, `"${name}" is not a valid collection name`);
}

function integerIn(value: unknown, bounds: { min: number; max: number }, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw badInput(path, `expected an integer, got ${describeJson(value)}`);
  if (value < bounds.min || value > bounds.max) {
    throw badInput(path, `must be between ${bounds.min} and ${bounds.max}, got ${value}`);
  }
  return value;
}

function numberIn(value: unknown, bounds: { min: number; max: number }, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw badInput(path, `expected a number, got ${describeJson(value)}`);
  if (value < bounds.min || value > bounds.max) {
    throw badInput(path, `must be between ${bounds.min} and ${bounds.max}, got ${value}`);
  }
  return value;
}

function optionalBoolean(value: unknown, fallback: boolean, path: string): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw badInput(path, `expected a boolean, got ${describeJson(value)}`);
  return value;
}

function parseQuantization(raw: unknown, path: string): Quantization {
  if (raw === undefined || raw === null) return 'none';
  const type = typeof raw === 'object' && !Array.isArray(raw) ? (raw as { type?: unknown }).type : raw;
  const at = typeof raw === 'object' ? childPath(path, 'type') : path;
  if (type === 'none' || type === 'sq8') return type;
  throw badInput(at, `expected "none" or "sq8", got ${JSON.stringify(type)}`);
}

function parseVectorName(raw: unknown, path: string): string {
  if (typeof raw !== 'string') throw badInput(path, `expected a string, got ${describeJson(raw)}`);
  const { min, max } = LIMITS.vectorNameLength;
  if (raw.length < min || raw.length > max) throw badInput(path, `expected ${min} to ${max} characters, got ${raw.length}`);
  return raw;
}

function parseSparseVectors(raw: unknown, denseName: string, path: string): ReadonlyMap<string, SparseVectorConfig> {
  const out = new Map<string, SparseVectorConfig>();
  if (raw === undefined || raw === null) return out;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badInput(path, `expected an object of sparse vector names, got ${describeJson(raw)}`);
  const names = Object.keys(raw);
  if (names.length > LIMITS.sparseVectors.max) throw badInput(path, `at most ${LIMITS.sparseVectors.max} sparse vectors, got ${names.length}`);
  for (const name of names) {
    const at = childPath(path, name);
    parseVectorName(name, at);
    if (name === denseName) throw badInput(at, `the dense vector is named ${JSON.stringify(name)} already`);
    const spec = (raw as Record<string, unknown>)[name] ?? {};
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw badInput(at, `expected an object, got ${describeJson(spec)}`);
    for (const key of Object.keys(spec)) if (key !== 'modifier') throw badInput(childPath(at, key), 'unknown field');
    const modifier = (spec as { modifier?: unknown }).modifier ?? 'none';
    if (modifier !== 'none' && modifier !== 'idf') throw badInput(childPath(at, 'modifier'), `expected "none" or "idf", got ${describeJson(modifier)}`);
    out.set(name, { modifier });
  }
  return out;
}

/** Named vectors' configurations; each graph's bounds as the collection's (`parameters`, `hnsw`: its own). */
function parseNamedVectors(
  raw: unknown,
  taken: ReadonlySet<string>,
  path: string,
  parameters: HnswParameters,
  hnsw: boolean,
  limits: typeof LIMITS | typeof STORED_LIMITS,
): ReadonlyMap<string, NamedVectorConfig> {
  const out = new Map<string, NamedVectorConfig>();
  if (raw === undefined || raw === null) return out;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badInput(path, `expected an object of vector names, got ${describeJson(raw)}`);
  const names = Object.keys(raw);
  if (names.length > LIMITS.namedVectors.max) throw badInput(path, `at most ${LIMITS.namedVectors.max} named vectors beside the main one, got ${names.length}`);
  for (const name of names) {
    const at = childPath(path, name);
    // "" names a named vector only when the main vector has a name of its own (the Qdrant port's
    // unnamed multi-vector beside its placeholder main vector).
    if (name !== '') parseVectorName(name, at);
    if (taken.has(name)) throw badInput(at, `the name ${JSON.stringify(name)} is taken by another vector of the collection`);
    const spec = (raw as Record<string, unknown>)[name];
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
      throw badInput(at, `expected {size, distance, multivector?, m?, ef_construction?}, got ${describeJson(spec)}`);
    for (const key of Object.keys(spec)) if (!NAMED_VECTOR_KEYS.has(key)) throw badInput(childPath(at, key), 'unknown field');
    const s = spec as { size?: unknown; distance?: unknown; multivector?: unknown; m?: unknown; ef_construction?: unknown };
    const size = integerIn(s.size, LIMITS.vectorSize, childPath(at, 'size'));
    const distance = typeof s.distance === 'string' ? parseDistance(s.distance) : undefined;
    if (distance === undefined) throw badInput(childPath(at, 'distance'), `expected cosine, euclidean (euclid, l2) or dot, got ${describeJson(s.distance)}`);
    const multivector = optionalBoolean(s.multivector, false, childPath(at, 'multivector'));
    if (multivector && distance === 'Euclid')
      throw badInput(childPath(at, 'distance'), 'a multi-vector is scored by max_sim over cosine or dot products; Euclid is not supported for it');
    // m 0: no graph for this name (Qdrant's hnsw_config.m 0), exact scans.
    const m = s.m === undefined || s.m === null ? undefined : s.m === 0 ? 0 : integerIn(s.m, limits.m, childPath(at, 'm'));
    const efConstruction =
      s.ef_construction === undefined || s.ef_construction === null
        ? undefined
        : integerIn(s.ef_construction, limits.efConstruction, childPath(at, 'ef_construction'));
    const effectiveM = m ?? parameters.m;
    const insertWork = effectiveM * (efConstruction ?? parameters.efConstruction) * size;
    if (hnsw && !multivector && effectiveM > 0 && limits === LIMITS && insertWork > LIMITS.insertWork.max) {
      throw badInput(
        at,
        `m × ef_construction × size is ${insertWork}; the limit is ${LIMITS.insertWork.max}, since each insert into its graph scores about that many components at once: lower m or ef_construction (docs/params.md)`,
      );
    }
    out.set(name, { size, distance, multivector, ...(m === undefined ? {} : { m }), ...(efConstruction === undefined ? {} : { efConstruction }) });
  }
  return out;
}

const NAMED_VECTOR_KEYS = new Set(['size', 'distance', 'multivector', 'm', 'ef_construction']);

/** Interprets a create request; every problem is a 400 naming its field. */
export function parseCollectionConfig(input: CollectionConfigInput, limits: typeof LIMITS | typeof STORED_LIMITS = LIMITS): CollectionConfig {
  validateCollectionName(input.name);
  const vectorSize = integerIn(input.vector_size, LIMITS.vectorSize, 'vector_size');
  if (typeof input.distance !== 'string') throw badInput('distance', `expected a string, got ${describeJson(input.distance)}`);
  const distance = parseDistance(input.distance);
  if (distance === undefined) {
    throw badInput('distance', `unsupported metric ${JSON.stringify(input.distance)}; expected cosine, euclidean (euclid, l2) or dot`);
  }
  const p = input.parameters ?? {};
  const parameters: HnswParameters = {
    m: p.m === undefined ? DEFAULT_PARAMETERS.m : integerIn(p.m, limits.m, 'parameters.m'),
    efConstruction:
      p.ef_construction === undefined ? DEFAULT_PARAMETERS.efConstruction : integerIn(p.ef_construction, limits.efConstruction, 'parameters.ef_construction'),
    efSearch: p.ef_search === undefined ? DEFAULT_PARAMETERS.efSearch : integerIn(p.ef_search, LIMITS.efSearch, 'parameters.ef_search'),
    k: p.k === undefined ? DEFAULT_PARAMETERS.k : integerIn(p.k, LIMITS.k, 'parameters.k'),
    efSearchExplicit: p.ef_search !== undefined,
    targetRecall: p.target_recall === undefined ? DEFAULT_PARAMETERS.targetRecall : numberIn(p.target_recall, LIMITS.targetRecall, 'parameters.target_recall'),
  };
  const hnsw = optionalBoolean(input.hnsw, false, 'hnsw');
  const vectorName =
    input.vector_name === undefined || input.vector_name === null || input.vector_name === '' ? '' : parseVectorName(input.vector_name, 'vector_name');
  const sparseVectors = parseSparseVectors(input.sparse_vectors, vectorName, 'sparse_vectors');
  const insertWork = parameters.m * parameters.efConstruction * vectorSize;
  // Collections stored under the earlier bounds keep loading; new ones are refused here.
  if (hnsw && limits === LIMITS && insertWork > LIMITS.insertWork.max) {
    throw badInput(
      'parameters',
      `m × ef_construction × vector_size is ${insertWork} (${parameters.m} × ${parameters.efConstruction} × ${vectorSize}); the limit is ${LIMITS.insertWork.max}, since each insert scores about that many components at once: lower m or ef_construction (docs/params.md)`,
    );
  }
  return {
    name: input.name,
    vectorSize,
    distance,
    hnsw,
    parameters,
    quantization: parseQuantization(input.quantization, 'quantization'),
    payloadIndex: optionalBoolean(input.payload_index, true, 'payload_index'),
    vectorName,
    sparseVectors,
    namedVectors: parseNamedVectors(input.named_vectors, new Set([vectorName, ...sparseVectors.keys()]), 'named_vectors', parameters, hnsw, limits),
  };
}

/** The JSON echoed to clients (snake_case, canonical spellings). */
export interface CollectionConfigJson {
  name: string;
  vector_size: number;
  distance: Distance;
  hnsw: boolean;
  parameters: { m: number; ef_construction: number; ef_search: number; k: number; target_recall: number };
  quantization: Quantization;
  payload_index: boolean;
  /** Only when the dense vector is named. */
  vector_name?: string;
  /** Only when the collection has sparse vectors. */
  sparse_vectors?: Record<string, { modifier: 'none' | 'idf' }>;
  /** Only when the collection has named dense vectors beside the main one. */
  named_vectors?: Record<string, NamedVectorConfigJson>;
}

/** The JSON kept in the database file: what clients see, plus whether ef_search was given. */
export interface StoredConfigJson extends CollectionConfigJson {
  parameters: CollectionConfigJson['parameters'] & { ef_search_explicit: boolean };
}

/** The stored form (database.ts writes it at create); `configToInfo` is what clients see. */
export function configToJson(config: CollectionConfig): StoredConfigJson {
  const info = configToInfo(config);
  return { ...info, parameters: { ...info.parameters, ef_search_explicit: config.parameters.efSearchExplicit } };
}

export function configToInfo(config: CollectionConfig): CollectionConfigJson {
  return {
    name: config.name,
    vector_size: config.vectorSize,
    distance: config.distance,
    hnsw: config.hnsw,
    parameters: {
      m: config.parameters.m,
      ef_construction: config.parameters.efConstruction,
      ef_search: config.parameters.efSearch,
      k: config.parameters.k,
      target_recall: config.parameters.targetRecall,
    },
    quantization: config.quantization,
    payload_index: config.payloadIndex,
    ...(config.vectorName === '' ? {} : { vector_name: config.vectorName }),
    ...(config.sparseVectors.size === 0 ? {} : { sparse_vectors: sparseVectorsJson(config.sparseVectors) }),
    ...(config.namedVectors.size === 0 ? {} : { named_vectors: namedVectorsConfigJson(config.namedVectors) }),
  };
}

function namedVectorsConfigJson(named: ReadonlyMap<string, NamedVectorConfig>): Record<string, NamedVectorConfigJson> {
  const out: Record<string, NamedVectorConfigJson> = Object.create(null);
  for (const [name, spec] of named) {
    out[name] = {
      size: spec.size,
      distance: spec.distance,
      multivector: spec.multivector,
      ...(spec.m === undefined ? {} : { m: spec.m }),
      ...(spec.efConstruction === undefined ? {} : { ef_construction: spec.efConstruction }),
    };
  }
  return { ...out };
}

function sparseVectorsJson(sparse: ReadonlyMap<string, SparseVectorConfig>): Record<string, { modifier: 'none' | 'idf' }> {
  // A name such as "__proto__" must be an own key, not the object's prototype.
  const out: Record<string, { modifier: 'none' | 'idf' }> = Object.create(null);
  for (const [name, spec] of sparse) out[name] = { modifier: spec.modifier };
  return { ...out };
}

/** Reads a stored configuration back; a stored entry that fails validation is corruption, not bad input. */
export function configFromStored(stored: unknown, name: string): CollectionConfig {
  try {
    const json = stored as Partial<StoredConfigJson>;
    const { ef_search_explicit: explicitFlag, ...parameters } = json.parameters ?? {};
    const config = parseCollectionConfig({ ...(json as StoredConfigJson), parameters, name }, STORED_LIMITS);
    // Stored before calibration existed: 64 was the default then, so only another value was chosen.
    const efSearchExplicit = explicitFlag === undefined ? config.parameters.efSearch !== DEFAULT_PARAMETERS.efSearch : explicitFlag === true;
    return { ...config, parameters: { ...config.parameters, efSearchExplicit } };
  } catch (error) {
    throw new KithError('ERR_STORAGE_CORRUPTED', `collection "${name}" has an unreadable configuration: ${String(error)}`, {
      cause: error,
    });
  }
}

/**
 * A first guess of one graph insert's wall time in ms, before any was measured: about 0.4 ns per
 * unit of m × ef_construction × vector_size (0.15-0.3 ms at the defaults and 128 dimensions; about
 * 100 ms at the insertWork bound). Link steps are sized by it until they have measured their own.
 */
export function guessedMsPerInsert(config: CollectionConfig): number {
  if (!config.hnsw) return 0;
  return config.parameters.m * config.parameters.efConstruction * config.vectorSize * 4e-7;
}
