/**
 * The service entry point: flags → open the database file → listen → load every collection.
 * The listeners open at once and answer their probes while the collections load in slices
 * (Database.openInBackground): /healthz 200, /readyz 503 until every collection is loaded, and
 * collection requests 503 ERR_LOADING meanwhile; the log tells each collection's progress. A
 * collection that fails to load stops the service (exit 1): it never serves part of the data.
 * SIGINT/SIGTERM: stop accepting, finish requests in flight, make everything durable, close the
 * file, exit 0, all within -shutdown-timeout (else exit 1; acknowledged writes are durable anyway).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from './api/app.js';
import { exposureWarning } from './api/listen-exposure.js';
import { buildQdrantApp } from './api/qdrant/app.js';
import { FlagError, parseFlags, USAGE } from './cli/flags.js';
import { startClusterNode } from './cluster/cluster-start.js';
import { Database, type LoadEvent } from './db/database.js';
import { SnapshotFiles } from './db/snapshots.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof parseFlags>;
  try {
    config = parseFlags(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    process.stderr.write(`kith: ${error.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (config === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }

  const started = performance.now();
  // How long the event loop is held at most while the service listens and the collections load
  // (their slices, the snapshot's decode, the graph's housekeeping), that is the longest a probe
  // waits: the log's "database loaded" line reports it.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  // Problems that fail no request (a graph snapshot not used, or not written) and the load's
  // progress are logged, never dropped; those raised before the logger exists wait for it.
  let logger: FastifyBaseLogger | undefined;
  const early: ((log: FastifyBaseLogger) => void)[] = [];
  const toLog = (write: (log: FastifyBaseLogger) => void): void => {
    if (logger === undefined) early.push(write);
    else write(logger);
  };
  const onWarning = (message: string, error?: unknown): void => toLog((log) => log.warn({ err: error }, message));
  // A cluster node (docs/cluster.md) opens its file before it listens: it must know its replicas to join.
  const cluster =
    config.cluster === undefined
      ? undefined
      : await startClusterNode({
          ...config.cluster,
          dbPath: config.dbPath,
          threads: config.threads,
          ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
          warn: onWarning,
          info: (message) => toLog((log) => log.info(message)),
        });
  const db =
    cluster?.engine.node.db ??
    Database.openInBackground(config.dbPath, { threads: config.threads, onWarning, onLoad: (event) => toLog((log) => logLoad(log, event)) });
  // One place for both listeners' snapshots; a crash's leftovers (hidden temporaries) go first.
  const snapshots = new SnapshotFiles(config.snapshotDir, Math.round(config.maxSnapshotMb * 1048576));
  const swept = await snapshots.sweep();
  if (swept > 0) toLog((log) => log.info({ dir: config.snapshotDir, files: swept }, 'removed unfinished snapshot files'));
  const app = await buildApp({
    db,
    snapshots,
    ...(cluster === undefined ? {} : { cluster: cluster.engine }),
    maxBodyMb: config.maxBodyMb,
    apiKey: config.apiKey,
    logger: { level: process.env.KITH_LOG_LEVEL ?? 'info' },
  });
  logger = app.log;
  // The Qdrant-dialect listener (-qdrant-port): same database, its own routes, logging through kith's logger.
  const qdrantApp =
    config.qdrantPort === undefined
      ? undefined
      : await buildQdrantApp({
          db,
          snapshots,
          ...(cluster === undefined ? {} : { cluster: cluster.engine }),
          maxBodyMb: config.maxBodyMb,
          apiKey: config.apiKey,
          logger: app.log.child({ listener: 'qdrant' }),
        });
  for (const write of early.splice(0)) write(app.log);

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down');
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting (acknowledged writes are already durable)');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    (async () => {
      await Promise.all([app.close(), qdrantApp?.close()]);
      if (cluster === undefined) await db.close();
      else await cluster.stop();
      app.log.info('stopped');
      process.exit(0);
    })().catch((error: unknown) => {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  await app.listen({ port: config.port, host: config.host });
  if (qdrantApp !== undefined) {
    const address = await qdrantApp.listen({ port: config.qdrantPort, host: config.host });
    app.log.info({ address }, `Qdrant API listening at ${address}`);
  }
  loopDelay.enable();
  const exposed = exposureWarning(config.host, config.apiKey);
  if (exposed !== undefined) {
    app.log.warn({ host: config.host }, exposed);
    // Also for a person at the terminal, whatever the log level.
    process.stderr.write(`kith: warning: ${exposed}\n`);
  }

  try {
    await db.loaded;
  } catch (error) {
    if (stopping) return;
    app.log.error({ err: error }, 'a collection failed to load; stopping (the service never serves part of the database)');
    process.stderr.write(`kith: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  loopDelay.disable();
  app.log.info(
    {
      db: config.dbPath,
      collections: db.list().length,
      loadMs: Math.round(performance.now() - started),
      maxEventLoopDelayMs: Math.round(loopDelay.max / 1e6),
    },
    'database loaded',
  );
}

function logLoad(log: FastifyBaseLogger, event: LoadEvent): void {
  const ms = 'ms' in event ? Math.round(event.ms) : undefined;
  switch (event.kind) {
    case 'start':
      log.info({ collection: event.collection, index: event.index }, 'collection loading');
      return;
    case 'progress':
      log.info({ collection: event.collection, ...event.progress, ms }, 'collection load progress');
      return;
    case 'done': {
      const { lastVersion: _version, ...report } = event.report;
      log.info({ collection: event.collection, ...report, ms }, 'collection loaded');
      return;
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`kith: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
