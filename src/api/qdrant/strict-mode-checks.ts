/**
 * The checks strict mode makes of a request on the Qdrant port (strict-mode.ts says which route
 * makes which), each with Qdrant's wording: its strict-mode errors are 400 "Bad request: <what>.
 * Help: <what to do>", its collection-size refusals 400 "Bad request: <what>". They read the
 * request's JSON and the collection's facts only: nothing is written, and a refused request has
 * done no work.
 */
import os from 'node:os';
import { shortestFloat32 } from '../../core/float32-text.js';
import { isPlainObject } from '../../payload/json-value.js';
import { ALL_PAYLOAD } from '../../payload/payload-selector.js';
import { QdrantHttpError } from './errors.js';
import type { StrictModeConfig } from './strict-mode-config.js';
import { conditionCount, firstUnindexedKey, firstUnindexedFormulaKey, groupingIndex, type IndexSchemas, largestCondition } from './strict-filter.js';
import type { QdrantCollection, QdrantCollectionFacts } from './store.js';

/** Qdrant's strict-mode refusal. */
export function strictModeError(problem: string, help: string): QdrantHttpError {
  return new QdrantHttpError(400, `Bad request: ${problem}. Help: ${help}`);
}

function badRequest(problem: string): QdrantHttpError {
  return new QdrantHttpError(400, `Bad request: ${problem}`);
}

/** `value` at most `limit` (no limit, or no value: nothing to check). */
export function checkLimit(value: number | undefined, limit: number | undefined, name: string): void {
  if (value === undefined || limit === undefined || value <= limit) return;
  throw strictModeError(`Limit exceeded ${value} > ${limit} for "${name}"`, `Reduce the "${name}" parameter to or below ${limit}.`);
}

/** A number the request gives, or undefined (the route refuses a wrong kind itself). */
export function numberOf(raw: unknown): number | undefined {
  return typeof raw === 'number' && Number.isFinite(raw) ? raw : undefined;
}

export function checkExact(exact: unknown, config: StrictModeConfig): void {
  if (config.search_allow_exact === false && exact === true) throw strictModeError('Exact search disabled!', 'Set exact=false.');
}

/** A search's `params`: oversampling, hnsw_ef, exact, in Qdrant's order. */
export function checkSearchParams(params: unknown, config: StrictModeConfig): void {
  if (!isPlainObject(params)) return;
  const quantization = params.quantization;
  checkLimit(isPlainObject(quantization) ? numberOf(quantization.oversampling) : undefined, config.search_max_oversampling, 'oversampling');
  checkLimit(numberOf(params.hnsw_ef), config.search_max_hnsw_ef, 'hnsw_ef');
  checkExact(params.exact, config);
}

/**
 * A filter's keys indexed (when the config asks it of this kind of request: `allowUnindexed`
 * false), then its size against filter_max_conditions and condition_max_size.
 */
export function checkFilter(filter: unknown, allowUnindexed: boolean | undefined, schemas: IndexSchemas, config: StrictModeConfig): void {
  if (filter === undefined || filter === null) return;
  if (allowUnindexed === false) {
    const missing = firstUnindexedKey(filter, schemas);
    if (missing !== undefined) {
      throw strictModeError(
        `Index required but not found for "${missing.key}" of one of the following types: [${missing.schemas.join(', ')}]`,
        'Create an index for this key or use a different filter.',
      );
    }
  }
  const conditions = conditionCount(filter);
  if (config.filter_max_conditions !== undefined && conditions > config.filter_max_conditions)
    throw strictModeError(
      `Filter condition limit reached (${conditions} > ${config.filter_max_conditions})`,
      'Reduce the amount of conditions of your filter.',
    );
  const size = largestCondition(filter);
  if (config.condition_max_size !== undefined && size > config.condition_max_size)
    throw strictModeError(`Condition size limit reached (${size} > ${config.condition_max_size})`, 'Reduce the size of your condition.');
}

/** A formula's payload keys indexed, when unindexed_filtering_retrieve is false. */
export function checkFormula(formula: unknown, schemas: IndexSchemas, config: StrictModeConfig): void {
  if (config.unindexed_filtering_retrieve !== false) return;
  const missing = firstUnindexedFormulaKey(formula, schemas);
  if (missing !== undefined) {
    throw strictModeError(
      `Index required but not found for "${missing.key}" of one of the following types: [${missing.schemas.join(', ')}]`,
      'Create an index for this key or use a different formula expression.',
    );
  }
}

/** A group_by key with an index that answers a match, when unindexed_filtering_retrieve is false. */
export function checkGroupBy(key: unknown, schemas: IndexSchemas, config: StrictModeConfig): void {
  if (config.unindexed_filtering_retrieve !== false || typeof key !== 'string') return;
  const index = groupingIndex(key, schemas);
  if (index === 'matching') return;
  const help = 'Create an index supporting `match` for this key.';
  if (index === 'none') throw strictModeError(`Index required but not found for "${key}"`, help);
  throw strictModeError(`Index of type "${index}" found for "${key}"`, help);
}

/**
 * search_allow_exact false and a vector with no graph (hnsw m 0): a vector query would scan the
 * whole collection. Qdrant allows it only through a tenant's graph: a filter on an is_tenant key
 * with payload_m above 0.
 */
export function checkFullScan(using: string, m: number, payloadM: number, tenantFilter: boolean, config: StrictModeConfig): void {
  if (config.search_allow_exact !== false || m > 0) return;
  const on = using === '' ? '' : ` on '${using}'`;
  if (!tenantFilter) {
    throw strictModeError(
      `Request is forbidden${on} because global vector indexing is disabled (hnsw_config.m = 0)`,
      'Use tenant-specific filter, enable global vector indexing or enable strict mode `search_allow_exact` option',
    );
  }
  if (payloadM === 0) {
    throw strictModeError(
      `Request is forbidden${on} because vector indexing is disabled (hnsw_config.m = 0 and hnsw_config.payload_m = 0)`,
      'Enable vector indexing, use a prefetch query with indexed vectors or enable strict mode `search_allow_exact` option',
    );
  }
}

/** max_payload_index_count: a new index (not one replacing a field's) is refused at the limit. */
export function checkPayloadIndexCount(declared: number, config: StrictModeConfig): void {
  const max = config.max_payload_index_count;
  if (max === undefined || declared < max) return;
  throw strictModeError(`Collection already has the maximum number of payload indices (${max})`, 'Please delete an existing index before creating a new one.');
}

/** Per multi-vector name, the vectors each point gives; per sparse name, each one's indices. */
export interface WrittenVectors {
  readonly multi: ReadonlyArray<readonly [string, number]>;
  readonly sparse: ReadonlyArray<readonly [string, number]>;
}

/** multivector_config.{name}.max_vectors and sparse_config.{name}.max_length over what a write gives. */
export function checkWrittenVectors(written: WrittenVectors, config: StrictModeConfig): void {
  for (const [name, count] of written.multi) {
    const max = config.multivector_config?.[name]?.max_vectors;
    if (max !== undefined && Object.hasOwn(config.multivector_config ?? {}, name) && count > max)
      throw badRequest(`Multivector '${name}' has a limit of ${max} vectors, but ${count} were provided!`);
  }
  for (const [name, length] of written.sparse) {
    const max = config.sparse_config?.[name]?.max_length;
    if (max !== undefined && Object.hasOwn(config.sparse_config ?? {}, name) && length > max)
      throw badRequest(`Sparse vector '${name}' has a limit of ${max} indices, but ${length} were provided!`);
  }
}

/** Points sampled for the payload size estimate: the first ones in id order. */
const PAYLOAD_SAMPLE = 64;

/**
 * Estimated bytes of the collection's vectors: points × 4 bytes per dense component (the main
 * vector and each named one, a multi-vector counted as one vector); sparse vectors are not counted.
 */
function vectorBytes(facts: QdrantCollectionFacts): number {
  let perPoint = facts.vector_size * 4;
  for (const spec of Object.values(facts.named_vectors ?? {})) perPoint += spec.size * 4;
  return facts.points_count * perPoint;
}

/** Estimated bytes of the collection's payloads: points × the mean JSON size of the first PAYLOAD_SAMPLE points' payloads. */
async function payloadBytes(collection: QdrantCollection, points: number): Promise<number> {
  if (points === 0) return 0;
  const page = await collection.scroll({ limit: PAYLOAD_SAMPLE, with_payload: ALL_PAYLOAD, with_vector: false });
  if (page.points.length === 0) return 0;
  const sampled = page.points.reduce((sum, p) => sum + Buffer.byteLength(JSON.stringify(p.payload ?? {}), 'utf8'), 0);
  return Math.round((sampled / page.points.length) * points);
}

/** Megabytes as Qdrant prints them: an f32's shortest decimal. */
const mb = (bytes: number): string => String(shortestFloat32(bytes / (1024 * 1024)));

/**
 * The collection's size limits, as Qdrant makes them: a write is refused once the collection is
 * at or over a limit (its size before the write, not after). `payloadOnly`: a payload change,
 * which only max_collection_payload_size_bytes limits.
 */
export async function checkCollectionSize(collection: QdrantCollection, config: StrictModeConfig, payloadOnly: boolean): Promise<void> {
  const vectorLimit = payloadOnly ? undefined : config.max_collection_vector_size_bytes;
  const pointLimit = payloadOnly ? undefined : config.max_points_count;
  const payloadLimit = config.max_collection_payload_size_bytes;
  if (vectorLimit === undefined && pointLimit === undefined && payloadLimit === undefined) return;
  const facts = await collection.facts();
  if (vectorLimit !== undefined && vectorBytes(facts) >= vectorLimit) throw badRequest(`Max vector storage size limit of ${mb(vectorLimit)}MB reached!`);
  if (payloadLimit !== undefined && (await payloadBytes(collection, facts.points_count)) >= payloadLimit)
    throw badRequest(`Max payload storage size limit of ${mb(payloadLimit)}MB reached!`);
  if (pointLimit !== undefined && facts.points_count >= pointLimit) throw badRequest(`Max points count limit of ${pointLimit} reached!`);
}

/** The process's resident memory and the memory it may use (the cgroup's limit when there is one). */
export interface MemoryReading {
  readonly resident: number;
  readonly total: number;
}

export function readMemory(): MemoryReading {
  const constrained = process.constrainedMemory();
  const total = os.totalmem();
  return { resident: process.memoryUsage.rss(), total: constrained > 0 && constrained < total ? constrained : total };
}

/** max_resident_memory_percent: writes that add data are refused while the process holds that share of memory. */
export function checkResidentMemory(config: StrictModeConfig, memory: () => MemoryReading): void {
  const percent = config.max_resident_memory_percent;
  if (percent === undefined) return;
  const { resident, total } = memory();
  if (total <= 0 || resident < (total * percent) / 100) return;
  throw strictModeError(
    `Resident memory usage is at ${Math.floor((resident * 100) / total)}% of total memory, exceeding the configured limit of ${percent}%`,
    'Reduce memory usage (e.g. delete points or free segments) or raise `max_resident_memory_percent` in strict mode.',
  );
}
