/**
 * The Qdrant port of a cluster node: the store of its routes (store.ts) over the cluster's engine
 * (cluster/cluster-engine.ts). Writes go through the shard logs, reads fan out to one serving
 * replica per shard, as on kith's port (docs/cluster.md).
 *
 * - The routes hand parsed inputs (filters, payload selectors); the shards' replicas take JSON,
 *   so they are written back as JSON (payload/filter-json.ts) and each replica parses them again.
 * - A query by a point's id or a recommendation reads its examples' stored vectors from their
 *   shards first (one retrieve, its ids counted against the request's budget before it runs), then
 *   resolves the query as one node does (search/query-verbs.ts) into a plain search.
 * - The port's extras (create options, declared payload fields) live in the catalogue entry's
 *   annotations, so every node shows them (a node sees another's change within a second).
 * - A declared field's `points` counts the points whose payload has the key with a value that is
 *   not empty, or null: a key holding `[]` is not counted here (one node counts every point that
 *   has the key).
 */
import { notSupported } from './errors.js';
import { prepareQuery } from '../../search/vector-input.js';
import type { ClusterEngine, ReadConsistency } from '../../cluster/cluster-engine.js';
import { EVENTUAL } from '../../cluster/cluster-engine.js';
import { childPath } from '../../core/field-path.js';
import { normalizePointId, type PointId } from '../../core/point-id.js';
import { filterToJson } from '../../payload/filter-json.js';
import { payloadSelectorToJson, toPayloadSelector } from '../../payload/payload-selector.js';
import { parseCollectionConfig } from '../../segment/collection-config.js';
import { type SearchInput, searchShape } from '../../search/collection-search.js';
import type { SearchRequest } from '../../search/embedded-input.js';
import { type QuerySource, resolveQuery } from '../../search/query-verbs.js';
import { addSearch } from '../../search/request-cost.js';
import { QDRANT_EXTRAS, type QdrantCollection, type QdrantStore } from './store.js';

/** A checked search as the JSON body a replica takes (docs/api.md). */
function searchBody(search: SearchInput): SearchRequest {
  const { filter, with_payload, ...rest } = search;
  return {
    ...rest,
    ...(filter === undefined ? {} : { filter: filterToJson(filter) }),
    with_payload: payloadSelectorToJson(toPayloadSelector(with_payload, 'with_payload', true)) as SearchRequest['with_payload'],
  };
}

export function clusterStore(engine: ClusterEngine): QdrantStore {
  return {
    loading: false,
    list: async () => (await engine.list()).map((c) => c.name),
    create: async (config, extras, sharding) => {
      await engine.createCollection({
        config,
        ...(sharding.shard_number === undefined ? {} : { shardNumber: sharding.shard_number }),
        ...(sharding.replication_factor === undefined ? {} : { replicationFactor: sharding.replication_factor }),
      });
      await engine.node.annotate(config.name, QDRANT_EXTRAS, extras);
    },
    drop: (name) => engine.dropCollection(name),
    collection: async (name, read): Promise<QdrantCollection> => {
      const entry = await engine.node.collection(name);
      const config = parseCollectionConfig(entry.config);
      const consistency: ReadConsistency = read === 'strong' ? { level: 'strong' } : EVENTUAL;
      const retrieve: QdrantCollection['retrieve'] = (ids, options) =>
        engine.retrieve(name, { ids, with_payload: payloadSelectorToJson(options.with_payload), with_vector: options.with_vector }, consistency);
      return {
        name,
        facts: async () => ({
          vector_size: config.vectorSize,
          distance: config.distance,
          hnsw: config.hnsw,
          parameters: { m: config.parameters.m, ef_construction: config.parameters.efConstruction },
          quantization: config.quantization,
          ...(config.vectorName === '' ? {} : { vector_name: config.vectorName }),
          points_count: await engine.count(name, undefined, consistency),
          sharding: { shard_number: entry.shardNumber, replication_factor: entry.replicationFactor },
        }),
        extras: () => entry.annotations?.[QDRANT_EXTRAS],
        saveExtras: (extras) => engine.node.annotate(name, QDRANT_EXTRAS, extras),
        pointsWithValues: (fields) => Promise.all(fields.map((key) => engine.count(name, { must_not: [{ is_empty: { key } }] }, consistency))),
        upsert: async (points, options = {}) => {
          await engine.upsert(name, points as Parameters<ClusterEngine['upsert']>[1], {
            ...(options.mode === undefined ? {} : { mode: options.mode }),
            ...(options.condition === undefined ? {} : { condition: filterToJson(options.condition) }),
          });
        },
        updateVectors: async (points, options = {}) => {
          // Checked by the node as each replica will check them (prepareVectors).
          await engine.updateVectors(
            name,
            points as Parameters<ClusterEngine['updateVectors']>[1],
            options.condition === undefined ? {} : { condition: filterToJson(options.condition) },
          );
        },
        retrieve,
        findPoint: async (id) => {
          const [found] = await engine.retrieve(name, { ids: [id], with_payload: true, with_vector: true }, consistency);
          return found === undefined ? undefined : { id: found.id, version: found.version, payload: found.payload ?? {}, vector: found.vector ?? [] };
        },
        deleteIds: async (ids) => {
          await engine.deleteIds(name, ids);
        },
        deleteByFilter: async (filter) => {
          await engine.deleteByFilter(name, filterToJson(filter));
        },
        scroll: (request) => {
          if (request.order_by !== undefined) throw notSupported('order_by', 'ordering by a payload value on a cluster node', true);
          return engine.scroll(
            name,
            {
              limit: request.limit,
              ...(request.offset === undefined ? {} : { offset: request.offset }),
              ...(request.from === undefined ? {} : { cursor: request.from }),
              ...(request.filter === undefined ? {} : { filter: filterToJson(request.filter) }),
              with_payload: payloadSelectorToJson(request.with_payload),
              with_vector: request.with_vector,
            },
            consistency,
          );
        },
        count: (filter) => engine.count(name, filter === undefined ? undefined : filterToJson(filter), consistency),
        queryChecked: async (queries, { cost, paths }) => {
          // The stored vectors the queries stand on: a point query's point, a recommendation's examples given by id.
          const ids = new Set<PointId>();
          queries.forEach((query, i) => {
            const at = paths[i] ?? childPath('searches', i);
            // Each shard would score its own points by the examples: the engine's search by examples is one node's for now.
            if (query.kind === 'examples') throw notSupported(at, 'searches by examples (best_score, sum_scores, discover, context) on a cluster node', true);
            const using = (query.search as { readonly using?: unknown }).using;
            if (query.kind !== 'vector' && using !== undefined && using !== null)
              throw notSupported(at, 'a query by a stored point or examples of a named or sparse vector (`using`) on a cluster node', true);
            if (query.kind === 'point') ids.add(normalizePointId(query.search.point, childPath(at, 'query')));
            if (query.kind === 'recommend')
              for (const example of [...query.search.positive, ...(query.search.negative ?? [])])
                if (typeof example === 'string' || typeof example === 'number') ids.add(normalizePointId(example, childPath(at, 'query')));
          });
          cost.add('ids', ids.size, paths[0] ?? '');
          const stored = new Map<PointId, number[]>();
          if (ids.size > 0)
            for (const record of await engine.retrieve(name, { ids: [...ids], with_payload: false, with_vector: true }, consistency))
              stored.set(record.id, record.vector ?? []);
          const source: QuerySource = {
            name,
            vectorSize: config.vectorSize,
            vectorOf: (id) => {
              const vector = stored.get(id);
              return vector === undefined ? undefined : Float32Array.from(vector);
            },
            hasPoint: (id) => stored.has(id),
            prepare: (vector, path) => prepareQuery(vector, config.vectorSize, config.distance, path),
            sumOfVectors: async (of) => {
              const sum = new Float64Array(config.vectorSize);
              for (const id of of) {
                const vector = stored.get(id) ?? [];
                for (let j = 0; j < vector.length; j++) sum[j] = (sum[j] as number) + (vector[j] as number);
              }
              return sum;
            },
          };
          const searches: SearchInput[] = [];
          for (const [i, query] of queries.entries()) searches.push(await resolveQuery(source, query, paths[i] ?? childPath('searches', i), cost));
          // Every search's cost counted, as one node counts it, before any runs.
          for (const [i, search] of searches.entries()) addSearch(cost, searchShape(search, config.parameters.k, config.vectorSize), paths[i] ?? '');
          const answers = [];
          for (const search of searches) answers.push((await engine.search(name, searchBody(search), consistency)).points);
          return answers;
        },
        changePayloads: async (selection, operation) => {
          await engine.changePayloads(name, 'points' in selection ? { points: selection.points } : { filter: filterToJson(selection.filter) }, operation);
        },
      };
    },
  };
}
