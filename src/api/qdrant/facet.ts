/**
 * POST /collections/{name}/facet on the Qdrant port: `{key, filter, limit, exact}` → `{hits:
 * [{value, count}]}`, counted by the engine (search/facet.ts), always exactly (`exact` is
 * accepted). Qdrant asks for a keyword, integer, uuid or bool index on the key first; kith indexes
 * payloads by itself and counts strings, whole numbers and booleans without one.
 */
import type { FastifyInstance } from 'fastify';
import { MAX_FACET_LIMIT } from '../../search/facet.js';
import { ok } from '../envelope.js';
import { requestCollection } from './collections.js';
import { asObject, notSupported, optionalBoolean, optionalInteger } from './errors.js';
import { parseQdrantFilter } from './filter.js';
import type { QdrantStore } from './store.js';

export async function qdrantFacetRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  app.post<{ Params: { name: string } }>('/collections/:name/facet', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const body = asObject(request.body, 'body');
    if (body.shard_key !== undefined && body.shard_key !== null) throw notSupported('shard_key', 'custom sharding');
    const filter = parseQdrantFilter(body.filter);
    const limit = optionalInteger(body.limit, 'limit', 10, 1, MAX_FACET_LIMIT);
    optionalBoolean(body.exact, 'exact', true);
    if (collection.facet === undefined) throw notSupported('', 'facets on a cluster node', true);
    const hits = await collection.facet({ key: body.key as string, ...(filter === undefined ? {} : { filter }), limit });
    return ok(reply, { hits });
  });
}
