/** GET / (identity), GET /healthz, GET /openapi.json. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ok } from '../envelope.js';
import { okEnvelope } from '../schemas/common.js';

export const serviceRoutes: FastifyPluginAsyncTypebox<{ version: string }> = async (app, { version }) => {
  app.get(
    '/',
    {
      schema: {
        summary: 'Service name and version',
        tags: ['service'],
        response: { 200: okEnvelope(Type.Object({ title: Type.String(), version: Type.String() })) },
      },
    },
    async (_request, reply) => ok(reply, { title: 'kith', version }),
  );

  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the service answers and its database is open',
        tags: ['service'],
        response: { 200: okEnvelope(Type.Object({ healthy: Type.Boolean() })) },
      },
    },
    async (_request, reply) => ok(reply, { healthy: true }),
  );

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};
