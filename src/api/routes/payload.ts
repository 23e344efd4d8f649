/**
 * The payload operations on kith's port: POST …/points/payload (set, at an optional nested key),
 * PUT …/points/payload (overwrite), POST …/points/payload/delete (keys) and POST
 * …/points/payload/clear, each on the points listed or matching a filter. The engine's
 * Collection.changePayloads does the work (collection/payload-operations.ts): all-or-nothing,
 * every rewritten point gets a new version, durable before the reply.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { PayloadOperation, PointSelection } from '../../collection/collection.js';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { validateCollectionName } from '../../segment/collection-config.js';
import { ok } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { ClearPayloadBody, DeletePayloadKeysBody, OverwritePayloadBody, PayloadResult, SetPayloadBody } from '../schemas/point-pages.js';

/** `points` and `filter` as the schemas give them. */
interface BodySelection {
  readonly points?: readonly (string | number)[] | null;
  readonly filter?: unknown;
}

const RESPONSES = { 200: okEnvelope(PayloadResult), ...errorResponses(400, 404, 500) };
const URL = '/collections/:name/points/payload';

/**
 * The engine verb behind the routes: one node's collection, or a cluster's (api/routes/cluster-points.ts),
 * which also answers with the write's token (docs/cluster.md).
 */
export type ChangePayloads = (
  name: string,
  selection: PointSelection,
  operation: PayloadOperation,
  reply: FastifyReply,
) => Promise<{ readonly updated: number; readonly write_token?: string }>;

export function localPayloadChange(db: Database): ChangePayloads {
  return (name, selection, operation) => db.collection(name).changePayloads(selection, operation);
}

export const payloadRoutes: FastifyPluginAsyncTypebox<{ change: ChangePayloads }> = async (app, options) => {
  /** One engine call; the body's `points` or `filter` is the selection (the engine refuses both or neither). */
  const change = async (reply: FastifyReply, name: string, { points, filter }: BodySelection, operation: PayloadOperation) => {
    validateCollectionName(name);
    // The schema leaves filters to the parser, which names the field path of a fault.
    const selection: PointSelection = { points, filter: filter === undefined || filter === null ? filter : parseFilter(filter, 'filter') };
    const { updated, write_token } = await options.change(name, selection, operation, reply);
    return ok(reply, { operation: 'completed' as const, updated, ...(write_token === undefined ? {} : { write_token }) });
  };

  app.post(
    URL,
    {
      schema: {
        summary: 'Merge keys into the payloads of the selected points (at an optional nested key)',
        tags: ['payload'],
        params: CollectionNameParams,
        body: SetPayloadBody,
        response: RESPONSES,
      },
    },
    async (request, reply) => {
      const { payload, key, ...selection } = request.body;
      return change(reply, request.params.name, selection, { op: 'set', payload, key: key ?? null });
    },
  );

  app.put(
    URL,
    {
      schema: {
        summary: 'Replace the payloads of the selected points',
        tags: ['payload'],
        params: CollectionNameParams,
        body: OverwritePayloadBody,
        response: RESPONSES,
      },
    },
    async (request, reply) => {
      const { payload, ...selection } = request.body;
      return change(reply, request.params.name, selection, { op: 'overwrite', payload });
    },
  );

  app.post(
    `${URL}/delete`,
    {
      schema: {
        summary: 'Remove payload keys (nested paths too) from the selected points',
        tags: ['payload'],
        params: CollectionNameParams,
        body: DeletePayloadKeysBody,
        response: RESPONSES,
      },
    },
    async (request, reply) => {
      const { keys, ...selection } = request.body;
      return change(reply, request.params.name, selection, { op: 'delete', keys });
    },
  );

  app.post(
    `${URL}/clear`,
    {
      schema: {
        summary: 'Empty the payloads of the selected points',
        tags: ['payload'],
        params: CollectionNameParams,
        body: ClearPayloadBody,
        response: RESPONSES,
      },
    },
    async (request, reply) => change(reply, request.params.name, request.body, { op: 'clear' }),
  );
};
