/**
 * Qdrant's collection snapshots on the Qdrant port (db/snapshots.ts; docs/qdrant.md,
 * "Snapshots"): POST/GET /collections/{name}/snapshots, GET/DELETE …/snapshots/{snapshot_name},
 * POST …/snapshots/upload (multipart/form-data field `snapshot`) and PUT …/snapshots/recover
 * (`{location, checksum?}`, a file of the snapshot directory: kith downloads nothing). `wait` and
 * `priority` are accepted; every call answers once done.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isKithError } from '../../core/errors.js';
import type { Database } from '../../db/database.js';
import { type SnapshotFiles, SnapshotLocationForbidden } from '../../db/snapshots.js';
import { ok } from '../envelope.js';
import { recoverFromLocation, recoverFromUpload, registerUploadParsers } from '../snapshot-upload.js';
import { asObject, collectionNotFound, formatError, optionalBoolean, QdrantHttpError } from './errors.js';

const PRIORITIES = new Set(['no_sync', 'snapshot', 'replica']);

type Params = { name: string; snapshot: string };

/** kith's errors in Qdrant's words: its 404s, 403 for a location outside the snapshot directory, "Bad request" for the rest. */
function inQdrantTerms(error: unknown, name: string): unknown {
  if (error instanceof SnapshotLocationForbidden) return new QdrantHttpError(403, `Forbidden: ${error.message}`);
  if (!isKithError(error)) return error;
  if (error.code === 'ERR_COLLECTION_NOT_FOUND') return collectionNotFound(name);
  if (error.code === 'ERR_SNAPSHOT_NOT_FOUND') return new QdrantHttpError(404, `Not found: ${error.message}`);
  if (error.code === 'ERR_BAD_INPUT') return new QdrantHttpError(400, `Bad request: ${error.message}`);
  return error;
}

function queryOf(raw: unknown): { checksum?: string } {
  const query = asObject(raw, 'query');
  if (query.wait !== undefined && query.wait !== 'true' && query.wait !== 'false') throw formatError('wait', 'expected true or false');
  if (query.priority !== undefined && !PRIORITIES.has(String(query.priority))) {
    throw formatError('priority', `expected one of ${[...PRIORITIES].join(', ')}`);
  }
  return typeof query.checksum === 'string' ? { checksum: query.checksum } : {};
}

/** A handler whose errors are answered in Qdrant's terms. */
function mapped(handler: (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => Promise<unknown>) {
  return async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply): Promise<unknown> => {
    try {
      return await handler(request, reply);
    } catch (error) {
      throw inQdrantTerms(error, request.params.name);
    }
  };
}

export async function qdrantSnapshotRoutes(app: FastifyInstance, { db, files }: { db: Database; files: SnapshotFiles }): Promise<void> {
  registerUploadParsers(app, ['multipart/form-data']);

  app.post<{ Params: Params }>(
    '/collections/:name/snapshots',
    mapped(async (request, reply) => {
      queryOf(request.query);
      return ok(reply, await files.create(db, request.params.name));
    }),
  );

  app.get<{ Params: Params }>(
    '/collections/:name/snapshots',
    mapped(async (request, reply) => ok(reply, await files.list(db, request.params.name))),
  );

  app.get<{ Params: Params }>(
    '/collections/:name/snapshots/:snapshot',
    mapped(async (request, reply) => {
      const { stream, size } = await files.open(db, request.params.name, request.params.snapshot);
      return reply.type('application/octet-stream').header('content-length', size).send(stream);
    }),
  );

  app.delete<{ Params: Params }>(
    '/collections/:name/snapshots/:snapshot',
    mapped(async (request, reply) => {
      queryOf(request.query);
      await files.delete(db, request.params.name, request.params.snapshot);
      return ok(reply, true);
    }),
  );

  app.post<{ Params: Params }>(
    '/collections/:name/snapshots/upload',
    mapped(async (request, reply) => {
      const { checksum } = queryOf(request.query);
      await recoverFromUpload(files, db, request.params.name, request, checksum);
      return ok(reply, true);
    }),
  );

  app.put<{ Params: Params }>(
    '/collections/:name/snapshots/recover',
    mapped(async (request, reply) => {
      queryOf(request.query);
      const body = asObject(request.body, 'body');
      if (typeof body.location !== 'string' || body.location === '') throw formatError('location', 'expected a file:// URL');
      if (body.priority !== undefined && body.priority !== null && !PRIORITIES.has(String(body.priority))) {
        throw formatError('priority', `expected one of ${[...PRIORITIES].join(', ')}`);
      }
      if (body.checksum !== undefined && body.checksum !== null && typeof body.checksum !== 'string') throw formatError('checksum', 'expected a string');
      optionalBoolean(body.wait === 'true' ? true : body.wait === 'false' ? false : body.wait, 'wait', true);
      await recoverFromLocation(files, db, request.params.name, body.location, (body.checksum as string | null | undefined) ?? undefined);
      return ok(reply, true);
    }),
  );
}
