/**
 * The service entry point: flags → open the database (loading every collection) → listen.
 * SIGINT/SIGTERM: stop accepting, finish requests in flight, make everything durable, close the
 * file, exit 0, all within -shutdown-timeout (else exit 1; acknowledged writes are durable anyway).
 */
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from './api/app.js';
import { buildQdrantApp } from './api/qdrant/app.js';
import { FlagError, parseFlags, USAGE } from './cli/flags.js';
import { Database } from './db/database.js';

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
  // Problems that fail no request (a graph snapshot not used, or not written) are logged, never
  // dropped; those raised while loading wait for the logger.
  let logger: FastifyBaseLogger | undefined;
  const early: { message: string; error: unknown }[] = [];
  const onWarning = (message: string, error?: unknown): void => {
    if (logger === undefined) early.push({ message, error });
    else logger.warn({ err: error }, message);
  };
  const db = Database.open(config.dbPath, { onWarning, threads: config.threads });
  const app = await buildApp({
    db,
    maxBodyMb: config.maxBodyMb,
    apiKey: config.apiKey,
    logger: { level: process.env.KITH_LOG_LEVEL ?? 'info' },
  });
  logger = app.log;
  // The Qdrant-dialect listener (-qdrant-port): same database, its own routes, logging through kith's logger.
  const qdrantApp =
    config.qdrantPort === undefined
      ? undefined
      : await buildQdrantApp({ db, maxBodyMb: config.maxBodyMb, apiKey: config.apiKey, logger: app.log.child({ listener: 'qdrant' }) });
  for (const { message, error } of early) onWarning(message, error);
  app.log.info(
    { db: config.dbPath, collections: db.list().length, loadMs: Math.round(performance.now() - started) },
    'database loaded',
  );

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
      await db.close();
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
}

main().catch((error: unknown) => {
  process.stderr.write(`kith: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
