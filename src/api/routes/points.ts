/** PUT /collections/{name}/points, PUT …/points/vectors, POST …/points/delete, GET …/points/{id}. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { validateCollectionName } from '../../segment/collection-config.js';
import { badInput } from '../../core/errors.js';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { ok } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import {
  DeletePointsBody,
  DeleteResult,
  PointParams,
  RecordSchema,
  UpdateVectorsBody,
  UpdateVectorsResult,
  UpsertBody,
  UpsertResult,
} from '../schemas/points.js';

export const pointRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.put(
    '/collections/:name/points',
    {
      schema: {
        summary: 'Upsert a batch of points (all-or-nothing, durable before the reply)',
        tags: ['points'],
        params: CollectionNameParams,
        body: UpsertBody,
        response: { 200: okEnvelope(UpsertResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const collection = db.collection(request.params.name);
      const { points, update_mode, update_filter } = request.body;
      const condition = update_filter === undefined || update_filter === null ? undefined : parseFilter(update_filter, 'update_filter');
      const { upserted } = await collection.upsert(points, {
        ...(update_mode === undefined ? {} : { mode: update_mode }),
        ...(condition === undefined ? {} : { condition }),
      });
      return ok(reply, { operation: 'completed' as const, upserted });
    },
  );

  app.put(
    '/collections/:name/points/vectors',
    {
      schema: {
        summary: "Replace existing points' vectors, keeping their payloads (all-or-nothing, durable before the reply)",
        tags: ['points'],
        params: CollectionNameParams,
        body: UpdateVectorsBody,
        response: { 200: okEnvelope(UpdateVectorsResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { points, update_filter } = request.body;
      const condition = update_filter === undefined || update_filter === null ? undefined : parseFilter(update_filter, 'update_filter');
      const { updated } = await db.collection(request.params.name).updateVectors(points, condition === undefined ? {} : { condition });
      return ok(reply, { operation: 'completed' as const, updated });
    },
  );

  app.post(
    '/collections/:name/points/delete',
    {
      schema: {
        summary: 'Delete points by id or by filter (durable before the reply)',
        tags: ['points'],
        params: CollectionNameParams,
        body: DeletePointsBody,
        response: { 200: okEnvelope(DeleteResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { points, filter } = request.body;
      const hasPoints = points !== undefined && points !== null;
      const hasFilter = filter !== undefined && filter !== null;
      if (hasPoints === hasFilter) throw badInput('body', 'give exactly one of `points` (ids) or `filter`');
      if (hasPoints) {
        // The collection normalises the ids (naming `points[i]` when one is bad), in slices.
        const { deleted } = await db.collection(request.params.name).deleteIds(points);
        return ok(reply, { operation: 'completed' as const, deleted });
      }
      const parsed = parseFilter(filter, 'filter') ?? { must: [], mustNot: [], should: [] };
      const { deleted } = await db.collection(request.params.name).deleteByFilter(parsed);
      return ok(reply, { operation: 'completed' as const, deleted });
    },
  );

  app.get(
    '/collections/:name/points/:id',
    {
      schema: {
        summary: 'Get one point by id',
        tags: ['points'],
        params: PointParams,
        response: { 200: okEnvelope(RecordSchema), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      return ok(reply, db.collection(request.params.name).getPoint(request.params.id));
    },
  );
};
