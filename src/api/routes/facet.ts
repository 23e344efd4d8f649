/** POST /collections/{name}/facet: value counts of a payload key (search/facet.ts). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { validateCollectionName } from '../../segment/collection-config.js';
import { ok } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { FacetBody, FacetResult } from '../schemas/facet.js';

export const facetRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.post(
    '/collections/:name/facet',
    {
      schema: {
        summary: 'How many matching points hold each value of a payload key (the most frequent first), counted exactly',
        tags: ['points'],
        params: CollectionNameParams,
        body: FacetBody,
        response: { 200: okEnvelope(FacetResult), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { key, filter, limit } = request.body;
      const parsed = filter === undefined || filter === null ? undefined : parseFilter(filter, 'filter');
      return ok(reply, await db.collection(request.params.name).facet({ key, ...(parsed === undefined ? {} : { filter: parsed }), limit }));
    },
  );
};
