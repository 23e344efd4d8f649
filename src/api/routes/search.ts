/** POST /collections/{name}/points/search. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validateCollectionName } from '../../collection/collection-config.js';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { ok } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { ScoredPointSchema, SearchBody, SearchExplainSchema } from '../schemas/points.js';

export const searchRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.post(
    '/collections/:name/points/search',
    {
      schema: {
        summary: 'Nearest neighbours of a vector, optionally filtered by payload',
        tags: ['points'],
        params: CollectionNameParams,
        body: SearchBody,
        response: {
          200: okEnvelope(Type.Array(ScoredPointSchema), { explain: Type.Optional(SearchExplainSchema) }),
          ...errorResponses(400, 404, 500),
        },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const filter = parseFilter(request.body.filter, 'filter');
      const collection = db.collection(request.params.name);
      const body = request.body;
      const { points, explain } = collection.searchExplained({ ...body, filter });
      return body.params?.explain === true ? { ...ok(reply, points), explain } : ok(reply, points);
    },
  );
};
