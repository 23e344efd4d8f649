/**
 * POST /collections/{name}/points/search/groups: a search grouped by a payload value
 * (search/groups.ts). One node's route: a cluster node does not serve it yet (docs/cluster.md).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validateCollectionName } from '../../segment/collection-config.js';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { okJson, sendJson } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { GroupSearchBody, PointGroupSchema } from '../schemas/points.js';
import { pointGroupsJson } from '../search-json.js';

export const groupRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.post(
    '/collections/:name/points/search/groups',
    {
      schema: {
        summary: 'Nearest neighbours grouped by a payload value: the best groups, each with its best hits',
        tags: ['points'],
        params: CollectionNameParams,
        body: GroupSearchBody,
        response: { 200: okEnvelope(Type.Array(PointGroupSchema)), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { group_by, group_size, limit, filter, ...rest } = request.body;
      // As for a search: the filter is judged before the collection is looked up.
      const parsed = filter === undefined || filter === null ? undefined : parseFilter(filter, 'filter');
      const search = { ...rest, ...(parsed === undefined ? {} : { filter: parsed }) };
      const groups = await db
        .collection(request.params.name)
        .searchGroups({ kind: 'vector', search }, { group_by, ...(group_size === undefined ? {} : { group_size }), ...(limit === undefined ? {} : { limit }) });
      return sendJson(reply, okJson(reply, await pointGroupsJson(groups)));
    },
  );
};
