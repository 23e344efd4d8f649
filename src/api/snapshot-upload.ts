/**
 * What both ports' snapshot routes share: the upload's body (multipart/form-data with a
 * `snapshot` field, as Qdrant's clients send it, or the file itself as application/octet-stream),
 * streamed to a file of the snapshot directory within its limit, and the recovery from it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badInput, KithError } from '../core/errors.js';
import type { CollectionInfo } from '../collection/collection.js';
import type { Database } from '../db/database.js';
import { checkChecksumShape, type SnapshotFiles } from '../db/snapshots.js';
import { validateCollectionName } from '../segment/collection-config.js';
import { multipartBoundary, multipartField } from './multipart.js';

/** The upload's field, as Qdrant names it. */
const FIELD = 'snapshot';

/**
 * In the snapshot routes' scope only: the body is handed to the route unread, as a stream (the
 * body limit does not apply to it; `SnapshotFiles.receive` bounds it by the snapshot limit).
 */
export function registerUploadParsers(app: FastifyInstance, types: readonly string[]): void {
  for (const type of types) app.addContentTypeParser(type, (_request, payload, done) => done(null, payload));
}

/** The upload's snapshot bytes as they arrive. */
function uploadSource(request: FastifyRequest, limit: number): AsyncIterable<Uint8Array> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit + 65536) {
    throw new KithError('ERR_BODY_TOO_LARGE', `the upload is ${declared} bytes, over the snapshot limit of ${limit} bytes (-max-snapshot-mb)`);
  }
  const body = request.body as AsyncIterable<Uint8Array> | undefined;
  if (body === undefined || body === null || typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !== 'function') {
    throw badInput('body', `expected the snapshot file: multipart/form-data with a "${FIELD}" field, or application/octet-stream`);
  }
  const contentType = request.headers['content-type'];
  if (contentType !== undefined && /^multipart\//i.test(contentType)) {
    const boundary = multipartBoundary(contentType);
    if (boundary === undefined) throw badInput('body', 'a multipart/form-data body needs a boundary parameter in its content type');
    return multipartField(body, boundary, FIELD);
  }
  return body;
}

/** Streams the upload to a temporary file, recovers collection `name` from it, removes the file. */
export async function recoverFromUpload(
  files: SnapshotFiles,
  db: Database,
  name: string,
  request: FastifyRequest,
  checksum: string | undefined,
): Promise<CollectionInfo> {
  // What can be refused before the upload is read.
  validateCollectionName(name);
  checkChecksumShape(checksum);
  const received = await files.receive(uploadSource(request, files.maxUploadBytes));
  try {
    return await files.recover(db, name, received.path, checksum, received.sha256);
  } finally {
    await files.discard(received);
  }
}

/** Recovers collection `name` from a file the `location` names (SnapshotFiles.resolveLocation). */
export async function recoverFromLocation(
  files: SnapshotFiles,
  db: Database,
  name: string,
  location: string,
  checksum: string | undefined,
): Promise<CollectionInfo> {
  return files.recover(db, name, await files.resolveLocation(location), checksum);
}
