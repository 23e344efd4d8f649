/**
 * GET /collections/{name}/text-indexes, PUT/DELETE /collections/{name}/text-indexes/{field}: the
 * text indexes a collection declares (Collection.declareTextIndex). A declaration is the
 * collection's, so it applies to filters on both ports; the Qdrant port's `PUT …/index` with a
 * text schema makes the same one.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Database } from '../../db/database.js';
import { ok } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { TextIndexBody, TextIndexList, TextIndexParams, TextIndexResult } from '../schemas/text-indexes.js';

export const textIndexRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.get(
    '/collections/:name/text-indexes',
    {
      schema: {
        summary: 'The text indexes the collection declares, by field',
        tags: ['collections'],
        params: CollectionNameParams,
        response: { 200: okEnvelope(TextIndexList), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => ok(reply, db.collection(request.params.name).textIndexSchemas()),
  );

  app.put(
    '/collections/:name/text-indexes/:field',
    {
      schema: {
        summary: "Declare (or replace) a field's text index",
        tags: ['collections'],
        params: TextIndexParams,
        body: TextIndexBody,
        response: { 200: okEnvelope(TextIndexResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      // Stored as given, with Qdrant's `type`, so both ports read one form.
      await db.collection(request.params.name).declareTextIndex(request.params.field, { ...request.body, type: 'text' }, '');
      return ok(reply, { field: request.params.field, operation: 'completed' as const });
    },
  );

  app.delete(
    '/collections/:name/text-indexes/:field',
    {
      schema: {
        summary: "Remove a field's text index (its text conditions match substrings again)",
        tags: ['collections'],
        params: TextIndexParams,
        response: { 200: okEnvelope(TextIndexResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      await db.collection(request.params.name).declareTextIndex(request.params.field, undefined);
      return ok(reply, { field: request.params.field, operation: 'completed' as const });
    },
  );
};
