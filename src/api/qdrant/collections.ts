/**
 * Collections on the Qdrant port: GET /collections, PUT/GET/DELETE /collections/{name},
 * GET /collections/{name}/exists, PUT /collections/{name}/index, DELETE …/index/{field}.
 *
 * Create maps Qdrant's configuration onto kith's: `vectors {size, distance}`; an HNSW collection
 * always (Qdrant always indexes) with `hnsw_config.m` (default 16) and `ef_construct` (default
 * 100, Qdrant's), except `m: 0`, which Qdrant uses to switch the graph off: a flat collection;
 * `quantization_config.scalar` (int8) → sq8. `strict_mode_config` is checked, stored and enforced
 * (strict-mode.ts). Other valid options are accepted, kept with the collection and echoed by GET.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LIMITS, validateCollectionName } from '../../segment/collection-config.js';
import { isKithError } from '../../core/errors.js';
import { MAX_KEY_LENGTH } from '../../payload/filter-parse.js';
import { isPlainObject } from '../../payload/json-value.js';
import { parseTextIndexParams } from '../../payload/text-index.js';
import { childPath } from '../../core/field-path.js';
import { describeJson } from '../../core/point-id.js';
import { ok } from '../envelope.js';
import {
  asObject,
  collectionNotFound,
  formatError,
  nameTooLong,
  notSupported,
  optionalInteger,
  QdrantHttpError,
  unknownVariant,
  validationError,
} from './errors.js';
import { updateResult } from './shape.js';
import { parseStrictModeConfig } from './strict-mode-config.js';
import type { QdrantCollection, QdrantCollectionFacts, QdrantRead, QdrantStore } from './store.js';
import { NO_DENSE_VECTOR } from './vector-layout.js';

const DISTANCES: Record<string, 'Cosine' | 'Euclid' | 'Dot'> = { Cosine: 'Cosine', Euclid: 'Euclid', Dot: 'Dot' };
const FIELD_TYPES = new Set(['keyword', 'integer', 'float', 'bool', 'geo', 'datetime', 'text', 'uuid']);
const QDRANT_DEFAULT_EF_CONSTRUCT = 100;

/**
 * What the Qdrant port keeps about a collection beyond kith's configuration, stored durably with
 * it as its "qdrant" annotation (Collection.annotations): the create request's options, echoed by
 * GET, and the fields declared with PUT …/index.
 */
export interface QdrantExtras {
  readonly options: Record<string, unknown>;
  /** Field name → Qdrant field schema. */
  readonly payload_schema: Record<string, unknown>;
}

export function extrasOf(collection: QdrantCollection): QdrantExtras {
  const stored = collection.extras();
  const object = typeof stored === 'object' && stored !== null && !Array.isArray(stored) ? (stored as Partial<QdrantExtras>) : {};
  return { options: object.options ?? {}, payload_schema: object.payload_schema ?? {} };
}

/**
 * Qdrant's `consistency` query parameter of a read: an integer, `majority`, `quorum` or `all`.
 * One replica (1, the default) is an eventual read; any more asks for the latest: a strong read,
 * each shard's replica first applying its log's last position (docs/cluster.md). One node has
 * one copy, so it reads the same either way.
 */
export function readOf(request: FastifyRequest): QdrantRead {
  const raw = (request.query as Record<string, unknown> | undefined)?.consistency;
  if (raw === undefined || raw === '' || raw === '1') return 'eventual';
  if (raw === 'majority' || raw === 'quorum' || raw === 'all' || (typeof raw === 'string' && /^[1-9]\d{0,3}$/.test(raw))) return 'strong';
  throw formatError('consistency', `expected a number of replicas, majority, quorum or all, got ${JSON.stringify(raw)}`);
}

/** The named collection, or Qdrant's 404. */
export async function collectionOf(store: QdrantStore, name: string, read: QdrantRead = 'eventual'): Promise<QdrantCollection> {
  if (name.length > 255) throw nameTooLong(name);
  try {
    validateCollectionName(name);
    return await store.collection(name, read);
  } catch (error) {
    if (isKithError(error) && (error.code === 'ERR_COLLECTION_NOT_FOUND' || error.code === 'ERR_BAD_INPUT')) throw collectionNotFound(name);
    throw error;
  }
}

/** The collection a request names, read with the request's `consistency`. */
export function requestCollection(store: QdrantStore, request: FastifyRequest<{ Params: { name: string } }>): Promise<QdrantCollection> {
  return collectionOf(store, request.params.name, readOf(request));
}

/**
 * `vectors`: one dense vector's params (the unnamed vector), or a map of named ones. The first
 * named vector that is not a multi-vector is the main one (HNSW, as the collection's config
 * says); the others are held beside it and searched exactly (docs/api.md, "Named vectors").
 */
function parseVectors(raw: unknown): {
  name: string;
  size: number;
  distance: 'Cosine' | 'Euclid' | 'Dot';
  params: Record<string, unknown>;
  path: string;
  others: Record<string, OtherVector>;
} {
  // Qdrant's default: no dense vector (a collection of sparse vectors only, or of none).
  const v = raw === undefined || raw === null ? {} : asObject(raw, 'vectors');
  if (Object.hasOwn(v, 'size') || Object.hasOwn(v, 'distance')) {
    if (multivectorOf(v, 'vectors')) {
      // The unnamed vector is a multi-vector: kith holds it as the named vector "" beside the placeholder main one (vector-layout.ts).
      const graph = namedGraphParams(asObject(v.hnsw_config, childPath('vectors', 'hnsw_config')), childPath('vectors', 'hnsw_config'));
      const others: Record<string, OtherVector> = Object.create(null);
      others[''] = { ...denseParams(v, 'vectors'), multivector: true, ...graph };
      return { name: NO_DENSE_VECTOR, size: 1, distance: 'Dot', params: {}, path: 'vectors', others: { ...others } };
    }
    return { name: '', ...denseParams(v, 'vectors'), params: v, path: 'vectors', others: {} };
  }
  const names = Object.keys(v);
  const parsed = names.map((name) => {
    const path = childPath('vectors', name);
    if (name.length > LIMITS.vectorNameLength.max) throw validationError(path, `a vector name is at most ${LIMITS.vectorNameLength.max} characters`);
    if (name === NO_DENSE_VECTOR) throw formatError(path, `the name ${JSON.stringify(name)} is reserved by kith`);
    const params = asObject(v[name], path);
    return { name, path, params, multivector: multivectorOf(params, path), ...denseParams(params, path) };
  });
  // Without a plain dense vector, kith's main vector is a placeholder no request sees (vector-layout.ts).
  const main = parsed.find((p) => !p.multivector) ?? { name: NO_DENSE_VECTOR, size: 1, distance: 'Dot' as const, params: {}, path: 'vectors' };
  const others: Record<string, OtherVector> = Object.create(null);
  for (const p of parsed) {
    if (p === main) continue;
    const graph = namedGraphParams(asObject(p.params.hnsw_config, childPath(p.path, 'hnsw_config')), childPath(p.path, 'hnsw_config'));
    others[p.name] = { size: p.size, distance: p.distance, multivector: p.multivector, ...graph };
  }
  return { name: main.name, size: main.size, distance: main.distance, params: main.params, path: main.path, others: { ...others } };
}

/** A dense vector beside the main one, as kith's engine takes it (its graph's m and ef_construction only when it sets them). */
interface OtherVector {
  size: number;
  distance: 'Cosine' | 'Euclid' | 'Dot';
  multivector: boolean;
  m?: number;
  ef_construction?: number;
}

/**
 * A named vector's own `hnsw_config` `m` and `ef_construct`, which build its graph (the
 * collection's where it sets none); `m: 0` switches its graph off (exact scans), as in Qdrant.
 */
export function namedGraphParams(hnswConfig: Record<string, unknown>, path: string): { m?: number; ef_construction?: number } {
  const out: { m?: number; ef_construction?: number } = {};
  if (hnswConfig.m !== undefined && hnswConfig.m !== null) {
    const m = optionalInteger(hnswConfig.m, childPath(path, 'm'), 0, 0, LIMITS.m.max);
    if (m === 1) throw validationError(childPath(path, 'm'), `must be 0 (no graph) or between ${LIMITS.m.min} and ${LIMITS.m.max}, got 1`);
    out.m = m;
  }
  if (hnswConfig.ef_construct !== undefined && hnswConfig.ef_construct !== null) {
    out.ef_construction = optionalInteger(hnswConfig.ef_construct, childPath(path, 'ef_construct'), 0, LIMITS.efConstruction.min, LIMITS.efConstruction.max);
  }
  return out;
}

/** `multivector_config {comparator: "max_sim"}`: whether the vector is a multi-vector. */
function multivectorOf(params: Record<string, unknown>, path: string): boolean {
  if (params.multivector_config === undefined || params.multivector_config === null) return false;
  const config = asObject(params.multivector_config, childPath(path, 'multivector_config'));
  if (config.comparator !== 'max_sim') throw unknownVariant(childPath(childPath(path, 'multivector_config'), 'comparator'), config.comparator, ['max_sim']);
  return true;
}

function denseParams(v: Record<string, unknown>, path: string): { size: number; distance: 'Cosine' | 'Euclid' | 'Dot' } {
  const size = v.size;
  if (typeof size !== 'number' || !Number.isInteger(size)) throw formatError(childPath(path, 'size'), `expected an integer, got ${describeJson(size)}`);
  if (size < LIMITS.vectorSize.min || size > LIMITS.vectorSize.max) {
    throw validationError(childPath(path, 'size'), `must be between ${LIMITS.vectorSize.min} and ${LIMITS.vectorSize.max}, got ${size}`);
  }
  const distancePath = childPath(path, 'distance');
  if (typeof v.distance !== 'string') throw formatError(distancePath, `expected Cosine, Euclid, Dot or Manhattan, got ${describeJson(v.distance)}`);
  if (v.distance === 'Manhattan') throw notSupported(distancePath, 'the Manhattan distance');
  const distance = DISTANCES[v.distance];
  if (distance === undefined) throw unknownVariant(distancePath, v.distance, ['Cosine', 'Euclid', 'Dot', 'Manhattan']);
  return { size, distance };
}

/** `sparse_vectors`: names → `{index?, modifier?}`; the index's options are accepted and echoed (kith's index is exact and in memory). */
function parseSparseVectors(raw: unknown, denseName: string): Record<string, { modifier: 'none' | 'idf' }> {
  const out: Record<string, { modifier: 'none' | 'idf' }> = Object.create(null);
  if (raw === undefined || raw === null) return { ...out };
  for (const [name, spec] of Object.entries(asObject(raw, 'sparse_vectors'))) {
    const path = childPath('sparse_vectors', name);
    if (name === denseName) throw formatError(path, `the dense vector is named ${JSON.stringify(name)} already`);
    const params = asObject(spec, path);
    const modifier = params.modifier ?? 'none';
    if (modifier !== 'none' && modifier !== 'idf') throw unknownVariant(childPath(path, 'modifier'), modifier, ['none', 'idf']);
    if (params.index !== undefined && params.index !== null) asObject(params.index, childPath(path, 'index'));
    out[name] = { modifier };
  }
  return { ...out };
}

export function parseQuantization(raw: unknown): 'none' | 'sq8' {
  if (raw === undefined || raw === null) return 'none';
  const q = asObject(raw, 'quantization_config');
  if (Object.hasOwn(q, 'scalar')) {
    const scalar = asObject(q.scalar, 'quantization_config.scalar');
    if (scalar.type !== 'int8') throw formatError('quantization_config.scalar.type', `expected "int8", got ${describeJson(scalar.type)}`);
    return 'sq8';
  }
  const kind = Object.keys(q)[0] ?? '{}';
  throw notSupported(childPath('quantization_config', kind), `${kind} quantization (only scalar int8 is)`);
}

async function createCollection(store: QdrantStore, name: string, body: Record<string, unknown>): Promise<void> {
  if (name.length > 255) throw nameTooLong(name);
  const vectors = parseVectors(body.vectors);
  const sparseVectors = parseSparseVectors(body.sparse_vectors, vectors.name);
  for (const name of Object.keys(vectors.others))
    if (Object.hasOwn(sparseVectors, name)) throw formatError(childPath('sparse_vectors', name), `a dense vector is named ${JSON.stringify(name)} already`);
  if (body.init_from !== undefined && body.init_from !== null) throw notSupported('init_from', '`init_from`');
  // Checked before anything is created; stored as parsed, so GET echoes what is enforced (strict-mode.ts).
  const strictMode = body.strict_mode_config === undefined || body.strict_mode_config === null ? undefined : parseStrictModeConfig(body.strict_mode_config);
  // A named vector's own hnsw_config and quantization_config override the collection's.
  const hnswConfig = { ...asObject(body.hnsw_config, 'hnsw_config'), ...asObject(vectors.params.hnsw_config, childPath(vectors.path, 'hnsw_config')) };
  const m = optionalInteger(hnswConfig.m, 'hnsw_config.m', 16, 0, LIMITS.m.max);
  if (m === 1) throw validationError('hnsw_config.m', `must be 0 (no graph) or between ${LIMITS.m.min} and ${LIMITS.m.max}, got 1`);
  const efConstruct = optionalInteger(
    hnswConfig.ef_construct,
    'hnsw_config.ef_construct',
    QDRANT_DEFAULT_EF_CONSTRUCT,
    LIMITS.efConstruction.min,
    LIMITS.efConstruction.max,
  );
  const quantization = parseQuantization(vectors.params.quantization_config ?? body.quantization_config);
  const shardNumber =
    body.shard_number === undefined || body.shard_number === null ? undefined : optionalInteger(body.shard_number, 'shard_number', 1, 1, 1024);
  const replicationFactor =
    body.replication_factor === undefined || body.replication_factor === null
      ? undefined
      : optionalInteger(body.replication_factor, 'replication_factor', 1, 1, 16);
  validateCollectionName(name);
  const options = { ...body };
  delete options.timeout;
  if (strictMode === undefined) delete options.strict_mode_config;
  else options.strict_mode_config = strictMode;
  try {
    await store.create(
      {
        name,
        vector_size: vectors.size,
        distance: vectors.distance,
        // The placeholder of a collection without a plain dense vector needs no graph (its multi-vectors have none either).
        hnsw: m !== 0 && vectors.name !== NO_DENSE_VECTOR,
        parameters: m === 0 ? { ef_construction: efConstruct } : { m, ef_construction: efConstruct },
        quantization,
        ...(vectors.name === '' ? {} : { vector_name: vectors.name }),
        ...(Object.keys(sparseVectors).length === 0 ? {} : { sparse_vectors: sparseVectors }),
        ...(Object.keys(vectors.others).length === 0 ? {} : { named_vectors: vectors.others }),
      },
      { options, payload_schema: {} } satisfies QdrantExtras,
      {
        ...(shardNumber === undefined ? {} : { shard_number: shardNumber }),
        ...(replicationFactor === undefined ? {} : { replication_factor: replicationFactor }),
      },
    );
  } catch (error) {
    if (isKithError(error) && error.code === 'ERR_COLLECTION_EXISTS') throw new QdrantHttpError(409, `Wrong input: Collection \`${name}\` already exists!`);
    throw error;
  }
}

/**
 * Fields a collection may declare with PUT …/index: GET …/collections/{name} counts each one's
 * points in one pass over the collection (in slices), so the declarations bound that pass.
 */
export const MAX_DECLARED_FIELDS = 256;

/** Qdrant's CollectionInfo for a kith collection. */
async function collectionInfo(collection: QdrantCollection): Promise<Record<string, unknown>> {
  const info = await collection.facts();
  const extras = extrasOf(collection);
  const options = extras.options;
  const echoed = (key: string): Record<string, unknown> => asObject(options[key], key);
  const payloadSchema: Record<string, unknown> = {};
  // Text indexes declared through kith's port are the collection's too: listed as Qdrant would list them.
  const fields = { ...extras.payload_schema, ...collection.textIndexSchemas?.() };
  const declared = Object.entries(fields).slice(0, MAX_DECLARED_FIELDS);
  if (declared.length > 0) {
    const counts = await collection.pointsWithValues(declared.map(([field]) => field));
    declared.forEach(([field, schema], f) => {
      const dataType = typeof schema === 'string' ? schema : (schema as { type?: unknown }).type;
      payloadSchema[field] = { data_type: dataType, ...(typeof schema === 'object' ? { params: schema } : {}), points: counts[f] };
    });
  }
  return {
    status: 'green',
    optimizer_status: 'ok',
    indexed_vectors_count: info.hnsw ? info.points_count : 0,
    points_count: info.points_count,
    segments_count: 1,
    config: {
      params: {
        ...echoed('params'),
        vectors: vectorsEcho(echoed('vectors'), info),
        ...(info.sparse_vectors === undefined ? {} : { sparse_vectors: sparseEcho(echoed('sparse_vectors'), info.sparse_vectors) }),
        shard_number: info.sharding?.shard_number ?? options.shard_number ?? 1,
        replication_factor: info.sharding?.replication_factor ?? options.replication_factor ?? 1,
        write_consistency_factor: options.write_consistency_factor ?? 1,
        on_disk_payload: options.on_disk_payload ?? true,
        ...(options.sharding_method !== undefined ? { sharding_method: options.sharding_method } : {}),
      },
      hnsw_config: {
        full_scan_threshold: 10000,
        max_indexing_threads: 0,
        on_disk: false,
        ...echoed('hnsw_config'),
        m: info.hnsw || info.vector_name === NO_DENSE_VECTOR ? info.parameters.m : 0,
        ef_construct: info.parameters.ef_construction,
      },
      optimizer_config: {
        deleted_threshold: 0.2,
        vacuum_min_vector_number: 1000,
        default_segment_number: 0,
        max_segment_size: null,
        memmap_threshold: null,
        indexing_threshold: 10000,
        flush_interval_sec: 5,
        max_optimization_threads: null,
        ...echoed('optimizers_config'),
      },
      wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0, ...echoed('wal_config') },
      quantization_config: info.quantization === 'sq8' ? { scalar: { type: 'int8', ...asObject(echoed('quantization_config').scalar, 'scalar') } } : null,
      ...(options.strict_mode_config !== undefined ? { strict_mode_config: options.strict_mode_config } : {}),
      ...(options.metadata !== undefined ? { metadata: options.metadata } : {}),
    },
    payload_schema: payloadSchema,
  };
}

/** GET's `vectors`: the params as given, with kith's size and distance; by name when the dense vectors have names. */
function vectorsEcho(given: Record<string, unknown>, info: QdrantCollectionFacts): Record<string, unknown> {
  const name = info.vector_name ?? '';
  const others = Object.entries(info.named_vectors ?? {});
  if (name === '' && others.length === 0) return { ...given, size: info.vector_size, distance: info.distance };
  const unnamed = info.named_vectors?.[''];
  if (name === NO_DENSE_VECTOR && others.length === 1 && unnamed !== undefined)
    return { ...given, size: unnamed.size, distance: unnamed.distance, multivector_config: { comparator: 'max_sim' } };
  const own = (n: string): Record<string, unknown> => asObject(Object.hasOwn(given, n) ? given[n] : undefined, 'vectors');
  const out: Record<string, unknown> = Object.create(null);
  if (name !== NO_DENSE_VECTOR) out[name] = { ...own(name), size: info.vector_size, distance: info.distance };
  for (const [n, spec] of others) {
    const given = own(n);
    // Its graph's m and ef_construct as kith builds it, when it set its own.
    const graph = { ...(spec.m === undefined ? {} : { m: spec.m }), ...(spec.ef_construction === undefined ? {} : { ef_construct: spec.ef_construction }) };
    const hnswConfig = Object.keys(graph).length === 0 ? {} : { hnsw_config: { ...asObject(given.hnsw_config, 'hnsw_config'), ...graph } };
    out[n] = {
      ...given,
      ...hnswConfig,
      size: spec.size,
      distance: spec.distance,
      ...(spec.multivector ? { multivector_config: { comparator: 'max_sim' } } : {}),
    };
  }
  return { ...out };
}

/** GET's `sparse_vectors`: each as given (its index options), with kith's modifier when it is idf. */
function sparseEcho(given: Record<string, unknown>, sparse: Readonly<Record<string, { readonly modifier: 'none' | 'idf' }>>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [name, spec] of Object.entries(sparse)) {
    const own = asObject(Object.hasOwn(given, name) ? given[name] : undefined, 'sparse_vectors');
    const { modifier: _given, ...rest } = own;
    out[name] = { ...rest, ...(spec.modifier === 'idf' ? { modifier: 'idf' } : {}) };
  }
  return { ...out };
}

function parseFieldSchema(raw: unknown): unknown {
  if (raw === undefined || raw === null) return 'keyword';
  const type = typeof raw === 'string' ? raw : typeof raw === 'object' && !Array.isArray(raw) ? (raw as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !FIELD_TYPES.has(type)) {
    throw formatError('field_schema', `expected one of ${[...FIELD_TYPES].join(', ')} (or an object with that type), got ${describeJson(type ?? raw)}`);
  }
  // Checked here too, so a cluster node (which keeps it only as the port's annotation) refuses the same schemas.
  if (type === 'text') parseTextIndexParams(raw, 'field_schema');
  // Qdrant's own check (a 422): an integer index must keep one of its capabilities.
  const params = raw as { lookup?: unknown; range?: unknown };
  if (type === 'integer' && typeof raw === 'object' && params.lookup === false && params.range === false)
    throw validationError('field_schema', "the 'lookup' and 'range' capabilities can't be both disabled");
  return raw;
}

function isTextSchema(schema: unknown): boolean {
  return schema === 'text' || (isPlainObject(schema) && schema.type === 'text');
}

export async function qdrantCollectionRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  app.get('/collections', async (_request, reply) => ok(reply, { collections: (await store.list()).map((name) => ({ name })) }));

  app.put<{ Params: { name: string } }>('/collections/:name', async (request, reply) => {
    await createCollection(store, request.params.name, asObject(request.body, 'body'));
    return ok(reply, true);
  });

  app.get<{ Params: { name: string } }>('/collections/:name', async (request, reply) =>
    ok(reply, await collectionInfo(await requestCollection(store, request))),
  );

  app.get<{ Params: { name: string } }>('/collections/:name/exists', async (request, reply) => {
    let exists = true;
    try {
      await collectionOf(store, request.params.name);
    } catch (error) {
      if (!(error instanceof QdrantHttpError) || error.statusCode !== 404) throw error;
      exists = false;
    }
    return ok(reply, { exists });
  });

  app.delete<{ Params: { name: string } }>('/collections/:name', async (request, reply) => {
    try {
      // An alias names no collection to drop (Qdrant answers false): drops take the collection's own name.
      if ((await collectionOf(store, request.params.name)).name !== request.params.name) return ok(reply, false);
    } catch (error) {
      if (error instanceof QdrantHttpError && error.statusCode === 404) return ok(reply, false);
      throw error;
    }
    await store.drop(request.params.name);
    return ok(reply, true);
  });

  app.put<{ Params: { name: string } }>('/collections/:name/index', async (request, reply) => {
    const collection = await collectionOf(store, request.params.name);
    const body = asObject(request.body, 'body');
    const field = body.field_name;
    if (typeof field !== 'string' || field === '') throw formatError('field_name', `expected a non-empty string, got ${describeJson(field)}`);
    if (field.length > MAX_KEY_LENGTH) throw validationError('field_name', `${field.length} characters long; the limit is ${MAX_KEY_LENGTH}`);
    const schema = parseFieldSchema(body.field_schema);
    const extras = extrasOf(collection);
    if (!Object.hasOwn(extras.payload_schema, field) && Object.keys(extras.payload_schema).length >= MAX_DECLARED_FIELDS) {
      throw validationError('field_name', `the collection already declares ${MAX_DECLARED_FIELDS} payload fields, the limit; delete one first`);
    }
    // A text schema is the engine's to apply (both ports match text by it); another schema replacing one takes it away.
    // A cluster node's replicas would go on matching text as an unindexed field: refused, not recorded.
    if (isTextSchema(schema) && collection.declareTextIndex === undefined) throw notSupported('field_schema', 'text indexes on a cluster node', true);
    if (isTextSchema(schema)) await collection.declareTextIndex?.(field, schema);
    else if (isTextSchema(extras.payload_schema[field])) await collection.declareTextIndex?.(field, undefined);
    await collection.saveExtras({ ...extras, payload_schema: { ...extras.payload_schema, [field]: schema } } satisfies QdrantExtras);
    return ok(reply, updateResult());
  });

  app.delete<{ Params: { name: string; field: string } }>('/collections/:name/index/:field', async (request, reply) => {
    const collection = await collectionOf(store, request.params.name);
    const extras = extrasOf(collection);
    const { [request.params.field]: removed, ...rest } = extras.payload_schema;
    if (isTextSchema(removed)) await collection.declareTextIndex?.(request.params.field, undefined);
    await collection.saveExtras({ ...extras, payload_schema: rest } satisfies QdrantExtras);
    return ok(reply, updateResult());
  });
}
