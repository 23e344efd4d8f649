/**
 * Builds the HTTP application over an open Database. `main.ts` listens; tests call `inject()`.
 */
import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { ClusterEngine } from '../cluster/cluster-engine.js';
import { parseJson } from '../core/json-text.js';
import type { Database } from '../db/database.js';
import { registerCommon, serverOptions } from './app-common.js';
import { registerClusterMetrics } from './cluster-metrics.js';
import { registerMetrics } from './metrics.js';
import { requireCostEntries } from './route-costs.js';
import { aliasRoutes } from './routes/aliases.js';
import { facetRoutes } from './routes/facet.js';
import { clusterCollectionRoutes } from './routes/cluster-collections.js';
import { clusterPointRoutes } from './routes/cluster-points.js';
import { clusterReplicaRoutes, REPLICA_PREFIX } from './routes/cluster-replicas.js';
import { collectionRoutes } from './routes/collections.js';
import { textIndexRoutes } from './routes/text-indexes.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { opsRoutes } from './routes/ops.js';
import { localPayloadChange, payloadRoutes } from './routes/payload.js';
import { pointPageRoutes } from './routes/point-pages.js';
import { pointRoutes } from './routes/points.js';
import { searchRoutes } from './routes/search.js';
import { groupRoutes } from './routes/groups.js';
import { matrixRoutes } from './routes/matrix.js';
import { queryRoutes } from './routes/query.js';
import { exampleRoutes } from './routes/examples.js';
import { clusterSingleNodeRoutes } from './routes/cluster-single-node.js';
import { serviceRoutes } from './routes/service.js';
import { snapshotRoutes } from './routes/snapshots.js';
import { defaultSnapshotFiles, type SnapshotFiles } from '../db/snapshots.js';
import { ErrorEnvelope } from './schemas/common.js';
import { ConditionSchema, FilterSchema } from './schemas/filter.js';
import { validatorCompiler } from './validation.js';

export interface AppOptions {
  readonly db: Database;
  /** Request body limit in MiB (default 64). */
  readonly maxBodyMb?: number;
  /** When set, every request but the probes must carry this key (api/api-key.ts). */
  readonly apiKey?: string;
  /**
   * A cluster node (`kith serve -cluster-nats …`): the collection and point routes are the
   * cluster's (docs/cluster.md), `db` is the node's own file (its replicas), and peers read the
   * replicas under /cluster/local.
   */
  readonly cluster?: ClusterEngine;
  /** Where collection snapshots live and the upload limit (db/snapshots.ts); default: beside the database file, 4096 MiB. */
  readonly snapshots?: SnapshotFiles;
  /** Fastify logger setting; off by default (tests), main.ts turns it on. */
  readonly logger?: FastifyServerOptions['logger'];
}

export const SERVICE_VERSION: string = (parseJson(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** kith's error envelope carries the error's code (the contract), so clients never guess it from the status. */
const DIALECT = { codes: true } as const;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const bodyLimit = Math.round((options.maxBodyMb ?? 64) * 1048576);
  const app = Fastify({
    logger: options.logger ?? false,
    ...serverOptions(bodyLimit, DIALECT),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Before any route: a route without a cost entry stops the start (route-costs.ts).
  requireCostEntries(app, options.cluster === undefined ? ['kith'] : ['kith', 'cluster']);
  app.setValidatorCompiler(validatorCompiler);
  // Before the common hooks, so a request refused by one of them (the API key) is still timed.
  const metrics = registerMetrics(app, options.db);
  if (options.cluster !== undefined) registerClusterMetrics(metrics.registry, options.cluster);
  registerCommon(app, { bodyLimit, apiKey: options.apiKey, db: options.db, dialect: DIALECT });

  app.addSchema(ErrorEnvelope);
  app.addSchema(ConditionSchema);
  app.addSchema(FilterSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'kith',
        version: SERVICE_VERSION,
        description: 'Vector database: collections of points with payloads, exact and HNSW search, payload filters.',
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });

  await app.register(serviceRoutes, { version: SERVICE_VERSION });
  if (options.cluster === undefined) {
    await app.register(collectionRoutes, { db: options.db });
    await app.register(textIndexRoutes, { db: options.db });
    await app.register(aliasRoutes, { db: options.db });
    await app.register(facetRoutes, { db: options.db });
    await app.register(pointRoutes, { db: options.db });
    await app.register(pointPageRoutes, { db: options.db });
    await app.register(payloadRoutes, { change: localPayloadChange(options.db) });
    await app.register(searchRoutes, { db: options.db, metrics });
    await app.register(groupRoutes, { db: options.db });
    await app.register(matrixRoutes, { db: options.db });
    await app.register(queryRoutes, { db: options.db });
    await app.register(exampleRoutes, { db: options.db, metrics });
    await app.register(snapshotRoutes, { db: options.db, files: options.snapshots ?? defaultSnapshotFiles(options.db.path) });
  } else {
    await app.register(clusterCollectionRoutes, { engine: options.cluster, db: options.db });
    await app.register(clusterPointRoutes, { engine: options.cluster });
    await app.register(clusterSingleNodeRoutes);
    await app.register(clusterReplicaRoutes, { node: options.cluster.node, prefix: REPLICA_PREFIX });
  }
  await app.register(opsRoutes, {
    db: options.db,
    metrics,
    ...(options.cluster === undefined ? {} : { ready: () => (options.cluster as ClusterEngine).ready() }),
  });
  await app.register(dashboardRoutes);
  await app.ready();
  return app;
}
