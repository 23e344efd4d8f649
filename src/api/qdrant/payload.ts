/**
 * Payload operations on the Qdrant port: set (POST …/points/payload, merges top-level keys),
 * overwrite (PUT …/points/payload), delete keys (POST …/points/payload/delete) and clear (POST
 * …/points/payload/clear). Each rewrites the selected points through kith's upsert path with their
 * stored vectors: all-or-nothing and durable before the reply. Listed ids must all exist (404
 * otherwise, nothing changed).
 */
import type { FastifyInstance } from 'fastify';
import type { Payload } from '../../collection/point-table.js';
import { describeJson } from '../../core/point-id.js';
import type { Database } from '../../db/database.js';
import { ok } from '../envelope.js';
import { collectionOf } from './collections.js';
import { PAYLOAD_SELECTOR_LIMITS, parsePayloadSelector, selectPayload } from '../../payload/payload-selector.js';
import { asObject, formatError, notSupported, validationError } from './errors.js';
import { pointsSelector } from './points.js';
import { updateResult } from './shape.js';

type NameParams = { Params: { name: string } };

function newPayload(body: Record<string, unknown>): Payload {
  if (body.key !== undefined && body.key !== null) throw notSupported('key', 'setting a payload at a nested `key`');
  const payload = body.payload;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw formatError('payload', `expected an object, got ${describeJson(payload)}`);
  return payload as Payload;
}

export async function qdrantPayloadRoutes(app: FastifyInstance, { db }: { db: Database }): Promise<void> {
  app.post<NameParams>('/collections/:name/points/payload', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const body = asObject(request.body, 'body');
    const payload = newPayload(body);
    await collection.updatePayloads(await pointsSelector(body), (current) => ({ ...current, ...payload }));
    return ok(reply, updateResult());
  });

  app.put<NameParams>('/collections/:name/points/payload', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const body = asObject(request.body, 'body');
    const payload = newPayload(body);
    await collection.updatePayloads(await pointsSelector(body), () => payload);
    return ok(reply, updateResult());
  });

  app.post<NameParams>('/collections/:name/points/payload/delete', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const body = asObject(request.body, 'body');
    const keys = body.keys;
    if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) throw formatError('keys', `expected an array of payload keys, got ${describeJson(keys)}`);
    // Each key is removed from every selected point: as many as a payload selector may name.
    if (keys.length > PAYLOAD_SELECTOR_LIMITS.patterns) throw validationError('keys', `${keys.length} keys; the limit is ${PAYLOAD_SELECTOR_LIMITS.patterns}`);
    // Removing paths is keeping all but them: one pass per payload over the keys grouped once.
    const without = parsePayloadSelector({ exclude: keys }, 'keys', true);
    const selector = await pointsSelector(body);
    await collection.updatePayloads(selector, (current) => selectPayload(current, without) as Payload);
    return ok(reply, updateResult());
  });

  app.post<NameParams>('/collections/:name/points/payload/clear', async (request, reply) => {
    const collection = collectionOf(db, request.params.name);
    const body = asObject(request.body, 'body');
    await collection.updatePayloads(await pointsSelector(body), () => ({}));
    return ok(reply, updateResult());
  });
}

