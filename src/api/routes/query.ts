/**
 * POST /collections/{name}/points/query: a multi-stage query (search/stage-input.ts), prefetches
 * fused, re-scored by a query (a vector, a point, examples) or by a formula. One node's route: a
 * cluster node refuses it (routes/cluster-single-node.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validateCollectionName } from '../../segment/collection-config.js';
import type { Database } from '../../db/database.js';
import { okJson, sendJson } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { ScoredPointSchema } from '../schemas/points.js';
import { QueryStagesBody } from '../schemas/query.js';
import { scoredPointsJson } from '../search-json.js';
import type { StagesInput } from '../../search/stage-input.js';

export const queryRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.post(
    '/collections/:name/points/query',
    {
      schema: {
        summary: 'A search by a vector, a point or examples, over prefetches fused (RRF, DBSF) or re-scored (by a query or a formula), nested',
        tags: ['points'],
        params: CollectionNameParams,
        body: QueryStagesBody,
        response: { 200: okEnvelope(Type.Array(ScoredPointSchema)), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const hits = await db.collection(request.params.name).queryStages(request.body as StagesInput);
      return sendJson(reply, okJson(reply, await scoredPointsJson(hits)));
    },
  );
};
