/**
 * Collection snapshots on kith's port (db/snapshots.ts; docs/api.md, "Snapshots"): create, list,
 * download and delete a collection's snapshot files, and recover a collection from one (an upload,
 * or a file of the snapshot directory), replacing the collection of that name, all or nothing.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Database } from '../../db/database.js';
import type { SnapshotFiles } from '../../db/snapshots.js';
import { ok } from '../envelope.js';
import { CollectionInfoSchema } from '../schemas/collections.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { DeletedSnapshot, RecoverSnapshotBody, SnapshotInfoSchema, SnapshotParams, UploadSnapshotQuery } from '../schemas/snapshots.js';
import { recoverFromLocation, recoverFromUpload, registerUploadParsers } from '../snapshot-upload.js';

export const snapshotRoutes: FastifyPluginAsyncTypebox<{ db: Database; files: SnapshotFiles }> = async (app, { db, files }) => {
  registerUploadParsers(app, ['multipart/form-data', 'application/octet-stream']);
  const tags = ['snapshots'];

  app.post(
    '/collections/:name/snapshots',
    {
      schema: {
        summary: "Write a snapshot of the collection (its export stream, one commit's state) to a file of the snapshot directory",
        tags,
        params: CollectionNameParams,
        response: { 200: okEnvelope(SnapshotInfoSchema), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => ok(reply, await files.create(db, request.params.name)),
  );

  app.get(
    '/collections/:name/snapshots',
    {
      schema: {
        summary: "The collection's snapshots, oldest first",
        tags,
        params: CollectionNameParams,
        response: { 200: okEnvelope(Type.Array(SnapshotInfoSchema)), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => ok(reply, await files.list(db, request.params.name)),
  );

  app.get(
    '/collections/:name/snapshots/:snapshot',
    {
      schema: {
        summary: 'Download a snapshot file (application/octet-stream)',
        tags,
        params: SnapshotParams,
        response: { 200: Type.Unsafe({ type: 'string', format: 'binary', description: 'The snapshot file.' }), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const { stream, size } = await files.open(db, request.params.name, request.params.snapshot);
      return reply
        .type('application/octet-stream')
        .header('content-length', size)
        .header('content-disposition', `attachment; filename="${request.params.snapshot}"`)
        .send(stream);
    },
  );

  app.delete(
    '/collections/:name/snapshots/:snapshot',
    {
      schema: {
        summary: 'Delete a snapshot file',
        tags,
        params: SnapshotParams,
        response: { 200: okEnvelope(DeletedSnapshot), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      await files.delete(db, request.params.name, request.params.snapshot);
      return ok(reply, { snapshot: request.params.snapshot, operation: 'completed' as const });
    },
  );

  app.post(
    '/collections/:name/snapshots/upload',
    {
      schema: {
        summary:
          'Recover the collection from an uploaded snapshot (multipart/form-data field `snapshot`, or application/octet-stream), replacing one of that name, all or nothing',
        tags,
        params: CollectionNameParams,
        querystring: UploadSnapshotQuery,
        response: { 200: okEnvelope(CollectionInfoSchema), ...errorResponses(400, 409, 413, 415, 500) },
      },
    },
    async (request, reply) => ok(reply, await recoverFromUpload(files, db, request.params.name, request, request.query.checksum)),
  );

  app.put(
    '/collections/:name/snapshots/recover',
    {
      schema: {
        summary: 'Recover the collection from a snapshot file of the snapshot directory, replacing one of that name, all or nothing',
        tags,
        params: CollectionNameParams,
        body: RecoverSnapshotBody,
        response: { 200: okEnvelope(CollectionInfoSchema), ...errorResponses(400, 409, 500) },
      },
    },
    async (request, reply) => ok(reply, await recoverFromLocation(files, db, request.params.name, request.body.location, request.body.checksum ?? undefined)),
  );
};
