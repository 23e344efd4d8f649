/** GET /aliases, POST /aliases, GET /collections/{name}/aliases (db/aliases.ts). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Database } from '../../db/database.js';
import { ok } from '../envelope.js';
import { AliasList, ChangeAliasesBody, ChangeAliasesResult } from '../schemas/aliases.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';

export const aliasRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.get(
    '/aliases',
    {
      schema: { summary: 'List aliases, sorted by alias', tags: ['aliases'], response: { 200: okEnvelope(AliasList) } },
    },
    async (_request, reply) => ok(reply, db.aliases()),
  );

  app.post(
    '/aliases',
    {
      schema: {
        summary: 'Create, delete and rename aliases: the actions in order, all or nothing',
        tags: ['aliases'],
        body: ChangeAliasesBody,
        response: { 200: okEnvelope(ChangeAliasesResult), ...errorResponses(400, 404, 409, 500) },
      },
    },
    async (request, reply) => {
      await db.changeAliases(request.body.actions);
      return ok(reply, { operation: 'completed' as const, aliases: db.aliases() });
    },
  );

  app.get(
    '/collections/:name/aliases',
    {
      schema: {
        summary: "A collection's aliases",
        tags: ['aliases'],
        params: CollectionNameParams,
        response: { 200: okEnvelope(AliasList), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const name = request.params.name;
      return ok(
        reply,
        db.aliasesOf(name).map((alias) => ({ alias, collection: name })),
      );
    },
  );
};
