/**
 * PATCH /collections/{name} on the Qdrant port (Qdrant's "update collection parameters").
 *
 * - `hnsw_config.m` and `ef_construct` (also under `vectors[""]`) change kith's graph: the
 *   collection is rebuilt with them before the answer (Database.reconfigureCollection); `m: 0`
 *   drops the graph (exact scans), as at create, and `m` ≥ 2 on a flat collection builds one.
 * - The options that change nothing in kith (`optimizers_config`, `params`, the other
 *   `hnsw_config` fields, `on_disk`, `metadata`, a `quantization_config` equal to the current one)
 *   are merged into what GET echoes, durably, as create keeps them.
 * - `strict_mode_config` is merged field by field into the stored one (a null field keeps its
 *   value, as in Qdrant) and enforced from the next request on (strict-mode.ts).
 * - A named vector's own `hnsw_config.m` and `ef_construct` (`vectors.<name>.hnsw_config`)
 *   rebuild its graph with them the same way (`m: 0` drops it: exact scans); its
 *   `quantization_config` and `on_disk` are echoed, as at create (kith keeps named vectors as
 *   float32 in memory).
 * - A sparse vector's `modifier` (`sparse_vectors.<name>.modifier`) is applied: idf is computed at
 *   query time, so nothing is rebuilt for it; its `index` options are merged into the echo.
 * - A change of the collection's quantization is refused (400): kith cannot do it in place, and
 *   accepting it would answer success for nothing.
 */
import type { FastifyInstance } from 'fastify';
import { childPath } from '../../core/field-path.js';
import type { CollectionChange } from '../../db/database.js';
import { LIMITS } from '../../segment/collection-config.js';
import { ok } from '../envelope.js';
import { extrasOf, namedGraphParams, parseQuantization, type QdrantExtras, requestCollection } from './collections.js';
import { asObject, formatError, notSupported, optionalInteger, unknownVariant, validationError } from './errors.js';
import type { QdrantCollection, QdrantStore } from './store.js';
import { layoutOf, setOwn, unknownVectorName } from './vector-layout.js';
import { mergeStrictModeConfig, parseStrictModeConfig, storedStrictModeConfig } from './strict-mode-config.js';

/** What a PATCH may give for a named vector: its graph's parameters (applied) and what is echoed. */
const NAMED_PATCH_KEYS = new Set(['hnsw_config', 'quantization_config', 'on_disk']);

/** Qdrant's `params` fields, kept at the top level of the stored options as create keeps them. */
const PARAMS = ['replication_factor', 'write_consistency_factor', 'read_fan_out_factor', 'on_disk_payload'];

/** An object merged over another, one level deep: what a PATCH of an options object does. */
function merged(current: unknown, patch: Record<string, unknown>): Record<string, unknown> {
  const base = typeof current === 'object' && current !== null && !Array.isArray(current) ? (current as Record<string, unknown>) : {};
  return { ...base, ...patch };
}

/** The graph parameters an `hnsw_config` asks for: m 0 (no graph), or m and ef_construct. */
function graphChange(hnswConfig: Record<string, unknown>, path: string): CollectionChange {
  const change: { hnsw?: boolean; parameters?: { m?: number; ef_construction?: number } } = {};
  if (hnswConfig.m !== undefined && hnswConfig.m !== null) {
    const m = optionalInteger(hnswConfig.m, childPath(path, 'm'), 0, 0, LIMITS.m.max);
    if (m === 1) throw validationError(childPath(path, 'm'), `must be 0 (no graph) or between ${LIMITS.m.min} and ${LIMITS.m.max}, got 1`);
    change.hnsw = m !== 0;
    if (m !== 0) change.parameters = { m };
  }
  if (hnswConfig.ef_construct !== undefined && hnswConfig.ef_construct !== null) {
    const efConstruction = optionalInteger(hnswConfig.ef_construct, childPath(path, 'ef_construct'), 0, LIMITS.efConstruction.min, LIMITS.efConstruction.max);
    change.parameters = { ...change.parameters, ef_construction: efConstruction };
  }
  return change;
}

/** The quantization asked for must be the collection's: kith keeps sq8 codes only, so neither way can change in place. */
async function refuseQuantizationChange(collection: QdrantCollection, raw: unknown, path: string): Promise<void> {
  if (raw === undefined || raw === null) return;
  const current = (await collection.facts()).quantization;
  const asked = raw === 'Disabled' ? 'none' : parseQuantization(raw);
  if (asked !== current) {
    throw notSupported(
      path,
      `changing the quantization of a collection (${current} now; create a new collection with it and re-index, an alias switches readers over)`,
    );
  }
}

export async function qdrantCollectionUpdateRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  app.patch<{ Params: { name: string } }>('/collections/:name', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const body = asObject(request.body, 'body');
    // Sparse vectors: `modifier` is applied (idf is computed at query time); `index` options are echoed.
    const sparseGiven = asObject(body.sparse_vectors, 'sparse_vectors');
    // Checked before anything changes; merged field by field into the stored config below.
    const strictChange = body.strict_mode_config === undefined || body.strict_mode_config === null ? undefined : parseStrictModeConfig(body.strict_mode_config);
    const vectors = asObject(body.vectors, 'vectors');
    const layout = layoutOf(await collection.facts());
    const denseName = layout.dense;
    // The named vectors beside the main one: their own graph's m and ef_construct (the rest of what they give is echoed).
    const namedChanges: Record<string, { m?: number; ef_construction?: number }> = Object.create(null);
    const namedGiven: Record<string, Record<string, unknown>> = Object.create(null);
    for (const name of Object.keys(vectors)) {
      const at = childPath('vectors', name);
      if (layout.named.has(name)) {
        const given = asObject(vectors[name], at);
        for (const key of Object.keys(given))
          if (!NAMED_PATCH_KEYS.has(key)) throw notSupported(childPath(at, key), `changing \`${key}\` of a named vector`, true);
        const graph = namedGraphParams(asObject(given.hnsw_config, childPath(at, 'hnsw_config')), childPath(at, 'hnsw_config'));
        if (Object.keys(graph).length > 0) namedChanges[name] = graph;
        namedGiven[name] = given;
        continue;
      }
      if (name !== denseName) throw unknownVectorName(name);
    }
    const sparseChanges: Record<string, { modifier: 'none' | 'idf' }> = Object.create(null);
    for (const [name, raw] of Object.entries(sparseGiven)) {
      const at = childPath('sparse_vectors', name);
      if (!layout.sparse.has(name)) throw unknownVectorName(name);
      const given = asObject(raw, at);
      for (const key of Object.keys(given)) if (key !== 'modifier' && key !== 'index') throw formatError(childPath(at, key), 'unknown field');
      const modifier = given.modifier;
      if (modifier === undefined || modifier === null) continue;
      if (modifier !== 'none' && modifier !== 'idf') throw unknownVariant(childPath(at, 'modifier'), modifier, ['none', 'idf']);
      sparseChanges[name] = { modifier };
    }
    const unnamed = asObject(vectors[denseName], childPath('vectors', denseName));
    const hnswConfig = { ...asObject(unnamed.hnsw_config, 'vectors[""].hnsw_config'), ...asObject(body.hnsw_config, 'hnsw_config') };
    const change: CollectionChange = {
      ...graphChange(hnswConfig, 'hnsw_config'),
      ...(Object.keys(namedChanges).length === 0 ? {} : { named_vectors: { ...namedChanges } }),
      ...(Object.keys(sparseChanges).length === 0 ? {} : { sparse_vectors: { ...sparseChanges } }),
    };
    await refuseQuantizationChange(collection, body.quantization_config, 'quantization_config');
    await refuseQuantizationChange(collection, unnamed.quantization_config, 'vectors[""].quantization_config');
    const params = asObject(body.params, 'params');
    const optimizers = asObject(body.optimizers_config, 'optimizers_config');
    const metadata = body.metadata === undefined || body.metadata === null ? undefined : asObject(body.metadata, 'metadata');

    if (change.hnsw !== undefined || change.parameters !== undefined || change.named_vectors !== undefined || change.sparse_vectors !== undefined) {
      if (collection.reconfigure === undefined) throw notSupported('hnsw_config', 'changing the graph on a cluster node', true);
      await collection.reconfigure(change);
    }
    const extras = extrasOf(collection);
    const options = { ...extras.options };
    const { m: _m, ef_construct: _ef, ...echoedHnsw } = hnswConfig;
    if (Object.keys(echoedHnsw).length > 0) options.hnsw_config = merged(options.hnsw_config, echoedHnsw);
    if (Object.keys(optimizers).length > 0) options.optimizers_config = merged(options.optimizers_config, optimizers);
    for (const key of PARAMS) if (params[key] !== undefined && params[key] !== null) options[key] = params[key];
    if (unnamed.on_disk !== undefined && unnamed.on_disk !== null) options.vectors = merged(options.vectors, { on_disk: unnamed.on_disk });
    for (const [name, raw] of Object.entries(sparseGiven)) {
      // Echoed by GET as given at create, `index` merged field by field (the modifier is kith's, shown from the collection).
      const stored = asObject(asObject(options.sparse_vectors, 'sparse_vectors')[name], 'sparse_vectors');
      const given = asObject(raw, 'sparse_vectors');
      const next = given.index === undefined || given.index === null ? stored : { ...stored, index: merged(stored.index, asObject(given.index, 'index')) };
      options.sparse_vectors = { ...asObject(options.sparse_vectors, 'sparse_vectors') };
      setOwn(options.sparse_vectors as Record<string, unknown>, name, next);
    }
    for (const [name, given] of Object.entries(namedGiven)) {
      // Echoed by GET as given at create, merged one level deeper (its hnsw_config field by field).
      const stored = asObject(asObject(options.vectors, 'vectors')[name], 'vectors');
      const next = {
        ...stored,
        ...given,
        ...(given.hnsw_config === undefined ? {} : { hnsw_config: merged(stored.hnsw_config, asObject(given.hnsw_config, 'hnsw_config')) }),
      };
      options.vectors = { ...asObject(options.vectors, 'vectors') };
      setOwn(options.vectors as Record<string, unknown>, name, next);
    }
    if (metadata !== undefined) options.metadata = merged(options.metadata, metadata);
    if (strictChange !== undefined) options.strict_mode_config = mergeStrictModeConfig(storedStrictModeConfig(options), strictChange);
    await collection.saveExtras({ ...extras, options } satisfies QdrantExtras);
    return ok(reply, true);
  });
}
