/**
 * GET / (Qdrant's bare `{title, version}`), GET /healthz, /livez, /readyz (plain text, as Qdrant
 * answers them).
 */
import type { FastifyInstance } from 'fastify';

/**
 * The Qdrant REST API version this port implements, as GET / reports it: the official client
 * warns unless major versions match and minors differ by at most one.
 */
export const QDRANT_API_VERSION = '1.18.0';

export async function qdrantServiceRoutes(app: FastifyInstance, { kithVersion }: { kithVersion: string }): Promise<void> {
  app.get('/', async () => ({ title: 'qdrant - vector search engine (kith)', version: QDRANT_API_VERSION, kith_version: kithVersion }));
  for (const path of ['/healthz', '/livez', '/readyz']) {
    app.get(path, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(`${path.slice(1)} check passed`));
  }
}
