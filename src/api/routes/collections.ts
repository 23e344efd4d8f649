/** POST/GET /collections, GET/PATCH/DELETE /collections/{name}. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validateCollectionName } from '../../segment/collection-config.js';
import type { Database } from '../../db/database.js';
import { ok } from '../envelope.js';
import { CollectionInfoSchema, CreateCollectionBody, CreateCollectionResult, DropCollectionResult, UpdateCollectionBody } from '../schemas/collections.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';

export const collectionRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.post(
    '/collections',
    {
      schema: {
        summary: 'Create a collection',
        tags: ['collections'],
        body: CreateCollectionBody,
        response: { 200: okEnvelope(CreateCollectionResult), ...errorResponses(400, 409, 500) },
      },
    },
    async (request, reply) => {
      const info = await db.createCollection(request.body);
      return ok(reply, { ...info, operation: 'completed' as const });
    },
  );

  app.get(
    '/collections',
    {
      schema: {
        summary: 'List collections, sorted by name',
        tags: ['collections'],
        response: { 200: okEnvelope(Type.Array(CollectionInfoSchema)) },
      },
    },
    async (_request, reply) => ok(reply, db.list()),
  );

  app.get(
    '/collections/:name',
    {
      schema: {
        summary: 'Describe a collection',
        tags: ['collections'],
        params: CollectionNameParams,
        response: { 200: okEnvelope(CollectionInfoSchema), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      return ok(reply, db.collection(request.params.name).describe());
    },
  );

  app.delete(
    '/collections/:name',
    {
      schema: {
        summary: 'Drop a collection and all its points',
        tags: ['collections'],
        params: CollectionNameParams,
        response: { 200: okEnvelope(DropCollectionResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      await db.dropCollection(request.params.name);
      return ok(reply, { collection: request.params.name, operation: 'completed' as const });
    },
  );

  app.patch(
    '/collections/:name',
    {
      schema: {
        summary: "Change a collection's index parameters (m, ef_construction, ef_search, k, target_recall, hnsw); answered once rebuilt",
        tags: ['collections'],
        params: CollectionNameParams,
        body: UpdateCollectionBody,
        response: { 200: okEnvelope(CollectionInfoSchema), ...errorResponses(400, 404, 409, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { parameters, hnsw, named_vectors, sparse_vectors } = request.body;
      const info = await db.reconfigureCollection(request.params.name, {
        ...(parameters === undefined || parameters === null ? {} : { parameters }),
        ...(hnsw === undefined || hnsw === null ? {} : { hnsw }),
        ...(named_vectors === undefined || named_vectors === null ? {} : { named_vectors }),
        ...(sparse_vectors === undefined || sparse_vectors === null ? {} : { sparse_vectors }),
      });
      return ok(reply, info);
    },
  );
};
