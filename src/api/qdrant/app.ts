/**
 * The Qdrant-dialect HTTP application over an open Database: the same data as kith's own API,
 * with Qdrant 1.x shapes (docs/qdrant.md). `main.ts` listens on -qdrant-port; tests listen on a
 * random loopback port. Errors keep the shared envelope `{status: {error}, time}`, which is also
 * Qdrant's; Qdrant-only statuses (422, refusals of unsupported features) come from errors.ts.
 */
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { isKithError } from '../../core/errors.js';
import type { Database } from '../../db/database.js';
import { SERVICE_VERSION } from '../app.js';
import { registerCommon, serverOptions } from '../app-common.js';
import { errorBody } from '../envelope.js';
import { requireCostEntries } from '../route-costs.js';
import { qdrantCollectionRoutes } from './collections.js';
import { checkQueryParameters, QdrantHttpError } from './errors.js';
import { qdrantPayloadRoutes } from './payload.js';
import { qdrantPointRoutes } from './points.js';
import { qdrantSearchRoutes } from './search.js';
import { qdrantGroupRoutes } from './groups.js';
import { qdrantCollectionUpdateRoutes } from './collection-update.js';
import { qdrantMatrixRoutes } from './matrix.js';
import { qdrantServiceRoutes } from './service.js';
import type { ClusterEngine } from '../../cluster/cluster-engine.js';
import { clusterStore } from './cluster-store.js';
import { qdrantClusterRoutes } from './cluster-routes.js';
import { localAliases, localStore } from './store.js';
import { qdrantAliasRoutes } from './aliases.js';
import { qdrantFacetRoutes } from './facet.js';
import { qdrantBatchRoutes } from './batch.js';
import { qdrantSnapshotRoutes } from './snapshots.js';
import { type StrictModeOptions, strictModeHook } from './strict-mode.js';
import { defaultSnapshotFiles, type SnapshotFiles } from '../../db/snapshots.js';

export interface QdrantAppOptions {
  readonly db: Database;
  /** A cluster node (docs/cluster.md): the routes read and change the cluster's collections (cluster-store.ts), and Qdrant's cluster routes are served. */
  readonly cluster?: ClusterEngine;
  /** Request body limit in MiB (default 64). */
  readonly maxBodyMb?: number;
  /** When set, every request but the probes must carry this key (api/api-key.ts). */
  readonly apiKey?: string;
  /** Where collection snapshots live and the upload limit (db/snapshots.ts); default: beside the database file, 4096 MiB. */
  readonly snapshots?: SnapshotFiles;
  /** A logger to share (main.ts passes a child of kith's, so both listeners write one stream in order); off by default (tests). */
  readonly logger?: FastifyBaseLogger;
  /** Strict mode's rate limiters and memory reading (strict-mode.ts); tests pass their own. */
  readonly strictMode?: StrictModeOptions;
}

/** Qdrant's error envelope has no code: its clients parse `status.error` only. */
const DIALECT = { codes: false } as const;

export async function buildQdrantApp(options: QdrantAppOptions): Promise<FastifyInstance> {
  const bodyLimit = Math.round((options.maxBodyMb ?? 64) * 1048576);
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    ...serverOptions(bodyLimit, DIALECT),
  });
  // Before any route: a route without a cost entry stops the start (route-costs.ts).
  requireCostEntries(app, options.cluster === undefined ? ['qdrant'] : ['qdrant', 'qdrantCluster']);
  registerCommon(app, { bodyLimit, apiKey: options.apiKey, db: options.db, dialect: DIALECT });
  // The routes live in a child scope whose error handler answers Qdrant's own statuses and hands
  // every other error to the shared handler of the parent scope.
  const kithHandler = app.errorHandler;
  await app.register(async (scope) => {
    scope.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (error instanceof QdrantHttpError) {
        if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
        return reply.code(error.statusCode).type('application/json; charset=utf-8').send(errorBody(reply, error.message));
      }
      // A request over the cost bounds is what Qdrant calls a validation error: 422.
      if (isKithError(error) && error.code === 'ERR_OVER_LIMIT') {
        return reply
          .code(422)
          .type('application/json; charset=utf-8')
          .send(errorBody(reply, `Validation error in JSON body: ${error.message}`));
      }
      return kithHandler.call(app, error, request, reply);
    });
    scope.addHook('preHandler', async (request) => checkQueryParameters(request.query));
    const store = options.cluster === undefined ? localStore(options.db) : clusterStore(options.cluster);
    // After the query parameters' check, before any route's work (strict-mode.ts).
    scope.addHook('preHandler', strictModeHook(store, options.strictMode));
    const cluster = options.cluster;
    const ready = cluster === undefined ? async () => !options.db.loading : async () => (await cluster.ready()).ready;
    await scope.register(qdrantServiceRoutes, { kithVersion: SERVICE_VERSION, ready });
    if (cluster !== undefined) await scope.register(qdrantClusterRoutes, { engine: cluster, store });
    await scope.register(qdrantCollectionRoutes, { store });
    await scope.register(qdrantCollectionUpdateRoutes, { store });
    // Aliases are one node's for now: a cluster's catalogue has none (docs/cluster.md, "Not yet").
    if (cluster === undefined) await scope.register(qdrantAliasRoutes, { aliases: localAliases(options.db) });
    // Snapshots too: a cluster's collection is spread over nodes (docs/cluster.md, "Not yet").
    if (cluster === undefined) {
      await scope.register(qdrantSnapshotRoutes, { db: options.db, files: options.snapshots ?? defaultSnapshotFiles(options.db.path) });
    }
    await scope.register(qdrantPointRoutes, { store });
    await scope.register(qdrantSearchRoutes, { store });
    await scope.register(qdrantGroupRoutes, { store });
    await scope.register(qdrantMatrixRoutes, { store });
    await scope.register(qdrantPayloadRoutes, { store });
    await scope.register(qdrantFacetRoutes, { store });
    await scope.register(qdrantBatchRoutes, { store });
  });
  await app.ready();
  return app;
}
