/**
 * The routes of one node's kith port that a cluster node does not serve yet: multi-stage queries
 * and the searches by stored points and examples (their examples would have to be read from the
 * shards that hold them before the fan-out). Registered so that a client gets a 400 saying so,
 * not a 404 that reads as a typo in its path.
 */
import type { FastifyPluginAsync } from 'fastify';
import { badInput } from '../../core/errors.js';
import { validateCollectionName } from '../../segment/collection-config.js';

/** Path under /collections/:name/points → what it does, in the refusal's words. */
export const SINGLE_NODE_SEARCHES: Readonly<Record<string, string>> = {
  query: 'multi-stage queries (prefetch, fusion, formula, point, recommend, discover, context)',
  recommend: 'recommendations',
  'recommend/batch': 'recommendations',
  discover: 'discovery and context searches',
};

export const clusterSingleNodeRoutes: FastifyPluginAsync = async (app) => {
  for (const [path, what] of Object.entries(SINGLE_NODE_SEARCHES)) {
    app.post<{ Params: { name: string } }>(`/collections/:name/points/${path}`, { schema: { hide: true } }, async (request) => {
      validateCollectionName(request.params.name);
      throw badInput('', `${what} are served by a single node only, not by a cluster node yet (docs/cluster.md)`);
    });
  }
};
