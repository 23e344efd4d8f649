/**
 * Operations: GET /metrics (Prometheus text), GET /readyz (readiness), POST /backup (a consistent
 * copy of the database file, streamed). Hidden from the OpenAPI document, which describes the
 * data API; docs/api.md describes these.
 */
import { randomUUID } from 'node:crypto';
import { open, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { KithError } from '../../core/errors.js';
import type { Database } from '../../db/database.js';
import { LOADING_RETRY_AFTER_S } from '../app-common.js';
import { ok } from '../envelope.js';
import type { AppMetrics } from '../metrics.js';

export interface OpsOptions {
  readonly db: Database;
  readonly metrics: AppMetrics;
  /** A cluster node: ready once every replica it holds serves and has caught up with its log (cluster-engine.ts). */
  readonly ready?: () => Promise<{ readonly ready: boolean; readonly behind: readonly string[] }>;
}

export const opsRoutes: FastifyPluginAsync<OpsOptions> = async (app, { db, metrics, ready }) => {
  // Ready once every collection is loaded (Database.openInBackground) until the app starts
  // closing; from then on it is not, so traffic drains elsewhere.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (closing) throw new KithError('ERR_SHUTTING_DOWN', 'the service is closing');
    if (db.loading) {
      reply.header('retry-after', String(LOADING_RETRY_AFTER_S));
      throw new KithError('ERR_LOADING', 'the service is loading its collections (its log tells the progress of each)');
    }
    if (ready !== undefined) {
      const replicas = await ready();
      if (!replicas.ready) {
        reply.header('retry-after', String(LOADING_RETRY_AFTER_S));
        throw new KithError('ERR_UNAVAILABLE', `replicas not caught up with their logs yet: ${replicas.behind.slice(0, 20).join(', ')}`);
      }
    }
    return ok(reply, { ready: true, collections: db.list().length });
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });

  app.post('/backup', { schema: { hide: true } }, async (_request, reply) => {
    // Beside the database, so the copy is on the same file system (and the same free space the
    // operator watches), under a name no other backup or database can have.
    const tempPath = join(dirname(db.path), `.${basename(db.path)}.backup-${randomUUID()}`);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      await db.backup(tempPath);
      handle = await open(tempPath, 'r');
    } catch (error) {
      await rm(tempPath, { force: true });
      throw error;
    }
    // Unlinked as soon as it is open: the stream reads through the open descriptor, and nothing is
    // left behind however the download ends (finished, aborted by the client, or the process killed).
    let size: number;
    try {
      await unlink(tempPath);
      size = (await handle.stat()).size;
    } catch (error) {
      await handle.close();
      throw error;
    }
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    return reply
      .type('application/octet-stream')
      .header('content-length', size)
      .header('content-disposition', `attachment; filename="kith-backup-${stamp}.db"`)
      .send(handle.createReadStream());
  });
};
