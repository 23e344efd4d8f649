/**
 * Payload operations on the Qdrant port: set (POST …/points/payload, merges top-level keys, at a
 * nested `key` when given), overwrite (PUT …/points/payload), delete keys (POST
 * …/points/payload/delete) and clear (POST …/points/payload/clear). Each translates Qdrant's body
 * into the engine's operation (collection/payload-operations.ts), which rewrites the selected
 * points all-or-nothing and durably before the reply. Listed ids must all exist (404 otherwise,
 * nothing changed).
 */
import type { FastifyInstance } from 'fastify';
import type { PayloadOperation } from '../../collection/collection.js';
import { describeJson } from '../../core/point-id.js';
import { PAYLOAD_SELECTOR_LIMITS } from '../../payload/payload-selector.js';
import { ok } from '../envelope.js';
import { requestCollection } from './collections.js';
import { asObject, formatError, validationError } from './errors.js';
import { pointsSelector } from './points.js';
import { updateResult } from './shape.js';
import type { QdrantStore } from './store.js';

type NameParams = { Params: { name: string } };

export function newPayload(body: Record<string, unknown>): Record<string, unknown> {
  const payload = body.payload;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw formatError('payload', `expected an object, got ${describeJson(payload)}`);
  return payload as Record<string, unknown>;
}

export function setOperation(body: Record<string, unknown>): PayloadOperation {
  const key = body.key;
  if (key !== undefined && key !== null && typeof key !== 'string') throw formatError('key', `expected a payload path, got ${describeJson(key)}`);
  return { op: 'set', payload: newPayload(body), key: key ?? null };
}

export function deleteOperation(body: Record<string, unknown>): PayloadOperation {
  const keys = body.keys;
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string'))
    throw formatError('keys', `expected an array of payload keys, got ${describeJson(keys)}`);
  if (keys.length > PAYLOAD_SELECTOR_LIMITS.patterns) throw validationError('keys', `${keys.length} keys; the limit is ${PAYLOAD_SELECTOR_LIMITS.patterns}`);
  return { op: 'delete', keys: keys as string[] };
}

export async function qdrantPayloadRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  /** Qdrant's body → the engine's selection and operation → Qdrant's update result. */
  const route = (method: 'POST' | 'PUT', url: string, operation: (body: Record<string, unknown>) => PayloadOperation): void => {
    app.route<NameParams>({
      method,
      url: `/collections/:name/points/payload${url}`,
      handler: async (request, reply) => {
        const collection = await requestCollection(store, request);
        const body = asObject(request.body, 'body');
        const chosen = operation(body);
        const selector = await pointsSelector(body);
        await collection.changePayloads(Array.isArray(selector) ? { points: selector } : { filter: selector }, chosen);
        return ok(reply, updateResult());
      },
    });
  };
  route('POST', '', setOperation);
  route('PUT', '', (body) => ({ op: 'overwrite', payload: newPayload(body) }));
  route('POST', '/delete', deleteOperation);
  route('POST', '/clear', () => ({ op: 'clear' }));
}
