/** POST /collections/{name}/points/search. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validateCollectionName } from '../../collection/collection-config.js';
import { badInput } from '../../core/errors.js';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { ok } from '../envelope.js';
import type { AppMetrics } from '../metrics.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { ScoredPointSchema, SearchBody, SearchExplainSchema } from '../schemas/points.js';

/**
 * Vector components one search may return: serialising them costs about 1.7 µs each (10,000 hits
 * × 128 components with with_vector took 2.2 s, all of it blocking), so the product is bounded.
 */
export const MAX_RETURNED_COMPONENTS = 524288;

function checkVectorVolume(limit: number, vectorSize: number): void {
  if (limit * vectorSize > MAX_RETURNED_COMPONENTS) {
    throw badInput(
      'limit',
      `with with_vector, limit × vector_size is at most ${MAX_RETURNED_COMPONENTS}, got ${limit} × ${vectorSize}; lower the limit (at most ${Math.floor(MAX_RETURNED_COMPONENTS / vectorSize)}) or page with offset`,
    );
  }
}

export const searchRoutes: FastifyPluginAsyncTypebox<{ db: Database; metrics?: AppMetrics }> = async (app, { db, metrics }) => {
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
      if (body.with_vector === true) checkVectorVolume(body.limit ?? collection.describe().parameters.k, collection.describe().vector_size);
      const { points, explain } = collection.searchExplained({ ...body, filter });
      metrics?.countSearch(explain.strategy);
      return body.params?.explain === true ? { ...ok(reply, points), explain } : ok(reply, points);
    },
  );
};
