/**
 * POST /collections/{name}/points/batch on the Qdrant port: a list of update operations (upsert,
 * delete, set/overwrite/delete/clear payload, update_vectors) run in order, each one as its own
 * route runs it: all or nothing, durable before the next starts. Every operation's shape is
 * checked before the first runs; what the engine checks as it writes (a vector's dimension, an id
 * that must exist) stops the batch at that operation, the ones before it staying applied — as in
 * Qdrant, whose batches are not atomic either. An error names the operation
 * (`operations[2].upsert: points[0].vector: …`). The answer is one update result per operation.
 */
import type { FastifyInstance } from 'fastify';
import { isKithError, KithError } from '../../core/errors.js';
import { childPath } from '../../core/field-path.js';
import { ok } from '../envelope.js';
import { requestCollection } from './collections.js';
import { asObject, formatError, QdrantHttpError, validationError } from './errors.js';
import { deleteOperation, newPayload, setOperation } from './payload.js';
import { layoutOfCollection, pointsSelector, upsertOptions, upsertPoints, vectorDeletion, vectorUpdates } from './points.js';
import type { VectorLayout } from './vector-layout.js';
import { updateResult } from './shape.js';
import type { QdrantCollection, QdrantStore } from './store.js';

/** At most this many operations in one batch: each is a write of its own. */
export const MAX_BATCH_OPERATIONS = 1000;

type Run = (collection: QdrantCollection) => Promise<void>;

/** One operation's body, checked, as what runs it. */
async function parseOperation(kind: string, body: Record<string, unknown>, layout: VectorLayout): Promise<Run> {
  switch (kind) {
    case 'upsert': {
      const points = await upsertPoints(body, layout);
      const options = upsertOptions(body);
      return (c) => c.upsert(points, options);
    }
    case 'delete': {
      const selector = await pointsSelector(body);
      return (c) => (Array.isArray(selector) ? c.deleteIds(selector) : c.deleteByFilter(selector));
    }
    case 'set_payload':
    case 'overwrite_payload':
    case 'delete_payload':
    case 'clear_payload': {
      const operation =
        kind === 'set_payload'
          ? setOperation(body)
          : kind === 'overwrite_payload'
            ? ({ op: 'overwrite', payload: newPayload(body) } as const)
            : kind === 'delete_payload'
              ? deleteOperation(body)
              : ({ op: 'clear' } as const);
      const selector = await pointsSelector(body);
      return (c) => c.changePayloads(Array.isArray(selector) ? { points: selector } : { filter: selector }, operation);
    }
    case 'update_vectors': {
      const { points, options } = await vectorUpdates(body, layout);
      return (c) => c.updateVectors(points, options);
    }
    case 'delete_vectors':
      return vectorDeletion(body);
    default:
      throw formatError('', `unknown operation ${JSON.stringify(kind)}`);
  }
}

/** The error with the operation's path `at` put before its own words. */
function located(error: unknown, at: string): unknown {
  if (error instanceof QdrantHttpError) {
    const match = /^(Format error in JSON body|Validation error in JSON body|Wrong input|Not found|Bad request): (.*)$/s.exec(error.message);
    return match === null ? error : new QdrantHttpError(error.statusCode, `${match[1]}: ${at}: ${match[2]}`);
  }
  if (isKithError(error)) return new KithError(error.code, `${at}: ${error.message}`, { cause: error });
  return error;
}

export async function qdrantBatchRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  app.post<{ Params: { name: string } }>('/collections/:name/points/batch', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const operations = asObject(request.body, 'body').operations;
    if (!Array.isArray(operations)) throw formatError('operations', 'expected an array of update operations');
    if (operations.length > MAX_BATCH_OPERATIONS) throw validationError('operations', `${operations.length} operations; the limit is ${MAX_BATCH_OPERATIONS}`);
    const runs: Array<{ at: string; run: Run }> = [];
    const layout = await layoutOfCollection(collection);
    for (const [i, raw] of operations.entries()) {
      const path = childPath('operations', i);
      const entries = Object.entries(asObject(raw, path));
      const [kind, body] = entries[0] ?? [];
      if (entries.length !== 1 || kind === undefined) throw formatError(path, 'expected exactly one operation (upsert, delete, set_payload, …)');
      const at = childPath(path, kind);
      try {
        runs.push({ at, run: await parseOperation(kind, asObject(body, at), layout) });
      } catch (error) {
        throw located(error, at);
      }
    }
    const results = [];
    for (const { at, run } of runs) {
      try {
        await run(collection);
      } catch (error) {
        throw located(error, at);
      }
      results.push(updateResult());
    }
    return ok(reply, results);
  });
}
