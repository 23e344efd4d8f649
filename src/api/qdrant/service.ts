/**
 * GET / (Qdrant's bare `{title, version}`), GET /healthz, /livez, /readyz (plain text, as Qdrant
 * answers them: `healthz check passed` for the first two, `all shards are ready` for /readyz, or
 * 503 `some shards are not ready` while the database loads its collections, or, on a cluster node,
 * until every replica it holds has caught up with its log).
 */
import type { FastifyInstance } from 'fastify';
import { LOADING_RETRY_AFTER_S } from '../app-common.js';

/**
 * The Qdrant REST API version this port implements, as GET / reports it: the official client
 * warns unless major versions match and minors differ by at most one.
 */
export const QDRANT_API_VERSION = '1.18.0';

const PLAIN_TEXT = 'text/plain; charset=utf-8';

export async function qdrantServiceRoutes(app: FastifyInstance, { kithVersion, ready }: { kithVersion: string; ready: () => Promise<boolean> }): Promise<void> {
  app.get('/', async () => ({ title: 'qdrant - vector search engine (kith)', version: QDRANT_API_VERSION, kith_version: kithVersion }));
  for (const path of ['/healthz', '/livez']) {
    app.get(path, async (_request, reply) => reply.type(PLAIN_TEXT).send('healthz check passed'));
  }
  app.get('/readyz', async (_request, reply) => {
    if (await ready()) return reply.type(PLAIN_TEXT).send('all shards are ready');
    return reply.code(503).header('retry-after', String(LOADING_RETRY_AFTER_S)).type(PLAIN_TEXT).send('some shards are not ready');
  });
}
